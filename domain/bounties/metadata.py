"""The `code3/v1` issue metadata: the fenced `code3-meta` JSON block carried in every bounty issue."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field, computed_field

from domain.bounties.amounts import display
from domain.knowledge.text_scan import Span, remove

FENCE_LANG = "code3-meta"
SCHEMA = "code3/v1"
OMITTED_WHILE_UNKNOWN = ("status", "winner", "pr_url")  # bounty fields left out of the block while None
UNFUNDED_LABEL = "unfunded"  # the issue's state label, and `bounty.status`, while the chain refused its bounty
_OPEN, _CLOSE = "```" + FENCE_LANG, "\n```"
_SPACES = re.compile(r"\s*")  # anchored at one place: linear


class BountyMeta(BaseModel):
    """`network` is the name publish was given (the seed's `testnet` is accepted by the embedded ledger);
    `chain` says which ledger really holds the escrow (`code3-local`: the embedded ledger, no real
    money; `aptos`), so nobody mistakes a local bounty for an Aptos one. Older readers ignore it.
    `amount` stays in the asset's smallest unit (the contract); `amount_display` is written beside it for
    people ("1 USDT"), derived, never read back. `status` is `unfunded` while the chain refused to escrow the
    amount (no bounty backs the issue yet); once a bounty backs it, the forge mirror writes its state label
    there (`cooling`, `paid`, …) with `winner` and `pr_url` (mcp_tools/lifecycle/issue_refresh.py). The three
    are left out of the block while unknown."""

    model_config = ConfigDict(extra="ignore")

    network: str
    chain: str | None = None
    asset: str
    amount: str
    bounty_id: str | None = None
    merged_at: int | None = None
    cooling_until: int | None = None
    deadline: int | None = None
    status: str | None = None
    winner: str | None = None
    pr_url: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def amount_display(self) -> str:
        if not (self.amount.isascii() and self.amount.isdigit()):  # a foreign block: shown as found
            return f"{self.amount} {self.asset} (smallest unit)"
        return display(self.amount, self.asset)


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
        data = self.model_dump(by_alias=True)
        for key in OMITTED_WHILE_UNKNOWN:  # written only when there is something to say (unfunded, paid, …)
            if data["bounty"].get(key) is None:
                del data["bounty"][key]
        body = json.dumps(data, indent=2, sort_keys=True)
        return f"```{FENCE_LANG}\n{body}\n```"

    @classmethod
    def from_body(cls, body: str) -> IssueMetadata | None:
        """The metadata of an issue body, or None when it carries no `code3-meta` block."""
        span = next(_blocks(body or ""), None)
        if span is None:
            return None
        return cls.model_validate(json.loads(span.inner(body)))


def replace_block(body: str, meta: IssueMetadata) -> str:
    """The body with its metadata block replaced (or appended when it had none)."""
    span = next(_blocks(body), None)
    if span is not None:
        return body[: span.start] + meta.to_block() + body[span.end :]
    return f"{body.rstrip()}\n\n{meta.to_block()}\n"


def strip_block(body: str) -> str:
    """The body without its metadata block: the human-readable part (the spec)."""
    return remove(body, _blocks(body)).rstrip() + "\n"


def _blocks(body: str) -> Iterator[Span]:
    """Each `code3-meta` block, left to right, as the pattern ```` ```code3-meta\\s*\\n(.*?)\\n``` ```` (DOTALL)
    finds them, in linear time (an issue body is anyone's text): the fence, blanks ending in a line break,
    then the JSON up to the first line that starts with ```.  Once no closing fence follows some point, no
    later block has one, so the scan stops there rather than starting over at each opening fence."""
    pos, closed_until = 0, -1  # no _CLOSE starts at or after `closed_until` (when >= 0)
    while (found := body.find(_OPEN, pos)) >= 0:
        blanks = found + len(_OPEN)
        run_end = _SPACES.match(body, blanks).end()  # type: ignore[union-attr]
        last = body.rfind("\n", blanks, run_end)
        if last >= 0:
            close = -1 if 0 <= closed_until <= last + 1 else body.find(_CLOSE, last + 1)
            if close < 0:
                closed_until = last + 1 if closed_until < 0 else min(closed_until, last + 1)
                earlier = body.rfind("\n", blanks, last)
                if earlier >= 0 and body.startswith("```", last + 1):  # empty JSON, the fence closed at once
                    yield Span(found, earlier + 1, last, last + 4)
                    pos = last + 4
                    continue
            else:
                yield Span(found, last + 1, close, close + len(_CLOSE))
                pos = close + len(_CLOSE)
                continue
        pos = blanks
