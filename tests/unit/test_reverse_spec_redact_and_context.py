"""Secrets redaction for `deep` mode, and the context's token budget (trimming order, what was dropped)."""

from __future__ import annotations

from collections import Counter

import pytest

from adapters.redact import redact, shannon_entropy
from domain.knowledge.skeleton import Export, FileSkeleton, MergedSkeleton
from mcp_tools.reverse_spec.context import Piece, assemble, estimate_tokens

GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH"
AWS = "AKIA" + "Z7QW3RTY5UIO1PAS"
ANTHROPIC = "sk-ant-api03-" + "Xy7_Qw3-Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaGhK\n"
       "-----END RSA PRIVATE KEY-----")
RANDOM = "Zq8Lw2Nv5Rt9Xk3Hb7Jm1Pc4Fg6Ds0Ay"


@pytest.mark.parametrize(("secret", "kind"), [
    (GITHUB, "github-token"), (GITHUB_PAT, "github-token"), (AWS, "aws-access-key"), (ANTHROPIC, "anthropic-key"),
    (SLACK, "slack-token"), (JWT, "jwt"), (PEM, "private-key"), (f'"{RANDOM}"', "high-entropy"),
])
def test_each_known_secret_format_is_redacted(secret: str, kind: str) -> None:
    source = f"def connect():\n    token = {secret!r}\n    return client(token)\n" if kind != "private-key" else \
        f'KEY = """\n{secret}\n"""\n'
    result = redact(source)
    bare = secret.strip('"')
    assert bare not in result.text and bare[:24] not in result.text
    assert result.counts[kind] >= 1 or result.total >= 1, result.counts
    assert "def connect" in result.text or "KEY =" in result.text


def test_a_password_assigned_in_code_is_redacted_but_placeholders_and_lookups_are_not() -> None:
    text = 'db_password = "hunter2-prod!"\napi_key = os.environ["API_KEY"]\nsecret = "changeme"\n'
    result = redact(text)
    assert "hunter2-prod!" not in result.text and result.counts["secret-assignment"] == 1
    assert 'os.environ["API_KEY"]' in result.text and '"changeme"' in result.text


def test_ordinary_code_is_left_alone() -> None:
    text = ('def render(name: str) -> str:\n    """Say hello to the user by their name."""\n'
            '    path = "src/components/user_profile_card.tsx"\n    digest = sha256(data)\n'
            '    return f"hello {name}"\n')
    result = redact(text)
    assert result.text == text and result.total == 0


@pytest.mark.parametrize("literal", ["LinkedOrganizationSpendLimitReachedError", "claude-sonnet-4-5-20250929",
                                     "anthropic.usage.cache_creation.ephemeral_5m_input_tokens",
                                     "computer-use-2025-01-24", "tool_search_tool_bm25_20251119",
                                     "SyncBidirectionalPageCursor"])
def test_identifiers_model_ids_and_versions_are_not_taken_for_secrets(literal: str) -> None:
    text = f'kind = "{literal}"\n'
    assert redact(text).text == text


def test_entropy_of_random_and_plain_text() -> None:
    assert shannon_entropy(RANDOM) > 4.0 > shannon_entropy("aaaaaaaaaaaaaaaaaaaaaaab")


# -- the context budget ---------------------------------------------------------------------------------------

def merged(files: int = 3) -> MergedSkeleton:
    return MergedSkeleton.build(".", [
        FileSkeleton(path=f"m/f{i}.py", language="python", lines=10, sha256="0" * 64, exports=[
            Export(name=f"fn{i}", kind="function", signature=f"def fn{i}(x: int) -> int", doc="d" * 400,
                   start_line=1, end_line=3,
                   members=[])]) for i in range(files)])


def test_a_context_under_the_budget_keeps_everything_and_warns_above_80_percent() -> None:
    sk = merged()
    full = assemble(".", sk, bodies=[Piece("snippet", "a", "x" * 400)], budget=100_000)
    assert full.dropped == [] and full.warnings == [] and full.parts["snippets"] == 100
    tight = assemble(".", sk, bodies=[Piece("snippet", "a", "x" * 400)], budget=int(full.tokens / 0.9))
    assert tight.dropped == [] and any("above 80%" in w for w in tight.warnings)


def test_trimming_drops_snippets_then_dependency_specs_then_the_skeleton_and_lists_them() -> None:
    sk = merged()
    bodies = [Piece("snippet", f"s{i}", "b" * 2000) for i in range(3)]
    deps = [Piece("dependency-spec", f"specs/d{i}.spec.md", "d" * 2000) for i in range(2)]
    skeleton_only = assemble(".", sk).tokens
    context = assemble(".", sk, deps=deps, bodies=bodies, budget=skeleton_only + 300)
    kinds = [d["kind"] for d in context.dropped]
    assert kinds == ["snippet", "snippet", "snippet", "dependency-spec", "dependency-spec"]
    assert [d["label"] for d in context.dropped][:3] == ["s2", "s1", "s0"]
    assert context.tokens <= skeleton_only + 300
    kept = assemble(".", sk, deps=deps, bodies=bodies, budget=skeleton_only + 600)
    assert [d["kind"] for d in kept.dropped] == ["snippet"] * 3 + ["dependency-spec"] and kept.parts["dependencySpecs"]

    squeezed = assemble(".", sk, deps=deps, bodies=bodies, budget=150)
    kinds = [d["kind"] for d in squeezed.dropped]
    assert kinds[:5] == ["snippet"] * 3 + ["dependency-spec"] * 2
    assert ("skeleton-docs" in kinds and squeezed.tokens <= 150) or "skeleton-file" in kinds
    assert all(d["estimatedTokens"] >= 0 for d in squeezed.dropped)
    assert squeezed.answer()["tokenEstimate"].startswith("characters / 4")


def test_token_estimate_is_characters_over_four() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert isinstance(assemble(".", merged(1), redactions=Counter({"jwt": 1})).answer()["redactions"], dict)
