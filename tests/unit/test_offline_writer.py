"""The offline writer fills Code3's templates (spec-kit's sections) or a user's spec-kit templates, and
never writes a sentence it had to bend: a slot it cannot fill keeps its NEEDS CLARIFICATION marker."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from adapters.offline_writer import OfflineWriter
from domain.bounties.spec import count_tasks
from domain.errors import Code, Code3Error

SPEC_KIT_SPEC = """# Feature Specification: [FEATURE NAME]

**Feature Branch**: `[###-feature-name]`
**Created**: [DATE]
**Input**: User description: "$ARGUMENTS"

### User Story 1 - [Brief Title] (Priority: P1)
"""


def test_a_user_can_sentence_becomes_a_story_and_a_requirement_without_a_broken_sentence() -> None:
    spec = OfflineWriter().spec("001-users-export-list-csv", "Users can export their to-do list as CSV.")
    assert "A user can export their to-do list as CSV." in spec
    assert "- **FR-001**: Users MUST be able to export their to-do list as CSV." in spec
    assert "I can users can" not in spec and "can users can" not in spec
    assert '**Input**: User description: "Users can export their to-do list as CSV."' in spec


def test_a_description_that_is_no_sentence_about_users_leaves_the_story_to_clarify() -> None:
    spec = OfflineWriter().spec("003-web-ai-agent", "Web AI agent project management")
    story = spec.split("### User Story 1 - ", 1)[1].split("**Why this priority**", 1)[0]
    assert story.startswith("[NEEDS CLARIFICATION: ")
    assert '"Web AI agent project management"' in spec  # quoted as given, never bent into a sentence
    assert "As a user, I can web" not in spec.lower()


def test_the_built_in_templates_carry_spec_kits_sections() -> None:
    writer = OfflineWriter()
    spec = writer.spec("001-x", "Users can tag to-dos")
    files = writer.plan("001-x", spec, "Python 3.11")
    tasks = writer.tasks("001-x", {**files, "spec.md": spec})
    for heading in ("## User Scenarios & Testing", "### Edge Cases", "## Requirements", "### Functional Requirements",
                    "### Key Entities", "## Success Criteria"):
        assert heading in spec
    for heading in ("## Summary", "## Technical Context", "## Constitution Check", "## Project Structure",
                    "## Phase 0", "## Phase 1", "## Phase 2", "## Complexity Tracking", "## Progress Tracking"):
        assert heading in files["plan.md"]
    for heading in ("## Phase 3.1: Setup", "## Phase 3.2: Tests First", "## Phase 3.3: Core Implementation",
                    "## Phase 3.4: Integration", "## Phase 3.5: Polish", "## Dependencies", "## Parallel Example"):
        assert heading in tasks
    assert set(files) == {"plan.md", "research.md", "data-model.md", "contracts/README.md", "quickstart.md"}
    assert "Python 3.11" in files["plan.md"] and count_tasks(tasks) == 5
    assert "{{" not in spec + tasks + "".join(files.values())


def test_the_same_description_gives_the_same_files() -> None:
    first, again = (OfflineWriter().spec("001-x", "Users can tag to-dos") for _ in range(2))
    assert first == again


def test_a_users_spec_kit_templates_are_filled_with_spec_kits_placeholders(tmp_path: Path) -> None:
    for name in ("spec-template.md", "plan-template.md", "tasks-template.md"):
        (tmp_path / name).write_text(SPEC_KIT_SPEC if name == "spec-template.md" else f"# {name} for [FEATURE]\n")
    writer = OfflineWriter(tmp_path, today=lambda: date(2026, 11, 23))
    spec = writer.spec("003-web-ai-agent", "Web AI agent project management")
    assert spec.startswith("# Feature Specification: Web AI agent project management\n")
    assert "`003-web-ai-agent`" in spec and "**Created**: 2026-11-23" in spec
    assert 'User description: "Web AI agent project management"' in spec
    assert "[Brief Title]" in spec  # the user's own placeholders are theirs to keep
    plan = writer.plan("003-web-ai-agent", spec, None)
    assert plan["plan.md"] == "# plan-template.md for Web AI agent project management\n"
    assert plan["research.md"].startswith("# Research: ")  # not in the user's directory: the built-in one


@pytest.mark.parametrize("breakage", ["missing directory", "missing template", "not a file", "not UTF-8"])
def test_an_unreadable_templates_directory_is_an_internal_error_naming_the_variable(tmp_path: Path,
                                                                                    breakage: str) -> None:
    directory = tmp_path / "templates"
    if breakage != "missing directory":
        directory.mkdir()
        for name in ("plan-template.md", "tasks-template.md"):
            (directory / name).write_text("# [FEATURE]\n")
        if breakage == "not a file":
            (directory / "spec-template.md").mkdir()
        elif breakage == "not UTF-8":
            (directory / "spec-template.md").write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(Code3Error) as caught:
        OfflineWriter(directory).spec("001-x", "Users can tag to-dos")
    assert caught.value.code is Code.INTERNAL
    assert re.match(r"template read failed: .*spec-template\.md", caught.value.message)
    assert "SPEC_KIT_TEMPLATES_DIR" in caught.value.hint and "permissions" in caught.value.hint
