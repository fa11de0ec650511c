"""The Move module, its ABI (adapters/aptos_abi.json) and the Python side cannot drift apart silently.

No Move toolchain installs here, so a small reader takes the module's public declarations (entry
functions, views, structs, event structs, abort and status constants) out of the source and they are
compared with the ABI, which in turn is compared with domain.contract and domain.bounty.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.aptos import AptosChain
from adapters.aptos_abi import load_abi
from adapters.local_ledger import LocalLedger
from adapters.ports import Chain
from domain import contract
from domain.contract import Abort, BountyState, ChainConfig, Mode, Status

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


def _bodies(src: str) -> Iterator[tuple[str, str]]:
    """Every function's name and body (from its opening brace to the matching closing one)."""
    for match in re.finditer(r"\bfun\s+(\w+)\s*(?:<[^>]*>)?\s*\(", src):
        start = src.index("{", match.end())
        depth = 0
        for end in range(start, len(src)):
            depth += {"{": 1, "}": -1}.get(src[end], 0)
            if depth == 0:
                yield match[1], src[start + 1:end]
                break


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
        self.modes = {m[1]: int(m[2]) for m in re.finditer(r"\bconst\s+MODE_(\w+)\s*:\s*u8\s*=\s*(\d+)\s*;", src)}
        self.bounds = {m[1]: int(m[2]) for m in re.finditer(r"\bconst\s+(MAX_\w+|\w+_DIGITS)\s*:\s*u64\s*=\s*(\d+)\s*;",
                                                            src)}
        self.functions = dict(_bodies(src))
        self.toml = (MOVE.parents[1] / "Move.toml").read_text()


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
        return BountyState(bounty_id=str(n), sponsor="s", repo="r", issue_hash=f"{n:064x}", asset="USDT", amount=5,
                           created_at=0, deadline=100)

    paid, cancelled, left = bounty(1), bounty(2), bounty(3)
    for state in (paid, cancelled, left):
        note(contract.create(state, sponsor_balance=10, now=0, issue_hash_taken=False))
        note(contract.accept(state, "w", now=1))
    note(contract.withdraw(left, "w"))
    note(contract.submit_pr(paid, "w", "pr", "a" * 40, now=1))
    note(contract.mark_merged(paid, "resolver", "resolver", "pr", "w", now=1))
    note(contract.claim_payout(paid, now=paid.cooling_until or 0))
    note(contract.cancel(cancelled, "s", now=1))
    return seen


def _read_by_the_bounty_aggregate() -> dict[str, set[str]]:
    """The `d["field"]` reads of Bounty.from_chain and of each `ev.type == "X"` branch of Bounty.observe."""
    tree = ast.parse((ROOT / "domain" / "bounty.py").read_text())
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def reads(nodes: list[Any]) -> set[str]:
        """`d["x"]`, and `d.get("x", default)` for fields an embedded ledger's older events lack."""
        found = set()
        for n in (n for node in nodes for n in ast.walk(node)):
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "d" \
                    and isinstance(n.slice, ast.Constant):
                found.add(n.slice.value)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == "d" and n.args \
                    and isinstance(n.args[0], ast.Constant):
                found.add(n.args[0].value)
        return found

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
    assert {"deadline", "mode", "hold_seconds"} <= read["BountyCreated"] and "hold_until" in read["BountyAccepted"]


def test_modes_are_domain_contract_mode(move: MoveModule) -> None:
    assert ABI.modes == {m.name: m.value for m in Mode}
    assert move.modes == ABI.modes


def test_bounds_are_domain_contract_bounds(move: MoveModule) -> None:
    assert move.bounds and move.bounds == {name: getattr(contract, name) for name in move.bounds}
    assert set(move.bounds) == {"MAX_COOLING_PERIOD", "MAX_DEADLINE_AHEAD", "MAX_HOLD_SECONDS", "MAX_WORKERS",
                                "MAX_REPO_BYTES", "MAX_PR_URL_BYTES", "ISSUE_HASH_DIGITS"}


def test_the_config_view_carries_chain_config() -> None:
    assert {name for name, _ in ABI.structs["Config"]} == {f.name for f in dataclasses.fields(ChainConfig)}


# --- abort codes per rule: the Move function and the Python rule check the same things, in the same order ---

