"""Feature ids by spec-kit's rule (its create-new-feature script): a short name of meaningful words and a
three-digit number that never collides and never grows past 999."""

from __future__ import annotations

import pytest

from domain.bounties.spec import next_feature_id, next_number, short_name
from domain.errors import Code, Code3Error


@pytest.mark.parametrize(("description", "expected"), [
    ("Web AI agent project management", "web-ai-agent"),  # the seed's example; AI is an acronym
    ("Users can export their to-do list as CSV", "users-export-list-csv"),  # exactly four remain: all four
    ("I want to add a UI for the login page", "ui-login-page"),  # stop words dropped
    ("Go to the page of my profile settings", "page-profile-settings"),  # "go" is short and not an acronym
    ("Add OAuth2 login with GitHub for the web app", "oauth2-login-github"),
    ("x", "x"),  # nothing meaningful: the first words as they are
    ("to be or not to be", "not"),  # "not" is three letters and no stop word
    ("a an the", "a-an-the"),  # only stop words: spec-kit falls back to the first three words
    ("导出待办事项", "feature"),  # no ASCII word at all
])
def test_the_short_name_keeps_spec_kits_meaningful_words(description: str, expected: str) -> None:
    assert short_name(description) == expected


def test_a_short_name_is_cut_at_a_word_so_the_feature_id_stays_within_64_characters() -> None:
    name = short_name("internationalisation " * 2 + "supercalifragilisticexpialidocious")
    assert name == "internationalisation-internationalisation"
    assert len(short_name("a" * 200)) == 60


def test_the_seeds_description_after_two_features_gives_003_web_ai_agent() -> None:
    assert next_feature_id(["001-login", "002-tags"], "Web AI agent project management") == "003-web-ai-agent"


def test_numbers_count_only_feature_directories() -> None:
    existing = ["001-a", "007-b", "notes", ".staging-x", "12-short"]
    assert next_feature_id(existing, "Web AI: agent!") == "008-web-ai-agent"
    assert next_feature_id([], "x") == "001-x"


def test_an_explicit_999_does_not_push_later_ids_past_three_digits() -> None:
    assert next_feature_id(["001-a", "002-b", "999-x"], "Web AI agent") == "003-web-ai-agent"
    assert next_number([1, 5, 999]) == 6  # after the highest number that has room, not into a gap
    assert next_number([1, 998, 999]) == 2  # no room at the top: the lowest free number
    assert next_number([999]) == 1


def test_the_next_number_never_collides_with_a_used_one() -> None:
    used = {3, 4, 10, 998, 999}
    for _ in range(20):
        n = next_number(used)
        assert n not in used and 1 <= n <= 999
        used.add(n)


def test_all_999_numbers_taken_is_a_precondition_error() -> None:
    with pytest.raises(Code3Error) as caught:
        next_number(range(1, 1000))
    assert caught.value.code is Code.PRECONDITION and caught.value.hint
