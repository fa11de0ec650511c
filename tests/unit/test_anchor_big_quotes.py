"""Big quotes (over 40 lines) are compared line by line, not character by character (issue 18, class 4: the
exact ratio is quadratic in the characters; a 1 000-line annotation took seconds a search). The line-wise
similarity is a lower bound of the exact one and close to it on edited code, and re-anchoring big blocks
stays never wrong (benchmarks/reanchor.py's blocks are at most 12 lines, so this measures the big ones)."""

from __future__ import annotations

import random

from rapidfuzz import fuzz

from benchmarks.reanchor import _code_line
from domain.knowledge.anchor import Anchor, reanchor
from domain.knowledge.anchor_match import _lines_similarity, _norm


def _edited(rng: random.Random, lines: list[str], edits: int) -> list[str]:
    out = list(lines)
    for _ in range(edits):
        at = rng.randrange(len(out))
        kind = rng.random()
        if kind < 0.4:
            out[at] = out[at][:6] + "edited" + out[at][9:]
        elif kind < 0.7:
            out.insert(at, _code_line(rng))
        elif len(out) > 1:
            del out[at]
    return out


def test_the_line_wise_similarity_never_exceeds_the_exact_one_and_stays_close_on_edited_code() -> None:
    rng = random.Random(11)
    for _ in range(150):
        a = [_norm(_code_line(rng)) for _ in range(rng.randint(0, 120))]
        b = [_norm(x) for x in _edited(rng, a, rng.randint(0, 8))] if a else []
        exact = fuzz.ratio("\n".join(a), "\n".join(b)) / 100 if a or b else 1.0
        lower = _lines_similarity(a, b)
        assert lower <= exact + 1e-9
        assert exact - lower <= 0.03
    assert _lines_similarity([], []) == 1.0
    assert _lines_similarity(["abc", "def"], ["abc", "def"]) == 1.0


def _case(rng: random.Random, kind: str) -> tuple[Anchor, list[str], int | None, int]:
    """An anchor on a big block, the edited file, where the block truly starts now (None: gone)."""
    lines = [_code_line(rng) for _ in range(600)]
    size = rng.randint(45, 150)
    start = rng.randint(100, 600 - size - 100)
    anchor = Anchor.capture("\n".join(lines) + "\n", start, start + size - 1)
    block, before, after = lines[start - 1 : start - 1 + size], lines[: start - 1], lines[start - 1 + size :]
    if kind == "insert_above":
        extra = [_code_line(rng) for _ in range(rng.randint(1, 30))]
        return anchor, before[:50] + extra + before[50:] + block + after, start + len(extra), size
    if kind == "edit_inside":
        inner = list(block)
        for at in rng.sample(range(2, size - 2), 3):
            inner[at] = inner[at] + "  # changed"
        return anchor, before + inner + after, start, size
    if kind == "move":
        rest = before + after
        at = rng.randint(20, 60)
        return anchor, rest[:at] + block + rest[at:], at + 1, size
    if kind == "delete":
        return anchor, before + after, None, size
    return anchor, before + block + after[:40] + block + after[40:], start, size  # a copy below; ours in place


def test_re_anchoring_big_blocks_is_never_wrong_and_finds_the_plain_moves() -> None:
    rng = random.Random(5)
    found: dict[str, int] = {}
    for kind in ("insert_above", "edit_inside", "move", "delete", "duplicate"):
        for _ in range(8):
            anchor, lines, truth, size = _case(rng, kind)
            result = reanchor(anchor, "\n".join(lines) + "\n")
            if result.found:
                assert truth is not None, f"{kind}: anchored at {result.start_line} though the block is gone"
                assert (result.start_line, result.end_line) == (truth, truth + size - 1), kind
                found[kind] = found.get(kind, 0) + 1
    assert found.get("insert_above") == 8 and found.get("move") == 8 and found.get("edit_inside", 0) >= 6
