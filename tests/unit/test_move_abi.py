"""The Move module, its ABI (adapters/aptos_abi.json) and the Python side cannot drift apart silently.

No Move compiler installs here, so the module is read twice: by a tree-sitter Move grammar (built before `make test`
by scripts/build_move_grammar.sh from PyPI's sdist of tree-sitter-move: the file must parse without an error node, and
the entry functions, views, structs and events of its syntax tree must be the ABI's), and by a small reader with
regular expressions for what the grammar's tree does not name (abort codes per function, constants, calls).
The ABI is in turn compared with domain.bounties.contract, domain.bounties.contract_terms, domain.bounties.bounty and
the adapters.
"""

from __future__ import annotations

import ast
import ctypes
import dataclasses
import inspect
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tree_sitter

from adapters.aptos import AptosChain
from adapters.aptos_abi import load_abi
from adapters.local_ledger import LocalLedger
from adapters.ports import Chain
from domain.bounties import contract, contract_args, contract_terms
from domain.bounties import state as bounty_state
from domain.bounties.contract import Abort, BountyState, ChainConfig, Mode, Rejection, Status, SubmissionState

ROOT = Path(__file__).resolve().parents[2]
MOVE = ROOT / "move" / "sources" / "bounty.move"
ABI = load_abi()
Pairs = list[tuple[str, str]]
# What scripts/build_move_grammar.sh builds (before `make test`): PyPI's tree-sitter-move sdist, compiled.
GRAMMAR_VERSION = "0.0.2"
GRAMMAR = ROOT / ".cache" / "tree-sitter-move" / f"tree-sitter-move-{GRAMMAR_VERSION}.so"
GRAMMAR_SYMBOL = "tree_sitter_move_on_aptos"
_CAPSULE_NAME = b"tree_sitter.Language"  # module-level: the capsule keeps a pointer to these bytes
# The Chain methods that read each view (the others have the view's own name and parameters).
VIEW_METHODS = {"get_bounty_by_issue_hash": "find_bounty_by_issue_hash", "get_bounties": "list_bounties",
                "get_config": "config"}


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

        def u8_consts(prefix: str) -> dict[str, int]:
            return {m[1]: int(m[2]) for m in re.finditer(rf"\bconst\s+{prefix}_(\w+)\s*:\s*u8\s*=\s*(\d+)\s*;", src)}

        self.statuses, self.modes = u8_consts("STATUS"), u8_consts("MODE")
        self.states, self.rejections = u8_consts("STATE"), u8_consts("REJECT")
        self.bounds = {m[1]: int(m[2]) for m in re.finditer(r"\bconst\s+([A-Z]\w*)\s*:\s*u64\s*=\s*(\d+)\s*;", src)
                       if not m[1].startswith("E_")}
        self.byte_strings = {m[1]: m[2].encode() for m in re.finditer(
            r'\bconst\s+(\w+)\s*:\s*vector<u8>\s*=\s*b"([^"]*)"\s*;', src)}
        self.functions = dict(_bodies(src))
        self.toml = (MOVE.parents[1] / "Move.toml").read_text()

    def calls(self, function: str) -> list[str]:
        """The module's functions that `function` calls, in source order."""
        names = "|".join(sorted(self.functions, key=len, reverse=True))
        return [m[1] for m in re.finditer(rf"\b({names})\s*\(", self.functions[function]) if m[1] != function]

    def reaches(self, function: str, target: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(callee == target or (callee not in seen and self.reaches(callee, target, seen | {function}))
                   for callee in self.calls(function))


@pytest.fixture(scope="module")
def move() -> MoveModule:
    return MoveModule(_source())


def test_the_reader_finds_the_declarations(move: MoveModule) -> None:
    assert move.entries and move.views and move.events and move.aborts, "the reader found nothing: regexes broke"


def test_the_source_is_ascii_as_the_move_compiler_requires() -> None:
    assert MOVE.read_bytes().isascii(), "the Move compiler refuses any other character, comments included"


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


def test_submission_states_and_rejection_reasons_are_domain_contract_terms(move: MoveModule) -> None:
    assert ABI.submission_states == {s.name: s.value for s in SubmissionState} == move.states
    assert ABI.rejections == {r.name: r.value for r in Rejection} == move.rejections


def test_the_bounty_view_carries_every_field_of_bounty_state() -> None:
    assert [name for name, _ in ABI.structs["Bounty"]] == [f.name for f in dataclasses.fields(BountyState)]


def test_the_nested_structs_carry_what_the_python_state_holds() -> None:
    state = BountyState(bounty_id="1", sponsor="s", repo="r", issue_hash="0" * 64, asset="USDT", amount=1,
                        created_at=0, deadline=1)
    state.status, state.entrants = Status.STARTED, 1
    contract.submit_pr(state, "w", "pr", "a" * 40, now=0, entered=True)
    assert [name for name, _ in ABI.structs["Submission"]] == ["worker", *state.submissions["w"]]
    contract.dispute(state, "w", "why", now=0)
    assert state.dispute is not None and [name for name, _ in ABI.structs["Dispute"]] == list(state.dispute)
    assert [name for name, _ in ABI.structs["Split"]] == ["recipients", "shares"]


def _emitted_by_the_python_rules() -> contract.Emitted:
    """Run every rule of domain.bounties.contract that emits, and return every event it emitted."""
    emitted: contract.Emitted = []

    def bounty(n: int) -> BountyState:
        state = BountyState(bounty_id=str(n), sponsor="s", resolver="r", repo="o/r", repo_id=7,
                            issue_hash=f"{n:064x}", asset="USDT", amount=10, created_at=0, deadline=100)
        emitted.extend(contract.create(state, sponsor_balance=100, now=0, issue_hash_taken=False))
        return state

    emitted += contract.link("r", 1, "w", "w", proof_ok=True)
    paid, cancelled, ruled, left = bounty(1), bounty(2), bounty(3), bounty(4)
    emitted += contract.fund(cancelled, "f", 5, nonce_used=False, balance=5, first=True, nonce=1)
    for state in (paid, ruled, left):
        emitted += contract.accept(state, "w", now=1, entered=False)
    emitted += contract.withdraw(left, "w", entered=True)
    emitted += contract.submit_pr(paid, "w", "pr-1", "a" * 40, now=1, entered=True)
    emitted += contract.reject_submission(paid, "r", "w", Rejection.CLOSED, now=2)
    emitted += contract.submit_pr(paid, "w", "pr-2", "b" * 64, now=3, entered=True)
    emitted += contract.mark_merged(paid, "r", "pr-2", author_id=1, repo_id=7, pr_number=2, now=4, winner="w",
                                    settled=False)
    emitted += contract.set_split(paid, "w", ["w", "c"], [3, 2], [True, True])
    emitted += contract.claim_payout(paid, now=paid.cooling_until or 0)
    emitted += contract.cancel(cancelled, "s", now=1, contribution=10)
    emitted += contract.withdraw_refund(cancelled, "f", contribution=5)
    emitted += contract.submit_pr(ruled, "w", "pr-3", "c" * 40, now=1, entered=True)
    emitted += contract.dispute(ruled, "w", "closed without a reason", now=2)
    emitted += contract.rule(ruled, "r", 5_000, now=3, sponsor_contribution=10)
    emitted += contract.tip(paid, "t", "w", 1, nonce=1, nonce_used=False, linked=True, balance=5)
    return emitted


def _fits(kind: str, value: Any) -> bool:
    """A Python event value can be carried by the Move field's type."""
    if kind.startswith("vector<"):
        return isinstance(value, list) and all(_fits(kind[7:-1], item) for item in value)
    if kind in ("u8", "u64"):
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** {"u8": 8, "u64": 64}[kind]
    return isinstance(value, {"bool": bool, "address": str, "String": str}[kind])


def _read_by_the_bounty_aggregate() -> dict[str, set[str]]:
    """The `d["field"]` reads of Bounty.from_chain and of each `ev.type == "X"` branch of Bounty.observe."""
    tree = ast.parse((ROOT / "domain" / "bounties" / "bounty.py").read_text())
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


def test_events_carry_the_fields_the_python_rules_emit_with_values_their_types_carry() -> None:
    emitted = _emitted_by_the_python_rules()
    seen: dict[str, set[str]] = {}
    for etype, data in emitted:
        seen.setdefault(etype, set()).update(data)
        kinds = dict(ABI.events[etype])
        for name, value in data.items():
            wanted = kinds[name]
            if name == "bounty_id":
                assert isinstance(value, str) and value.isdigit(), (etype, value)  # a u64 the domain keeps as text
            else:
                assert _fits(wanted, value), (etype, name, wanted, value)
    assert seen == {name: {field for field, _ in fields} for name, fields in ABI.events.items()}


def test_the_bounty_aggregate_reads_only_what_the_events_carry() -> None:
    abi_fields = {name: {field for field, _ in fields} for name, fields in ABI.events.items()}
    read = _read_by_the_bounty_aggregate()
    bounty_events = {name for name, fields in abi_fields.items() if "bounty_id" in fields}
    assert set(read) == bounty_events, "Bounty.observe handles exactly the module's bounty events (links: no bounty)"
    for name, fields in read.items():
        assert fields <= abi_fields[name], f"Bounty reads {sorted(fields - abi_fields[name])} from {name}"
    assert {"deadline", "mode", "hold_seconds"} <= read["BountyCreated"] and "hold_until" in read["BountyAccepted"]


def test_modes_are_domain_contract_mode(move: MoveModule) -> None:
    assert ABI.modes == {m.name: m.value for m in Mode}
    assert move.modes == ABI.modes


def test_bounds_are_domain_contract_terms_bounds(move: MoveModule) -> None:
    ed25519 = {"PUBLIC_KEY_BYTES": 32, "SIGNATURE_BYTES": 64}  # the key and signature sizes of ed25519
    commit = dict(zip(("COMMIT_SHA1_DIGITS", "COMMIT_SHA256_DIGITS"), contract_terms.COMMIT_SHA_DIGITS, strict=True))
    expected = {name: getattr(contract_terms, name, None) for name in move.bounds} | ed25519 | commit
    assert move.bounds == expected
    assert {"MAX_COOLING_PERIOD", "MAX_DISPUTE_PERIOD", "REFUND_GRACE", "MAX_DEADLINE_AHEAD", "MAX_HOLD_SECONDS",
            "MAX_SUBMISSIONS", "MAX_SPLIT", "MAX_SHARE", "BPS", "MAX_REPO_BYTES", "MAX_PR_URL_BYTES",
            "MAX_REASON_BYTES", "MAX_LOGIN_BYTES", "MAX_PAGE", "ISSUE_HASH_DIGITS"} <= set(move.bounds)


def test_the_link_statement_prefix_is_domain_links(move: MoveModule) -> None:
    assert move.byte_strings["LINK_PREFIX"] == contract_terms.LINK_PREFIX
    body = move.functions["link_message"]
    assert body.index("LINK_PREFIX") < body.index("bcs::to_bytes(&forge_user_id)") < body.index(
        "bcs::to_bytes(&account)"), "prefix, BCS(u64 forge user id), BCS(address): domain.bounties.links.link_message"


def test_the_config_view_carries_chain_config() -> None:
    assert [name for name, _ in ABI.structs["Config"]] == [f.name for f in dataclasses.fields(ChainConfig)]


# --- the syntax tree of a real Move grammar ---------------------------------------------------------------

@pytest.fixture(scope="module")
def move_parser() -> tree_sitter.Parser:
    """tree-sitter's parser for Move (Aptos), from the grammar `make test` builds first. Missing, the test fails:
    CI installs it, so no test may go green by skipping it."""
    if not GRAMMAR.is_file():
        pytest.fail(f"the tree-sitter Move grammar is missing ({GRAMMAR.relative_to(ROOT)}): run `make test` or "
                    "`bash scripts/build_move_grammar.sh` (it builds it from PyPI's tree-sitter-move sdist)",
                    pytrace=False)
    entry = getattr(ctypes.CDLL(str(GRAMMAR)), GRAMMAR_SYMBOL)
    entry.restype = ctypes.c_void_p
    # a "tree_sitter.Language" capsule, as grammar packages hand it over (an int pointer is deprecated)
    capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        ("PyCapsule_New", ctypes.pythonapi))
    return tree_sitter.Parser(tree_sitter.Language(capsule(entry(), _CAPSULE_NAME, None)))


