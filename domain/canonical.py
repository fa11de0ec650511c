"""Canonical JSON and the hashes and ids derived from it (the Code3 idempotency keys)."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5


def canonical_json(value: Any) -> str:
    """Keys sorted recursively, array order kept, no whitespace, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def issue_hash(
    *, repo: str, feature_id: str, spec_digest: str, amount: str, asset: str, network: str
) -> str:
    """The publish idempotency key, computed before any side effect."""
    return sha256_hex(
        canonical_json(
            {
                "schema": "code3/v1",
                "repo": repo,
                "feature_id": feature_id,
                "spec_digest": spec_digest,
                "amount": amount,
                "asset": asset,
                "network": network,
            }
        )
    )


def natural_id(kind: str, key: str) -> UUID:
    """Deterministic aggregate id: a second "create" of the same thing collides instead of duplicating."""
    return uuid5(NAMESPACE_URL, f"code3:{kind}:{key}")
