"""The annotation rules take a whole string or refuse it: `re.match` with `^…$` lets a trailing newline
through (`$` matches before it), which made a tag or idempotency key carry it and an id raise ValueError
(an INTERNAL answer instead of VALIDATION_ERROR)."""

from __future__ import annotations

import pytest

from domain.errors import Code, Code3Error
from domain.knowledge.annotation_rules import check_client_key, check_tags, format_ann_id, parse_ann_id

ID = "ann_01M83NBMTG5DH0KMZKJHRSNKE6"


@pytest.mark.parametrize("tail", ["\n", "\r\n", " ", "\n\n"])
def test_an_id_with_a_trailing_newline_is_refused_as_invalid_not_crashed_on(tail: str) -> None:
    assert format_ann_id(parse_ann_id(ID)) == ID
    with pytest.raises(Code3Error) as caught:
        parse_ann_id(ID + tail)
    assert caught.value.code is Code.VALIDATION


def test_a_tag_or_key_with_a_trailing_newline_is_refused() -> None:
    assert check_tags(["perf"]) == ["perf"] and check_client_key("k-1") == "k-1"
    for bad in (lambda: check_tags(["perf\n"]), lambda: check_client_key("k-1\n")):
        with pytest.raises(Code3Error) as caught:
            bad()
        assert caught.value.code is Code.VALIDATION
