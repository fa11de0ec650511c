"""Text others write is parsed in linear time (issue 18, class 4): the linear scanners that replaced the
backtracking patterns find exactly what those patterns found (the patterns are the oracle on small texts, where
their cost does not matter). The hostile inputs at the 5 MB cap: tests/campaigns/test_hostile_inputs.py."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.redact import _SECRET_ASSIGN, redact
from domain.bounties import metadata
from domain.knowledge import spec_document
from domain.knowledge.skeleton import MergedSkeleton
from domain.knowledge.spec_document import parse
from domain.knowledge.text_scan import remove
from mcp_tools.lifecycle import webhook
from mcp_tools.lifecycle.remote_artifacts import read_artifacts, render_comment

OLD_BASELINE = re.compile(r"<!-- baseline-skeleton: (\{.*?\}) -->", re.DOTALL)
OLD_META = re.compile(r"```code3-meta\s*\n(.*?)\n```", re.DOTALL)
OLD_SECRET_ASSIGN = re.compile(r"(?i)\b(\w*(?:secret|token|passw(?:or)?d|api_?key|private_?key|auth)\w*)"
                               r"(\s*[:=]\s*)([\"'])([^\"'\n]{8,})\3")
OLD_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
OLD_ARTIFACT = re.compile(r"<!-- code3:artifact=(?P<name>[^ ]+) -->\n(?P<fence>`{4,})markdown\n"
                          r"(?P<text>.*?)\n(?P=fence)\n", re.DOTALL)


def _texts(pieces: list[str], max_size: int = 14) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


@settings(deadline=None)
@given(_texts(["<!-- baseline-skeleton: {", "} -->", "}", " -->", "{", "x", "\n"]))
def test_the_baseline_scanner_finds_what_the_old_pattern_found(text: str) -> None:
    match = OLD_BASELINE.search(text)
    span = next(spec_document._baselines(text), None)
    assert (tuple(span) if span else None) == (
        (match.start(), match.start(1), match.end(1), match.end()) if match else None)
    assert remove(text, spec_document._baselines(text)) == OLD_BASELINE.sub("", text)


@settings(deadline=None)
@given(_texts(["```code3-meta", "\n", " ", "\t", "```", "\n```", "{}", "x"]))
def test_the_issue_metadata_scanner_finds_what_the_old_pattern_found(text: str) -> None:
    match = OLD_META.search(text)
    span = next(metadata._blocks(text), None)
    assert (tuple(span) if span else None) == (
        (match.start(), match.start(1), match.end(1), match.end()) if match else None)
    assert metadata.strip_block(text) == OLD_META.sub("", text).rstrip() + "\n"


@settings(deadline=None)
@given(_texts(["<!-- code3:artifact=a -->\n````markdown\n", "<!-- code3:artifact=b -->\n`````markdown\n",
               "<!-- code3:artifact=", " -->\n", "x", "\n````\n", "\n`````\n", "````", "\n", "`", " "]))
def test_the_artifact_scanner_finds_what_the_old_pattern_found(text: str) -> None:
    assert read_artifacts(text) == {m["name"]: m["text"] + "\n" for m in OLD_ARTIFACT.finditer(text)}


@settings(deadline=None)
@given(_texts(["secret", "Token", "x", "_", " ", "=", ":", "'", '"', "abcdefgh", "\n", "auth", "passwd", "é", "1"]))
def test_the_secret_assignment_pattern_matches_what_the_old_one_matched(text: str) -> None:
    assert [(m.span(), m.groups()) for m in _SECRET_ASSIGN.finditer(text)] == [
        (m.span(), m.groups()) for m in OLD_SECRET_ASSIGN.finditer(text)]


@settings(deadline=None)
@given(st.recursive(st.text(alphabet='a"\\[]{}\né', max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=6), st.booleans())
def test_the_webhook_string_pattern_strips_json_strings_as_the_old_one_did(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert webhook._STRINGS.sub("", text) == OLD_JSON_STRING.sub("", text)


def test_a_jwt_is_still_redacted_where_a_token_begins() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl"
    for text in (jwt, f"Bearer {jwt}", f"token={jwt};", f'"{jwt}"'):
        assert "[REDACTED:jwt]" in redact(text).text and "eyJzdWIi" not in redact(text).text


def test_artifacts_written_by_render_comment_read_back_whatever_fences_they_hold() -> None:
    artifacts = {"plan.md": "# Plan\n\n````\nnested fence\n````\n", "research.md": "no fence\n"}
    assert read_artifacts(render_comment("plan", "001-x", artifacts)) == artifacts


def test_front_matter_and_baseline_round_trip_through_render_and_parse() -> None:
    baseline = MergedSkeleton.build("src", [])
    text = spec_document.render({"type": "module-spec", "version": 2, "relatedFiles": ["a.py"]}, "Module spec: src",
                                {"intent": "Does -- things"}, baseline)
    document = parse(text)
    assert document.front["relatedFiles"] == ["a.py"] and document.baseline == baseline
    assert document.sections["intent"] == "Does -- things"
    replaced = spec_document.replace_baseline(text, baseline, {"version": 3})
    assert parse(replaced).version == 3 and parse(replaced).sections == document.sections
