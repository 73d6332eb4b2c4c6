"""GET and POST /authorize through the real app on both stores: the checklist's consent-page cases, named after
them. A request's client and redirect URI are checked first and refused on a page; every other fault goes back to
the client (automatically only to a loopback URI) with state and iss."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import AuthRecords, Store
from tests.support.mcp_harness import make_keys, running
from tests.support.oauth import MISSPELLED_HTTPS_REDIRECTS

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
LOOPBACK = "http://127.0.0.1:3030/cb"
HTTPS = "https://client.example.com/cb"
STATE = "st-+/ é&x"  # echoed byte for byte


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


@pytest.fixture
async def http(oauth_services: Services) -> AsyncIterator[httpx2.AsyncClient]:
    app = build_app(build_server(oauth_services), oauth_services, allowed_hosts=["testserver"])
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as client:
        yield client


async def register(http: httpx2.AsyncClient, *uris: str) -> str:
    answer = await http.post("/register", content=json.dumps({"redirect_uris": list(uris), "client_name": "Test <b>"}),
                             headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def query(client_id: str | None, *, drop: tuple[str, ...] = (), extra: tuple[tuple[str, str], ...] = (),
          **overrides: str) -> str:  # fmt: skip
    params = {"response_type": "code", "client_id": client_id or "", "redirect_uri": LOOPBACK, "state": STATE,
              "code_challenge": CHALLENGE, "code_challenge_method": "S256", "resource": f"{ISSUER}/mcp",
              "scope": "notes:read notes:write", **overrides}  # fmt: skip
    pairs = [(k, v) for k, v in params.items() if k not in drop] + list(extra)
    return "/authorize?" + urlencode(pairs)


def page400(answer: httpx2.Response) -> None:
    assert answer.status_code == 400 and "location" not in answer.headers, answer.text
    assert answer.headers["content-type"].startswith("text/html") and "Sign-in cannot continue" in answer.text


def redir(answer: httpx2.Response, error: str) -> dict[str, list[str]]:
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(LOOPBACK + "?")
    got = parse_qs(urlsplit(location).query)
    assert got["error"] == [error] and got["state"] == [STATE] and got["iss"] == [ISSUER]
    return got


def hidden(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))


# ----- GET: client and redirect URI, refused on a page ---------------------------------------------------------


async def test_unknown_or_missing_client_id_and_repeated_client_id_or_redirect_uri_get_page400(
    http: httpx2.AsyncClient,
) -> None:
    client = await register(http, LOOPBACK)
    page400(await http.get(query("client_nope")))
    page400(await http.get(query(None, drop=("client_id",))))
    page400(await http.get(query(client, extra=(("client_id", client),))))
    page400(await http.get(query(client, extra=(("redirect_uri", LOOPBACK),))))


@pytest.mark.parametrize("requested", MISSPELLED_HTTPS_REDIRECTS)
async def test_a_registered_https_uri_requested_in_another_spelling_gets_page400(
    http: httpx2.AsyncClient, requested: str
) -> None:
    client = await register(http, HTTPS)
    page400(await http.get(query(client, redirect_uri=requested)))


@pytest.mark.parametrize("requested", ["http://127.0.0.1:53123/cb", "http://127.0.0.1/cb"])
async def test_a_loopback_uri_on_another_port_or_none_gets_the_consent_page(
    http: httpx2.AsyncClient, requested: str
) -> None:
    client = await register(http, LOOPBACK)
    answer = await http.get(query(client, redirect_uri=requested))
    assert answer.status_code == 200 and "Allow Test &lt;b&gt; to use your Notewell memory?" in answer.text


@pytest.mark.parametrize(
    "requested",
    ["http://127.0.0.1:3030/cb2", "http://127.0.0.1:3030/cb?x=1", "HTTP://127.0.0.1:3030/cb",
     "http://127.000.000.001:3030/cb", "http://evil@127.0.0.1:3030/cb", "http://127.0.0.1:3030/x/../cb",
     "http://[::1]:3030/cb", "http://localhost:3030/cb", "https://127.0.0.1:3030/cb", "http://127.0.0.1:0/cb"],
)  # fmt: skip
async def test_a_loopback_uri_differing_in_more_than_the_port_gets_page400(
    http: httpx2.AsyncClient, requested: str
) -> None:
    client = await register(http, LOOPBACK)
    page400(await http.get(query(client, redirect_uri=requested)))


async def test_several_uris_registered_and_redirect_uri_omitted_gets_page400(http: httpx2.AsyncClient) -> None:
    client = await register(http, LOOPBACK, "http://127.0.0.1:3030/other")
    page400(await http.get(query(client, drop=("redirect_uri",))))
    single = await register(http, LOOPBACK)
    assert (await http.get(query(single, drop=("redirect_uri",)))).status_code == 200  # the one registered


# ----- GET: every other fault goes back to the client -------------------------------------------------------------


@pytest.mark.parametrize("name", ["code_challenge", "state", "scope", "resource", "response_type"])
async def test_a_repeated_parameter_is_redirected_as_invalid_request(http: httpx2.AsyncClient, name: str) -> None:
    client = await register(http, LOOPBACK)
    value = {"code_challenge": CHALLENGE, "state": STATE, "scope": "notes:read", "resource": f"{ISSUER}/mcp",
             "response_type": "code"}[name]  # fmt: skip
    redir(await http.get(query(client, extra=((name, value),))), "invalid_request")


@pytest.mark.parametrize(
    ("drop", "overrides"),
    [(("code_challenge",), {}), ((), {"code_challenge_method": "plain"}), (("code_challenge_method",), {}),
     ((), {"code_challenge_method": "s256"}), ((), {"code_challenge": CHALLENGE[:42]}),
     ((), {"code_challenge": CHALLENGE + "a" * 86}), ((), {"code_challenge": CHALLENGE[:41] + "+/"}),
     ((), {"code_challenge": CHALLENGE[:42] + "="})],
    ids=["no_challenge", "plain", "method_omitted", "lowercase_s256", "42_chars", "129_chars", "plus_slash", "padding"],
)  # fmt: skip
async def test_a_missing_plain_or_malformed_pkce_challenge_is_redirected_as_invalid_request(
    http: httpx2.AsyncClient, drop: tuple[str, ...], overrides: dict[str, str]
) -> None:
    client = await register(http, LOOPBACK)
    redir(await http.get(query(client, drop=drop, **overrides)), "invalid_request")


async def test_response_type_missing_or_not_code(http: httpx2.AsyncClient) -> None:
    client = await register(http, LOOPBACK)
    redir(await http.get(query(client, drop=("response_type",))), "invalid_request")
    redir(await http.get(query(client, response_type="token")), "unsupported_response_type")
    redir(await http.get(query(client, response_type="code id_token")), "unsupported_response_type")


@pytest.mark.parametrize("resource", ["https://other.example/mcp", f"{ISSUER}/mcp#f", "/mcp"])
async def test_a_foreign_fragment_or_relative_resource_is_invalid_target(
    http: httpx2.AsyncClient, resource: str
) -> None:
    client = await register(http, LOOPBACK)
    redir(await http.get(query(client, resource=resource)), "invalid_target")


async def test_a_scope_outside_the_supported_ones_is_invalid_scope_with_state_and_iss(http: httpx2.AsyncClient) -> None:
    client = await register(http, LOOPBACK)
    redir(await http.get(query(client, scope="notes:read admin")), "invalid_scope")


async def test_an_error_for_an_https_client_is_a_page_with_a_link_never_an_automatic_redirect(
    http: httpx2.AsyncClient,
) -> None:
    client = await register(http, HTTPS)
    answer = await http.get(query(client, redirect_uri=HTTPS, scope="admin"))
    page400(answer)
    assert (
        'href="https://client.example.com/cb?error=invalid_scope' in answer.text
        and "Return to client.example.com" in answer.text
    )


async def test_a_valid_request_gets_the_consent_page_with_its_headers_and_no_code(http: httpx2.AsyncClient) -> None:
    client = await register(http, LOOPBACK)
    answer = await http.get(query(client), headers={"origin": ISSUER})
    assert answer.status_code == 200 and "code=" not in answer.text
    headers = answer.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "same-origin"
    assert "access-control-allow-origin" not in headers
    preflight = await http.options(query(client), headers={"origin": ISSUER, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers  # no CORS on /authorize (RFC 9700 §2.6)
    assert headers["set-cookie"].startswith("nw_csrf=") and "HttpOnly" in headers["set-cookie"]
    assert 'type="password"' in answer.text and 'autocomplete="off"' in answer.text
    assert (
        "<script" not in answer.text
        and "Test &lt;b&gt;" in answer.text
        and "<mark>127.0.0.1:3030</mark>" in answer.text
    )
    fields = hidden(answer.text)
    assert set(fields) == {"txn", "csrf"} and http.cookies.get("nw_csrf") == fields["csrf"]


# ----- POST: the person's answer ---------------------------------------------------------------------------------


async def consent(http: httpx2.AsyncClient, client: str, **overrides: str) -> dict[str, str]:
    answer = await http.get(query(client, **overrides))
    assert answer.status_code == 200, answer.text
    return hidden(answer.text)


async def submit(http: httpx2.AsyncClient, form: dict[str, str], **headers: str) -> httpx2.Response:
    return await http.post("/authorize", data=form, headers=headers)


def code_record(services: Services, location: str) -> dict[str, Any]:
    code = parse_qs(urlsplit(location).query)["code"][0]
    store = services.deps.store
    assert isinstance(store, AuthRecords)
    found = store.get_record(f"CODE#{hashlib.sha256(code.encode()).hexdigest()}", "CODE")
    assert found is not None and found.status == "unused"
    return dict(found.fields)


async def test_approve_answers_303_with_code_state_and_iss_bound_to_the_request(
    http: httpx2.AsyncClient, oauth_services: Services
) -> None:
    key = make_keys(oauth_services).full
    client = await register(http, LOOPBACK)
    form = await consent(http, client, redirect_uri="http://127.0.0.1:53123/cb")
    answer = await submit(http, {**form, "api_key": key, "decision": "approve"})
    assert answer.status_code == 303  # never 307, which would post the key on to the client
    location = answer.headers["location"]
    assert location.startswith("http://127.0.0.1:53123/cb?code=")
    got = parse_qs(urlsplit(location).query)
    assert got["state"] == [STATE] and got["iss"] == [ISSUER]
    bound = code_record(oauth_services, location)
    assert bound["client_id"] == client and bound["code_challenge"] == CHALLENGE
    assert bound["redirect_uri"] == "http://127.0.0.1:53123/cb" and bound["resource"] == f"{ISSUER}/mcp"
    assert bound["scopes"] == ["notes:read", "notes:write"]
    again = await submit(http, {**form, "api_key": key, "decision": "approve"})  # single use
    page400(again)


async def test_deny_answers_303_access_denied_with_state_and_iss(http: httpx2.AsyncClient) -> None:
    client = await register(http, LOOPBACK)
    form = await consent(http, client)
    redir(await submit(http, {**form, "decision": "deny"}), "access_denied")


async def test_a_read_only_key_approving_read_and_write_grants_read_only(
    http: httpx2.AsyncClient, oauth_services: Services
) -> None:
    client = await register(http, LOOPBACK)
    form = await consent(http, client)
    answer = await submit(http, {**form, "api_key": make_keys(oauth_services).read_only, "decision": "approve"})
    assert answer.status_code == 303
    assert code_record(oauth_services, answer.headers["location"])["scopes"] == ["notes:read"]


async def test_a_csrf_cookie_or_field_missing_mismatched_or_of_another_request_is_403(
    http: httpx2.AsyncClient, oauth_services: Services
) -> None:
    key = make_keys(oauth_services).full
    client = await register(http, LOOPBACK)
    first = await consent(http, client)
    second = await consent(http, client)  # the cookie now holds the second request's value
    assert (await submit(http, {**first, "api_key": key, "decision": "approve"})).status_code == 403
    assert (await submit(http, {**second, "csrf": "", "api_key": key, "decision": "approve"})).status_code == 403
    assert (await submit(http, {**second, "csrf": "forged", "api_key": key})).status_code == 403
    http.cookies.clear()
    assert (await submit(http, {**second, "api_key": key, "decision": "approve"})).status_code == 403
    http.cookies.set("nw_csrf", second["csrf"])
    assert (await submit(http, {**second, "api_key": key, "decision": "approve"})).status_code == 303  # unchanged


async def test_an_origin_other_than_the_issuers_is_403(http: httpx2.AsyncClient, oauth_services: Services) -> None:
    client = await register(http, LOOPBACK)
    form = await consent(http, client)
    key = make_keys(oauth_services).full
    refused = await submit(http, {**form, "api_key": key, "decision": "approve"}, origin="http://evil.example")
    assert refused.status_code == 403
    assert (await submit(http, {**form, "api_key": key, "decision": "approve"}, origin=ISSUER)).status_code == 303


async def test_a_wrong_key_shows_the_form_again_and_the_sixth_kills_the_request(
    http: httpx2.AsyncClient, oauth_services: Services
) -> None:
    client = await register(http, LOOPBACK)
    form = await consent(http, client)
    for left in (4, 3, 2, 1, 0):
        again = await submit(http, {**form, "api_key": "nw_not_a_key", "decision": "approve"})
        assert again.status_code == 400 and 'role="alert"' in again.text and f"({left} attempts left)" in again.text
        assert hidden(again.text) == form and "nw_not_a_key" not in again.text
    dead = await submit(http, {**form, "api_key": make_keys(oauth_services).full, "decision": "approve"})
    assert dead.status_code == 403 and "location" not in dead.headers


async def test_an_expired_or_decided_request_gets_page400(http: httpx2.AsyncClient, oauth_services: Services) -> None:
    client = await register(http, LOOPBACK)
    form = await consent(http, client)
    assert (await submit(http, {**form, "decision": "deny"})).status_code == 303
    page400(await submit(http, {**form, "decision": "deny"}))
    page400(await submit(http, {"txn": "nope", "csrf": form["csrf"], "decision": "deny"}))
