"""The Move module's ABI (adapters/aptos_abi.json) and the decoding of the fullnode's JSON for its types.

The ABI is kept in one JSON file, shipped as package data beside this module (an installed `code3`
has no `move/` directory), so that the adapter, the fullnode stand-in and the ABI test all read the
same declaration; the test also checks it against the Move source in `move/`. The REST API renders
u64 as decimal strings, addresses in short form, `vector<u8>` as 0x-prefixed hex, `Option<T>` as
`{"vec": [...]}` (T a struct too: a bounty's dispute and split) and structs as objects; `decode` turns
those into the values the Python side uses, driven by the declared Move types. No aptos-sdk here: pure data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ABI_PATH = Path(__file__).with_name("aptos_abi.json")
NO_ACCOUNT = "0x" + "0" * 64  # the zero address: no key signs for it (a registry role or resolver not set)
_GENERIC = re.compile(r"^(Option|vector)<(.+)>$")
_INTEGERS = frozenset({"u8", "u16", "u32", "u64", "u128", "u256"})
Fields = list[tuple[str, str]]


def normalize_address(value: str) -> str:
    """The long form (0x + 64 hex digits) that the keystore uses, whatever form the node printed."""
    digits = value.lower().removeprefix("0x")
    if not digits or len(digits) > 64 or any(c not in "0123456789abcdef" for c in digits):
        raise ValueError(f"not an account address: {value!r}")
    return "0x" + digits.zfill(64)


@dataclass(frozen=True)
class MoveAbi:
    named_address: str
    module: str
    entry_functions: dict[str, Fields]
    views: dict[str, dict[str, Any]]
    structs: dict[str, Fields]
    events: dict[str, Fields]
    handle_resource: str
    handle_fields: dict[str, str]
    statuses: dict[str, int]
    modes: dict[str, int]
    aborts: dict[str, int]
    submission_states: dict[str, int]
    rejections: dict[str, int]

    def arguments(self, function: str) -> Fields:
        """An entry function's parameters as a transaction carries them (the `&signer` is the sender)."""
        return [(name, kind) for name, kind in self.entry_functions[function] if kind != "&signer"]

    def decode(self, move_type: str, value: Any) -> Any:
        if move_type == "vector<u8>":  # bytes, printed as hex (not a list of numbers)
            return bytes.fromhex(str(value).removeprefix("0x"))
        generic = _GENERIC.match(move_type)
        if generic and generic.group(1) == "Option":
            items = value["vec"]
            return self.decode(generic.group(2), items[0]) if items else None
        if generic:
            return [self.decode(generic.group(2), item) for item in value]
        if move_type in _INTEGERS:
            return int(value)
        if move_type == "bool":
            return bool(value)
        if move_type == "address":
            return normalize_address(value)
        if move_type == "String":
            return str(value)
        if move_type in self.structs:
            return {name: self.decode(kind, value[name]) for name, kind in self.structs[move_type]}
        raise ValueError(f"no decoding for Move type {move_type!r}")

    def decode_fields(self, fields: Fields, data: dict[str, Any]) -> dict[str, Any]:
        """Event or struct data as the Python side has it: ids stay strings (the domain's bounty ids are)."""
        out = {name: self.decode(kind, data[name]) for name, kind in fields}
        if "bounty_id" in out:
            out["bounty_id"] = str(out["bounty_id"])
        return out


def _pairs(raw: list[list[str]]) -> Fields:
    return [(name, kind) for name, kind in raw]


@lru_cache(maxsize=4)
def load_abi(path: Path = ABI_PATH) -> MoveAbi:
    raw = json.loads(path.read_text())
    return MoveAbi(
        named_address=raw["named_address"],
        module=raw["module"],
        entry_functions={name: _pairs(params) for name, params in raw["entry_functions"].items()},
        views={name: {"params": _pairs(v["params"]), "returns": v["returns"]} for name, v in raw["views"].items()},
        structs={name: _pairs(fields) for name, fields in raw["structs"].items()},
        events={name: _pairs(fields) for name, fields in raw["events"].items()},
        handle_resource=raw["event_handles"]["resource"],
        handle_fields=dict(raw["event_handles"]["fields"]),
        statuses=dict(raw["statuses"]),
        modes=dict(raw["modes"]),
        aborts=dict(raw["aborts"]),
        submission_states=dict(raw.get("submission_states", {})),
        rejections=dict(raw.get("rejections", {})),
    )
