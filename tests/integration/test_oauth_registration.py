"""POST /register (RFC 7591) through the real app on both stores: the checklist's registration cases, named after
them, and the registration shapes the clients in the wild send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import Store
from tests.support.mcp_harness import running

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"
VALID = {"redirect_uris": ["http://127.0.0.1:3030/callback"], "client_name": "e2e"}


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


async def register(services: Services, *requests: dict[str, Any]) -> list[httpx2.Response]:
    app = build_app(build_server(services), services, allowed_hosts=["testserver"])
    answers = []
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as http:
        for request in requests:
            answers.append(await http.post("/register", **request))
    return answers


def as_json(document: object) -> dict[str, Any]:
    return {"content": json.dumps(document), "headers": {"content-type": "application/json"}}


def error_of(response: httpx2.Response) -> str:
    assert response.headers["cache-control"] == "no-store"
    return str(response.json()["error"])


async def test_a_valid_registration_gets_201_a_public_client_and_its_uris_echoed_exactly(
    oauth_services: Services,
) -> None:
    uris = ["http://127.0.0.1:3030/callback", "https://client.example.com/cb?x=1&y"]
    (created,) = await register(oauth_services, as_json({**VALID, "redirect_uris": uris}))
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    body = created.json()
    assert body["redirect_uris"] == uris and body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body and body["client_id"].startswith("client_")
    assert body["grant_types"] == ["authorization_code", "refresh_token"] and body["response_types"] == ["code"]
    assert oauth_services.oauth is not None and oauth_services.oauth.client(body["client_id"]) is not None


@pytest.mark.parametrize("method", [None, "client_secret_basic", "client_secret_post"])
async def test_token_endpoint_auth_method_omitted_or_secret_based_is_registered_as_none_without_a_secret(
    oauth_services: Services, method: str | None
) -> None:
    document = VALID if method is None else {**VALID, "token_endpoint_auth_method": method}
    (created,) = await register(oauth_services, as_json(document))
    assert created.status_code == 201 and created.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in created.json()


@pytest.mark.parametrize(
    "request_",
    [{"data": {"redirect_uris": "http://127.0.0.1/cb"}}, as_json(None), as_json([]), as_json({}),
     {"content": b"", "headers": {"content-type": "application/json"}},
     {"content": b"{not json", "headers": {"content-type": "application/json"}}],
    ids=["form_encoded", "null", "list", "empty_object", "empty_body", "not_json"],
)  # fmt: skip
async def test_form_encoded_null_list_empty_or_non_json_bodies_are_invalid_request(
    oauth_services: Services, request_: dict[str, Any]
) -> None:
    (refused,) = await register(oauth_services, request_)
    assert refused.status_code == 400 and error_of(refused) == "invalid_request"


@pytest.mark.parametrize(
    "document",
    [{**VALID, "client_name": "x" * 201}, {**VALID, "redirect_uris": [f"http://127.0.0.1/cb{n}" for n in range(11)]},
     {**VALID, "grant_types": ["authorization_code", "password"]},
     {**VALID, "grant_types": ["implicit"]}, {**VALID, "grant_types": ["client_credentials"]},
     {**VALID, "response_types": ["token"]}, {**VALID, "scope": "admin"}],
    ids=["long_name", "eleven_uris", "password", "implicit", "client_credentials", "token_response",
         "unknown_scope"],
)  # fmt: skip
async def test_oversized_or_unsupported_metadata_is_invalid_client_metadata(
    oauth_services: Services, document: dict[str, Any]
) -> None:
    (refused,) = await register(oauth_services, as_json(document))
    assert refused.status_code == 400 and error_of(refused) == "invalid_client_metadata"


async def test_metadata_over_16_kib_is_refused_with_413_before_it_is_read(oauth_services: Services) -> None:
    # Issue 38: refused while it arrives (tests/integration/test_request_limits.py streams one), not parsed first.
    (refused,) = await register(oauth_services, as_json({**VALID, "padding": "x" * 17_000}))
    assert refused.status_code == 413 and error_of(refused) == "too_large"


@pytest.mark.parametrize(
    "uris",
    [None, [], ["https://client.example.com/cb#f"], ["/cb"], ["https://user@client.example.com/cb"],
     ["javascript:alert(1)"], ["data:text/html,x"], ["file:///etc/passwd"], ["http://evil.example/cb"],
     ["myapp:/cb"], ["com.example.app:/cb"], [42]],
    ids=["missing", "empty", "fragment", "relative", "userinfo", "javascript", "data", "file", "non_loopback_http",
         "private_scheme", "reverse_domain_scheme", "not_a_string"],
)  # fmt: skip
async def test_missing_empty_or_unsafe_redirect_uris_are_invalid_redirect_uri(
    oauth_services: Services, uris: list[object] | None
) -> None:
    document = {"client_name": "x"} if uris is None else {"redirect_uris": uris}
    (refused,) = await register(oauth_services, as_json(document))
    assert refused.status_code == 400 and error_of(refused) == "invalid_redirect_uri"


# What each client sends (../shared/notes/oauth.md §7): every one of them must be able to register.
CLIENT_SHAPES = {
    "mcp_python_sdk": {"redirect_uris": ["http://127.0.0.1:3030/callback"], "grant_types": list(("authorization_code",
                       "refresh_token")), "response_types": ["code"], "application_type": "native",
                       "scope": "notes:read notes:write", "client_name": "e2e"},
    "claude_ai": {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": "Claude",
                  "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]},
    "claude_code": {"redirect_uris": ["http://localhost:51234/callback"], "client_name": "Claude Code",
                    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]},
    "chatgpt": {"redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
                "client_name": "ChatGPT", "token_endpoint_auth_method": "none"},
    # Cursor sends its private-use callback beside the https and loopback ones, in one registration.
    "cursor": {"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback",
                                 "https://www.cursor.com/agents/mcp/oauth/callback", "http://localhost:8787/callback"],
               "client_name": "Cursor"},
    "vscode": {"redirect_uris": ["https://vscode.dev/redirect", "https://insiders.vscode.dev/redirect",
                                 "http://127.0.0.1/", "http://127.0.0.1:33418/"], "client_name": "Visual Studio Code"},
}  # fmt: skip


@pytest.mark.parametrize("client", sorted(CLIENT_SHAPES))
async def test_each_clients_registration_shape_is_accepted(oauth_services: Services, client: str) -> None:
    (answer,) = await register(oauth_services, as_json(CLIENT_SHAPES[client]))
    assert answer.status_code == 201, answer.text
    assert answer.json()["token_endpoint_auth_method"] == "none"
    assert answer.json()["redirect_uris"] == CLIENT_SHAPES[client]["redirect_uris"]


async def test_only_the_known_native_callback_of_a_private_scheme_is_accepted(oauth_services: Services) -> None:
    for uri in ("cursor://anysphere.cursor-mcp/oauth/callback/", "cursor://anysphere.cursor-mcp/oauth/callback#x",
                "cursor://evil/oauth/callback", "vscode://x/cb"):  # fmt: skip
        (refused,) = await register(oauth_services, as_json({"redirect_uris": [uri]}))
        assert refused.status_code == 400 and error_of(refused) == "invalid_redirect_uri", uri
