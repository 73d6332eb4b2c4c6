"""OAuth discovery through the real app: /mcp's 401 names the protected-resource metadata, whose authorization
server's metadata names the same issuer byte for byte (the checklist's "Discovery and /mcp" cases)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import Store
from tests.support.mcp_harness import make_keys, running

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"  # the in-process test host (canonical_issuer allows plain http only on loopback)
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


def app_with(services: Services) -> object:
    return build_app(build_server(services), services, allowed_hosts=["testserver"])


async def client_for(app: object) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://testserver")


async def test_post_mcp_without_authorization_gets_a_challenge_naming_the_metadata_and_scopes(
    oauth_services: Services,
) -> None:
    app = app_with(oauth_services)
    async with running(app), await client_for(app) as http:  # type: ignore[arg-type]
        bare = await http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        wrong = await http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "authorization": "Bearer nw_nope"})
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{ISSUER}/.well-known/oauth-protected-resource/mcp", scope="notes:read notes:write"'
    )
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert wrong.headers["www-authenticate"].startswith(bare.headers["www-authenticate"])


async def test_the_metadata_documents_name_one_issuer_byte_for_byte(oauth_services: Services) -> None:
    app = app_with(oauth_services)
    async with running(app), await client_for(app) as http:  # type: ignore[arg-type]
        inserted = await http.get("/.well-known/oauth-protected-resource/mcp")
        root = await http.get("/.well-known/oauth-protected-resource")
        server = await http.get("/.well-known/oauth-authorization-server")
        openid = await http.get("/.well-known/openid-configuration")
    assert inserted.status_code == root.status_code == server.status_code == 200
    assert inserted.content == root.content
    resource, metadata = json.loads(inserted.content), json.loads(server.content)
    assert resource["resource"] == f"{ISSUER}/mcp" and resource["authorization_servers"] == [ISSUER]
    assert metadata["issuer"] == ISSUER and f'"issuer":"{ISSUER}"'.encode() in server.content
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["token_endpoint_auth_methods_supported"] == ["none"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert openid.status_code == 404


async def test_without_an_issuer_the_key_only_server_says_so_and_serves_no_discovery(services: Services) -> None:
    app = app_with(services)
    key = make_keys(services).full
    async with running(app), await client_for(app) as http:  # type: ignore[arg-type]
        bare = await http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        metadata = await http.get("/.well-known/oauth-authorization-server")
        ok = await http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "authorization": f"Bearer {key}"})
    assert bare.status_code == 401 and bare.headers["www-authenticate"] == 'Bearer realm="notewell"'
    assert metadata.status_code == 404 and ok.status_code == 200


def test_the_issuer_comes_from_the_environment_in_its_canonical_form() -> None:
    from notewell.config import ConfigError, Settings

    assert Settings.from_env({"NOTEWELL_ISSUER": "https://Notes.Example.com/"}).issuer == "https://notes.example.com"
    assert Settings.from_env({}).issuer is None
    with pytest.raises(ConfigError, match="NOTEWELL_ISSUER"):
        Settings.from_env({"NOTEWELL_ISSUER": "https://notes.example.com/prod"})