# entry function -> (the domain.contract rule, the checks the chain makes before the rule runs)
RULES: dict[str, tuple[Any, list[str]]] = {
    "initialize": (contract.initialize, ["NOT_ADMIN", "INVALID_STATE"]),  # only the publisher, only once
    "set_cooling_period": (contract.set_cooling_period, []),
    "set_resolver": (contract.set_resolver, []),
    "create_bounty": (contract.create, []),
    "accept_bounty": (contract.accept, ["BOUNTY_NOT_FOUND"]),
    "withdraw_task": (contract.withdraw, ["BOUNTY_NOT_FOUND"]),
    "submit_pr": (contract.submit_pr, ["BOUNTY_NOT_FOUND"]),
    "mark_merged": (contract.mark_merged, ["BOUNTY_NOT_FOUND"]),
    "claim_payout": (contract.claim_payout, ["BOUNTY_NOT_FOUND"]),
    "cancel_bounty": (contract.cancel, ["BOUNTY_NOT_FOUND"]),
}


def _dedup(codes: list[str]) -> list[str]:
    return list(dict.fromkeys(codes))


def _move_aborts(move: MoveModule, function: str) -> list[str]:
    """The abort codes a Move function can raise, in source order, with the module's helpers inlined."""
    names = "|".join(sorted(move.functions, key=len, reverse=True))
    found: list[str] = []
    for token in re.finditer(rf"\bE_(\w+)\b|\b({names})\s*\(", move.functions[function]):
        if token[1]:
            found.append(token[1])
        elif token[2] != function:
            found += _move_aborts(move, token[2])
    return found


def _python_functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(inspect.getsource(contract))
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def _python_aborts(node: ast.AST, functions: dict[str, ast.FunctionDef]) -> list[str]:
    """`Abort.X` in source order, with the calls of other domain.contract functions and methods inlined."""
    found: list[str] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id == "Abort":
            found.append(child.attr)
        if isinstance(child, ast.Call):
            callee = child.func.id if isinstance(child.func, ast.Name) else getattr(child.func, "attr", None)
            if callee in functions and callee not in ("ContractAbort",):
                found += _python_aborts(child, functions)  # the arguments first, as Python evaluates them
                found += _python_aborts(functions[callee], functions)
                continue
        found += _python_aborts(child, functions)
    return found


@pytest.mark.parametrize("function", sorted(RULES))
def test_each_rule_aborts_with_the_same_codes_in_the_same_order_in_move_and_python(
        move: MoveModule, function: str) -> None:
    rule, chain_first = RULES[function]
    python = _dedup(_python_aborts(_python_functions()[rule.__name__], _python_functions()))
    assert _dedup(_move_aborts(move, function)) == _dedup(chain_first + python), function


def test_every_abort_code_belongs_to_a_rule(move: MoveModule) -> None:
    used = {code for function in RULES for code in _move_aborts(move, function)}
    assert used == {a.name for a in Abort}, "an abort code no rule raises, or a rule raising an undeclared one"


def test_the_adapters_take_the_entry_functions_parameters() -> None:
    """Every entry function but initialize is a method of the Chain port and of both implementations,
    taking the Move parameters (after the signer) by the same names, in the same order."""
    for function, params in ABI.entry_functions.items():
        if function == "initialize":
            continue
        wanted = [name for name, kind in params if kind != "&signer"]
        for implementation in (Chain, LocalLedger, AptosChain):
            names = list(inspect.signature(getattr(implementation, function)).parameters)
            assert names[:2] == ["self", "signer"] and names[2:] == wanted, (implementation.__name__, function)


def test_the_escrow_is_a_resource_account_only_payouts_and_refunds_use(move: MoveModule) -> None:
    src = _source()
    assert "account::create_resource_account(" in move.functions["initialize"]
    assert "escrow: SignerCapability" in src and "ExtendRef" not in src and "create_named_object" not in src
    users = {name for name, body in move.functions.items() if "create_signer_with_capability" in body}
    assert users == {"pay_from_escrow"}
    payers = {name for name, body in move.functions.items() if "pay_from_escrow(" in body}
    assert payers == {"claim_payout", "cancel_bounty"}
    assert re.search(r'^upgrade_policy\s*=\s*"immutable"\s*$', move.toml, re.M), "the package must be immutable"
