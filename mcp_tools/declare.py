"""Each tool declared once, on its handler: name, profiles and annotations in `@tool(...)`, the input
schema in the handler's typed signature (after the services parameter), the output schema in its
return annotation (a TypedDict). The MCP front derives the tool from this; nothing else repeats it.

Grep a tool's name to find the handler it runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_tools.profile_unions import UNIONS

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolDecl:
    name: str
    handler: Callable[..., Any]
    profiles: frozenset[str]
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = True
    needs_services: bool = True  # False: a pure function, called without services (no key, no store)
    render: Callable[[Any], str] | None = None  # the answer as text; JSON of the structured answer by default
    error_text: Callable[[Any], str] | None = None  # a failure's text (given the Code3Error); JSON by default
    progress: bool = False  # the handler takes `progress(done, total, message)`: notifications/progress
    # the input schema published verbatim instead of the one derived from the signature (a seed's own, as
    # seed 003's `add`); the signature still validates the arguments, so the two must agree (tested)
    input_schema: dict[str, Any] | None = None

    @property
    def description(self) -> str:
        return inspect.cleandoc(self.handler.__doc__ or self.name).split("\n\n")[0]

    def signature(self) -> inspect.Signature:
        """The handler's signature as a client sees it: the services parameter left out, annotations resolved."""
        sig = inspect.signature(self.handler, eval_str=True)
        params = [p for p in sig.parameters.values() if not (self.progress and p.name == "progress")]
        return sig.replace(parameters=params[1:] if self.needs_services else params)

    @property
    def output_type(self) -> Any:
        return self.signature().return_annotation


REGISTRY: dict[str, ToolDecl] = {}
# Resources, prompts and other front features a family adds: (profiles, register(server, runtime)).
EXTENSIONS: list[tuple[frozenset[str], Callable[[Any, Any], None]]] = []
# `completer(services, typed, resolved) -> candidates`: values for an argument of a prompt or resource
# template, given what the user has typed so far and the arguments already resolved.
Completer = Callable[[Any, str, dict[str, str]], Iterable[str]]
# (argument name, profiles, completer): MCP `completion/complete` for every prompt or resource template
# argument of that name in those profiles. The front filters by prefix, sorts and caps the candidates.
COMPLETERS: list[tuple[str, frozenset[str], Completer]] = []


def exposed_in(profiles: tuple[str, ...]) -> frozenset[str]:
    """`profiles`, `all`, and every union profile (`mcp_tools.profile_unions.UNIONS`) that one of them belongs to."""

    unions = {union for union, members in UNIONS.items() if set(members) & set(profiles)}
    return frozenset((*profiles, *unions, "all"))


def tool(name: str, *, profiles: tuple[str, ...], **flags: Any) -> Callable[[F], F]:
    """Declare the decorated handler as the MCP tool `name`, exposed in `profiles` (and in `all` and the unions
    they belong to)."""

    def register(handler: F) -> F:
        if name in REGISTRY and REGISTRY[name].handler is not handler:
            raise ValueError(f"tool {name} is declared twice")
        REGISTRY[name] = ToolDecl(name, handler, exposed_in(profiles), **flags)
        return handler

    return register


def extension(*, profiles: tuple[str, ...]) -> Callable[[F], F]:
    """Declare `register(server, runtime)`, which adds a family's resources or prompts to the MCP server."""

    def add(register: F) -> F:
        EXTENSIONS.append((exposed_in(profiles), register))
        return register

    return add


def completer(argument: str, *, profiles: tuple[str, ...]) -> Callable[[F], F]:
    """Declare the decorated function as the completer of every prompt or resource-template argument named
    `argument` in `profiles` (and in `all`); a later declaration for the same argument and profile wins."""

    def add(fn: F) -> F:
        COMPLETERS.append((argument, exposed_in(profiles), fn))
        return fn

    return add
