"""Parsing time of hostile text grows linearly: each parser of text others write, at n and 4n bytes.

A spec, an issue body, a plan comment and a model's answer are written by others. Each case below is the
input that made (or would make) a backtracking pattern rescan the rest of the text at every position: 300 KB
of repeated `<!-- baseline-skeleton: {` kept `diff` in a regular expression for 15-22 s, holding the GIL.

Judged by ratio, so the targets hold on any machine: t(8n) / t(n) ≤ 24 (linear work gives about 8, the
caches up to twice that, quadratic 64). The time of the 5 MB input (the size cap of a read) is shown beside
it. The suite runs the same cases at 5 MB under a timeout (tests/unit/test_hostile_inputs.py).

Run: `.venv/bin/python -m benchmarks.hostile_inputs` (SMALL_KB=… to change n).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.report import Row, format_table

SMALL_KB = int(os.environ.get("SMALL_KB", "512"))
GROWTH = 8
MAX_RATIO = 24.0
NOISE_FLOOR_S = 0.5
"""A parse of the 8n input under this passes whatever its ratio. Below it the caches and the other work on
the machine weigh more than the parse (a 512 KB text fits in the caches, 4 MB does not: the same linear scan
costs 3.5 ns a byte at one size and 10 at the other), while quadratic work cannot hide under it: at a
nanosecond a step, n² steps for 4 MB take hours, and the 300 KB spec of the issue took 27 s."""
CAP_BYTES = 5 * 1024 * 1024
FRONT = '---\ntype: module-spec\nversion: 2\nsourceTarget: "src"\n---\n# Module spec: src\n'


@dataclass(frozen=True)
class Case:
    """One parser and a generator of hostile text of about `size` characters for it."""

    name: str
    parse: Callable[[str], Any]
    text: Callable[[int], str]


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _spec_parse(text: str) -> Any:
    from domain.knowledge.spec_document import SpecFormatError, parse
    try:
        return parse(text)
    except SpecFormatError as exc:
        return exc


def _meta(text: str) -> Any:
    from domain.bounties.metadata import IssueMetadata
    try:
        return IssueMetadata.from_body(text)
    except ValueError as exc:
        return exc


def _strip(text: str) -> str:
    from domain.bounties.metadata import strip_block
    return strip_block(text)


def _artifacts(text: str) -> dict[str, str]:
    from mcp_tools.lifecycle.remote_artifacts import read_artifacts
    return read_artifacts(text)


def _short_name(text: str) -> str:
    from domain.bounties.spec import short_name
    return short_name(text)


def _sections(text: str) -> dict[str, str]:
    from mcp_tools.reverse_spec.author import split_sections
    return split_sections(text)


def _redact(text: str) -> str:
    from adapters.redact import redact
    return redact(text).text


def _scrub(text: str) -> str:
    from adapters.scrub import scrub
    return str(scrub(text))


def _csharp(text: str) -> Any:
    from adapters.code_parser.extraction import skeleton_of
    return skeleton_of("Hostile.cs", "c_sharp", text.encode())


def _webhook(text: str) -> Any:
    from mcp_tools.lifecycle.webhook import parse_payload
    try:
        return parse_payload(text.encode())
    except ValueError as exc:
        return exc


def _fences(size: int) -> str:
    """Artifact openings whose fences all differ in length, none closed."""
    parts, total, width = [], 0, 4
    while total < size:
        part = f"<!-- code3:artifact=a.md -->\n{'`' * width}markdown\nx\n"
        parts.append(part)
        total += len(part)
        width = 4 + (width - 3) % 64
    return "".join(parts)


CASES: tuple[Case, ...] = (
    Case("spec: repeated baseline openers", _spec_parse,
         lambda n: _repeat("<!-- baseline-skeleton: {", n, FRONT)),
    Case("spec: baseline openers in a section", _spec_parse,
         lambda n: _repeat("<!-- baseline-skeleton: {}\n## 1. x\n", n, FRONT)),
    Case("spec: front matter never closed", _spec_parse, lambda n: _repeat("a: 1\n---\n-", n, "---\n")),
    Case("issue: code3-meta opener and blank lines", _meta, lambda n: _repeat("\n", n, "```code3-meta")),
    Case("issue: repeated code3-meta openers", _strip, lambda n: _repeat("```code3-meta\n{", n)),
    Case("plan comment: unclosed artifact fences", _artifacts, _fences),
    Case("feature description: short words", _short_name, lambda n: _repeat("xy ", n)),
    Case("model answer: heading-like lines", _sections, lambda n: _repeat("## \n\t", n, "## 1", "x")),
    Case("redaction: one long secret-named word", _redact, lambda n: _repeat("secret", n)),
    Case("redaction: hyphen-joined JWT starts", _redact, lambda n: _repeat("eyJ-", n)),
    Case("scrubbing: hyphen-joined JWT starts", _scrub, lambda n: _repeat("eyJ-", n)),
    Case("webhook body: an unclosed string of escaped quotes", _webhook,
         lambda n: _repeat('\\"', n, '{"a": "')),
    Case("source: a C# doc comment of unclosed tags", _csharp,
         lambda n: _repeat("/// " + "<a" * 50 + "\n", n, "", "public class Foo { }\n")),
)


def seconds(case: Case, size: int, runs: int = 5) -> float:
    """Least parse time of the case's text of `size` characters over `runs` (built outside the timing; one run
    first to warm up): the least is the one other work on the machine disturbed least."""
    text = case.text(size)
    case.parse(text)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        case.parse(text)
        times.append(time.perf_counter() - start)
    return min(times)


def rows(small_kb: int = SMALL_KB) -> list[Row]:
    out = []
    for case in CASES:
        small = seconds(case, small_kb * 1024)
        large = seconds(case, small_kb * 1024 * GROWTH)
        ratio = large / max(small, 1e-9)
        passed = ratio <= MAX_RATIO or large <= NOISE_FLOOR_S
        out.append(Row(f"{case.name}: t({GROWTH}n)/t(n), n={small_kb} KB", ratio, "x", None,
                       f"≤ {MAX_RATIO:g}x or 8n < {NOISE_FLOOR_S:g} s", passed))
        out.append(Row(f"{case.name}: {GROWTH}n = {small_kb * GROWTH // 1024} MB", large * 1000, "ms"))
        out.append(Row(f"{case.name}: 5 MB", seconds(case, CAP_BYTES, runs=1) * 1000, "ms"))
    return out


def main() -> int:
    table = rows()
    print(format_table(table))
    return 0 if all(r.passed is not False for r in table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
