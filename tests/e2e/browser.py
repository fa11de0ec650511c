"""A real headless Chromium for the web page's tests: Debian's `chromium` driven by Selenium through Debian's
`chromedriver` (`make test-tools` installs both; `make test` npm's axe-core), the axe-core check injected into a
page, screenshots kept as test artefacts under .cache/screenshots/ (git-ignored)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests import tools_needed
from tests.tools_needed import AXE, CHROMEDRIVER, CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / ".cache" / "screenshots"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
BLOCKING = ("serious", "critical")


def missing() -> str | None:
    """Why the browser tests cannot run here (what is missing and the command that installs it), or None."""
    return tools_needed.browser_missing()


@contextmanager
def chromium(width: int, height: int) -> Iterator[Any]:
    """A headless Chromium window of `width` x `height` CSS pixels, closed afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        resize(driver, width, height)
        yield driver
    finally:
        driver.quit()


def resize(driver: Any, width: int, height: int) -> None:
    """The viewport (not the window) `width` CSS pixels wide, as a phone's or a desktop's."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def axe(driver: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it stands: rule id, impact, help and the offending nodes."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script((AXE / "axe.min.js").read_text())
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(JSON.stringify(r.violations)),"
        " e => done(JSON.stringify({error: String(e)})));")
    found = json.loads(result)
    if isinstance(found, dict):
        raise AssertionError(f"axe-core failed on {driver.current_url}: {found['error']}")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["target"] for n in v["nodes"]][:5]} for v in found]


def blocking(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in BLOCKING]


def shot(driver: Any, name: str, full_page: bool = True) -> Path:
    """A PNG of the page (the whole page's height when `full_page`) under .cache/screenshots/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    save_png(driver, path, full_page)
    return path


def save_png(driver: Any, path: Path, full_page: bool = True, max_height: int = 4000) -> None:
    import base64

    width = driver.execute_script("return document.documentElement.clientWidth")
    height = driver.execute_script("return document.documentElement.scrollHeight") if full_page else None
    params: dict[str, Any] = {"format": "png", "captureBeyondViewport": bool(full_page)}
    if height:
        params["clip"] = {"x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}
    data = driver.execute_cdp_cmd("Page.captureScreenshot", params)["data"]
    path.write_bytes(base64.b64decode(data))


def wait_until(what: str, check: Callable[[], Any], timeout: float = 20.0, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    from selenium.common.exceptions import StaleElementReferenceException

    while time.monotonic() < deadline:
        try:
            last = check()
        except StaleElementReferenceException as exc:  # a live update swapped the region between find and read
            last = exc
        else:
            if last:
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
