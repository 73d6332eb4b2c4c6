"""The console's freshness view in a real headless browser (Debian's Chromium through its WebDriver) against
`notewell serve`: from a project, the Freshness tab lists the notes an agent's session found changed or gone, each
leading to its note, readable from the keyboard and on a phone. Screenshots land in test-artifacts/console/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import Anchor, NoteType, Plan
from tests.support.browser import ARTIFACTS, chromium, settled
from tests.support.serve import serve

SHOTS = ARTIFACTS / "console"
COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"


def digest(n: int) -> str:
    return f"{n:064x}"


def anchor(path: str, n: int) -> Anchor:
    return Anchor("github.com/acme/api", path, COMMIT, digest(n + 1000), digest(n))


@dataclass
class World:
    base: str
    key: str
    changed: str
    gone: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data = tmp_path_factory.mktemp("freshness")
    services = bootstrap(Settings(data_dir=data, embedder="none"))
    workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)
    key = services.auth.create_key(workspace.id, name="alice").secret
    me = services.auth.authenticate(key)
    assert me is not None
    notes = services.notes
    changed = notes.create(me, "api", title="Webhook retries back off to 30 s", body="Backoff doubles, capped.",
                           type=NoteType.DECISION, anchors=[anchor("src/webhooks/retry.py", 1)]).note  # fmt: skip
    gone = notes.create(me, "api", title="Orders go through the legacy queue", body="Drain it first.",
                        type=NoteType.CONSTRAINT, anchors=[anchor("src/legacy_queue.py", 2)]).note  # fmt: skip
    notes.create(me, "api", title="Tokens are opaque", body="No JWTs.", anchors=[anchor("src/tokens.py", 3)])
    # What an agent's session start sends: the hashes of its files; two notes' code moved on.
    hashes = {"src/webhooks/retry.py": digest(9), "src/legacy_queue.py": None, "src/tokens.py": digest(3)}
    services.context.get_context(me, "api", check_freshness=hashes)
    with serve(data, env={"NOTEWELL_EMBEDDER": "none"}) as server:
        yield World(server.base, key, changed.id, gone.id)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(1280, 900)
        yield driver


def heading(driver: Any) -> str:
    return str(driver.find_element("tag name", "h1").text)


def sign_in(driver: Any, world: World) -> None:
    from selenium.webdriver.common.keys import Keys

    driver.delete_all_cookies()
    driver.get(f"{world.base}/")
    driver.find_element("id", "api_key").send_keys(world.key, Keys.ENTER)
    settled(driver, lambda d: d.find_elements("css selector", "header .who"))


def test_a_person_finds_the_notes_to_re_check_from_the_project_and_opens_one(browser: Any, world: World) -> None:
    from selenium.webdriver.common.keys import Keys

    sign_in(browser, world)
    browser.find_element("link text", "api").click()
    settled(browser, lambda d: heading(d) == "Project api")
    browser.find_element("link text", "Freshness").click()
    settled(browser, lambda d: heading(d) == "Freshness of api")
    assert browser.find_element("css selector", "nav [aria-current=page]").text == "Freshness"
    table = browser.find_element("css selector", "#stale ~ div table")
    cells = [
        [td.text for td in tr.find_elements("tag name", "td")] for tr in table.find_elements("css selector", "tbody tr")
    ]
    assert [(c[0].splitlines()[0], c[1], c[2]) for c in cells] == [
        ("Orders go through the legacy queue", "gone", "src/legacy_queue.py"),
        ("Webhook retries back off to 30 s", "changed", "src/webhooks/retry.py"),
    ]  # fmt: skip
    section = browser.find_element("id", "stale").find_element("xpath", "..").text
    assert "What to do: re-check the note against the code, then update or re-anchor it" in section
    assert (
        "3 anchored notes: 2 to re-check, 1 fresh"
        in browser.find_element("id", "anchored").find_element("xpath", "..").text
    )
    assert f"/console/n/{world.gone}" in browser.page_source
    browser.save_screenshot(str(SHOTS / "freshness.png"))

    link = browser.find_element("link text", "Webhook retries back off to 30 s")
    link.send_keys(Keys.ENTER)  # from the keyboard
    settled(browser, lambda d: heading(d) == "Webhook retries back off to 30 s")
    assert world.changed in browser.page_source


def test_the_freshness_view_fits_a_phone_screen(browser: Any, world: World) -> None:
    sign_in(browser, world)
    browser.set_window_size(390, 844)
    try:
        browser.get(f"{world.base}/console/p/api/freshness")
        settled(browser, lambda d: heading(d) == "Freshness of api")
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width  # the table scrolls in its box, the page does not
        browser.save_screenshot(str(SHOTS / "phone-freshness.png"))
    finally:
        browser.set_window_size(1280, 900)
