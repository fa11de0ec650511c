"""A reverse-spec document: YAML front matter, the nine sections, Mermaid diagrams, a file inventory and
the baseline skeleton in an HTML comment. Render and parse, no I/O.

The layout (as the original reverse-spec writes it):

    ---
    type: module-spec
    version: 2
    sourceTarget: "src/auth"
    relatedFiles:
      - "src/auth/login.py"
    lastUpdated: "2026-11-23T06:40:00Z"
    confidence: high
    skeletonHash: "…"
    model: "offline"
    ---
    # Module spec: src/auth
    ## 1. Intent … ## 9. Dependencies
    ## Diagrams / ## File inventory
    <!-- baseline-skeleton: {json} -->

The front matter is written by hand (a fixed set of scalar and list fields, strings JSON-quoted, which
is valid YAML), so no YAML library is needed to read it back. The baseline is the MergedSkeleton as
JSON with every `--` escaped (`-\\u002d`), so no doc comment can close the HTML comment early; it is
validated on read. Accepting drift replaces only the baseline and the hash/date fields: the prose stays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.text_scan import Span, delimited, first, remove

SECTIONS: tuple[tuple[str, str], ...] = (
    ("intent", "Intent"),
    ("interface", "Interface"),
    ("business_logic", "Business logic"),
    ("data_structures", "Data structures"),
    ("constraints", "Constraints"),
    ("edge_cases", "Edge cases"),
    ("technical_debt", "Technical debt"),
    ("test_coverage", "Test coverage"),
    ("dependencies", "Dependencies"),
)
SECTION_KEYS = tuple(key for key, _ in SECTIONS)
FRONT_FIELDS = ("type", "version", "sourceTarget", "relatedFiles", "lastUpdated", "confidence", "skeletonHash",
                "model")
CLASS_KINDS = frozenset({"class", "interface", "struct", "trait", "record", "protocol", "enum", "union", "object",
                         "contract", "typeclass", "mixin"})
MAX_EDGES = 200

# A spec is text from others (a repository's, a model's): it is parsed in linear time. The markers are found
# with str.find (domain/knowledge/text_scan.py), never with a lazy `.*?` that rescans the rest of the text at each
# opener; the two patterns left are anchored at a line start and stop at its end.
_BASELINE_OPEN, _BASELINE_CLOSE = "<!-- baseline-skeleton: {", "} -->"
_HEADING = re.compile(r"^## (\d)\. .*$", re.MULTILINE)
_NEXT_BLOCK = re.compile(r"^## (?!\d\. )", re.MULTILINE)
_IDENT = re.compile(r"[^A-Za-z0-9_]")


class SpecFormatError(ValueError):
    """The text is not a reverse-spec document (no front matter, or a broken baseline)."""


@dataclass
class SpecDocument:
    front: dict[str, Any]
    title: str
    sections: dict[str, str]
    baseline: MergedSkeleton
    extra_blocks: str = ""  # diagrams and inventory (rendered from the baseline; kept as read)
    body: str = field(default="", repr=False)  # the full text as parsed

    @property
    def version(self) -> int:
        try:
            return int(str(self.front.get("version", "0")).lstrip("v"))
        except ValueError:
            return 0


# -- rendering ------------------------------------------------------------------------------------------------

def render_front(front: dict[str, Any]) -> str:
    lines = ["---"]
    keys = [k for k in FRONT_FIELDS if k in front] + [k for k in front if k not in FRONT_FIELDS]
    for key in keys:
        value = front[key]
        if isinstance(value, list):
            lines.append(f"{key}:" if value else f"{key}: []")
            lines.extend(f"  - {json.dumps(str(v), ensure_ascii=False)}" for v in value)
        elif isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, int) or (key in ("type", "confidence") and re.fullmatch(r"[a-z][a-z0-9-]*",
                                                                                          str(value))):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(str(value), ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def baseline_comment(baseline: MergedSkeleton) -> str:
    data = json.dumps(baseline.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True)
    escaped = data.replace("--", "-\\u002d")
    return f"<!-- baseline-skeleton: {escaped} -->"


def render(front: dict[str, Any], title: str, sections: dict[str, str], baseline: MergedSkeleton) -> str:
    parts = [render_front(front), f"# {title}\n"]
    for number, (key, heading) in enumerate(SECTIONS, 1):
        text = sections.get(key, "").strip() or "[NEEDS CLARIFICATION: nothing written for this section]"
        parts.append(f"## {number}. {heading}\n\n{text}\n")
    parts.append(diagrams(baseline))
    parts.append(inventory(baseline))
    parts.append(baseline_comment(baseline) + "\n")
    return "\n".join(parts)


def _node(name: str) -> str:
    ident = _IDENT.sub("_", name)
    return ident if ident and not ident[0].isdigit() else f"n_{ident}"


def class_diagram(baseline: MergedSkeleton) -> str:
    lines = ["classDiagram"]
    seen: set[str] = set()
    for f in baseline.files:
        for export in f.exports:
            if export.kind not in CLASS_KINDS:
                continue
            node = _node(export.name)
            if node in seen:
                continue
            seen.add(node)
            lines.append(f"    class {node} {{")
            if export.kind != "class":
                lines.append(f"        <<{export.kind}>>")
            for member in export.members[:30]:
                suffix = "()" if member.kind in ("method", "function", "constructor") else ""
                lines.append(f"        +{_node(member.name)}{suffix}")
            lines.append("    }")
    if len(lines) == 1:
        lines.append("    class NoClasses {\n        <<no class-like exports>>\n    }")
    return "\n".join(lines)


def dependency_diagram(baseline: MergedSkeleton) -> str:
    inside = {f.path for f in baseline.files}
    ids = {path: f"f{i}" for i, path in enumerate(sorted(inside))}
    lines = ["graph LR"]
    lines.extend(f'    {ids[path]}["{path}"]' for path in sorted(inside))
    edges: list[str] = []
    external: dict[str, str] = {}
    for f in baseline.files:
        targets: set[str] = set()
        for imp in f.imports:
            if imp.resolved and imp.resolved != f.path:
                if imp.resolved not in ids:
                    ids[imp.resolved] = f"f{len(ids)}"
                    lines.append(f'    {ids[imp.resolved]}["{imp.resolved}"]:::outside')
                targets.add(ids[imp.resolved])
            elif not imp.resolved and not imp.relative:
                package = imp.specifier.split("/")[0].split(".")[0].strip("@'\"<> ") or imp.specifier
                node = external.setdefault(package, f"x{len(external)}")
                targets.add(node)
        edges.extend(f"    {ids[f.path]} --> {t}" for t in sorted(targets))
    lines.extend(f'    {node}(["{name}"]):::external' for name, node in sorted(external.items()))
    if len(edges) > MAX_EDGES:
        lines.extend(edges[:MAX_EDGES])
        lines.append(f"    %% {len(edges) - MAX_EDGES} more edges left out")
    else:
        lines.extend(edges)
    lines.append("    classDef external fill:#eee,stroke:#999")
    lines.append("    classDef outside stroke-dasharray: 4 2")
    return "\n".join(lines)


def diagrams(baseline: MergedSkeleton) -> str:
    return (f"## Diagrams\n\n### Classes\n\n```mermaid\n{class_diagram(baseline)}\n```\n\n"
            f"### Dependencies\n\n```mermaid\n{dependency_diagram(baseline)}\n```\n")


def inventory(baseline: MergedSkeleton) -> str:
    rows = ["## File inventory\n", "| file | language | lines | exports | imports | sha256 |",
            "| --- | --- | --- | --- | --- | --- |"]
    rows.extend(f"| `{f.path}` | {f.language} | {f.lines} | {len(f.exports)} | {len(f.imports)} | `{f.sha256[:12]}` |"
                for f in baseline.files)
    if baseline.skipped:
        rows.append("")
        rows.append("Skipped: " + ", ".join(f"{reason} {count}" for reason, count in baseline.skipped.items()))
    return "\n".join(rows) + "\n"


# -- parsing --------------------------------------------------------------------------------------------------

def _baselines(text: str) -> Iterator[Span]:
    """Every `<!-- baseline-skeleton: {…} -->` comment, as the pattern `<!-- baseline-skeleton: (\\{.*?\\}) -->`
    would find them (its inner text is the JSON object, braces included)."""
    return delimited(text, _BASELINE_OPEN, _BASELINE_CLOSE, keep_open=1, keep_close=1)


def _front_end(text: str) -> int | None:
    """Where the front matter (`---` … `---` at the very top) ends, or None when there is none."""
    if not text.startswith("---\n"):
        return None
    close = text.find("\n---\n", 4)
    return None if close < 0 else close + 5


def parse_front(text: str) -> dict[str, Any]:
    end = _front_end(text)
    if end is None:
        raise SpecFormatError("no YAML front matter (--- … ---) at the top")
    front: dict[str, Any] = {}
    current: str | None = None
    for line in text[4 : end - 5].splitlines():
        if line.startswith("  - ") and current is not None:
            front[current].append(_scalar(line[4:]))
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            continue
        key, value = key.strip(), value.strip()
        if value == "":
            front[key], current = [], key
        elif value == "[]":
            front[key], current = [], None
        else:
            front[key], current = _scalar(value), None
    return front


def _scalar(value: str) -> Any:
    value = value.strip()
    if value.startswith('"'):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value.strip('"')
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1].replace("''", "'")
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if value in ("true", "false"):
        return value == "true"
    return value


def parse_baseline(text: str) -> MergedSkeleton:
    span = first(_baselines(text))
    if span is None:
        raise SpecFormatError("no <!-- baseline-skeleton: {…} --> comment")
    try:
        return MergedSkeleton.model_validate(json.loads(span.inner(text)))
    except RecursionError:  # JSON nested deeper than the parser's stack: not a skeleton Code3 wrote
        raise SpecFormatError("the baseline skeleton is not valid: nested too deeply") from None
    except ValueError as exc:
        raise SpecFormatError(f"the baseline skeleton is not valid: {str(exc).splitlines()[0]}") from None


def parse(text: str) -> SpecDocument:
    front = parse_front(text)
    baseline = parse_baseline(text)
    body = text[_front_end(text) or 0 :]
    title_match = re.search(r"^# (.+)$", body, re.MULTILINE)
    sections: dict[str, str] = {}
    headings = list(_HEADING.finditer(body))
    for i, heading in enumerate(headings):
        number = int(heading.group(1))
        if not 1 <= number <= len(SECTIONS):
            continue
        end = headings[i + 1].start() if i + 1 < len(headings) else len(body)
        chunk = body[heading.end():end]
        block = _NEXT_BLOCK.search(chunk)
        if block:
            chunk = chunk[:block.start()]
        sections[SECTIONS[number - 1][0]] = remove(chunk, _baselines(chunk)).strip()
    next_block = _NEXT_BLOCK.search(body)
    extra = body[next_block.start():] if next_block else ""
    return SpecDocument(front=front, title=title_match.group(1).strip() if title_match else "",
                        sections=sections, baseline=baseline, extra_blocks=remove(extra, _baselines(extra)).strip(),
                        body=text)


def replace_baseline(text: str, baseline: MergedSkeleton, front_updates: dict[str, Any]) -> str:
    """The same document with a new baseline, diagrams and inventory, and some front-matter fields changed;
    the nine sections are kept byte for byte."""
    front = parse_front(text)
    front.update(front_updates)
    text = render_front(front) + text[_front_end(text) or 0 :]
    start = text.find("\n## Diagrams\n")
    old = first(_baselines(text))
    if start != -1 and old is not None and start < old.start:
        tail = text[old.end:]
        return (text[:start + 1] + diagrams(baseline) + "\n" + inventory(baseline) + "\n" + baseline_comment(baseline)
                + tail)
    if old is None:
        return text
    return text[: old.start] + baseline_comment(baseline) + text[old.end :]
