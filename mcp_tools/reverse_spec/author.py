"""Who writes a spec's prose: the model behind the LLM port (with a key), or the offline writer.

Confidence, as docs/reverse-spec.md ("Confidence") states it:
- low: no exports were found, or more than half of the files do not parse, or the offline writer wrote
  a spec with parse errors;
- high: a model wrote every one of the nine sections from a context that was not trimmed, and every file
  parsed;
- medium: everything else (the offline writer's best is medium: its structure is exact, its prose is not
  a reading of the code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from adapters.llm import offline_writer
from adapters.llm.port import LLM
from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.spec_document import SECTIONS
from mcp_tools.reverse_spec.context import Context

SYSTEM = ("You are a senior engineer writing a reverse-engineered specification of existing code. You are given "
          "its AST skeleton (exports, signatures, doc comments, imports), sometimes the specs of the modules it "
          "depends on and function bodies. Write Markdown. Answer with exactly nine sections, in this order, each "
          "starting with its heading line:\n"
          + "\n".join(f"## {i}. {title}" for i, (_, title) in enumerate(SECTIONS, 1))
          + "\nState only what the code shows; where it does not tell, write `[NEEDS CLARIFICATION: question]`. "
          "No text before the first heading.")
_HEADING = re.compile(r"^#{2,3}\s*(\d)\s*[.)]\s*.*$", re.MULTILINE)


@dataclass
class Authored:
    sections: dict[str, str]
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    warnings: list[str] = field(default_factory=list)
    complete: bool = True  # every section came from the writer itself

    @property
    def offline(self) -> bool:
        return self.model == offline_writer.MODEL


def split_sections(text: str) -> dict[str, str]:
    marks = list(_HEADING.finditer(text))
    found: dict[str, str] = {}
    for i, mark in enumerate(marks):
        number = int(mark.group(1))
        if 1 <= number <= len(SECTIONS):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            found.setdefault(SECTIONS[number - 1][0], text[mark.end():end].strip())
    return found


def write(llm: LLM | None, merged: MergedSkeleton, target: str, context: Context) -> Authored:
    offline = offline_writer.sections(merged, target)
    if llm is None:
        return Authored(offline, offline_writer.MODEL, warnings=[offline_writer.WARNING])
    prompt = f"Target: `{target}`\n\n{context.text}\nWrite the specification of `{target}`."
    completion = llm.complete(SYSTEM, prompt)
    found = split_sections(completion.text)
    missing = [title for key, title in SECTIONS if not found.get(key)]
    authored = Authored({key: found.get(key) or offline[key] for key, _ in SECTIONS}, completion.model,
                        completion.input_tokens, completion.output_tokens, complete=not missing)
    if missing:
        authored.warnings.append(f"the model left out {len(missing)} section(s) ({', '.join(missing)}); "
                                 "the offline writer filled them from the skeleton")
    return authored


def confidence(authored: Authored, merged: MergedSkeleton, context: Context) -> str:
    files = len(merged.files)
    broken = sum(1 for f in merged.files if f.parse_errors)
    exports = sum(len(f.exports) for f in merged.files)
    if exports == 0 or (files and broken * 2 > files) or (authored.offline and broken):
        return "low"
    if not authored.offline and authored.complete and not context.dropped and not broken:
        return "high"
    return "medium"
