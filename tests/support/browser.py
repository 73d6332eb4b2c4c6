"""Debian's headless Chromium through its WebDriver, for the tests that need a real browser (the consent page and
the console). scripts/ensure-chromium installs it (make test runs it). Without it those tests skip and say why,
except where NOTEWELL_REQUIRE_BROWSER is set (CI, which can install it): there a missing browser is a failure."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Headless, as root, and quiet: this machine refuses Chromium's background connections.
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]  # fmt: skip


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium WebDriver session, or a skip (a failure under NOTEWELL_REQUIRE_BROWSER)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        reason = "no Debian chromium/chromium-driver (scripts/ensure-chromium installs them as root with apt)"
        if os.environ.get("NOTEWELL_REQUIRE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def settled(driver: Any, until: Any) -> None:
    """Wait (bounded) for the navigation a click started to finish."""
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(driver, 15).until(until)
