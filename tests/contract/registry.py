"""Which port members the contract tests exercise, so that a member without a contract test fails the suite.

The ports are found, not listed: every Protocol class of `adapters/ports.py` and of each `adapters/<package>/port.py`.
A contract test names what it exercises with `@covers(Port, "member", ...)`;
tests/contract/test_ports.py::test_every_member_of_every_port_has_a_contract_test compares the two, so a new port
method (or a new port) cannot go untested. `IMPLEMENTATIONS` lists the classes each port's contract runs against.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[2]
F = TypeVar("F", bound=Callable[..., Any])
COVERED: defaultdict[type, set[str]] = defaultdict(set)

# The classes each port's contract runs against (a test double that claims a port joins too); the tests name
# these same classes in their fixtures, and tests/contract/test_ports.py checks their signatures against the port.
IMPLEMENTATIONS: dict[str, list[str]] = {
    "adapters.ports.Chain": ["adapters.local_ledger.LocalLedger", "adapters.aptos.AptosChain"],
    "adapters.ports.Forge": ["adapters.local_forge.LocalForge", "adapters.github.GitHubForge",
                             "tests.fakes.memory_forge.MemoryForge"],
    "adapters.ports.Signer": ["adapters.ports.Key", "code3.wiring.LazySigner"],
    "adapters.ports.SpecWriter": ["adapters.offline_writer.OfflineWriter", "adapters.llm.spec_writer.LLMSpecWriter"],
    "adapters.llm.port.LLM": ["adapters.llm.anthropic_llm.AnthropicLLM", "adapters.llm.port.MissingKeyLLM"],
    "adapters.code_parser.port.CodeParser": ["adapters.code_parser.TreeSitterCodeParser"],
}


def qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def load(name: str) -> Any:
    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


def port_modules() -> list[str]:
    """adapters.ports and every adapters/<package>/port.py."""
    return ["adapters.ports", *sorted(f"adapters.{p.parent.name}.port" for p in (ROOT / "adapters").glob("*/port.py"))]


def ports() -> dict[str, type]:
    """Every Protocol class the port modules define, by qualified name."""
    found = {}
    for name in port_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and getattr(value, "_is_protocol", False) and value.__module__ == name:
                found[qualified(value)] = value
    return found


def members(port: type) -> set[str]:
    """The port's public methods, properties and attributes (`network: str`), as its class body declares them."""
    return {name for name in {*vars(port), *getattr(port, "__annotations__", {})} if not name.startswith("_")}


def covers(port: type, *names: str) -> Callable[[F], F]:
    """Records that the decorated contract test exercises these members of `port` on every implementation."""
    unknown = set(names) - members(port)
    if unknown:
        raise AssertionError(f"{port.__name__} has no member {', '.join(sorted(unknown))}")

    def record(test: F) -> F:
        COVERED[port].update(names)
        return test

    return record


def load_contract_tests() -> None:
    """Imports every contract test module (pytest's own import of each is the same module), so that COVERED is
    complete whichever tests a run selected."""
    package = importlib.import_module("tests.contract")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("test_"):
            importlib.import_module(f"tests.contract.{info.name}")
