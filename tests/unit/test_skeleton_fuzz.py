"""Broken and random input never crashes an extractor: mutated fixture files of every grammar."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.code_parser.languages import EXTENSIONS, GRAMMARS, grammar_for
from adapters.code_parser.treesitter import TreeSitterCodeParser
from domain.knowledge.skeleton import Export

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code"
PARSER = TreeSitterCodeParser(workers=1)


def _samples() -> dict[str, tuple[str, bytes]]:
    found: dict[str, tuple[str, bytes]] = {}
    for path in sorted(FIXTURES.rglob("*")):
        grammar = grammar_for(path.name) if path.is_file() else None
        if grammar is not None and grammar not in found:
            found[grammar] = (path.name, path.read_bytes())
    return found


SAMPLES = _samples()


def test_every_grammar_has_a_sample() -> None:
    assert set(SAMPLES) == set(GRAMMARS) == set(EXTENSIONS.values())


def _check(name: str, data: bytes) -> None:
    sk = PARSER.parse_source(name, data)
    assert not [e for e in sk.parse_errors if "extraction failed" in e], sk.parse_errors
    assert all(e.startswith("line ") for e in sk.parse_errors)

    def walk(exports: list[Export]) -> None:
        for e in exports:
            assert 1 <= e.start_line <= e.end_line <= max(sk.lines, 1), (e.name, e.start_line, e.end_line, sk.lines)
            walk(e.members)

    walk(sk.exports)


@pytest.mark.parametrize("grammar", sorted(SAMPLES))
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.tuples(st.floats(0, 1), st.integers(1, 40)), min_size=1, max_size=4),
       junk=st.binary(max_size=12))
def test_mutated_sources_never_crash(grammar: str, cuts: list[tuple[float, int]], junk: bytes) -> None:
    name, data = SAMPLES[grammar]
    for at, length in cuts:
        pos = int(at * len(data))
        data = data[:pos] + junk + data[pos + length:]
    _check(name, data)


@pytest.mark.parametrize("grammar", sorted(SAMPLES))
@settings(deadline=None)
@given(text=st.text(max_size=200))
def test_random_text_never_crashes(grammar: str, text: str) -> None:
    _check(SAMPLES[grammar][0], text.encode("utf-8", "surrogatepass"))


def test_a_script_with_a_brace_before_a_character_beyond_the_bmp_parses_in_this_process() -> None:
    """tree-sitter-bash 0.25.1 crashed the process (SIGSEGV) on `{` + U+E0000 in about half the runs: the language
    hands the grammar four `_` for each such character, and the skeleton still reads the file's own bytes."""
    data = "f() { echo {\U000e0000}; }\necho {\U0010ffff}\n".encode()
    for _ in range(2000):
        sk = PARSER.parse_source("hostile.sh", data)
    assert [e.name for e in sk.exports] == ["f"] and sk.lines == 2
