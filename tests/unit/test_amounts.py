"""Amounts no one can misread: the contract counts in the asset's smallest unit, and every answer, block and
line a person or a model reads shows the human value beside that integer
(`code3 init` and `code3 ledger show`: tests/integration/test_amounts.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from domain.bounties.amounts import display, with_units
from domain.bounties.metadata import BountyMeta, IssueMetadata
from mcp_tools.lifecycle import publish, settle, specs
from mcp_tools.lifecycle.answers import PublishAnswer
from mcp_tools.manifest import build
from tests.unit.handler_world import AMOUNT, REPO, MemoryWorld


@pytest.mark.parametrize(("amount", "asset", "shown"), [
    (1_000_000, "USDT", "1 USDT"), ("10000000", "USDT", "10 USDT"), (500_000, "USDT", "0.5 USDT"),
    (1, "USDT", "0.000001 USDT"), (0, "USDT", "0 USDT"), (1_234_000_001, "USDT", "1234.000001 USDT"),
    (2**64 - 1, "USDT", "18446744073709.551615 USDT"), (150_000_000, "APT", "1.5 APT"),
    (7, "XYZ", "7 XYZ (smallest unit)"),
])
def test_an_amount_in_the_smallest_unit_is_shown_in_whole_units(amount: int | str, asset: str, shown: str) -> None:
    assert display(amount, asset) == shown


def test_a_line_for_people_gives_both_readings() -> None:
    assert with_units(10_000_000, "USDT") == "10 USDT (10000000 smallest units)"
    assert with_units(1, "USDT") == "0.000001 USDT (1 smallest unit)"
    assert with_units(7, "XYZ") == "7 XYZ (smallest unit)"


def test_the_issue_metadata_block_carries_the_human_value_and_readers_ignore_it() -> None:
    meta = IssueMetadata(repo=REPO, issue_hash="h", feature_id="001-a",
                         bounty=BountyMeta(network="testnet", asset="USDT", amount="2500000"))
    block = meta.to_block()
    body = json.loads(block.split("\n", 1)[1].rsplit("\n", 1)[0])
    assert body["bounty"]["amount"] == "2500000" and body["bounty"]["amount_display"] == "2.5 USDT"
    assert IssueMetadata.from_body(f"spec\n\n{block}\n") == meta
    foreign = BountyMeta(network="testnet", asset="USDT", amount="lots")  # someone else's block: shown as found
    assert foreign.model_dump()["amount_display"] == "lots USDT (smallest unit)"


def test_amount_inputs_say_the_unit_with_an_example() -> None:
    tools = {entry.name: entry.listed for entry in build()}
    for name, argument in (("spec_mcp.publish_issue_with_metadata", "amount"),
                           ("server_mcp.accept_best_task", "min_amount")):
        schema = tools[name].input_schema["properties"][argument]
        assert "smallest unit" in schema["description"] and '"1000000" is 1 USDT' in schema["description"], name


@pytest.fixture
def w(tmp_path: Path) -> Iterator[MemoryWorld]:
    world = MemoryWorld(tmp_path)
    yield world
    world.close()


def test_publish_and_cancel_answer_the_human_value_beside_the_smallest_unit(w: MemoryWorld) -> None:
    alice = w["alice"]
    spec = specs.specify(alice, "Users can export their to-do list as CSV")
    answer = publish.publish_issue_with_metadata(alice, repo=REPO, feature_id=spec["feature_id"],
                                                 spec_path=spec["paths"]["spec"], amount=str(3 * AMOUNT),
                                                 asset="USDT", network=alice.chain.network)
    assert answer["bounty"]["amount"] == "3000000" and answer["bounty"]["amount_display"] == "3 USDT"
    TypeAdapter(PublishAnswer).validate_python(answer, strict=True)  # the output schema declares the fields
    body = alice.forge.get_issue(REPO, answer["issue"]["number"]).body
    meta = IssueMetadata.from_body(body)
    assert meta is not None and meta.bounty.amount == "3000000" and '"amount_display": "3 USDT"' in body
    cancelled = settle.cancel_bounty(alice, answer["bounty"]["bounty_id"])
    assert (cancelled["refunded"], cancelled["refunded_display"]) == ("3000000", "3 USDT")
