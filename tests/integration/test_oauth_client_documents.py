"""Client ID metadata documents (CIMD) through the real app on both stores: a client whose client_id is an https
URL is known by the document there, fetched once and kept by its Cache-Control (5 min to 24 h), never a failure."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import ClientDocument, ClientDocumentError, Store
from tests.support.mcp_harness import make_keys, running

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"
CLIENT = "https://claude.ai/oauth/mcp-oauth-client-metadata"
REDIRECT = "https://claude.ai/api/mcp/auth_callback"
VERIFIER = "c" * 43
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()


@dataclass
class FakeDocuments:
    """What a client's URL serves, and how often it was asked."""

    served: dict[str, object] = field(default_factory=dict)  # URL -> document, or an error message
    fetches: list[str] = field(default_factory=list)

    def fetch(self, url: str) -> ClientDocument:
        self.fetches.append(url)
        document = self.served.get(url, "the document answered HTTP 404")
        if isinstance(document, str):
            raise ClientDocumentError(document)
        return ClientDocument(json.dumps(document).encode(), max_age=60)  # clamped up to 5 minutes


def claude_document(**overrides: object) -> dict[str, object]:
    return {"client_id": CLIENT, "client_name": "Claude", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "token_endpoint_auth_method": "none",
            **overrides}  # fmt: skip


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def documents() -> FakeDocuments:
    return FakeDocuments({CLIENT: claude_document()})


@pytest.fixture
async def http(store: Store, tmp_path: Path, clock: FixedClock, documents: FakeDocuments) -> AsyncIterator[
    tuple[httpx2.AsyncClient, Services]
]:  # fmt: skip
    services = bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store, clock=clock,
                         client_documents=documents)  # fmt: skip
    app = build_app(build_server(services), services, allowed_hosts=["testserver"])
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as client:
        yield client, services


def authorize(client_id: str = CLIENT, **extra: str) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
             "code_challenge": CHALLENGE, "code_challenge_method": "S256", **extra}  # fmt: skip
    return "/authorize?" + urlencode(query)


async def test_the_metadata_says_documents_are_supported_with_public_clients(
    http: tuple[httpx2.AsyncClient, Services],
) -> None:
    client, _ = http
    metadata = (await client.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["token_endpoint_auth_methods_supported"] == ["none"]  # what Claude.ai also requires


async def test_a_document_client_signs_in_without_registering(
    http: tuple[httpx2.AsyncClient, Services], documents: FakeDocuments
) -> None:
    client, services = http
    page = await client.get(authorize())
    assert page.status_code == 200 and "Allow Claude to use" in page.text
    assert "Its details come from <strong>claude.ai</strong>" in page.text and "any program there" not in page.text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
    approved = await client.post("/authorize", data={**fields, "api_key": make_keys(services).full,
                                                     "decision": "approve"})  # fmt: skip
    code = parse_qs(urlsplit(approved.headers["location"]).query)["code"][0]
    issued = await client.post("/token", data={"grant_type": "authorization_code", "code": code, "client_id": CLIENT,
                                               "code_verifier": VERIFIER, "redirect_uri": REDIRECT})  # fmt: skip
    assert issued.status_code == 200 and issued.json()["access_token"].startswith("nw_at_")
    assert documents.fetches == [CLIENT]  # fetched once, kept for the token request


async def test_the_document_is_kept_by_its_cache_lifetime_and_fetched_again_after(
    http: tuple[httpx2.AsyncClient, Services], documents: FakeDocuments, clock: FixedClock
) -> None:
    client, _ = http
    assert (await client.get(authorize())).status_code == 200
    clock.advance(seconds=4 * 60)
    assert (await client.get(authorize())).status_code == 200
    assert len(documents.fetches) == 1  # max-age=60 counts as 5 minutes
    clock.advance(seconds=2 * 60)
    assert (await client.get(authorize())).status_code == 200
    assert len(documents.fetches) == 2


async def test_a_failed_fetch_is_a_page_and_is_remembered_only_for_a_minute(
    http: tuple[httpx2.AsyncClient, Services], documents: FakeDocuments, clock: FixedClock
) -> None:
    client, _ = http
    other = "https://app.example.com/client.json"
    documents.served[other] = "the document answered HTTP 503"
    failed = await client.get(authorize(other))
    assert failed.status_code == 400 and "location" not in failed.headers and "HTTP 503" in failed.text
    documents.served[other] = {**claude_document(client_id=other, client_name="App")}
    clock.advance(seconds=61)  # a failure is kept briefly, so a slow host is not asked on every request
    assert (await client.get(authorize(other))).status_code == 200


@pytest.mark.parametrize(
    ("client_id", "document"),
    [(CLIENT, claude_document(client_id="https://claude.ai/other")),
     (CLIENT, claude_document(token_endpoint_auth_method="client_secret_post")),
     (CLIENT, claude_document(redirect_uris=["http://evil.example/cb"])),
     ("https://claude.ai/", claude_document(client_id="https://claude.ai/")),
     ("https://claude.ai/a/../b", claude_document(client_id="https://claude.ai/a/../b")),
     ("https://user@claude.ai/x", claude_document(client_id="https://user@claude.ai/x"))],
    ids=["foreign_client_id", "wants_a_secret", "unsafe_redirect", "no_path", "dot_segments", "userinfo"],
)  # fmt: skip
async def test_a_document_or_url_that_breaks_the_rules_is_a_page400(
    http: tuple[httpx2.AsyncClient, Services], documents: FakeDocuments, client_id: str, document: object
) -> None:
    client, _ = http
    documents.served[client_id] = document
    refused = await client.get(authorize(client_id))
    assert refused.status_code == 400 and "location" not in refused.headers


async def test_a_client_answering_only_on_loopback_is_flagged_on_the_consent_page(
    http: tuple[httpx2.AsyncClient, Services], documents: FakeDocuments
) -> None:
    client, _ = http
    local = "https://tool.example.org/client.json"
    documents.served[local] = claude_document(client_id=local, client_name="Tool",
                                              redirect_uris=["http://127.0.0.1/cb"])  # fmt: skip
    page = await client.get(authorize(local, redirect_uri="http://127.0.0.1:4000/cb"))
    assert page.status_code == 200 and "any program there could claim to be it" in page.text
