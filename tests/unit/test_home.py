"""Where keys and secrets live: CODE3_HOME, else $XDG_CONFIG_HOME/code3, else ~/.config/code3, and one
directory per project named from its resolved path (never inside the project)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.home import code3_home, project_key, project_secrets_dir
from code3.settings import Settings


def test_code3_home_then_xdg_then_home(tmp_path: Path) -> None:
    assert code3_home({"CODE3_HOME": str(tmp_path / "c"), "XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == tmp_path / "c"
    assert code3_home({"XDG_CONFIG_HOME": str(tmp_path / "x"), "HOME": "/h"}) == tmp_path / "x" / "code3"
    assert code3_home({"HOME": str(tmp_path)}) == tmp_path / ".config" / "code3"


def test_an_env_naming_no_home_leaves_the_choice_to_the_process(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("CODE3_HOME", str(tmp_path / "mine"))
    assert code3_home({}) == tmp_path / "mine"
    assert Settings.from_env({}, project=tmp_path / "p").keystore_dir == tmp_path / "mine" / "keys"


def test_each_project_has_its_own_secrets_directory_named_from_its_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "a" / "app").mkdir(parents=True)
    (tmp_path / "b" / "app").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a" / "app")
    first, second = project_key(tmp_path / "a" / "app"), project_key(tmp_path / "b" / "app")
    assert first.startswith("app-") and second.startswith("app-") and first != second
    assert project_key(tmp_path / "link") == first, "the resolved path names it"
    assert project_key(tmp_path / "a" / "app") == first, "stable"
    home = tmp_path / "home"
    assert project_secrets_dir(tmp_path / "a" / "app", home) == home / "projects" / first
    settings = Settings(project=tmp_path / "a" / "app", home=home)
    assert not settings.secrets_dir.is_relative_to(settings.project)
    assert not settings.keystore_dir.is_relative_to(settings.project)
