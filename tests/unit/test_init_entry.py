"""The `.mcp.json` entry init writes names what a client-started server needs to find init's identity, and the
rules around it: keys never in a work tree, git's read-only objects are no loose state."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.home import check_home_outside_work_trees
from code3.doctor import git_object
from code3.init import InitResult, entry_name, report, server_entry, server_env
from code3.settings import Settings
from domain.errors import Code3Error


def test_the_env_names_only_what_differs_from_a_client_started_servers_defaults(tmp_path: Path) -> None:
    home = tmp_path / "user"
    default = Settings(project=tmp_path / "p", home=(home / ".config" / "code3").resolve())
    assert server_env(default, {"HOME": str(home)}) == {"CODE3_PROJECT": str(tmp_path / "p")}
    xdg = Settings(project=tmp_path / "p", home=(tmp_path / "xdg" / "code3").resolve(), identity="bob")
    assert server_env(xdg, {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}) == {
        "CODE3_PROJECT": str(tmp_path / "p"), "CODE3_HOME": str(tmp_path / "xdg" / "code3"), "CODE3_IDENTITY": "bob"}
    keys = Settings(project=tmp_path / "p", home=default.home, keystore=tmp_path / "keys")
    assert server_env(keys, {"HOME": str(home)})["CODE3_KEYSTORE"] == str(tmp_path / "keys")
    assert "CODE3_HOME" in server_env(default, {}), "no HOME: the server could find nothing by itself"


@pytest.mark.parametrize(("role", "name", "profile"), [
    ("sponsor", "code3", ["--profile", "sponsor"]), ("worker", "code3-worker", ["--profile", "server"]),
    ("knowledge", "code3-knowledge", ["--profile", "knowledge"]), ("all", "code3-all", [])])
def test_each_role_has_its_entry_and_profile(tmp_path: Path, role: str, name: str, profile: list[str]) -> None:
    entry = server_entry(tmp_path, Settings(project=tmp_path, home=tmp_path / "h"), role)
    assert entry_name(role) == name
    assert entry["args"][entry["args"].index("mcp") + 1:] == profile
    with pytest.raises(Code3Error) as refused:
        server_entry(tmp_path, None, "judge")
    assert refused.value.code.value == "E_VALIDATION" and "sponsor" in refused.value.hint


def test_a_home_or_keystore_inside_a_work_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    check_home_outside_work_trees(tmp_path / "home", tmp_path / "keys")
    for home, keystore in ((tmp_path / "repo" / "a" / "home", None), (tmp_path / "home", tmp_path / "repo" / "k")):
        with pytest.raises(Code3Error) as refused:
            check_home_outside_work_trees(home, keystore)
        assert refused.value.code.value == "E_PRECONDITION"
        assert str(tmp_path / "repo") in refused.value.message and "outside any git work tree" in refused.value.hint
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ".git").write_text("gitdir: /elsewhere\n")  # a linked worktree's .git is a file
    with pytest.raises(Code3Error):
        check_home_outside_work_trees(tmp_path / "linked" / "home")


def test_only_gits_read_only_objects_are_accepted(tmp_path: Path) -> None:
    repo = tmp_path / "app.git"
    (repo / "refs" / "heads").mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "objects" / "ab").mkdir(parents=True)
    obj, ref = repo / "objects" / "ab" / "cdef", repo / "refs" / "heads" / "main"
    for path in (obj, ref):
        path.write_text("x")
    for path, mode, accepted in ((obj, 0o444, True), (obj, 0o644, False), (repo / "objects" / "ab", 0o755, True),
                                 (repo / "objects" / "ab", 0o777, False), (ref, 0o644, False)):
        path.chmod(mode)
        assert git_object(path, os.lstat(path)) is accepted, (path, oct(mode))
    (tmp_path / "objects").mkdir()
    stray = tmp_path / "objects" / "key"  # an `objects/` outside any git directory is nothing of git's
    stray.write_text("x")
    stray.chmod(0o444)
    assert git_object(stray, os.lstat(stray)) is False


def test_the_report_says_how_to_opt_in_to_a_model_and_that_none_is_used_by_default(tmp_path: Path) -> None:
    result = InitResult(project=tmp_path, identity="default", address="0x" + "1" * 64, repo="acme/app",
                        repo_url=None, balance=None, asset="USDT", mcp_json=tmp_path / ".mcp.json",
                        server={"command": "code3", "args": ["mcp"], "env": {"CODE3_PROJECT": str(tmp_path)}})
    text = report(result)
    assert "no model, even with ANTHROPIC_API_KEY" in text and "CODE3_SPEC_WRITER=anthropic" in text
