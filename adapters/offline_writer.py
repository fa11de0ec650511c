"""The offline spec writer: deterministic spec-kit artifacts filled from the feature description.

No model, no network: the same description always gives the same files, which keeps tests and the
demo reproducible. The LLM-backed writer (a later issue) implements the same port.
"""

from __future__ import annotations

import re

TASK_LINE = re.compile(r"^- \[ \] T\d{3}", re.MULTILINE)


def _sentences(description: str) -> list[str]:
    parts = [p.strip(" .") for p in re.split(r"[.;\n]+", description) if p.strip(" .")]
    return parts or [description.strip()]


def count_tasks(tasks_md: str) -> int:
    return len(TASK_LINE.findall(tasks_md))


class OfflineWriter:
    def spec(self, feature_id: str, description: str) -> str:
        stories = "\n".join(f"{i}. As a user, I can {s[0].lower() + s[1:]}." for i, s in
                            enumerate(_sentences(description), 1))
        reqs = "\n".join(f"- **FR-{i:03d}**: The system MUST support: {s}." for i, s in
                         enumerate(_sentences(description), 1))
        return f"""# Feature Specification: {feature_id}

**Feature**: `{feature_id}`
**Status**: Draft
**Input**: "{description.strip()}"

## User Scenarios & Testing

### Primary user story
{stories}

### Acceptance scenarios
1. **Given** the feature is available, **When** a user follows the primary story, **Then** the outcome
   described above is observable.

### Edge cases
- What happens when the input is empty or malformed? [NEEDS CLARIFICATION: expected behaviour]

## Requirements

### Functional requirements
{reqs}

### Key entities
- [NEEDS CLARIFICATION: entities involved, if the feature stores data]

## Review checklist
- [ ] No implementation details (languages, frameworks, APIs)
- [ ] Requirements are testable and unambiguous
"""

    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]:
        reqs = re.findall(r"\*\*(FR-\d{3})\*\*: (.*)", spec_md) or [("FR-001", "the feature as specified")]
        constraints = tech_constraints or "none stated; follow the repository's existing conventions"
        req_rows = "\n".join(f"| {rid} | {text} |" for rid, text in reqs)
        return {
            "plan.md": f"""# Implementation Plan: {feature_id}

**Spec**: [spec.md](./spec.md)

## Summary
Deliver the functional requirements of the spec, test first.

## Technical context
- **Constraints**: {constraints}

## Phase 0: research → research.md
## Phase 1: design → data-model.md, contracts/, quickstart.md
## Phase 2: task planning (described here, executed by `tasks`)
Each contract gets a contract test task; each entity a model task; each story an integration test.

| requirement | covered by |
| --- | --- |
{req_rows}
""",
            "research.md": f"""# Research: {feature_id}

## Decisions
- **Decision**: reuse the repository's existing stack. **Rationale**: {constraints}.
  **Alternatives considered**: a new dependency, rejected until a requirement needs it.

## Open questions
Every `NEEDS CLARIFICATION` of the spec is listed here and resolved before tasks are generated.
""",
            "data-model.md": f"""# Data model: {feature_id}

| entity | fields | rules |
| --- | --- | --- |
| (from the spec's key entities) | id, created_at | validated on input |
""",
            "contracts/README.md": f"""# Contracts: {feature_id}

{chr(10).join(f"- `{rid}`: {text}" for rid, text in reqs)}
""",
            "quickstart.md": f"""# Quickstart: {feature_id}

1. Run the test suite: every contract test fails before implementation.
2. Implement the tasks in order.
3. Run the test suite again: all green.
""",
        }

    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str:
        reqs = re.findall(r"`(FR-\d{3})`: (.*)", artifacts.get("contracts/README.md", "")) or [("FR-001", "feature")]
        lines = ["- [ ] T001 Set up the project structure for the feature"]
        n = 2
        for rid, _ in reqs:
            lines.append(f"- [ ] T{n:03d} [P] Contract test for {rid} (must fail first)")
            n += 1
        for rid, text in reqs:
            lines.append(f"- [ ] T{n:03d} Implement {rid}: {text} (depends on the test above)")
            n += 1
        lines.append(f"- [ ] T{n:03d} Polish: docs and quickstart validation")
        body = "\n".join(lines)
        return f"""# Tasks: {feature_id}

**Input**: plan.md, research.md, data-model.md, contracts/, quickstart.md
`[P]` marks tasks that can run in parallel (different files, no dependency).

{body}
"""
