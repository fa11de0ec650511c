"""The GitHub webhook: signature check, the merge that starts cooling, and a retrying inbox.

A delivery is verified (HMAC-SHA256 of the raw body, constant-time compare) before anything is
parsed. A `pull_request` closed (merged or not) has the resolver judge, on the forge, the submissions of that PR
for each bounty it was submitted to (settle.mark_merged: a merge is reported, a closed PR or junk rejected),
idempotent on delivery id and bounty. The payload itself is never trusted for who is paid: the resolver reads the
PR from the forge. A delivery that fails for a transient reason is kept in the
inbox and retried with backoff by the worker; one that keeps failing lands in the dead-letter list,
which `code3 webhooks retry` replays.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from adapters.webhook_inbox import Inbox
from domain.errors import Code, Code3Error, present
from mcp_tools.lifecycle import settle
from mcp_tools.services import Services
from projections.bounties import board
from projections.bounties.board import BountyBoard
from projections.runner import follow

log = logging.getLogger("code3.webhook")
MAX_ATTEMPTS = 5
MAX_DEPTH = 64  # GitHub's payloads nest about ten levels
# a JSON string, escapes included; an unclosed one runs to the end (each of its escaped quotes then began another
# scan to the end: 40 000 of them took 96 s), never backtracked into
_STRINGS = re.compile(r'"(?:[^"\\]|\\[\s\S]?)*+(?:"|\Z)')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes
TRANSIENT = {Code.CHAIN_TX_FAILED, Code.GH_RATE_LIMIT, Code.INTERNAL}


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(secret: bytes, body: bytes, signature: str | None) -> bool:
    if not signature or not signature.startswith("sha256="):
        return False
    return hmac.compare_digest(sign(secret, body), signature)


def receive(s: Services, secret: bytes, headers: dict[str, str], body: bytes) -> Answer:
    """One delivery as GitHub sends it: verify, parse, act. Nothing changes unless the signature is right."""
    headers = {k.lower(): v for k, v in headers.items()}
    if not verify(secret, body, headers.get("x-hub-signature-256")):
        return Answer(401, {"error": "missing or wrong X-Hub-Signature-256"})
    event, delivery = headers.get("x-github-event"), headers.get("x-github-delivery")
    if not event or not delivery:
        return Answer(400, {"error": "X-GitHub-Event and X-GitHub-Delivery are required"})
    try:
        payload = parse_payload(body)
    except ValueError as exc:
        return Answer(400, {"error": f"malformed JSON payload: {exc}"})
    if event == "ping":
        return Answer(200, {"ok": True, "zen": payload.get("zen")})
    closed_pr = _closed_pr(event, payload)
    if closed_pr is None:
        return Answer(202, {"ignored": f"{event} {payload.get('action', '')}".strip()})
    follow(s.store, s.views, BountyBoard())  # the submissions recorded up to now
    if not board.bounties_with_pr(s.views, closed_pr):
        return Answer(202, {"ignored": f"{closed_pr} was not submitted for a bounty"})
    inbox = Inbox(s.views)
    inbox.record(delivery, event, body.decode("utf-8"))
    return process(s, inbox, delivery)


def parse_payload(body: bytes) -> dict[str, Any]:
    """A signed body as a JSON object: UTF-8 only and at most MAX_DEPTH levels deep, else ValueError (a 400,
    never a crash: a deep payload would otherwise exhaust the parser's recursion)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the payload is not UTF-8 (byte {exc.start})") from None
    if nesting_depth(text) > MAX_DEPTH:
        raise ValueError(f"the payload nests deeper than {MAX_DEPTH} levels")
    try:
        payload = json.loads(text)
    except RecursionError:
        raise ValueError("the payload nests too deep") from None
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    return payload


def nesting_depth(text: str) -> int:
    """How deep JSON arrays and objects nest in `text`, brackets inside strings not counted: the highest
    running sum of +1 per opening and -1 per closing bracket (at C speed: about 2 s for 25 MB of brackets)."""
    brackets = _NOT_BRACKET.sub("", _STRINGS.sub("", text)).encode("ascii").translate(_STEPS)
    return max(accumulate(memoryview(brackets).cast("b")), default=0)


def _closed_pr(event: str, payload: dict[str, Any]) -> str | None:
    """The URL of a PR the delivery says was closed (merged or not); what happened is read from the forge."""
    pr = payload.get("pull_request")
    if event != "pull_request" or payload.get("action") != "closed" or not isinstance(pr, dict):
        return None
    if not isinstance(pr.get("html_url"), str):
        return None
    return str(pr["html_url"])


def process(s: Services, inbox: Inbox, delivery: str) -> Answer:
    """Run one stored delivery; record success, a retry with backoff, or a dead letter."""
    row = inbox.get(delivery)
    if row is None:
        return Answer(404, {"error": f"no delivery {delivery}"})
    pr_url = _closed_pr(row["event"], json.loads(row["payload"]))
    pr_url = present(pr_url, "the closed PR of a stored delivery")
    try:
        result = settle.settle_pr(s, pr_url, delivery)
    except Code3Error as exc:
        dead = exc.code not in TRANSIENT or row["attempts"] + 1 >= MAX_ATTEMPTS
        inbox.failed(delivery, exc.as_dict(), dead)
        log.warning("delivery %s failed (%s)%s", delivery, exc.code.value, ", dead-lettered" if dead else "")
        return Answer(202, {"delivery": delivery, "status": "dead" if dead else "retrying", "error": exc.as_dict()})
    except Exception:
        log.exception("delivery %s failed unexpectedly", delivery)
        inbox.failed(delivery, {"code": "E_INTERNAL", "message": "internal error"}, row["attempts"] + 1 >= MAX_ATTEMPTS)
        return Answer(202, {"delivery": delivery, "status": "retrying"})
    inbox.done(delivery)
    return Answer(200, {"delivery": delivery, **result})


def retry_due(s: Services) -> list[Answer]:
    inbox = Inbox(s.views)
    return [process(s, inbox, delivery) for delivery in inbox.due()]
