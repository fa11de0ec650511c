"""Open questions: the `[NEEDS CLARIFICATION: …]` markers a spec still carries.

Seed 001 lets `specify` leave them ("留存 NEEDS CLARIFICATION 时允许") and says `/plan` must deal with them; the
offline writer keeps one wherever its template has a slot it cannot fill honestly. A spec that still has them is a
template to fill, not a finished specification: `specify`, `plan` and `publish` count them, the published issue
lists them, and a project may refuse to plan or publish until none is left (CODE3_REFUSE_OPEN_QUESTIONS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.errors import Code, Code3Error

# `[NEEDS CLARIFICATION: question]`, or the bare `[NEEDS CLARIFICATION]`; the question ends at its bracket or line
MARKER = re.compile(r"\[NEEDS CLARIFICATION(?::[ \t]*([^\]\n]*))?\]")
UNWORDED = "a point left open (the marker asks nothing)"


@dataclass(frozen=True)
class OpenQuestion:
    line: int  # 1-based, in the text it was read from
    question: str


def open_questions(text: str) -> list[OpenQuestion]:
    """Every marker of `text`, in order; the same question asked twice counts once (at its first line)."""
    found: list[OpenQuestion] = []
    seen: set[str] = set()
    for match in MARKER.finditer(text):
        question = " ".join((match[1] or "").split()) or UNWORDED
        if question in seen:
            continue
        seen.add(question)
        found.append(OpenQuestion(line=text.count("\n", 0, match.start()) + 1, question=question))
    return found


def warning(questions: list[OpenQuestion], path: str) -> str:
    """The warning an answer carries: how many questions remain, and which, so a person fills the template."""
    shown = "; ".join(f"line {q.line}: {q.question}" for q in questions[:5])
    more = f"; and {len(questions) - 5} more" if len(questions) > 5 else ""
    return (f"{path} is still a template to fill: {len(questions)} open question"
            f"{'' if len(questions) == 1 else 's'} ([NEEDS CLARIFICATION] markers) remain ({shown}{more}); "
            "answer them in the spec before workers bid on it")


def refuse(questions: list[OpenQuestion], path: str) -> None:
    """The refusal of a project that plans and publishes finished specs only (CODE3_REFUSE_OPEN_QUESTIONS)."""
    if not questions:
        return
    listed = "; ".join(f"line {q.line}: {q.question}" for q in questions)
    raise Code3Error(Code.PRECONDITION, f"{path} has {len(questions)} open question"
                     f"{'' if len(questions) == 1 else 's'} ([NEEDS CLARIFICATION] markers): {listed}",
                     "answer each one in the spec (replace its marker with the answer), then run this again; or "
                     "unset CODE3_REFUSE_OPEN_QUESTIONS")


def issue_section(questions: list[OpenQuestion]) -> str:
    """The published issue's "Open questions" section (empty when the spec has none)."""
    if not questions:
        return ""
    items = "\n".join(f"- {q.question}" for q in questions)
    return f"## Open questions\n\nThe spec leaves these open ([NEEDS CLARIFICATION] markers):\n\n{items}\n"
