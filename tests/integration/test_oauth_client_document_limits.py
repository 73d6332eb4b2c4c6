"""Client metadata documents and registrations that attack the authorization server, through the real apps:
`notewell serve` (build_app) and the Lambda functions' own apps (build_oauth_app), on both stores. Slow hosts must
not starve /mcp, a failure is remembered for a minute, odd text never becomes a 500 or shows as a trick, and a URL
is read as the browser will read it."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.from_thread
import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app, build_oauth_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import ClientDocument, ClientDocumentError, Store
from notewell.services.oauth import FETCHES_AT_ONCE
from tests.integration.test_oauth_client_documents import CLIENT, ISSUER, authorize, claude_document
from tests.support.mcp_harness import make_keys, running

pytestmark = pytest.mark.anyio

WORKER_THREADS = 40  # anyio's default limit, shared by every route that calls the service in a thread
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class Documents:
    """What each client URL serves (a document, or an error message); fetches can be held until released."""

    served: dict[str, object] = field(default_factory=dict)
    fetches: list[str] = field(default_factory=list)
    hold: threading.Event | None = None
    on_fetch: Callable[[], None] = lambda: None

    def fetch(self, url: str) -> ClientDocument:
        self.fetches.append(url)
        self.on_fetch()
        if self.hold is not None:
            self.hold.wait(timeout=10)  # bounded: a failing test still ends
        document = self.served.get(url, "the document answered HTTP 404")
        if isinstance(document, str):
            raise ClientDocumentError(document)
        return ClientDocument(json.dumps(document).encode(), max_age=600)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def documents() -> Documents:
    return Documents({CLIENT: claude_document()})


@pytest.fixture
def services(store: Store, tmp_path: Path, clock: FixedClock, documents: Documents) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store, clock=clock, client_documents=documents)


def lambda_functions(services: Services) -> Callable[[Scope, Receive, Send], object]:
    """The register, authorize and token functions' apps behind one address, each answering only its own path."""
    functions = (("register", "/register"), ("authorize", "/authorize"), ("token", "/token"))
    apps = {path: build_oauth_app(services, name, allowed_hosts=["testserver"]) for name, path in functions}

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        await apps[scope["path"]](scope, receive, send)

    return route


@pytest.fixture(params=["serve", "lambda"])
async def http(request: pytest.FixtureRequest, services: Services) -> AsyncIterator[httpx2.AsyncClient]:
    if request.param == "serve":
        app = build_app(build_server(services), services, allowed_hosts=["testserver"])
        async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as c:
            yield c
    else:
        transport = httpx2.ASGITransport(app=lambda_functions(services))  # type: ignore[arg-type]
        async with httpx2.AsyncClient(transport=transport, base_url=ISSUER) as c:
            yield c


def page400(answer: httpx2.Response) -> None:
    assert answer.status_code == 400 and "location" not in answer.headers, answer.text
    assert "Sign-in cannot continue" in answer.text


# ----- 1. slow hosts: one deadline per fetch (tests/unit), few fetches at once, failures remembered briefly --------


