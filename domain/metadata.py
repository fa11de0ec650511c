"""The `code3/v1` issue metadata: the fenced `code3-meta` JSON block carried in every bounty issue."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field

FENCE_LANG = "code3-meta"
SCHEMA = "code3/v1"
_BLOCK = re.compile(r"```" + FENCE_LANG + r"\s*\n(.*?)\n```", re.DOTALL)


class BountyMeta(BaseModel):
    """`network` is the name publish was given (the seed's `testnet` is accepted by the embedded ledger);
    `chain` says which ledger really holds the escrow (`code3-local`: the embedded ledger, no real
    money; `aptos`), so nobody mistakes a local bounty for an Aptos one. Older readers ignore it."""

    model_config = ConfigDict(extra="ignore")

    network: str
    chain: str | None = None
    asset: str
    amount: str
    bounty_id: str | None = None
    merged_at: int | None = None
    cooling_until: int | None = None
    deadline: int | None = None


class IssueMetadata(BaseModel):
    """Readers ignore unknown fields, so later schema additions never break an older reader."""

    model_config = ConfigDict(extra="ignore")

    schema_: str = Field(default=SCHEMA, alias="schema")
    repo: str
    issue_number: int | None = None
    issue_hash: str
    feature_id: str
    task_id: str | None = None
    bounty: BountyMeta
    spec_refs: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    effort: int = 1

    def to_block(self) -> str:
        body = json.dumps(self.model_dump(by_alias=True), indent=2, sort_keys=True)
        return f"```{FENCE_LANG}\n{body}\n```"

    @classmethod
    def from_body(cls, body: str) -> IssueMetadata | None:
        """The metadata of an issue body, or None when it carries no `code3-meta` block."""
        match = _BLOCK.search(body or "")
        if not match:
            return None
        return cls.model_validate(json.loads(match.group(1)))


def replace_block(body: str, meta: IssueMetadata) -> str:
    """The body with its metadata block replaced (or appended when it had none)."""
    if _BLOCK.search(body):
        return _BLOCK.sub(lambda _m: meta.to_block(), body, count=1)
    return f"{body.rstrip()}\n\n{meta.to_block()}\n"


def strip_block(body: str) -> str:
    """The body without its metadata block: the human-readable part (the spec)."""
    return _BLOCK.sub("", body).rstrip() + "\n"
