"""Issue 38, the console's items: what a red-team pass over `notewell serve` on loopback found, each driven through
the app `serve` runs (on both stores) and, where the function path differs, through the console's Lambda function.

7. a superscript digit in a form's version or importance is a 400, not a 500;
8. a non-ASCII CSRF token or OAuth state is refused (403; the callback's forged state stays its 400), not a 500;
10. signing out ends the session on the server: a kept copy of the cookie signs nobody in;
15. a page on another loopback port cannot sign a person into the attacker's workspace (login CSRF).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2
import pytest

from functions.console import app as console_function
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.cli import serve_hosts
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from tests.integration.test_lambda_console import (
    FakeContext,
    console_env,  # noqa: F401  (a fixture)
    cookie_value,
    event,
    request,
)
from tests.support.console import ConsoleClient, console
from tests.support.mcp_harness import Keys, make_keys, running

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from notewell.domain.model import Note
    from notewell.ports import Store

pytestmark = pytest.mark.anyio
SERVE = "http://127.0.0.1:8765"  # where `notewell serve` answers, and the issuer of its authorization server
NEIGHBOUR = "http://127.0.0.1:9999"  # another local web server: same host, so its cookies reach the console too


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


def a_note(services: Services, keys: Keys) -> Note:
    me = services.auth.authenticate(keys.full)
    assert me is not None
    return services.notes.create(me, "alpha", title="Use SAM", body="We deploy with SAM.").note


@contextlib.asynccontextmanager
async def served(services: Services) -> AsyncIterator[ConsoleClient]:
    """The app exactly as `notewell serve` builds it on 127.0.0.1: loopback Host names of any port are answered."""
    app = build_app(build_server(services), services, allowed_hosts=serve_hosts("127.0.0.1", ()), console=True)
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=SERVE) as http:
        yield ConsoleClient(http)


# ----- 7 ------------------------------------------------------------------------------------------------------------


async def test_7_edit_or_resolve_with_a_superscript_or_huge_version_or_importance_is_a_400_and_changes_nothing(
    services: Services, keys: Keys
) -> None:
    note = a_note(services, keys)
    async with console(services, keys.full) as browser:
        edit = (await browser.get(f"/console/n/{note.id}/edit")).form("Save as v2")
        for field in ("version", "importance"):
            for odd in ("²", "1²", "١", "9" * 5000):
                saved = await browser.submit(edit, **{field: odd, "title": "Changed"})
                assert saved.status_code == 400, (field, odd[:5], saved.status_code)
                assert "reload the page" in saved.text or "whole number from 1 to 5" in saved.text
        for odd in ("²", "9" * 5000):
            settled = await browser.http.post(
                f"/console/n/{note.id}/resolve", data={"csrf": edit.fields["csrf"], "action": "historical",
                                                        "version": odd},
            )  # fmt: skip
            assert settled.status_code == 400 and "version is not a number" in settled.text
    me = services.auth.authenticate(keys.full)
    assert me is not None
    after = services.notes.get(me, note.id).note
    assert (after.version, after.title, after.status) == (note.version, "Use SAM", note.status)


# ----- 8 ------------------------------------------------------------------------------------------------------------


async def test_8_a_non_ascii_csrf_token_is_refused_with_403_on_sign_in_sign_out_and_every_change_form(
    services: Services, keys: Keys
) -> None:
    note = a_note(services, keys)
    async with console(services) as browser:
        sign_in = (await browser.get("/console/sign-in")).form("Sign in")
        for odd in ("é", "\u202e", "²"):
            refused = await browser.submit(sign_in, csrf=odd, api_key=keys.full)
            assert refused.status_code == 403 and "nw_console=" not in refused.headers.get("set-cookie", "")
        # The cookie's side can be odd too: a browser sends back whatever the page next door set.
        odd_cookie = {b"cookie": "nw_console_csrf=é".encode()}  # raw UTF-8, as a browser sends it
        posted = await browser.http.post("/console/sign-in", data={"csrf": "é", "api_key": keys.full},
                                         headers=odd_cookie)  # fmt: skip
        assert posted.status_code == 403
        assert (await browser.sign_in(keys.full)).status_code == 303
        forms = {
            f"/console/n/{note.id}/edit": {"version": "1", "title": "Changed", "body": "x", "type": "decision",
                                           "status": "current", "importance": "3"},
            f"/console/n/{note.id}/resolve": {"action": "historical", "version": "1"},
            f"/console/n/{note.id}/supersede": {"by": note.id, "version": "1"},
            "/console/sign-out": {},
        }  # fmt: skip
        for path, fields in forms.items():
            for odd in ("é", "€" * 40, "\U0001f980"):
                answer = await browser.http.post(path, data={**fields, "csrf": odd})
                assert answer.status_code == 403, (path, odd, answer.status_code)
        assert (await browser.get("/console/usage")).status == 200  # still signed in: the sign-out was refused
    me = services.auth.authenticate(keys.full)
    assert me is not None
    assert services.notes.get(me, note.id).note.version == note.version


async def test_8_a_non_ascii_state_on_the_oauth_callback_is_refused_as_a_forged_one(
    store: Store, tmp_path: Path
) -> None:
    services = bootstrap(Settings(data_dir=tmp_path, issuer=SERVE), store=store)
    async with console(services, base=SERVE) as browser:
        started = await browser.http.get("/console/oauth/start")
        assert started.status_code == 303  # the flow cookie is set: the state is compared, not just missing
        for odd in ("é", "%C3%A9", "%ED%A0%80", "²"):
            forged = await browser.http.get(f"/console/oauth/callback?code=abc&state={odd}")
            assert forged.status_code == 400 and "not the one this browser started" in forged.text, odd
            assert "nw_console=" not in forged.headers.get("set-cookie", "")


# ----- 10 -----------------------------------------------------------------------------------------------------------


async def test_10_signing_out_ends_the_session_so_a_kept_copy_of_the_cookie_signs_nobody_in(
    services: Services, keys: Keys
) -> None:
    async with console(services, keys.full) as browser:
        kept = browser.http.cookies["nw_console"]
        home = await browser.get("/")
        sign_out = next(f for f in home.parsed.forms if f.action == "/console/sign-out")
        assert (await browser.submit(sign_out)).status_code == 303
        browser.http.cookies.set("nw_console", kept)  # a copy taken before, replayed
        after = await browser.http.get("/console/usage")
        assert after.status_code == 303 and after.headers["location"].startswith("/console/sign-in")
        changed = await browser.http.post(
            f"/console/n/{a_note(services, keys).id}/resolve",
            data={"csrf": sign_out.fields["csrf"], "action": "historical"},
        )
        assert changed.status_code == 303 and changed.headers["location"] == "/console/sign-in"
        # Signing in again opens a new session, which works.
        assert (await browser.sign_in(keys.full)).status_code == 303
        assert (await browser.get("/console/usage")).status == 200


def test_10_signing_out_through_the_function_ends_the_session_in_dynamodb(console_env: str) -> None:  # noqa: F811
    home = console_function.handler(event("console_home"), FakeContext())
    csrf = cookie_value(home, "__Host-nw_console_csrf")
    signed = console_function.handler(
        event("console_sign_in", REPLACE_WITH_CSRF=csrf, REPLACE_WITH_API_KEY=console_env), FakeContext()
    )
    session = cookie_value(signed, "__Host-nw_console")
    who = console_function._runtime()[0].console.resume(session)
    assert who is not None
    assert console_function.handler(request("GET", "/console/usage", session), FakeContext())["statusCode"] == 200
    out = console_function.handler(
        request("POST", "/console/sign-out", session, {"csrf": who.session.csrf}), FakeContext()
    )
    assert out["statusCode"] == 303 and out["headers"]["location"] == "/"
    console_function._runtime.cache_clear()  # another container: only the table knows the session ended
    replayed = console_function.handler(request("GET", "/console/usage", session), FakeContext())
    assert replayed["statusCode"] == 303 and replayed["headers"]["location"].startswith("/console/sign-in")


# ----- 15 -----------------------------------------------------------------------------------------------------------


async def test_15_a_page_on_another_loopback_port_cannot_sign_a_person_into_the_attackers_workspace(
    services: Services, keys: Keys
) -> None:
    async with served(services) as attacker, served(services) as victim:
        # The attacker fetches a sign-in page for a valid token and cookie pair, then plants the cookie in the
        # victim's browser from a page on another port (cookies ignore ports) and posts the form from there.
        planted = (await attacker.get("/console/sign-in")).form("Sign in").fields["csrf"]
        victim.http.cookies.set("nw_console_csrf", planted)
        forged = await victim.http.post(
            "/console/sign-in", data={"csrf": planted, "api_key": keys.other_workspace},
            headers={"origin": NEIGHBOUR},
        )  # fmt: skip
        assert forged.status_code == 403 and "own sign-in page" in forged.text
        assert "nw_console=" not in forged.headers.get("set-cookie", "")
        referred = await victim.http.post(
            "/console/sign-in", data={"csrf": planted, "api_key": keys.other_workspace},
            headers={"referer": f"{NEIGHBOUR}/innocent"},
        )  # fmt: skip
        assert referred.status_code == 403
        assert (await victim.http.get("/console/usage")).status_code == 303  # nobody is signed in
        # The console's own page, which the browser names as the origin, still signs in.
        own = (await victim.get("/console/sign-in")).form("Sign in")
        signed = await victim.http.post("/console/sign-in", data={**own.fields, "api_key": keys.full},
                                        headers={"origin": SERVE})  # fmt: skip
        assert signed.status_code == 303
        assert "key full" in (await victim.get("/")).text


def test_15_the_function_refuses_a_sign_in_posted_from_another_port_of_its_host(console_env: str) -> None:  # noqa: F811
    home = console_function.handler(event("console_home"), FakeContext())
    csrf = cookie_value(home, "__Host-nw_console_csrf")
    posted = event("console_sign_in", REPLACE_WITH_CSRF=csrf, REPLACE_WITH_API_KEY=console_env)
    posted["headers"]["origin"] = f"https://{posted['headers']['host']}:8443"
    refused = console_function.handler(posted, FakeContext())
    assert refused["statusCode"] == 403
    assert not [c for c in refused.get("cookies", []) if c.startswith("__Host-nw_console=")]