def _flaws(node: tree_sitter.Node) -> Iterator[str]:
    if node.is_error or node.is_missing:
        yield f"{'MISSING' if node.is_missing else 'ERROR'} at {node.start_point}: {node.text.decode()[:60]!r}"
    for child in node.children:
        yield from _flaws(child)


def _type(node: tree_sitter.Node) -> str:
    """A type as the ABI writes it: `&signer`, `vector<address>`, `Option<Bounty>`."""
    return re.sub(r"\s*([<>,&])\s*", r"\1", " ".join(node.text.decode().split())).replace(",", ", ")


def _fields(node: tree_sitter.Node, kind: str, name_field: str) -> Pairs:
    """The (name, type) pairs of a function's parameters or of a struct's body."""
    return [(child.child_by_field_name(name_field).text.decode(),
             _type(next(c for c in child.children if c.type == "type")))
            for child in node.children if child.type == kind]


@dataclasses.dataclass
class MoveTree:
    """The module's declarations as the grammar's syntax tree has them."""

    entries: dict[str, Pairs]
    views: dict[str, dict[str, Any]]
    public: set[str]
    structs: dict[str, Pairs]
    events: dict[str, Pairs]


@cache
def _declarations(parser: tree_sitter.Parser) -> tuple[tree_sitter.Tree, MoveTree]:
    tree = parser.parse(MOVE.read_bytes())
    module = next(c for c in tree.root_node.children if c.type == "module")
    found = MoveTree({}, {}, set(), {}, {})
    for declaration in (c for c in module.children if c.type == "declaration"):
        attributes = {a.text.decode() for c in declaration.children if c.type == "attributes"
                      for a in c.children if a.type == "attribute"}
        modifiers = {c.text.decode() for c in declaration.children if c.type == "module_member_modifier"}
        function = next((c for c in declaration.children if c.type == "function_decl"), None)
        struct = next((c for c in declaration.children if c.type == "struct_decl"), None)
        if function is not None:
            name = function.child_by_field_name("name").text.decode()
            params = _fields(function.child_by_field_name("parameters"), "parameter", "variable")
            if "public" in modifiers:
                found.public.add(name)
            if "entry" in modifiers:
                found.entries[name] = params
            if "view" in attributes:
                found.views[name] = {"params": params, "returns": _type(function.child_by_field_name("return_type"))}
        if struct is not None:
            name = struct.child_by_field_name("name").text.decode()
            body = next(c for c in struct.children if c.type == "body")
            found.structs[name] = _fields(body, "field_annot", "field")
            if "event" in attributes:
                found.events[name] = found.structs[name]
    return tree, found


