"""The SpecWriter port on an LLM: spec-kit artifacts written by a model, the offline writer's output as frame.

The offline writer's file for the same input is given to the model as the template to fill (spec-kit's
sections and markers), with the feature description and, when a project skeleton is available, the
code base's API as context. A plan answer carries several files, each introduced by a line
`=== FILE: <name> ===`; a file the model left out falls back to the offline writer's version, so the
port's contract (which files exist) never depends on the model's answer (plan.md itself excepted). An
answer that drops a required section of its template (`missing_sections`) is refused before anything is
written: a model's "ok" must never become a spec.md, nor a bounty's issue body.

Used only when the user opted in (CODE3_SPEC_WRITER=anthropic, code3/wiring.py): each call is one Messages
API request of at most MAX_TOKENS output tokens, billed to the key's account.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from adapters.llm.port import LLM
from adapters.offline_writer import OfflineWriter
from domain.errors import Code, Code3Error

MAIN_PLAN_FILE = "plan.md"  # the one plan file a model's answer must hold (the others fall back to the template)
MAX_TOKENS = 8192  # the output tokens one spec, plan or tasks call may use (docs: README, CODE3_SPEC_WRITER)

SYSTEM = ("You write spec-kit artifacts (GitHub's spec-driven development kit) in Markdown. Keep every section "
          "of the template you are given; replace its placeholder content with specific, testable statements. "
          "Where the input does not say something, keep a `[NEEDS CLARIFICATION: question]` marker instead of "
          "guessing. No preamble, no closing remarks.")
FILE_MARK = re.compile(r"^=== FILE: (.+?) ===\s*$", re.MULTILINE)
_HEADING = re.compile(r"^(#{2,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_MANDATORY = re.compile(r"\(mandatory\)", re.IGNORECASE)


def _heading_key(title: str) -> str:
    """What names a section whatever a model adds around it: `Phase 0: Outline → research.md` is `phase 0`,
    `User Scenarios & Testing *(mandatory)*` is `user scenarios & testing`."""
    title = re.split(r"[:(→]|\*\(", title.replace("**", ""), maxsplit=1)[0]
    return " ".join(title.strip(" *_`").lower().split())


def required_sections(frame: str) -> list[str]:
    """A template's required sections: its second-level headings marked *(mandatory)* (spec-kit's spec
    template), or, when none is marked, all of its second-level headings."""
    second = [m.group(2) for m in _HEADING.finditer(frame) if len(m.group(1)) == 2]
    marked = [title for title in second if _MANDATORY.search(title)]
    return marked or second


def missing_sections(frame: str, answer: str) -> list[str]:
    """The required sections of `frame` that `answer` has no heading for (any level from ## down)."""
    present = {_heading_key(m.group(2)) for m in _HEADING.finditer(answer)}
    return [title for title in required_sections(frame) if _heading_key(title) not in present]


def check_sections(name: str, frame: str, answer: str, whole: str | None = None) -> str:
    """`answer` when it is not blank and keeps every required section of its template; else E_VALIDATION
    (the caller writes nothing), saying how long the model's `whole` answer was."""
    missing = missing_sections(frame, answer)
    if missing or not answer.strip():
        what = (f"lacks the template's required sections ({', '.join(_heading_key(t) or t for t in missing)})"
                if missing else "is missing")
        size = len((answer if whole is None else whole).encode())
        raise Code3Error(Code.VALIDATION, f"the model's {name} {what}; its answer was {size} bytes, and nothing was "
                         "written", "call again (a model's answer varies), or set CODE3_SPEC_WRITER=template to write "
                         "it from the template without a model")
    return answer


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
        whole = self.llm.complete(SYSTEM, prompt, MAX_TOKENS).text
        return check_sections("spec.md", frame, _strip_fence(whole), whole)

    def plan(self, feature_id: str, spec_md: str, tech_constraints: str | None) -> dict[str, str]:
        frame = self.offline.plan(feature_id, spec_md, tech_constraints)
        listing = "\n\n".join(f"=== FILE: {name} ===\n{text}" for name, text in frame.items())
        prompt = (f"Feature id: {feature_id}\nTechnical constraints: {tech_constraints or 'none stated'}\n"
                  f"The feature's spec:\n{spec_md}\n{self._context()}\n"
                  f"Write the plan artifacts. Answer with exactly these files, each introduced by its "
                  f"`=== FILE: <name> ===` line, filling these templates:\n\n{listing}")
        whole = self.llm.complete(SYSTEM, prompt, MAX_TOKENS).text
        answer = split_files(whole)
        check_sections(MAIN_PLAN_FILE, frame[MAIN_PLAN_FILE], answer.get(MAIN_PLAN_FILE, ""), whole)  # no plan.md: none
        return {name: check_sections(name, text, _strip_fence(answer[name])) if answer.get(name, "").strip() else text
                for name, text in frame.items()}

    def tasks(self, feature_id: str, artifacts: dict[str, str]) -> str:
        frame = self.offline.tasks(feature_id, artifacts)
        inputs = "\n\n".join(f"=== FILE: {name} ===\n{text}" for name, text in sorted(artifacts.items()))
        prompt = (f"Feature id: {feature_id}\nThe plan artifacts:\n{inputs}\n{self._context()}\n"
                  "Write tasks.md: numbered tasks `- [ ] T001 …` in test-first order, `[P]` on tasks that can run "
                  f"in parallel, each naming the files it touches. Follow this template:\n\n{frame}")
        whole = self.llm.complete(SYSTEM, prompt, MAX_TOKENS).text
        return check_sections("tasks.md", frame, _strip_fence(whole), whole)
