"""The web console in a real headless browser (Debian's Chromium through its WebDriver) against `notewell serve`:
sign in from the keyboard, browse every view, settle a conflict, survive a stale edit, a read-only key that sees
no write controls, a project-scoped key that cannot reach another project by URL, hostile note text that stays
inert, and a phone-sized screen. Screenshots of each view land in test-artifacts/console/."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteStatus, NoteType, Plan, Principal
from notewell.services.notes import NoteChanges
from tests.support.browser import ARTIFACTS, chromium, settled
from tests.support.serve import serve

SHOTS = ARTIFACTS / "console"
HOSTILE_TITLE = "Deploy \u202eexe.evil <img src=x onerror=\"document.title='pwned'\">"
HOSTILE_BODY = "<script>document.title='pwned'</script>\nbell\x07 and an RTL override \u202ecba"


@dataclass
class World:
    base: str
    services: Services  # the same data directory the server uses: what other agents write meanwhile
    me: Principal
    full: str
    read_only: str
    scoped: str  # project 'web' only
    disputed: str
    decision: str
    hostile: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data = tmp_path_factory.mktemp("console")
    services = bootstrap(Settings(data_dir=data, embedder="none"))
    workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)
    full = services.auth.create_key(workspace.id, name="alice").secret
    read_only = services.auth.create_key(workspace.id, name="auditor", read_only=True).secret
    scoped = services.auth.create_key(workspace.id, name="web team", project="web").secret
    me = services.auth.authenticate(full)
    assert me is not None
    notes = services.notes
    notes.create(me, "api", title="No ORMs", body="Plain SQL only; ORMs hid N+1 queries.", type=NoteType.CONSTRAINT)
    decision = notes.create(me, "api", title="Orders in PostgreSQL 16", body="We use PostgreSQL 16 for orders.",
                            type=NoteType.DECISION).note  # fmt: skip
    disputed = notes.create(me, "api", title="Orders in MySQL 8", body="We use MySQL 8 for orders.",
                            type=NoteType.DECISION, status=NoteStatus.DISPUTED).note  # fmt: skip
    notes.create(me, "api", title="Next: migrate billing", body="Move billing to the new schema.",
                 type=NoteType.TASK, status=NoteStatus.PENDING)  # fmt: skip
    hostile = notes.create(me, "api", title=HOSTILE_TITLE, body=HOSTILE_BODY).note
    notes.create(me, "web", title="Frontend on Netlify", body="We deploy the frontend to Netlify.")
    with serve(data, env={"NOTEWELL_EMBEDDER": "none"}) as server:
        yield World(server.base, services, me, full, read_only, scoped, disputed.id, decision.id, hostile.id)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(1280, 900)
        yield driver


def shoot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def sign_in(driver: Any, world: World, key: str) -> None:
    """From a fresh session, with the keyboard: the key typed into the focused-by-Tab field, Enter pressed."""
    from selenium.webdriver.common.keys import Keys

    driver.delete_all_cookies()
    driver.get(f"{world.base}/")
    field = driver.find_element("id", "api_key")
    field.send_keys(key, Keys.ENTER)
    settled(driver, lambda d: d.find_elements("css selector", "header .who"))


def click(driver: Any, label: str) -> None:
    button = driver.find_element("xpath", f"//button[normalize-space()='{label}']")
    button.click()


def heading(driver: Any) -> str:
    return str(driver.find_element("tag name", "h1").text)


def test_a_person_signs_in_from_the_keyboard_and_browses_every_view(browser: Any, world: World) -> None:
    browser.delete_all_cookies()
    browser.get(f"{world.base}/")
    assert heading(browser) == "Sign in to the Notewell console"
    browser.find_element("tag name", "body").send_keys("\t")  # the first Tab reaches the skip link
    assert browser.switch_to.active_element.text == "Skip to content"
    shoot(browser, "sign-in")
    sign_in(browser, world, world.full)
    assert heading(browser) == "Projects"
    assert [a.text for a in browser.find_elements("css selector", "tbody th a")] == ["api", "web"]
    shoot(browser, "projects")
    browser.find_element("link text", "api").click()
    settled(browser, lambda d: heading(d) == "Project api")
    sections = [h.text for h in browser.find_elements("css selector", "section h2")]
    assert sections[0].startswith("Conflicts") and "Constraints" in sections and "Decisions" in sections
    shoot(browser, "project")
    for view, name in (("Timeline", "timeline"), ("Search", "search")):
        browser.find_element("link text", view).click()
        settled(browser, lambda d, v=view: d.find_element("css selector", "nav [aria-current=page]").text == v)
        shoot(browser, name)
    browser.find_element("id", "q").send_keys("postgresql\n")
    settled(browser, lambda d: "found by" in d.page_source)
    browser.find_element("link text", "Orders in PostgreSQL 16").click()
    settled(browser, lambda d: heading(d) == "Orders in PostgreSQL 16")
    shoot(browser, "note")
    browser.find_element("link text", "Usage").click()
    settled(browser, lambda d: heading(d).startswith("Usage"))
    assert "console:project" in browser.page_source
    shoot(browser, "usage")


def test_a_person_settles_a_conflict_with_one_button(browser: Any, world: World) -> None:
    sign_in(browser, world, world.full)
    browser.get(f"{world.base}/console/p/api/conflicts")
    assert "Orders in MySQL 8" in browser.find_element("id", "conflicts").find_element("xpath", "..").text
    shoot(browser, "conflicts")
    click(browser, "Retire it: mark historical")
    settled(browser, lambda d: "Marked historical." in d.page_source)
    assert world.services.notes.get(world.me, world.disputed).note.status is NoteStatus.HISTORICAL
    shoot(browser, "conflict-settled")


def test_a_stale_edit_shows_the_other_change_and_the_person_merges(browser: Any, world: World) -> None:
    sign_in(browser, world, world.full)
    browser.get(f"{world.base}/console/n/{world.decision}/edit")
    body = browser.find_element("id", "body")
    body.clear()
    body.send_keys("We use PostgreSQL 16 for orders and invoices.")
    # Meanwhile an agent changes the same note.
    world.services.notes.update(world.me, world.decision, NoteChanges(body="We use PostgreSQL 17 for orders."))
    click(browser, "Save as v2")
    settled(browser, lambda d: "changed since you opened it" in d.page_source)
    other = browser.find_element("id", "other").find_element("xpath", "..").text
    assert "+We use PostgreSQL 17 for orders." in other
    shoot(browser, "stale-edit")
    body = browser.find_element("id", "body")
    body.clear()
    body.send_keys("We use PostgreSQL 17 for orders and invoices.")
    click(browser, "Save as v3")
    settled(browser, lambda d: "Saved." in d.page_source)
    note = world.services.notes.get(world.me, world.decision).note
    assert (note.version, note.body) == (3, "We use PostgreSQL 17 for orders and invoices.")


def test_a_person_supersedes_a_note_by_typing_the_ref_the_other_note_shows(browser: Any, world: World) -> None:
    old = world.services.notes.create(world.me, "ops", title="Pager: Opsgenie", body="Alerts page through Opsgenie.")
    new = world.services.notes.create(world.me, "ops", title="Pager: PagerDuty", body="Alerts page through PagerDuty.")
    sign_in(browser, world, world.full)
    browser.get(f"{world.base}/console/n/{new.note.id}")
    meta = browser.find_element("css selector", "p.meta").text
    ref = meta.rsplit("ref ", 1)[1].split()[0]  # as a person reads it off the page
    assert new.note.id.endswith(ref)
    browser.get(f"{world.base}/console/n/{old.note.id}")
    browser.find_element("id", "by").send_keys(ref.lower())  # the form's own check lets a ref through
    click(browser, "Supersede")
    settled(browser, lambda d: "Superseded." in d.page_source)
    assert "Pager: PagerDuty" in browser.find_element("tag name", "main").text
    assert world.services.notes.get(world.me, old.note.id).note.status is NoteStatus.SUPERSEDED


def test_a_read_only_key_sees_no_write_controls(browser: Any, world: World) -> None:
    sign_in(browser, world, world.read_only)
    for path in ("/console/p/api", "/console/p/api/conflicts", f"/console/n/{world.decision}"):
        browser.get(f"{world.base}{path}")
        actions = [f.get_attribute("action") for f in browser.find_elements("css selector", "form[method=post]")]
        assert actions == [f"{world.base}/console/sign-out"], (path, actions)
        assert not browser.find_elements("link text", "Edit")
    assert "(read-only)" in browser.find_element("css selector", "header .who").text
    shoot(browser, "read-only")


def test_a_project_scoped_key_cannot_reach_another_project_by_url(browser: Any, world: World) -> None:
    sign_in(browser, world, world.scoped)
    assert [a.text for a in browser.find_elements("css selector", "tbody th a")] == ["web"]
    for path in ("/console/p/api", f"/console/n/{world.decision}", "/console/p/api/search?q=orders"):
        browser.get(f"{world.base}{path}")
        assert heading(browser) == "Not found", path
        assert "PostgreSQL" not in browser.page_source
    shoot(browser, "scoped-not-found")


def test_hostile_note_text_renders_inert(browser: Any, world: World) -> None:
    sign_in(browser, world, world.full)
    browser.get(f"{world.base}/console/n/{world.hostile}")
    # The title shows the text as written, the override as a code point: nothing ran, nothing was reordered.
    assert browser.title == "Deploy [U+202E]exe.evil <img src=x onerror=\"document.title='pwned'\"> · Notewell"
    main = browser.find_element("tag name", "main")
    assert not main.find_elements("tag name", "img") and not browser.find_elements("tag name", "script")
    marks = [m.text for m in main.find_elements("css selector", ".cc")]
    assert "U+202E" in marks and "U+0007" in marks
    assert "<script>document.title='pwned'</script>" in main.find_element("tag name", "pre").text
    browser.get(f"{world.base}/console/p/api")  # the same text in a list stays inert too
    assert browser.title == "Project api · Notewell"
    assert not browser.find_element("tag name", "main").find_elements("tag name", "img")
    shoot(browser, "hostile-text")


def test_the_console_fits_a_phone_screen(browser: Any, world: World) -> None:
    sign_in(browser, world, world.full)
    browser.set_window_size(390, 844)
    try:
        for path, name in (("/console/p/api", "phone-project"), (f"/console/n/{world.decision}", "phone-note")):
            browser.get(f"{world.base}{path}")
            width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], (path, width)  # no sideways scrolling of the page
            shoot(browser, name)
    finally:
        browser.set_window_size(1280, 900)


def test_a_person_signs_in_through_the_authorization_servers_consent_page(browser: Any, world: World) -> None:
    browser.delete_all_cookies()
    browser.get(f"{world.base}/")
    browser.find_element("link text", "sign in through the authorization server").click()
    settled(browser, lambda d: d.find_elements("id", "api_key") and "Allow" in d.page_source)
    assert heading(browser) == "Allow Notewell console to use your Notewell memory?"
    shoot(browser, "oauth-consent")
    browser.find_element("id", "api_key").send_keys(world.full)
    browser.find_element("css selector", "button[value=approve]").click()
    settled(browser, lambda d: d.find_elements("css selector", "header .who"))
    assert heading(browser) == "Projects"
    assert "through OAuth" in browser.find_element("css selector", "header .who").text
    shoot(browser, "oauth-signed-in")
