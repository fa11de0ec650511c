"""What every CodeNexus tool declares its arguments with: the family's profile, the seed's `file_path` argument,
the exact schema of an optional argument (`seed_schema`), and the refusal of a text that holds a credential.

Shared by the seed's tools (tools.py) and the ones beside them (extras.py, derive.py, renames.py), so none of
them reaches into another's module for these.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from adapters.redact import redact
from domain.knowledge.file_meta import MetaRefused

PROFILES = ("codenexus",)

FilePathArg = Annotated[str, Field(description="Path to the file relative to project root")]


def seed_schema(schema: dict[str, Any]) -> Any:
    """An optional argument shown with exactly the seed's schema (no `null` branch, no default): spread into
    `Annotated[T | None, *seed_schema({...})]`."""
    return (WithJsonSchema(schema), Field(json_schema_extra=_no_default))


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def no_credential(text: str, what: str) -> str:
    """`text`, refused when it holds a credential (adapters/redact.py's judgement, as for a model's context):
    Code3 keeps it in its log and hands it to models."""
    if redact(text).total:
        raise MetaRefused(f"the {what} holds a credential (a token, key or password)",
                          f"remove it from the {what}: Code3 stores it and shows it to models")
    return text
