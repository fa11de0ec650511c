"""`audit export` signs its trailer with the exporting identity's ed25519 key; `audit check` verifies it.

The finding: edit an amount, recompute every hash, and the unkeyed chain said "intact". Now the signature
no longer matches; re-signing with another key is caught when --key names the expected signer, and check
always says who signed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapters.keystore import sign
from domain.canonical import canonical_json
from projections import audit_log
from tests.conftest import AMOUNT, World


def exported(w: World, tmp_path: Path, who: str = "alice") -> Path:
    w.published()
    path = tmp_path / "log.jsonl"
    audit_log.export(w[who].store, path, w[who].signer)
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rechain(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a forger does: recompute every line's hash and the trailer's count and last hash."""
    prev, out = audit_log.GENESIS, []
    for record in lines[:-1]:
        body = {k: v for k, v in record.items() if k != "hash"} | {"prev": prev}
        prev = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        out.append(body | {"hash": prev})
    return [*out, lines[-1] | {"count": len(out), "last": prev}]


def write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(canonical_json(r) + "\n" for r in lines))


def with_amount_changed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    changed = 0
    for record in lines[:-1]:
        for key, value in record["data"].items():
            if value in (AMOUNT, str(AMOUNT)):
                record["data"][key] = type(value)(AMOUNT * 100)
                changed += 1
    assert changed, "the log records the amount"
    return lines


def test_an_export_is_signed_by_the_exporting_identity_and_checks_intact(world: World, tmp_path: Path) -> None:
    path = exported(world, tmp_path)
    trailer = records(path)[-1]
    assert trailer["alg"] == "ed25519" and trailer["signer"]["address"] == world.address("alice")
    result = audit_log.check(path)
    assert result.ok, result.problems
    assert result.signer is not None and result.signer["address"] == world.address("alice")
    assert audit_log.check(path, key=world.address("alice")).ok
    assert audit_log.check(path, key=result.signer["public_key"]).ok


def test_an_amount_edited_with_every_hash_recomputed_fails_the_signature(world: World, tmp_path: Path) -> None:
    path = exported(world, tmp_path)
    forged = rechain(with_amount_changed(records(path)))
    write(path, forged)
    result = audit_log.check(path)
    assert not result.ok and result.signer is None
    assert any("signature does not match" in p for p in result.problems), result.problems
    assert not any("hash mismatch" in p or "trailer does not match" in p for p in result.problems), \
        "the chain itself was recomputed: only the signature can tell"


def test_a_forgery_re_signed_by_another_key_fails_when_the_expected_signer_is_named(
        world: World, tmp_path: Path) -> None:
    path = exported(world, tmp_path)
    forged = rechain(with_amount_changed(records(path)))
    mallory = world["bob"].signer
    from adapters.keystore import public_key_of

    trailer = {k: v for k, v in forged[-1].items() if k != "signature"}
    trailer["signer"] = {"name": "alice", "address": mallory.address,
                         "public_key": public_key_of(mallory.private_key_hex).hex()}
    forged[-1] = trailer | {"signature": sign(mallory, canonical_json(trailer).encode()).hex()}
    write(path, forged)

    unpinned = audit_log.check(path)
    assert unpinned.ok and unpinned.signer is not None
    assert unpinned.signer["address"] == mallory.address, "check says who really signed, whatever the name says"
    pinned = audit_log.check(path, key=world.address("alice"))
    assert not pinned.ok and any("not by the expected key" in p for p in pinned.problems)

    trailer["signer"] = trailer["signer"] | {"address": world.address("alice")}  # claim alice's address
    forged[-1] = trailer | {"signature": sign(mallory, canonical_json(trailer).encode()).hex()}
    write(path, forged)
    assert any("does not belong to its public key" in p for p in audit_log.check(path).problems)


@pytest.mark.parametrize("strip", ["signature", "signer"])
def test_an_unsigned_trailer_is_a_problem(world: World, tmp_path: Path, strip: str) -> None:
    path = exported(world, tmp_path)
    lines = records(path)
    lines[-1].pop(strip)
    write(path, lines)
    assert any("not signed" in p for p in audit_log.check(path).problems)


def test_the_cli_check_prints_the_signer_and_honours_key(world: World, tmp_path: Path) -> None:
    path = exported(world, tmp_path)
    env_args = ["--project", str(world.project)]

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "code3", "audit", "check", str(path), *env_args, *extra],
                              capture_output=True, text=True)

    ok = check()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"signed by {world.address('alice')} (alice in this keystore)" in ok.stdout
    assert "pass --key" in ok.stdout
    assert check("--key", "alice").returncode == 0
    wrong = check("--key", "bob")
    assert wrong.returncode == 1 and "not by the expected key" in wrong.stdout
    write(path, rechain(with_amount_changed(records(path))))
    forged = check()
    assert forged.returncode == 1 and "signature does not match" in forged.stdout and "Traceback" not in forged.stderr
