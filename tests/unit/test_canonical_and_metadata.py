from domain.bounties.metadata import BountyMeta, IssueMetadata, replace_block, strip_block
from domain.bounties.spec import next_feature_id, slugify
from domain.canonical import canonical_json, issue_hash, natural_id

TERMS = {"repo": "o/r", "feature_id": "001-a", "spec_digest": "d", "amount": "1", "asset": "USDT",
         "network": "local"}


def test_canonical_json_sorts_keys_recursively_keeps_arrays_and_drops_whitespace() -> None:
    assert canonical_json({"b": [3, 1], "a": {"z": 1, "y": "é"}}) == '{"a":{"y":"é","z":1},"b":[3,1]}'


def test_issue_hash_is_stable_and_changes_with_every_term() -> None:
    base = issue_hash(**TERMS)
    assert base == issue_hash(**dict(reversed(list(TERMS.items()))))
    assert len(base) == 64 and base == base.lower()
    for key in TERMS:
        assert issue_hash(**{**TERMS, key: TERMS[key] + "x"}) != base


def test_natural_ids_are_deterministic_per_kind() -> None:
    assert natural_id("spec", "001-a") == natural_id("spec", "001-a")
    assert natural_id("spec", "001-a") != natural_id("issue", "001-a")


def test_metadata_round_trips_through_an_issue_body_and_ignores_unknown_fields() -> None:
    meta = IssueMetadata(repo="o/r", issue_hash="h", feature_id="001-a",
                         bounty=BountyMeta(network="local", asset="USDT", amount="5"))
    body = replace_block("# Spec\n", meta)
    assert IssueMetadata.from_body(body) == meta
    assert strip_block(body) == "# Spec\n"
    future = body.replace('"feature_id"', '"from_the_future": 1,\n  "feature_id"')
    assert IssueMetadata.from_body(future) == meta
    assert IssueMetadata.from_body("no block here") is None
    updated = replace_block(body, meta.model_copy(update={"issue_number": 7}))
    assert updated.count("code3-meta") == 1 and IssueMetadata.from_body(updated).issue_number == 7


def test_feature_ids_number_after_the_highest_and_slug_the_description() -> None:
    assert next_feature_id(["001-a", "007-b", "notes"], "Web AI: agent!") == "008-web-ai-agent"
    assert next_feature_id([], "x") == "001-x"
    assert len(slugify("word " * 40)) <= 50
