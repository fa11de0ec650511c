"""Amounts no one can misread, through `code3 init` and `code3 ledger show` (which read the project's git
files): the fast checks of the same promise are tests/unit/test_amounts.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.handler_world import AMOUNT, REPO


def test_init_and_ledger_show_print_amounts_and_states_for_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                   ) -> None:
    from code3.cli import main
    from code3.init import InitResult, report
    from code3.settings import Settings
    from code3.wiring import ledger

    shown = report(InitResult(tmp_path, "alice", "0xa", REPO, None, 10_000_000, "USDT", tmp_path / ".mcp.json",
                              {"command": "code3", "args": ["mcp"], "env": {}}))
    assert "funds      10 USDT (10000000 smallest units) on the embedded ledger" in shown
    assert 'amount "5000000" (5 USDT' in shown  # the README's example amount
    from adapters.keystore import Keystore

    settings = Settings(project=tmp_path)
    signer = Keystore(settings.keystore_dir).new("alice")
    chain = ledger(settings)
    chain.mint(signer.address, "USDT", 5 * AMOUNT)
    receipt = chain.create_bounty(signer, REPO, "ab" * 32, "USDT", 2_500_000, mode="exclusive", hold_seconds=3600)
    chain.close()
    assert receipt.success, receipt
    assert main(["ledger", "show", "--project", str(tmp_path)]) == 0
    [bounty] = json.loads(capsys.readouterr().out)["bounties"]
    assert (bounty["amount"], bounty["amount_display"]) == (2_500_000, "2.5 USDT")
    assert (bounty["mode"], bounty["status"]) == ("exclusive", "open")
