"""Re-anchoring after edits, on a generated corpus, and stitch's cost beside a plain string join.

`python -m benchmarks.reanchor [--cases N] [--seed S] [--corpus generated|repo] [--rev COMMIT]`

Each case is a source file (generated pseudo-code, or a 300-line slice of one of this repository's
own Python files at a commit, for real code's repeated lines and near-identical sibling blocks),
an annotated block in it, and one edit (or two) of the file:
lines inserted or deleted above or below, the block edited slightly, grown or shrunk by a line,
moved elsewhere (and edited), duplicated, deleted or replaced, re-indented or re-spaced, its context
edited. The generator knows where the block truly is afterwards (or that it is gone). A case is

- correct: anchored at the true lines; or orphaned when the block is gone or duplicated;
- orphaned: no anchor although the block still exists (a miss, reported, never harmful);
- WRONG: anchored at lines that are not the block (the one outcome that must not happen).

The figure to beat is the share anchored correctly among the cases where the block still exists
once (target ≥ 95 %), with 0 wrong over every case.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from domain.knowledge.anchor import Anchor, reanchor
from domain.knowledge.stitch import StitchItem, stitch

NAMES = ["user", "order", "item", "total", "count", "path", "node", "tree", "cache", "value", "index", "result",
         "buffer", "config", "session", "request", "response", "token", "limit", "offset", "page", "entry", "key"]
FUNCS = ["load", "save", "parse", "render", "fetch", "update", "compute", "validate", "merge", "split", "flush",
         "encode", "decode", "lookup", "resolve", "commit", "retry"]
BOILERPLATE = ["", "", "", "    return None", "    pass", "    else:", "        continue", "        break", "    try:"]


def _code_line(rng: random.Random) -> str:
    a, b, c = rng.sample(NAMES, 3)
    f = rng.choice(FUNCS)
    n = rng.randint(0, 999)
    return rng.choice([
        f"def {f}_{a}({b}, {c}):",
        f"    {a} = {f}({b}, {c})",
        f"    {a}_{b} = {c}.{f}()",
        f"    if {a} > {n}:",
        f"        return {f}_{b}({a})",
        f"    for {a} in {b}.{f}s:",
        f"        {c}[{a}] = {n}",
        f"    # {f} the {a} before the {b} ({n})",
        f"    {a}.{f}({b}={c}, limit={n})",
        f"    raise ValueError('{f} {a}: {n}')",
    ])


def _line(rng: random.Random) -> str:
    return rng.choice(BOILERPLATE) if rng.random() < 0.25 else _code_line(rng)


def _tweak(rng: random.Random, line: str) -> str:
    """A small edit of one line: a renamed word, a changed number, an added argument."""
    words = [w for w in NAMES + FUNCS if w in line]
    choice = rng.random()
    if words and choice < 0.4:
        w = rng.choice(words)
        return line.replace(w, w + "s", 1)
    if choice < 0.7 and any(ch.isdigit() for ch in line):
        return "".join(str((int(ch) + 1) % 10) if ch.isdigit() else ch for ch in line)
    if line.rstrip().endswith(")"):
        return line.rstrip()[:-1] + ", strict=True)"
    return line + "  # checked"


@dataclass
class Case:
    kind: str
    text: str
    anchor: Anchor
    truth: tuple[int, int] | None  # None: the block is gone
    orphan_ok: bool  # orphaned counts as correct (block gone or duplicated)


class Source:
    """Where files and new lines come from: generated pseudo-code, or real files (a project's own source),
    300-line slices of them and lines drawn from all of them."""

    def __init__(self, files: list[list[str]] | None = None) -> None:
        self.files = [f for f in files or [] if len(f) >= 40]
        self.pool = [line for f in self.files for line in f if line.strip()]

    def file(self, rng: random.Random) -> list[str]:
        if not self.files:
            return [_line(rng) for _ in range(rng.randint(40, 300))]
        lines = rng.choice(self.files)
        at = rng.randint(0, max(0, len(lines) - 300))
        return list(lines[at : at + 300])

    def line(self, rng: random.Random) -> str:
        return rng.choice(self.pool) if self.pool and rng.random() > 0.2 else _line(rng) if not self.pool else ""

    def code_line(self, rng: random.Random) -> str:
        return rng.choice(self.pool) if self.pool else _code_line(rng)

    def lines(self, rng: random.Random, n: int) -> list[str]:
        return [self.line(rng) for _ in range(n)]


GENERATED = Source()


FOLDERS = ("domain", "adapters", "mcp_tools", "projections", "scheduler", "code3")


def repo_source(root: Path, rev: str = "HEAD") -> tuple[Source, str]:
    """The project's own Python files at a commit (so that a run can be repeated), and that commit."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout

    commit = git("rev-parse", rev).strip()
    paths = [p for p in git("ls-tree", "-r", "--name-only", commit, "--", *FOLDERS).split("\n") if p.endswith(".py")]
    return Source([git("show", f"{commit}:{p}").split("\n") for p in paths]), commit


def _block(rng: random.Random, lines: list[str]) -> tuple[int, int]:
    while True:
        start = rng.randint(1, len(lines))
        if lines[start - 1].strip():
            size = min(rng.choice([1, 1, 2, 3, 3, 4, 5, 6, 8, 12]), len(lines) - start + 1)
            return start, start + size - 1


KINDS = ["insert_above", "delete_above", "insert_below", "edit_block", "edit_block_shifted", "grow_block",
         "shrink_block", "edit_context", "move", "move_edit", "duplicate", "delete", "replace", "reindent",
         "respace"]


def make_case(rng: random.Random, kind: str, source: Source = GENERATED) -> Case:
    lines = source.file(rng)
    s, e = _block(rng, lines)
    anchor = Anchor.capture("\n".join(lines) + "\n", s, e)
    block = lines[s - 1 : e]
    before, after = lines[: s - 1], lines[e:]
    truth: tuple[int, int] | None
    orphan_ok = False

    def shift_above(before: list[str]) -> list[str]:
        at = rng.randint(0, len(before))
        return before[:at] + source.lines(rng, rng.randint(1, 15)) + before[at:]

    if kind == "insert_above":
        before = shift_above(before)
    elif kind == "delete_above" and len(before) > 1:
        n = rng.randint(1, min(10, len(before) - 1))
        at = rng.randint(0, len(before) - n)
        before = before[:at] + before[at + n :]
    elif kind == "insert_below":
        at = rng.randint(0, len(after))
        after = after[:at] + source.lines(rng, rng.randint(1, 15)) + after[at:]
    elif kind in ("edit_block", "edit_block_shifted"):
        i = rng.randrange(len(block))
        block = [*block[:i], _tweak(rng, block[i]), *block[i + 1 :]]
        if kind == "edit_block_shifted":
            before = shift_above(before)
    elif kind == "grow_block" and len(block) >= 3:
        at = rng.randint(1, len(block) - 1)
        block = [*block[:at], source.code_line(rng), *block[at:]]
    elif kind == "shrink_block" and len(block) >= 4:
        # a code line goes (a blank one next to blank lines could as well be another: same text)
        inner = [i for i in range(1, len(block) - 1) if block[i].strip()] or [rng.randint(1, len(block) - 2)]
        at = rng.choice(inner)
        block = block[:at] + block[at + 1 :]
    elif kind == "edit_context":
        if before:
            before[-1] = _tweak(rng, before[-1]) if before[-1].strip() else source.code_line(rng)
        if after:
            after[0] = _tweak(rng, after[0]) if after[0].strip() else source.code_line(rng)
    elif kind in ("move", "move_edit"):
        if kind == "move_edit" and len(block) >= 3:
            i = rng.randrange(len(block))
            block = [*block[:i], _tweak(rng, block[i]), *block[i + 1 :]]
        rest = before + after
        at = rng.randint(0, len(rest))
        while abs(at - len(before)) < 10 and len(rest) > 25:
            at = rng.randint(0, len(rest))
        new = [*rest[:at], source.code_line(rng), *block, source.code_line(rng), *rest[at:]]
        return Case(kind, "\n".join(new) + "\n", anchor, (at + 2, at + 1 + len(block)), False)
    elif kind == "duplicate":
        at = rng.randint(0, len(after))
        copy = [source.code_line(rng), *block, source.code_line(rng)]
        after = after[:at] + copy + after[at:]
        orphan_ok = True
    elif kind == "delete":
        block = []
    elif kind == "replace":
        block = [source.code_line(rng) for _ in block]
    elif kind == "reindent":
        block = [("    " + line) if line.strip() else line for line in block]
    elif kind == "respace":
        block = [line.replace(" = ", "  =  ").replace(", ", " ,  ") for line in block]
    if kind in ("delete", "replace"):
        truth = None
        orphan_ok = True
    else:
        truth = (len(before) + 1, len(before) + len(block))
    return Case(kind, "\n".join(before + block + after) + "\n", anchor, truth, orphan_ok)


@dataclass
class Summary:
    cases: int = 0
    correct: int = 0
    orphaned: int = 0
    wrong: int = 0
    exists: int = 0  # cases where the block still exists exactly once
    anchored_right: int = 0
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    wrong_cases: list[Case] = field(default_factory=list)

    @property
    def anchored_share(self) -> float:
        return self.anchored_right / self.exists if self.exists else 1.0


def run_cases(n: int, seed: int = 7, source: Source = GENERATED) -> Summary:
    rng = random.Random(seed)
    summary = Summary()
    for i in range(n):
        case = make_case(rng, KINDS[i % len(KINDS)], source)
        result = reanchor(case.anchor, case.text)
        got = (result.start_line, result.end_line) if result.found else None
        tally = summary.by_kind.setdefault(case.kind, Counter())
        summary.cases += 1
        if case.truth is not None and case.kind != "duplicate":
            summary.exists += 1
            summary.anchored_right += got == case.truth
        if got is None:
            summary.orphaned += 1
        if got == case.truth or (got is None and case.orphan_ok):
            summary.correct += 1
            tally["correct"] += 1
        elif got is None:
            tally["orphaned"] += 1
        else:
            summary.wrong += 1
            summary.wrong_cases.append(case)
            tally["WRONG"] += 1
    return summary


def time_stitch(count: int = 10_000, seed: int = 3) -> tuple[float, float]:
    """Seconds for stitch over `count` annotations, and for a plain "\\n".join of the same texts."""
    rng = random.Random(seed)
    items = [
        StitchItem(id=f"ann_{i:026d}", file_path=f"src/mod{rng.randint(0, 200)}.py",
                   start_line=(s := rng.randint(1, 500)), end_line=s + rng.randint(0, 12),
                   comment=" ".join(rng.sample(NAMES, 5)), priority=rng.choice(["P0", "P1", "P2"]),
                   sensitivity="public", snippet="\n".join(_code_line(rng) for _ in range(rng.randint(1, 12))))
        for i in range(count)
    ]
    texts = [f"{it.file_path}:{it.start_line}-{it.end_line}\n{it.comment}\n{it.snippet}" for it in items]

    def best(fn) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    return best(lambda: stitch(items, max_chars=200_000)), best(lambda: "\n".join(texts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", choices=["generated", "repo"], default="generated",
                        help="generated pseudo-code, or this repository's own Python files (at --rev)")
    parser.add_argument("--rev", default="HEAD", help="the commit whose files make the repo corpus")
    args = parser.parse_args(argv)
    corpus, source = "generated", GENERATED
    if args.corpus == "repo":
        source, commit = repo_source(Path(__file__).resolve().parents[1], args.rev)
        corpus = f"repo at {commit[:12]}"
    t0 = time.perf_counter()
    s = run_cases(args.cases, args.seed, source)
    elapsed = time.perf_counter() - t0
    print(f"re-anchoring: {s.cases} cases ({corpus} corpus, seed {args.seed}) in {elapsed:.2f} s "
          f"({1000 * elapsed / max(1, s.cases):.2f} ms per case)")
    print(f"  anchored correctly where the block still exists once: {s.anchored_right}/{s.exists} "
          f"= {100 * s.anchored_share:.1f} %  (target >= 95 %)")
    print(f"  correct overall (orphaned counts for deleted/replaced/duplicated): {s.correct}/{s.cases} "
          f"= {100 * s.correct / max(1, s.cases):.1f} %")
    print(f"  orphaned: {s.orphaned}   WRONG: {s.wrong}  (target 0)")
    for kind in KINDS:
        tally = s.by_kind.get(kind, Counter())
        print(f"    {kind:<20} " + "  ".join(f"{k} {tally[k]}" for k in ("correct", "orphaned", "WRONG")))
    took, join = time_stitch()
    print(f"stitch over 10 000 annotations: {1000 * took:.1f} ms; plain join of the same texts: "
          f"{1000 * join:.2f} ms; ratio {took / join:.0f}x")
    return 0 if s.wrong == 0 and s.anchored_share >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