def test_the_module_parses_with_a_real_move_grammar(move_parser: tree_sitter.Parser) -> None:
    tree, _ = _declarations(move_parser)
    assert not tree.root_node.has_error and list(_flaws(tree.root_node)) == []


def test_the_grammar_flags_a_broken_module(move_parser: tree_sitter.Parser) -> None:
    """A grammar that took anything would prove nothing: one missing separator is an error node."""
    good = b"assert!(amount > 0, E_INVALID_AMOUNT);"
    broken = MOVE.read_bytes().replace(good, b"assert!(amount > 0 E_INVALID_AMOUNT)", 1)
    assert broken != MOVE.read_bytes() and list(_flaws(move_parser.parse(broken).root_node))


def test_the_syntax_tree_declares_the_abi(move_parser: tree_sitter.Parser) -> None:
    _, tree = _declarations(move_parser)
    assert tree.entries == ABI.entry_functions
    assert tree.views == ABI.views
    assert tree.public == set(ABI.entry_functions) | set(ABI.views)
    assert tree.events == ABI.events
    assert {name: tree.structs[name] for name in ABI.structs} == ABI.structs
    assert tree.structs[ABI.handle_resource] == [(field, f"EventHandle<{event}>")
                                                 for event, field in ABI.handle_fields.items()]


