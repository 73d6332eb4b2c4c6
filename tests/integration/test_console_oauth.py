"""Signing in to the console through the authorization server, on both stores: the console is an OAuth client of
its own deployment (registered once, PKCE), the person approves on the consent page with a key, and the session
that follows has that key's rights for as long as the grant lives."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteStatus
from notewell.ports import Store
from tests.support.console import ConsoleClient, console
from tests.support.mcp_harness import Keys, make_keys

pytestmark = pytest.mark.anyio
ISSUER = "http://127.0.0.1:8765"  # loopback: plain http is allowed for the issuer and the redirect URI


@pytest.fixture
def services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


async def through_the_authorization_server(browser: ConsoleClient, key: str, decision: str = "approve") -> str:
    """From the sign-in page's link to the console page it lands on; returns where the callback sent the browser."""
    sign_in = await browser.get("/")
    link = next(href for href in sign_in.parsed.links if href.startswith("/console/oauth/start"))
    started = await browser.http.get(link)
    assert started.status_code == 303 and started.headers["location"].startswith("/authorize?")
    query = parse_qs(urlsplit(started.headers["location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["redirect_uri"] == [f"{ISSUER}/console/oauth/callback"]
    consent = await browser.get(started.headers["location"])
    assert consent.status == 200 and "Allow Notewell console to use your Notewell memory?" in consent.text
    answered = await browser.http.post("/authorize", data={**consent.parsed.forms[0].fields, "api_key": key,
                                                           "decision": decision})  # fmt: skip
    assert answered.status_code == 303, answered.text
    callback = answered.headers["location"]
    assert callback.startswith(f"{ISSUER}/console/oauth/callback?")
    landed = await browser.http.get(callback.removeprefix(ISSUER))
    return landed.headers.get("location", "") if landed.status_code == 303 else f"status {landed.status_code}"


async def test_a_person_signs_in_through_the_consent_page_and_gets_that_keys_console(
    services: Services, keys: Keys
) -> None:
    me = services.auth.authenticate(keys.full)
    assert me is not None
    services.notes.create(me, "alpha", title="Use SAM", body="We deploy with SAM.")
    async with console(services, base=ISSUER) as browser:
        assert await through_the_authorization_server(browser, keys.full) == "/"
        home = await browser.get("/")
        assert (
            "Signed in with key full" in home.text
            and "through OAuth" in home.text
            and "/console/p/alpha" in home.parsed.links
        )
        project = await browser.get("/console/p/alpha")
        assert project.status == 200 and "Use SAM" in project.text
        # A second sign-in reuses the console's registration instead of registering another client.
        browser.http.cookies.clear()
        assert await through_the_authorization_server(browser, keys.full) == "/"
    assert len([r for r in services.deps.store.records_under("CONSOLE#CLIENT")]) == 1  # type: ignore[attr-defined]


async def test_a_read_only_or_project_key_approving_gives_a_console_with_its_limits(
    services: Services, keys: Keys
) -> None:
    me = services.auth.authenticate(keys.full)
    assert me is not None
    disputed = services.notes.create(me, "alpha", title="Disputed", body="?", status=NoteStatus.DISPUTED).note
    services.notes.create(me, "beta", title="Other", body="Elsewhere.")
    async with console(services, base=ISSUER) as browser:
        await through_the_authorization_server(browser, keys.read_only)
        page = await browser.get(f"/console/n/{disputed.id}")
        assert page.status == 200 and page.writing_forms == [] and "(read-only)" in page.text
    async with console(services, base=ISSUER) as browser:
        await through_the_authorization_server(browser, keys.scoped)
        assert (await browser.get("/console/p/beta")).status == 404
        assert (await browser.get("/console/p/alpha")).status == 200


async def test_a_forged_state_a_refusal_or_a_revoked_key_opens_no_console(services: Services, keys: Keys) -> None:
    async with console(services, base=ISSUER) as browser:
        forged = await browser.http.get("/console/oauth/callback?code=abc&state=guessed")
        assert forged.status_code == 400 and "not the one this browser started" in forged.text
        assert "nw_console=" not in forged.headers.get("set-cookie", "")
        assert await through_the_authorization_server(browser, keys.full, decision="deny") == "status 400"
        assert "Sign in to the Notewell console" in (await browser.get("/")).text
        assert await through_the_authorization_server(browser, keys.full) == "/"
        assert (await browser.get("/console/usage")).status == 200
        key_id = next(k.id for k in services.auth.list_keys(keys.workspace) if k.name == "full")
        services.auth.revoke_key(keys.workspace, key_id)  # its grants end with it, and the console session too
        after = await browser.http.get("/console/usage")
        assert after.status_code == 303 and after.headers["location"].startswith("/console/sign-in")
