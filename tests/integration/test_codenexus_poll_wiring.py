"""CODE3_NEXUS_POLL_S reaches the CodeNexus watcher through the services `code3.wiring` builds from the settings
(the watcher's side: tests/unit/test_codenexus_poll.py)."""

from __future__ import annotations

from pathlib import Path

from code3.settings import Settings
from code3.wiring import build_services


def test_the_services_carry_the_poll_interval_the_settings_read(tmp_path: Path) -> None:
    settings = Settings.from_env({"CODE3_NEXUS_POLL_S": "0.05"}, project=tmp_path, home=tmp_path / "home")
    s = build_services(settings)
    try:
        assert s.nexus_poll_s == 0.05
    finally:
        s.close()