# --- abort codes per rule: the Move function and the Python rule check the same things, in the same order ---

# entry function -> (the domain.bounties.contract rules it runs, in order; the checks the chain makes before they run)
RULES: dict[str, tuple[tuple[Callable[..., Any], ...], list[str]]] = {
    "initialize": ((contract.initialize,), ["NOT_ADMIN", "INVALID_STATE"]),  # only the publisher, only once
    "set_cooling_period": ((contract.set_cooling_period,), []),
    "set_dispute_period": ((contract.set_dispute_period,), []),
    "set_resolver": ((contract.set_resolver,), []),
    "link_account": ((contract.link,), []),
    "create_bounty": ((contract.create,), []),
    "fund_bounty": ((contract.fund,), ["BOUNTY_NOT_FOUND"]),
    "accept_bounty": ((contract.accept,), ["BOUNTY_NOT_FOUND"]),
    "accept_for": ((contract.on_behalf, contract.accept), ["BOUNTY_NOT_FOUND"]),
    "withdraw_task": ((contract.withdraw,), ["BOUNTY_NOT_FOUND"]),
    "withdraw_for": ((contract.on_behalf, contract.withdraw), ["BOUNTY_NOT_FOUND"]),
    "submit_pr": ((contract.submit_pr,), ["BOUNTY_NOT_FOUND"]),
    "submit_pr_for": ((contract.on_behalf, contract.submit_pr), ["BOUNTY_NOT_FOUND"]),
    "reject_submission": ((contract.reject_submission,), ["BOUNTY_NOT_FOUND"]),
    "mark_merged": ((contract.mark_merged,), ["BOUNTY_NOT_FOUND"]),
    "set_split": ((contract.set_split,), ["BOUNTY_NOT_FOUND"]),
    "set_split_for": ((contract.on_behalf, contract.set_split), ["BOUNTY_NOT_FOUND"]),
    "claim_payout": ((contract.claim_payout,), ["BOUNTY_NOT_FOUND"]),
    "cancel_bounty": ((contract.cancel,), ["BOUNTY_NOT_FOUND"]),
    "withdraw_refund": ((contract.withdraw_refund,), ["BOUNTY_NOT_FOUND"]),
    "dispute": ((contract.dispute,), ["BOUNTY_NOT_FOUND"]),
    "dispute_for": ((contract.on_behalf, contract.dispute), ["BOUNTY_NOT_FOUND"]),
    "rule": ((contract.rule,), ["BOUNTY_NOT_FOUND"]),
    "tip": ((contract.tip,), ["BOUNTY_NOT_FOUND"]),
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
    """The rules (domain.bounties.contract), the argument checks they call (contract_args) and the state's."""
    return {node.name: node for module in (contract, contract_args, bounty_state)
            for node in ast.walk(ast.parse(inspect.getsource(module))) if isinstance(node, ast.FunctionDef)}


def _python_aborts(node: ast.AST, functions: dict[str, ast.FunctionDef]) -> list[str]:
    """`Abort.X` in source order, with the calls of the contract's other functions and methods inlined."""
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


def test_every_entry_function_has_its_rules() -> None:
    assert set(RULES) == set(ABI.entry_functions)


@pytest.mark.parametrize("function", sorted(RULES))
def test_each_rule_aborts_with_the_same_codes_in_the_same_order_in_move_and_python(
        move: MoveModule, function: str) -> None:
    rules, chain_first = RULES[function]
    functions = _python_functions()
    python = [code for rule in rules for code in _python_aborts(functions[rule.__name__], functions)]
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


def test_the_adapters_read_every_view() -> None:
    """Each view is read by a method of the Chain port and of both implementations; one named after the view
    takes the view's parameters by the same names, in the same order."""
    for view, spec in ABI.views.items():
        method = VIEW_METHODS.get(view, view)
        for implementation in (Chain, LocalLedger, AptosChain):
            names = list(inspect.signature(getattr(implementation, method)).parameters)
            if method == view:
                assert names == ["self", *(name for name, _ in spec["params"])], (implementation.__name__, view)


def test_the_escrow_is_a_resource_account_only_payouts_and_refunds_use(move: MoveModule) -> None:
    src = _source()
    assert "account::create_resource_account(" in move.functions["initialize"]
    assert "escrow: SignerCapability" in src and "ExtendRef" not in src and "create_named_object" not in src
    users = {name for name, body in move.functions.items() if "create_signer_with_capability" in body}
    assert users == {"pay_from_escrow"}
    payers = {name for name in [*ABI.entry_functions, *ABI.views] if move.reaches(name, "pay_from_escrow")}
    assert payers == {"claim_payout", "cancel_bounty", "withdraw_refund", "rule"}
    assert re.search(r'^upgrade_policy\s*=\s*"immutable"\s*$', move.toml, re.M), "the package must be immutable"


def test_loops_are_bounded_by_the_contract_s_bounds(move: MoveModule) -> None:
    """Every loop walks a vector whose length the contract bounds (submissions, a split, a page) or a fixed
    number of digits: none can be made long by a crowd of accounts."""
    loops = {name: body.count("while (") for name, body in move.functions.items() if "while (" in body}
    assert set(loops) == {"get_bounties", "pay_all", "split_amounts", "all_linked", "check_split", "page_ids",
                          "is_lower_hex", "has_live", "index_of_worker"}
    assert "i < MAX_SPLIT" in move.functions["all_linked"] and "MAX_PAGE" in move.functions["page_ids"]
    assert "n <= MAX_SPLIT" in move.functions["check_split"]


def test_the_embedded_ledger_executes_exactly_the_entry_functions() -> None:
    """A transaction may name only an entry function (initialize is the ledger's opening), never a helper."""
    from adapters.ledger_execution import ENTRY_FUNCTIONS

    assert set(ABI.entry_functions) - {"initialize"} == ENTRY_FUNCTIONS
