"""The Move module, its ABI (move/abi.json) and the Python side cannot drift apart silently.

No Move toolchain installs here, so a small reader takes the module's public declarations (entry
functions, views, structs, event structs, abort and status constants) out of the source and they are
compared with the ABI, which in turn is compared with domain.contract and domain.bounty.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from adapters.aptos_abi import load_abi
from domain import contract
from domain.contract import Abort, BountyState, Status

ROOT = Path(__file__).resolve().parents[2]
MOVE = ROOT / "move" / "sources" / "bounty.move"
ABI = load_abi()
Pairs = list[tuple[str, str]]


def _source() -> str:
    text = re.sub(r"/\*.*?\*/", "", MOVE.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _split(text: str) -> list[str]:
    """Split on commas outside <...> (types such as Table<u64, Bounty> hold commas)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p.strip() for p in [*parts, current] if p.strip()]


def _pairs(text: str) -> Pairs:
    return [(name.strip(), kind.strip()) for name, kind in (p.split(":", 1) for p in _split(text))]


class MoveModule:
    """The public surface of a Move module, read with regular expressions (enough for one known file)."""

    def __init__(self, src: str) -> None:
        header = re.search(r"\bmodule\s+(\w+)::(\w+)\s*\{", src)
        assert header, "no module header"
        self.address, self.name = header.groups()
        self.entries = {m[1]: _pairs(m[2]) for m in re.finditer(r"\bentry\s+fun\s+(\w+)\s*\(([^)]*)\)", src)}
        self.views = {m[1]: {"params": _pairs(m[2]), "returns": m[3].strip()} for m in re.finditer(
            r"#\[view\]\s*public\s+fun\s+(\w+)\s*\(([^)]*)\)\s*:\s*([^{]+?)\s*(?:acquires\s+[\w\s,]+)?\{", src)}
        self.public_funs = set(re.findall(r"\bpublic\s+(?:entry\s+)?fun\s+(\w+)", src))
        self.structs = {m[1]: _pairs(m[2]) for m in re.finditer(r"\bstruct\s+(\w+)\s+has\s+[\w\s,]+\{([^}]*)\}", src)}
        self.events = {m[1]: _pairs(m[2]) for m in re.finditer(
            r"#\[event\]\s*struct\s+(\w+)\s+has\s+[\w\s,]+\{([^}]*)\}", src)}
        self.aborts = {m[1]: int(m[2]) for m in re.finditer(r"\bconst\s+(E_\w+)\s*:\s*u64\s*=\s*(\d+)\s*;", src)}
        self.statuses = {m[1]: int(m[2]) for m in re.finditer(r"\bconst\s+STATUS_(\w+)\s*:\s*u8\s*=\s*(\d+)\s*;",
                                                              src)}


@pytest.fixture(scope="module")
def move() -> MoveModule:
    return MoveModule(_source())


def test_the_reader_finds_the_declarations(move: MoveModule) -> None:
    assert move.entries and move.views and move.events and move.aborts, "the reader found nothing: regexes broke"


def test_module_and_named_address(move: MoveModule) -> None:
    assert (move.address, move.name) == (ABI.named_address, ABI.module)


def test_entry_functions_match_the_abi(move: MoveModule) -> None:
    assert move.entries == ABI.entry_functions


def test_views_match_the_abi(move: MoveModule) -> None:
    assert move.views == ABI.views


def test_the_public_surface_is_exactly_the_entry_functions_and_views(move: MoveModule) -> None:
    assert move.public_funs == set(ABI.entry_functions) | set(ABI.views)


def test_event_structs_and_their_fields_match_the_abi(move: MoveModule) -> None:
    assert move.events == ABI.events


def test_view_structs_and_event_handles_match_the_abi(move: MoveModule) -> None:
    for name, fields in ABI.structs.items():
        assert move.structs[name] == fields, name
    handles = move.structs[ABI.handle_resource]
    assert handles == [(field, f"EventHandle<{event}>") for event, field in ABI.handle_fields.items()]
    assert set(ABI.handle_fields) == set(ABI.events)


def test_abort_codes_are_domain_contract_abort_exactly(move: MoveModule) -> None:
    assert ABI.aborts == {a.name: a.value for a in Abort}
    assert move.aborts == {f"E_{name}": value for name, value in ABI.aborts.items()}


def test_statuses_are_domain_contract_status(move: MoveModule) -> None:
    assert ABI.statuses == {s.name: s.value for s in Status}
    assert move.statuses == ABI.statuses


def test_the_bounty_view_carries_every_field_of_bounty_state() -> None:
    assert [name for name, _ in ABI.structs["Bounty"]] == [f.name for f in dataclasses.fields(BountyState)]


def _emitted_by_the_python_rules() -> dict[str, set[str]]:
    """Run every rule of domain.contract once and note each event's fields."""
    seen: dict[str, set[str]] = {}

    def note(emitted: contract.Emitted) -> None:
        for etype, data in emitted:
            seen.setdefault(etype, set()).update(data)

    def bounty(n: int) -> BountyState:
        return BountyState(bounty_id=str(n), sponsor="s", repo="r", issue_hash=f"h{n}", asset="USDT", amount=5,
                           created_at=0)

    paid, cancelled = bounty(1), bounty(2)
    for state in (paid, cancelled):
        note(contract.create(state, sponsor_balance=10))
        note(contract.accept(state, "w"))
    note(contract.submit_pr(paid, "w", "pr", "sha"))
    note(contract.mark_merged(paid, "s", "pr", now=1))
    note(contract.claim_payout(paid, "w", now=paid.cooling_until or 0))
    note(contract.cancel(cancelled, "s"))
    return seen


def _read_by_the_bounty_aggregate() -> dict[str, set[str]]:
    """The `d["field"]` reads of Bounty.from_chain and of each `ev.type == "X"` branch of Bounty.observe."""
    tree = ast.parse((ROOT / "domain" / "bounty.py").read_text())
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def reads(nodes: list[Any]) -> set[str]:
        return {n.slice.value for node in nodes for n in ast.walk(node)
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "d"
                and isinstance(n.slice, ast.Constant)}

    found = {"BountyCreated": reads([funcs["from_chain"]])}
    for node in ast.walk(funcs["observe"]):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                and isinstance(node.test.comparators[0], ast.Constant):
            found[node.test.comparators[0].value] = reads(node.body)
    return found


def test_events_carry_the_fields_the_python_side_emits_and_reads() -> None:
    abi_fields = {name: {field for field, _ in fields} for name, fields in ABI.events.items()}
    assert abi_fields == _emitted_by_the_python_rules()
    read = _read_by_the_bounty_aggregate()
    assert set(read) == set(abi_fields), "Bounty.observe handles exactly the module's events"
    for name, fields in read.items():
        assert fields <= abi_fields[name], f"Bounty reads {sorted(fields - abi_fields[name])} from {name}"
