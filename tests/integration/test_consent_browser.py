"""The consent page in a real headless browser (Debian's chromium through its WebDriver) against `notewell serve`:
approve, deny, a failed CSRF check, a bad client, a wrong key and a phone-sized screen. Screenshots of each land in
test-artifacts/consent/ for people to look at.

The browser comes from scripts/ensure-chromium (make test runs it). Without it these tests skip and say why, except
where NOTEWELL_REQUIRE_BROWSER is set (CI, which can install it): there a missing browser is a failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from tests.support.browser import ARTIFACTS, chromium, settled
from tests.support.serve import serve

SHOTS = ARTIFACTS / "consent"
VERIFIER = "b" * 43
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        SHOTS.mkdir(parents=True, exist_ok=True)
        yield driver


class Callback:
    """The client's redirect URI: a loopback listener that keeps what the browser brought back."""

    def __init__(self) -> None:
        received: list[dict[str, list[str]]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if urlsplit(self.path).path == "/cb":  # not the browser's favicon request
                    received.append(parse_qs(urlsplit(self.path).query))
                body = b"<!doctype html><title>Signed in</title><p>You can close this tab."
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/cb"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Callback]]:
    """`notewell serve` on loopback (its own issuer), its first key, and a registered client's callback."""
    callback = Callback()
    try:
        with serve(tmp_path_factory.mktemp("consent"), env={"NOTEWELL_EMBEDDER": "none"}) as server:
            assert server.key is not None
            yield server.base, server.key, callback
    finally:
        callback.server.shutdown()
        callback.server.server_close()


def authorize_url(base: str, callback: Callback, name: str = "Claude Code", **overrides: str) -> str:
    metadata = {"redirect_uris": [callback.uri], "client_name": name}
    client = httpx2.post(f"{base}/register", content=json.dumps(metadata), headers={"content-type": "application/json"})
    query = {"response_type": "code", "client_id": client.json()["client_id"], "redirect_uri": callback.uri,
             "state": "xyz", "code_challenge": CHALLENGE, "code_challenge_method": "S256", **overrides}  # fmt: skip
    return f"{base}/authorize?{urlencode(query)}"


def shoot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def press(driver: Any, value: str) -> None:
    driver.find_element("css selector", f"button[value={value}]").click()


def test_a_person_approves_with_a_key_and_the_client_gets_its_code(
    browser: Any, served: tuple[str, str, Callback]
) -> None:
    base, key, callback = served
    browser.set_window_size(1280, 900)
    browser.get(authorize_url(base, callback))
    assert browser.find_element("tag name", "h1").text == "Allow Claude Code to use your Notewell memory?"
    field = browser.find_element("id", "api_key")
    assert field.get_attribute("type") == "password" and browser.find_element("css selector", "label[for=api_key]")
    shoot(browser, "consent")
    field.send_keys(key)
    press(browser, "approve")
    settled(browser, lambda d: d.title == "Signed in")
    answer = callback.received[-1]
    assert answer["code"] and answer["state"] == ["xyz"] and answer["iss"] == [base]


def test_a_person_denies_and_the_client_hears_access_denied(browser: Any, served: tuple[str, str, Callback]) -> None:
    base, _, callback = served
    browser.get(authorize_url(base, callback))
    press(browser, "deny")
    settled(browser, lambda d: d.title == "Signed in")
    assert callback.received[-1]["error"] == ["access_denied"] and callback.received[-1]["state"] == ["xyz"]


def test_a_submission_without_the_csrf_cookie_is_refused_on_a_page(
    browser: Any, served: tuple[str, str, Callback]
) -> None:
    base, key, callback = served
    seen = len(callback.received)
    browser.get(authorize_url(base, callback))
    browser.delete_all_cookies()  # as a cross-site form post would arrive: without this page's cookie
    browser.find_element("id", "api_key").send_keys(key)
    press(browser, "approve")
    settled(browser, lambda d: "security check failed" in d.page_source)
    shoot(browser, "csrf-refused")
    assert len(callback.received) == seen  # nothing reached the client


def test_an_unknown_client_gets_a_page_and_no_redirect(browser: Any, served: tuple[str, str, Callback]) -> None:
    base, _, callback = served
    browser.get(authorize_url(base, callback, client_id="client_unknown"))
    assert browser.find_element("tag name", "h1").text == "Sign-in cannot continue"
    assert browser.current_url.startswith(base)
    shoot(browser, "bad-client")


def test_a_wrong_key_shows_the_form_again_with_the_reason_announced(
    browser: Any, served: tuple[str, str, Callback]
) -> None:
    base, _, callback = served
    browser.get(authorize_url(base, callback))
    browser.find_element("id", "api_key").send_keys("nwk_wrong")
    press(browser, "approve")
    settled(browser, lambda d: "attempts left" in d.page_source)
    alert = browser.find_element("css selector", "[role=alert]")
    assert "not valid here" in alert.text and "4 attempts left" in alert.text
    assert browser.find_element("id", "api_key").get_attribute("aria-describedby") == "problem"
    shoot(browser, "wrong-key")


def test_the_page_fits_a_phone_screen(browser: Any, served: tuple[str, str, Callback]) -> None:
    base, _, callback = served
    browser.set_window_size(390, 844)
    browser.get(authorize_url(base, callback, name="A client with a rather long name, as some give themselves"))
    width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width  # no sideways scrolling
    allow = browser.find_element("css selector", "button[value=approve]")
    assert allow.is_displayed() and allow.size["height"] >= 32  # a thumb can hit it
    shoot(browser, "phone")
    browser.set_window_size(1280, 900)