async def test_slow_client_documents_never_starve_mcp_and_fetches_past_the_bound_get_a_busy_page(
    store: Store, tmp_path: Path, clock: FixedClock
) -> None:
    documents = Documents(hold=threading.Event())
    services = bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store, clock=clock,
                         client_documents=documents)  # fmt: skip
    key = make_keys(services).full
    app = build_app(build_server(services), services, allowed_hosts=["testserver"])
    answers: list[httpx2.Response] = []
    all_in = anyio.Event()  # every request is fetching or answered

    def progressed() -> None:
        if len(documents.fetches) + len(answers) >= WORKER_THREADS:
            all_in.set()

    documents.on_fetch = lambda: anyio.from_thread.run_sync(progressed)

    async def ask(host: int) -> None:
        # Each from its own address: the per-address request budget is another fence, not the one tested here.
        transport = httpx2.ASGITransport(app=app, client=(f"192.0.2.{host}", 50_000))
        async with httpx2.AsyncClient(transport=transport, base_url=ISSUER) as browser:
            answers.append(await browser.get(authorize(f"https://slow{host}.example/client.json")))
        progressed()

    headers = {**MCP_HEADERS, "authorization": f"Bearer {key}"}
    async with (
        running(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as client,
        anyio.create_task_group() as tasks,
    ):
        try:
            for host in range(WORKER_THREADS):
                tasks.start_soon(ask, host)
            with anyio.fail_after(5):
                await all_in.wait()
            with anyio.fail_after(5):  # while the slow hosts hold their fetches
                mcp = await client.post("/mcp", json=INITIALIZE, headers=headers)
        finally:
            assert documents.hold is not None
            documents.hold.set()
    assert mcp.status_code == 200
    assert len(documents.fetches) == FETCHES_AT_ONCE
    busy = [answer for answer in answers if answer.status_code == 503]
    assert len(busy) == WORKER_THREADS - FETCHES_AT_ONCE
    assert "try again in a minute" in busy[0].text and "location" not in busy[0].headers


async def test_a_failed_document_is_remembered_for_a_minute_then_fetched_again(
    http: httpx2.AsyncClient, documents: Documents, clock: FixedClock
) -> None:
    other = "https://app.example.com/client.json"
    documents.served[other] = "the document answered HTTP 503"
    page400(await http.get(authorize(other)))
    again = await http.get(authorize(other))
    page400(again)
    assert "HTTP 503" in again.text and documents.fetches == [other]  # a slow or broken host is asked once a minute
    documents.served[other] = claude_document(client_id=other, client_name="App")
    clock.advance(seconds=61)
    assert (await http.get(authorize(other))).status_code == 200
    assert documents.fetches == [other, other]


# ----- 5. URLs read as a browser reads them ------------------------------------------------------------------------


async def register(http: httpx2.AsyncClient, body: bytes) -> httpx2.Response:
    return await http.post("/register", content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    "uri",
    ["https://evil.example\\.good.example/cb", "https://good.example/%2e%2e/admin/cb", "https://good.example/a/.%2E/cb",
     "https:evil.example/cb", "https://0x7f.1/cb", "https://ex%61mple.com/cb"],
    ids=["backslash_host", "encoded_dot_dot", "mixed_dot_dot", "no_slashes", "hex_ipv4", "encoded_host"],
)  # fmt: skip
async def test_a_redirect_uri_a_browser_would_read_differently_is_refused_at_registration(
    http: httpx2.AsyncClient, uri: str
) -> None:
    answer = await register(http, json.dumps({"redirect_uris": [uri]}).encode())
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri", answer.text


async def test_a_client_document_whose_redirect_uri_has_a_backslash_host_is_refused(
    http: httpx2.AsyncClient, documents: Documents
) -> None:
    trick = "https://evil.example\\.claude.ai/cb"
    documents.served[CLIENT] = claude_document(redirect_uris=[trick])
    page400(await http.get(authorize(redirect_uri=trick)))


async def test_the_consent_page_shows_an_internationalised_host_as_punycode(
    http: httpx2.AsyncClient, documents: Documents
) -> None:
    idn = "https://аpple.example/client.json"  # Cyrillic а: looks like apple.example
    redirect = "https://аpple.example/cb"
    documents.served[idn] = claude_document(client_id=idn, redirect_uris=[redirect])
    page = await http.get(authorize(idn, redirect_uri=redirect))
    assert page.status_code == 200, page.text
    assert "<mark>xn--pple-43d.example</mark>" in page.text
    assert "Its details come from <strong>xn--pple-43d.example</strong>" in page.text
    assert "аpple" not in page.text


# ----- 6. lone surrogates are a 400, never a 500 or a cached client ------------------------------------------------


async def test_a_lone_surrogate_in_a_registered_client_name_is_a_400_saying_what_to_send(
    http: httpx2.AsyncClient,
) -> None:
    answer = await register(http, b'{"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "Tool \\ud800"}')
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_client_metadata" and "valid Unicode" in answer.json()["error_description"]


async def test_a_lone_surrogate_in_a_fetched_document_is_a_page400_and_the_document_is_not_kept(
    http: httpx2.AsyncClient, documents: Documents, clock: FixedClock
) -> None:
    documents.served[CLIENT] = claude_document(client_name="Claude \ud800")  # json.dumps writes it as \ud800
    refused = await http.get(authorize())
    page400(refused)
    assert "valid Unicode" in refused.text
    documents.served[CLIENT] = claude_document(client_name="Claude fixed")
    clock.advance(seconds=61)
    page = await http.get(authorize())
    assert page.status_code == 200 and "Allow Claude fixed to use" in page.text


# ----- 12. invisible and reordering characters show as code points ------------------------------------------------


async def test_a_client_name_with_bidi_override_zero_width_or_nul_shows_code_points_on_the_consent_page(
    http: httpx2.AsyncClient,
) -> None:
    name = "Safe\u202eliam\u200bx\x00y"
    answer = await register(http, json.dumps({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": name}).encode())
    client_id = answer.json()["client_id"]
    page = await http.get(authorize(client_id, redirect_uri="http://127.0.0.1/cb"))
    assert page.status_code == 200, page.text
    assert 'Safe<span class="cp">&lt;U+202E&gt;</span>liam<span class="cp">&lt;U+200B&gt;</span>x' in page.text
    assert "&lt;U+0000&gt;</span>y" in page.text
    assert not any(ch in page.text for ch in "\u202e\u200b\x00")
