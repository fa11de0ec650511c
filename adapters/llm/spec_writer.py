"""The SpecWriter port on an LLM: spec-kit artifacts written by a model, the offline writer's output as frame.

The offline writer's file for the same input is given to the model as the template to fill (spec-kit's
sections and markers), with the feature description and, when a project skeleton is available, the
code base's API as context. A plan answer carries several files, each introduced by a line
`=== FILE: <name> ===`; a file the model left out falls back to the offline writer's version, so the
port's contract (which files exist) never depends on the model's answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from adapters.llm.port import LLM
from adapters.offline_writer import OfflineWriter

SYSTEM = ("You write spec-kit artifacts (GitHub's spec-driven development kit) in Markdown. Keep every section "
          "of the template you are given; replace its placeholder content with specific, testable statements. "
          "Where the input does not say something, keep a `[NEEDS CLARIFICATION: question]` marker instead of "
          "guessing. No preamble, no closing remarks.")
FILE_MARK = re.compile(r"^=== FILE: (.+?) ===\s*$", re.MULTILINE)


def split_files(text: str) -> dict[str, str]:
    marks = list(FILE_MARK.finditer(text))
    files = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        files[mark.group(1).strip()] = text[mark.end():end].strip() + "\n"
    return files


def _strip_fence(text: str) -> str:
    text = text.strip()
    match = re.fullmatch(r"```(?:markdown|md)?\n(.*)\n```", text, re.DOTALL)
    return (match.group(1) if match else text).strip() + "\n"


def project_skeleton(root: Path, limit_chars: int = 40_000) -> str:
    """The project's API as compact text (docs left out), cut at `limit_chars`; empty when nothing parses."""
    from adapters.code_parser import TreeSitterCodeParser
    from domain.knowledge.skeleton_text import skeleton_text

    try:
        merged = TreeSitterCodeParser(executor="thread").scan(root)
    except (OSError, ValueError):
        return ""
    text = skeleton_text([f for f in merged.files if f.exports], docs=False, members=False)
    return text if len(text) <= limit_chars else text[:limit_chars] + "\n[… cut]"


class LLMSpecWriter:
    def __init__(self, llm: LLM, skeleton_context: Callable[[], str] | None = None,
                 offline: OfflineWriter | None = None) -> None:
        self.llm = llm
        self.offline = offline or OfflineWriter()
        self.skeleton_context = skeleton_context

    def _context(self) -> str:
        if self.skeleton_context is None:
            return ""
        text = self.skeleton_context()
        return f"\n\nThe existing code base's API (AST skeleton):\n{text}\n" if text else ""

    def spec(self, feature_id: str, description: str) -> str:
        frame = self.offline.spec(feature_id, description)
        prompt = (f"Feature id: {feature_id}\nFeature description:\n{description.strip()}\n{self._context()}\n"
                  f"Fill this spec template (keep its headings):\n\n{frame}")
        return _strip_fence(self.llm.complete(SYSTEM, prompt).text)

    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]:
        frame = self.offline.plan(feature_id, spec_md, tech_constraints)
        listing = "\n\n".join(f"=== FILE: {name} ===\n{text}" for name, text in frame.items())
        prompt = (f"Feature id: {feature_id}\nTechnical constraints: {tech_constraints or 'none stated'}\n"
                  f"The feature's spec:\n{spec_md}\n{self._context()}\n"
                  f"Write the plan artifacts. Answer with exactly these files, each introduced by its "
                  f"`=== FILE: <name> ===` line, filling these templates:\n\n{listing}")
        answer = split_files(self.llm.complete(SYSTEM, prompt).text)
        return {name: _strip_fence(answer[name]) if answer.get(name, "").strip() else text
                for name, text in frame.items()}

    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str:
        frame = self.offline.tasks(feature_id, artifacts)
        inputs = "\n\n".join(f"=== FILE: {name} ===\n{text}" for name, text in sorted(artifacts.items()))
        prompt = (f"Feature id: {feature_id}\nThe plan artifacts:\n{inputs}\n{self._context()}\n"
                  "Write tasks.md: numbered tasks `- [ ] T001 …` in test-first order, `[P]` on tasks that can run "
                  f"in parallel, each naming the files it touches. Follow this template:\n\n{frame}")
        return _strip_fence(self.llm.complete(SYSTEM, prompt).text)
