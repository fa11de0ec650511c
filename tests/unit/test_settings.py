"""Settings are declared once (code3/settings.py): the configuration table of docs/configuration.md, `code3 config` and
`Settings.from_env` all come from the fields of `Settings`, and a bad value is refused by name with
E_VALIDATION and a hint saying what a valid value looks like."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from adapters.aptos_abi import normalize_address
from adapters.db_watchdog import outage_limit
from adapters.home import code3_home
from adapters.keystore import NAME
from code3 import settings as config
from code3.settings import VARIABLES, Settings, describe, markdown_table, with_table
from domain.errors import Code, Code3Error
from mcp_tools import answer_size
from mcp_tools.web import auth

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

# (variable, values it refuses): every kind of reader, each way a value can be wrong
BAD = [
    ("CODE3_COOLING_PERIOD", ["abc", "0", "-5", "1.5", "7776001", "1e3", "٣"]),
    ("CODE3_DB_OUTAGE_EXIT", ["soon", "-1", "inf", "nan"]),
    ("CODE3_GITHUB_RETRY_BUDGET", ["two minutes", "-0.5"]),
    ("CODE3_WEB_SESSION_HOURS", ["0", "721", "-3", "twelve"]),
    ("CODE3_MAX_ANSWER_BYTES", ["4095", "1MB", "-4096", "8192.0"]),
    ("CODE3_FORGE", ["gitlab", "local,github"]),
    ("CODE3_CHAIN", ["ethereum"]),
    ("CODE3_LLM", ["gpt", "claude"]),
    ("CODE3_SPEC_WRITER", ["claude", "offline", "auto"]),
    ("CODE3_LOG_LEVEL", ["verbose", "warn"]),
    ("CODE3_LOG_FORMAT", ["xml"]),
    ("CODE3_LOOM_SHARE_INTERNAL", ["maybe", "ture"]),
    ("CODE3_AMOUNT_WARN_BELOW", ["-1", "1 USDT", "1.5", "1e6", "٣"]),
    ("CODE3_REFUSE_OPEN_QUESTIONS", ["sometimes", "2"]),
    ("CODE3_NEXUS_POLL_S", ["0", "0.001", "-0.2", "61", "fast", "nan", "inf", "0,2"]),
    ("CODE3_DATABASE_URL", ["mysql://u@h/db", "localhost:5432/db", "postgresql://h:port/db", "postgresql:///db",
                            "postgresql://h:99999/db"]),
    ("CODE3_GITHUB_API_URL", ["api.github.com", "ftp://api.github.com", "https://"]),
    ("CODE3_GITHUB_GIT_URL", ["git@github.com:x/y"]),
    ("CODE3_APTOS_NODE_URL", ["fullnode.testnet.aptoslabs.com/v1"]),
    ("ANTHROPIC_BASE_URL", ["https//api.anthropic.com"]),
    ("CODE3_APTOS_MODULE_ADDRESS", ["0xzz", "bounty", "0x" + "1" * 65]),
    ("CODE3_APTOS_ASSET_METADATA", ["0x"]),
    ("CODE3_IDENTITY", ["Alice", "../../etc/evil", "x" * 33]),
    ("CODE3_RESOLVER", ["bob smith"]),
]


def refused(name: str, value: str) -> Code3Error:
    with pytest.raises(Code3Error) as caught:
        Settings.from_env({name: value}, project="/tmp")
    return caught.value


@pytest.mark.parametrize(("name", "values"), BAD, ids=[name for name, _ in BAD])
def test_a_bad_value_is_refused_by_name_with_what_a_valid_one_looks_like(name: str, values: list[str]) -> None:
    variable = VARIABLES[name]
    for value in values:
        error = refused(name, value)
        assert error.code is Code.VALIDATION
        assert error.message.startswith(f"{name}=") and "is not a valid value" in error.message, error.message
        assert error.hint.startswith(f"{name} takes ") and f"e.g. {name}={variable.example}" in error.hint, error.hint
        assert "`" not in error.message + error.hint, "plain text on a terminal"
    assert Settings.from_env({name: variable.example}, project="/tmp"), "the hint's example is itself accepted"


def test_every_kind_of_value_is_checked() -> None:
    checked = {name for name, _ in BAD}
    free = {name for name, v in VARIABLES.items() if v.reader.expects in ("any text", "a directory")}
    assert set(VARIABLES) - free - {"CODE3_CACHE_DIR"} == checked, "a variable with a rule has no refusal test"


def test_a_refused_value_is_shown_cut_and_without_a_password() -> None:
    assert "s3cret" not in refused("CODE3_DATABASE_URL", "mysql://code3:s3cret@db/x").message
    assert "'mysql://code3:***@db/x'" in refused("CODE3_DATABASE_URL", "mysql://code3:s3cret@db/x").message
    assert len(refused("CODE3_FORGE", "g" * 500).message) < 120


def test_secrets_are_taken_as_given_and_never_shown() -> None:
    secrets = {name for name, v in VARIABLES.items() if v.secret}
    assert secrets == {"GITHUB_TOKEN", "ANTHROPIC_API_KEY", "CODE3_SERVE_TOKEN", "GITHUB_WEBHOOK_SECRET",
                       "CODE3_PASSPHRASE"}
    s = Settings.from_env({name: f" {name}-value " for name in secrets}, project="/tmp")
    assert s.github_token == " GITHUB_TOKEN-value " and s.serve_token == " CODE3_SERVE_TOKEN-value "
    assert "value" not in repr(s)
    assert VARIABLES["GITHUB_TOKEN"].refusal("abc").message == "GITHUB_TOKEN=(hidden) is not a valid value"


def test_unset_or_blank_gives_the_default_and_a_value_is_read_in_any_case(tmp_path: Path) -> None:
    derived = {"project", "home", "cache_dir"}
    for env in ({}, {name: "  " for name in VARIABLES if name != "CODE3_PROJECT"}):
        s = Settings.from_env(env, project=tmp_path)
        for f in fields(Settings):
            if f.name not in derived:
                assert getattr(s, f.name) == f.default, f.name
        assert s.project == tmp_path.resolve() and s.home == code3_home(env)
    s = Settings.from_env({"CODE3_FORGE": " GitHub ", "CODE3_LOG_LEVEL": "debug", "CODE3_LOOM_SHARE_INTERNAL": "ON",
                           "CODE3_COOLING_PERIOD": " 30 ", "CODE3_WEB_SESSION_HOURS": "0.5",
                           "CODE3_CACHE_DIR": "OFF", "CODE3_KEYSTORE": "~/keys"}, project=tmp_path)
    assert (s.forge, s.log_level, s.loom_share_internal, s.cooling_period) == ("github", "DEBUG", True, 30)
    assert s.web_session_hours == 0.5 and s.cache_dir is None and s.keystore == Path("~/keys").expanduser()


def test_the_cache_and_the_project_are_derived_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_env({"XDG_CACHE_HOME": "/c", "HOME": "/h"}, project=tmp_path).cache_dir == Path("/c/code3")
    assert Settings.from_env({"HOME": "/h"}, project=tmp_path).cache_dir == Path("/h/.cache/code3")
    assert Settings.from_env({"CODE3_CACHE_DIR": "/mine", "HOME": "/h"}, project=tmp_path).cache_dir == Path("/mine")
    monkeypatch.chdir(tmp_path)
    assert Settings.from_env({}).project == tmp_path.resolve()
    assert Settings.from_env({"CODE3_PROJECT": "sub"}).project == (tmp_path / "sub").resolve()


def test_a_flag_wins_and_the_variable_it_overrides_is_not_read() -> None:
    s = Settings.from_env({"CODE3_IDENTITY": "Not A Name", "CODE3_PROJECT": "/nowhere"}, project="/tmp",
                          identity="alice")
    assert (s.identity, s.project) == ("alice", Path("/tmp").resolve())
    assert Settings.from_env({"CODE3_IDENTITY": "bob"}, project="/tmp", identity=None).identity == "bob"


def test_settings_built_from_values_read_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODE3_IDENTITY", "bob")
    monkeypatch.setenv("CODE3_COOLING_PERIOD", "abc")
    s = Settings(project=tmp_path, identity="alice", home=tmp_path / "h", cooling_period=5, resolver="alice",
                 database_url=None)
    assert (s.identity, s.cooling_period, s.forge, s.keystore_dir) == ("alice", 5, "local", tmp_path / "h" / "keys")


def test_the_configuration_table_is_the_declared_one() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    assert with_table(page) == page, "the table of docs/configuration.md drifted from code3/settings.py: run " \
                                     "`.venv/bin/python -m code3.settings`"
    assert page.startswith("# Configuration\n")
    assert "\n#" not in page[:page.index(config.TABLE_START)], "the table is the page's first section"
    assert markdown_table().count("\n") == len(VARIABLES) + 2


def test_code3_config_lists_every_variable_with_its_default_and_meaning() -> None:
    text = describe()
    for name, v in VARIABLES.items():
        assert f"\n{name} (default: {v.default.replace('`', '')})\n" in f"\n{text}\n", name
    assert "`" not in text and max(len(line) for line in text.splitlines()) <= 120


def test_every_choice_is_named_in_its_meaning() -> None:
    for name, v in VARIABLES.items():
        if v.reader.expects.startswith("one of ") and not v.reader.documented:
            options = v.reader.expects.removeprefix("one of ").split(", ")
            assert all(f"`{option}`" in v.meaning for option in options), name


def test_the_rules_agree_with_the_modules_that_read_these_variables_at_use() -> None:
    assert config.KEY_NAME.pattern == NAME.pattern
    assert config.FORGES == ("local", "github") and config.CHAINS == ("local", "aptos")
    samples = ["0", "1", "2.5", "-1", "4095", "4096", "262144", "720", "720.5", "abc", "inf", "nan", "1e3", "  7 "]
    for raw in samples:
        assert ok("CODE3_DB_OUTAGE_EXIT", raw) == works(lambda r=raw: outage_limit({"CODE3_DB_OUTAGE_EXIT": r})), raw
        assert ok("CODE3_MAX_ANSWER_BYTES", raw) == works(lambda r=raw: answer_size.limit(
            {"CODE3_MAX_ANSWER_BYTES": r})), raw
        assert ok("CODE3_WEB_SESSION_HOURS", raw) == works(lambda r=raw: auth.session_hours(r)), raw
    assert VARIABLES["CODE3_MAX_ANSWER_BYTES"].example == str(answer_size.DEFAULT_MAX_ANSWER_BYTES)
    assert Settings(project=Path("/")).web_session_hours == auth.DEFAULT_SESSION_HOURS
    assert Settings(project=Path("/")).db_outage_exit == outage_limit({"CODE3_DB_OUTAGE_EXIT": ""})
    for raw in ("0x1", "0X1", "1", "0xABC", "0x" + "f" * 64, "0x", "0xg", "f" * 65, "0x-1"):
        assert ok("CODE3_APTOS_MODULE_ADDRESS", raw) == works(lambda r=raw: normalize_address(r)), raw


def ok(name: str, raw: str) -> bool:
    return works(lambda: Settings.from_env({name: raw}, project="/tmp"))


def works(call: object) -> bool:
    try:
        call()  # type: ignore[operator]
    except (ValueError, Code3Error):
        return False
    return True
