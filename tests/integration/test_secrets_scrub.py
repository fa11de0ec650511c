"""Remote messages are scrubbed at the adapters' boundary: a GitHub error text or git stderr that echoes the
token (or anything credential-shaped) never reaches a tool answer, an exception message or a log line."""

from __future__ import annotations

import json
import logging

import pytest

from adapters.scrub import REDACTED, ScrubFilter, register_secret, scrub
from domain.errors import Code3Error
from mcp_tools.binding import Runtime
from mcp_tools.declare import REGISTRY
from mcp_tools.lifecycle import work
from tests.conftest import World
from tests.fakes.github_payloads import Payloads

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789"
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.parametrize("text", [
    f"Bad credentials for {GHP}", f"token {PAT} revoked", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def",
    "Authorization: token abcdef0123456789abcdef0123456789", "Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hw",
    f"key file:\n{PEM}\nend", "ed25519-priv-0x" + "ab" * 32, '{"private_key": "00ff00ff"}',
    "https://user:hunter2@github.example/alice/app.git",
])
def test_credential_shaped_strings_are_scrubbed(text: str) -> None:
    cleaned = scrub(text)
    assert REDACTED in cleaned
    for leaked in (GHP, PAT, "eyJhbGci", "abcdef0123456789abcdef", "eC1hY2Nlc3Mt", "b3BlbnNzaC1rZXkt", "ab" * 32,
                   "00ff00ff", "hunter2"):
        assert leaked not in cleaned


def test_registered_secrets_are_scrubbed_and_ordinary_text_is_kept() -> None:
    register_secret("s3cr3t-webhook-value")
    assert scrub("echo s3cr3t-webhook-value back") == f"echo {REDACTED} back"
    plain = ("issue alice/todo-app#3 not found; tx 0x" + "1f" * 32 + " aborted: E_NOT_WINNER; "
             "Resource not accessible by personal access token")
    assert scrub(plain) == plain, "addresses, hashes and GitHub's usual wording survive"


def test_the_log_filter_scrubs_messages_and_arguments(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("code3.test.scrub")
    logger.addFilter(ScrubFilter())
    with caplog.at_level(logging.INFO, logger="code3.test.scrub"):
        logger.info("GitHub said %s", f"bad token {GHP}")
    assert GHP not in caplog.text and REDACTED in caplog.text


@pytest.mark.parametrize("stack", ["remote"], indirect=True)
def test_a_github_error_echoing_the_token_never_reaches_the_answer_or_the_logs(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    w = world
    caplog.set_level(logging.DEBUG)
    published = w.published()
    token = w.settings("bob").github_token
    assert token
    echoed = f"Validation Failed: header 'Authorization: token {token}' refused; also saw {GHP} and Bearer {PAT}"
    errors = [{"resource": "IssueComment", "code": "custom", "message": f"token={token}"}]
    w.stack.github.fail_next(1, status=422, body=Payloads.error(422, echoed, errors))

    runtime = Runtime(lambda: w["bob"])
    decl = REGISTRY["server_mcp.comment_issue"]  # declared when mcp_tools.lifecycle.work was imported
    result = runtime.call(decl, {"issue_url": published["issue"]["url"], "body": "working on it"})
    answer = result.content[0].text + json.dumps(result.structured_content)
    assert result.is_error and "E_VALIDATION" in answer and "Validation Failed" in answer
    for secret in (token, GHP, PAT):
        assert secret not in answer, "the tool answer carries no token"
        assert secret not in caplog.text, "no log line carries the token"

    w.stack.github.fail_next(1, status=401, body=Payloads.error(401, f"Bad credentials: {token}"))
    with pytest.raises(Code3Error) as caught:
        work.comment_issue(w["bob"], published["issue"]["url"], "again")
    assert caught.value.code.value == "E_UNAUTHORIZED" and "Bad credentials" in caught.value.message
    assert token not in json.dumps(caught.value.as_dict()) and token not in caplog.text


def test_git_stderr_is_scrubbed_of_the_token_in_every_form() -> None:
    from adapters.github_git import GitHubGit

    git = GitHubGit("tok-0123456789-abcdef", "https://github.example")
    stderr = git.scrub("fatal: unable to access 'https://x-access-token:tok-0123456789-abcdef@github.example/': "
                       "header Authorization: Basic eC1hY2Nlc3MtdG9rZW46dG9rLTAxMjM0NTY3ODktYWJjZGVm")
    assert "tok-0123456789-abcdef" not in stderr and "eC1hY2Nlc3MtdG9rZW46" not in stderr
