"""The MCP SDK's own OAuth client against the real app, on both stores: it discovers, registers, is approved on the
real consent page (a redirect handler plays the browser and the person), gets tokens, calls tools in both protocol
eras, refreshes, and is sent back through consent after a reused refresh token revoked its grant."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import Store
from tests.support.mcp_harness import make_keys, ok, running
from tests.support.serve import serve

pytestmark = pytest.mark.anyio

ISSUER = "http://localhost"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


async def test_the_sdk_client_signs_in_calls_tools_in_both_eras_refreshes_and_loses_a_reused_grant(
    oauth_services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    key = make_keys(oauth_services).full
    app = build_app(build_server(oauth_services), oauth_services, allowed_hosts=["localhost"])
    notewell_logs = logging.getLogger("notewell")  # configure_logging stops it propagating: listen to it directly
    before = notewell_logs.level
    notewell_logs.addHandler(caplog.handler)
    notewell_logs.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG):
            async with running(app):
                secrets = await sign_in_and_work(ISSUER, key, httpx2.ASGITransport(app=app))
    finally:
        notewell_logs.removeHandler(caplog.handler)
        notewell_logs.setLevel(before)
    logged = caplog.text
    assert "tool call" in logged  # the log was captured, at every level
    for secret in secrets:  # keys, codes, CSRF values and tokens never appear in logs
        assert secret[-12:] not in logged


def test_the_sdk_client_signs_in_to_notewell_serve_over_http(tmp_path: Path) -> None:
    """The same walk against a `notewell serve` process on loopback: its own issuer, nothing configured."""
    with serve(tmp_path, env={"NOTEWELL_EMBEDDER": "none"}) as served:
        issuer = served.base
        assert f"OAuth sign-in: clients discover it at {issuer}/mcp (issuer {issuer})." in served.printed
        assert served.key is not None
        anyio.run(sign_in_and_work, issuer, served.key, httpx2.AsyncHTTPTransport())


async def sign_in_and_work(issuer: str, key: str, transport: httpx2.AsyncBaseTransport) -> list[str]:
    """Discover, register, consent, call tools in both eras, refresh, lose the grant to a reused refresh token."""
    requests: list[httpx2.Request] = []
    approvals: list[str] = []
    secrets: list[str] = []  # every credential the walk handled: none may reach a log
    got: dict[str, str] = {}

    async def record(request: httpx2.Request) -> None:
        requests.append(request)

    async def redirect_handler(url: str) -> None:  # the browser and the person
        page = await http.get(url, auth=None)  # auth=None: the provider's lock is held while it waits here
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
        approved = await http.post("/authorize", auth=None, data={**fields, "api_key": key, "decision": "approve"})
        assert approved.status_code == 303
        answer = parse_qs(urlsplit(approved.headers["location"]).query)
        got.update(code=answer["code"][0], state=answer["state"][0], iss=answer["iss"][0])
        secrets.extend([answer["code"][0], fields["csrf"], fields["txn"]])
        approvals.append(url)

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(**got)

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{issuer}/mcp", storage=storage,
        client_metadata=OAuthClientMetadata(client_name="e2e", redirect_uris=[AnyUrl("http://127.0.0.1:3030/cb")]),
        redirect_handler=redirect_handler, callback_handler=callback_handler,
    )  # fmt: skip
    async with httpx2.AsyncClient(
        transport=transport, base_url=issuer, auth=provider, event_hooks={"request": [record]}
    ) as http:
        for mode in ("legacy", "auto"):
            async with Client(streamable_http_client(f"{issuer}/mcp", http_client=http), mode=mode) as client:
                written = ok(await client.call_tool("remember", {"project": "api", "content": f"Signed in ({mode}).",
                                                                 "type": "fact"}))  # fmt: skip
                assert written["status"] == "created"
        assert len(approvals) == 1  # one consent, then the token serves both eras
        paths = [r.url.path for r in requests]
        assert (
            paths.index("/.well-known/oauth-protected-resource/mcp") < paths.index("/register") < paths.index("/token")
        )
        authorize = parse_qs(urlsplit(approvals[0]).query)
        assert authorize["code_challenge_method"] == ["S256"] and authorize["resource"] == [f"{issuer}/mcp"]
        exchange = parse_qs(next(r for r in requests if r.url.path == "/token").content.decode())
        assert {"code_verifier", "resource", "redirect_uri"} <= set(exchange) and "client_secret" not in exchange

        first = storage.tokens
        assert first is not None and first.refresh_token and first.scope == "notes:read notes:write"
        provider.context.token_expiry_time = time.time() - 1  # the access token has expired: refresh first
        async with Client(streamable_http_client(f"{issuer}/mcp", http_client=http), mode="auto") as client:
            ok(await client.call_tool("get_context", {"project": "api"}))
        second = storage.tokens
        assert second is not None and second.refresh_token != first.refresh_token and len(approvals) == 1
        assert any(parse_qs(r.content.decode()).get("grant_type") == ["refresh_token"] for r in requests
                   if r.url.path == "/token")  # fmt: skip

        assert storage.client is not None
        replayed = {"grant_type": "refresh_token", "refresh_token": first.refresh_token,
                    "client_id": storage.client.client_id}  # fmt: skip
        reuse = await http.post("/token", auth=None, data=replayed)
        assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
        revoked = await http.post("/mcp", auth=None, headers={"authorization": f"Bearer {second.access_token}"},
                                  json={"jsonrpc": "2.0", "id": 1, "method": "ping"})  # fmt: skip
        assert revoked.status_code == 401 and 'error="invalid_token"' in revoked.headers["www-authenticate"]
        async with Client(streamable_http_client(f"{issuer}/mcp", http_client=http), mode="auto") as client:
            ok(await client.call_tool("get_context", {"project": "api"}))
        assert len(approvals) == 2  # the revoked grant sent the client back through consent
        assert storage.tokens is not None
        for tokens in (first, second, storage.tokens):
            secrets.extend([tokens.access_token, str(tokens.refresh_token)])
    return [key, *secrets]
