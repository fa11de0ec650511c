from pathlib import Path

import pytest

from adapters.files import create_dir_atomically, inside
from adapters.keystore import Keystore
from adapters.local_forge import parse_url
from domain.errors import Code3Error


def code(call) -> str:
    with pytest.raises(Code3Error) as caught:
        call()
    return caught.value.code.value


def test_paths_outside_the_project_are_refused(tmp_path: Path) -> None:
    assert inside(tmp_path, "specs/001-a/spec.md") == tmp_path.resolve() / "specs/001-a/spec.md"
    for bad in ("../x", "/etc/passwd", "specs/../../x"):
        assert code(lambda b=bad: inside(tmp_path, b)) == "E_VALIDATION"


def test_an_atomic_directory_never_overwrites_one_that_exists(tmp_path: Path) -> None:
    create_dir_atomically(tmp_path, "001-a", {"spec.md": "one"})
    assert code(lambda: create_dir_atomically(tmp_path, "001-a", {"spec.md": "two"})) == "E_EXISTS"
    assert (tmp_path / "001-a/spec.md").read_text() == "one"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["001-a"], "no staging leftovers"


def test_keystore_names_keys_and_refuses_bad_or_duplicate_names(tmp_path: Path) -> None:
    keys = Keystore(tmp_path)
    signer = keys.new("bob")
    assert keys.load("bob") == signer and keys.names() == ["bob"]
    assert (tmp_path / "bob.key").stat().st_mode & 0o777 == 0o600
    assert signer.private_key_hex not in repr(signer)
    assert code(lambda: keys.new("bob")) == "E_EXISTS"
    assert code(lambda: keys.new("../evil")) == "E_VALIDATION"
    assert code(lambda: keys.load("nobody")) == "E_NOT_FOUND"


def test_issue_and_pr_urls_parse_on_any_forge_host() -> None:
    assert parse_url("https://github.com/o/r/issues/12") == ("o/r", "issues", 12)
    assert parse_url("local://forge/o/r/pull/3") == ("o/r", "pull", 3)
    assert code(lambda: parse_url("o/r#3")) == "E_VALIDATION"
