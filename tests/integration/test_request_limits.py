"""Issue 38, items 2 and 4: request bodies are refused with 413 while they arrive, per route, and registration and
consent requests have a budget per source, through the real app (and the Lambda functions where the code runs)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.guard import SourceBuckets
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from tests.integration.test_lambda_oauth import invoke, stack  # noqa: F401 - `stack` is a fixture used below
from tests.support.mcp_harness import make_keys, running
from tests.support.oauth import CHALLENGE, issue_tokens

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"
KIB = 1024
CHUNK = 64 * KIB
JSON = {"content-type": "application/json"}
FORM = {"content-type": "application/x-www-form-urlencoded"}
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def services(tmp_path: Path, clock: FixedClock) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), clock=clock)


@pytest.fixture
async def app(services: Services) -> AsyncIterator[Any]:
    built = build_app(build_server(services), services, allowed_hosts=["testserver"])
    async with running(built):
        yield built


def client(app: Any, source: str = "127.0.0.1") -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app, client=(source, 1234)), base_url=ISSUER)


@dataclass
class Endless:
    """A request body generated as it is pulled, counting what the server pulled: `size` bytes in 64 KiB chunks."""

    size: int
    pulled: int = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.pulled < self.size:
            chunk = b"x" * min(CHUNK, self.size - self.pulled)
            self.pulled += len(chunk)
            yield chunk


def too_large(answer: httpx2.Response) -> str:
    assert answer.status_code == 413, answer.text
    assert answer.headers["cache-control"] == "no-store"
    return str(answer.json()["error"])


ROUTES = [("/register", JSON, 16 * KIB), ("/token", FORM, 16 * KIB), ("/authorize", FORM, 16 * KIB)]


# ----- item 2: bodies over a route's limit -------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "headers", "limit"), ROUTES, ids=["register", "token", "authorize"])
async def test_a_streamed_oauth_body_over_16_kib_gets_413_without_being_read_whole(
    app: Any, path: str, headers: dict[str, str], limit: int
) -> None:
    body = Endless(8 * KIB * KIB)
    async with client(app) as http:
        answer = await http.post(path, content=body, headers=headers)
    assert too_large(answer) == "too_large" and "16 KiB" in answer.json()["error_description"]
    assert body.pulled <= limit + CHUNK  # it stopped at the first chunk past the limit


@pytest.mark.parametrize(("path", "headers", "limit"), ROUTES, ids=["register", "token", "authorize"])
async def test_an_oauth_body_declared_over_16_kib_gets_413_before_any_of_it_is_read(
    app: Any, path: str, headers: dict[str, str], limit: int
) -> None:
    body = Endless(400 * KIB * KIB)
    async with client(app) as http:
        answer = await http.post(path, content=body, headers={**headers, "content-length": str(body.size)})
    assert too_large(answer) == "too_large" and body.pulled == 0


async def test_a_read_only_tokens_mcp_body_over_4_mib_gets_413_without_being_read_whole(
    app: Any, services: Services
) -> None:
    _, answer = issue_tokens(services, make_keys(services).read_only)
    assert answer["scope"] == "notes:read"  # the bearer check looks into this token's bodies for writing tools
    body = Endless(16 * KIB * KIB)
    async with client(app) as http:
        refused = await http.post(
            "/mcp", content=body, headers={**MCP, "authorization": f"Bearer {answer['access_token']}"}
        )
    assert too_large(refused) == "too_large"
    assert body.pulled <= 4 * KIB * KIB + CHUNK


async def test_a_big_body_answered_before_it_was_read_closes_the_connection_and_a_small_one_keeps_it(
    app: Any,
) -> None:
    body = Endless(1024 * KIB)  # under /mcp's limit, but without credentials nobody reads it
    async with client(app) as http:
        refused = await http.post("/mcp", content=body, headers=MCP)
        small = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=MCP)
    # Else the server would take in the rest of the body to reuse the connection: 400 MB for nothing.
    assert refused.status_code == 401 and refused.headers["connection"] == "close" and body.pulled < body.size
    assert small.status_code == 401 and "connection" not in small.headers  # buffered already: nothing to save


async def test_bodies_within_the_limits_still_work(app: Any, services: Services) -> None:
    padded = {"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "x" * 200, "padding": "y" * 15_000}
    async with client(app) as http:
        created = await http.post("/register", content=json.dumps(padded), headers=JSON)
        _, answer = issue_tokens(services, make_keys(services).read_only)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": "z" * 3 * KIB * KIB}}}
        pinged = await http.post(
            "/mcp", json=ping, headers={**MCP, "authorization": f"Bearer {answer['access_token']}"}
        )
    assert created.status_code == 201 and pinged.status_code == 200


async def test_the_register_token_and_authorize_functions_refuse_a_body_over_16_kib_with_413(
    stack: str,  # noqa: F811
) -> None:
    for path, headers in (("/register", JSON), ("/token", FORM), ("/authorize", FORM)):
        request = httpx2.Request("POST", f"https://api.test{path}", content=b"x" * 17 * KIB, headers=headers)
        assert too_large(await invoke(request)) == "too_large"


# ----- item 4: registration and consent budgets --------------------------------------------------------------------


def registration(name: str = "r") -> dict[str, Any]:
    return {"content": json.dumps({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": name}), "headers": JSON}


async def test_registrations_past_a_sources_budget_get_429_with_retry_after_while_other_sources_go_on(
    app: Any,
) -> None:
    async with client(app) as http:
        answers = [await http.post("/register", **registration()) for _ in range(21)]
    assert [a.status_code for a in answers] == [201] * 20 + [429]
    refused = answers[-1]
    assert refused.json()["error"] == "too_many_requests" and int(refused.headers["retry-after"]) >= 1
    async with client(app, source="192.0.2.9") as other:
        assert (await other.post("/register", **registration())).status_code == 201


async def test_registrations_from_many_sources_stop_at_the_overall_budget(app: Any) -> None:
    statuses = []
    for n in range(101):
        async with client(app, source=f"198.51.100.{n}") as http:
            statuses.append((await http.post("/register", **registration())).status_code)
    assert statuses == [201] * 100 + [429]


async def test_consent_requests_past_a_sources_budget_get_429(app: Any) -> None:
    async with client(app) as http:
        created = await http.post("/register", **registration())
        query = urlencode({"response_type": "code", "client_id": created.json()["client_id"],
                           "code_challenge": CHALLENGE, "code_challenge_method": "S256"})  # fmt: skip
        statuses = [(await http.get(f"/authorize?{query}")).status_code for _ in range(61)]
    assert statuses == [200] * 60 + [429]


async def test_an_unused_registration_is_forgotten_after_a_day_and_a_used_one_is_kept(
    app: Any, services: Services, clock: FixedClock
) -> None:
    async with client(app) as http:
        unused = (await http.post("/register", **registration("unused"))).json()["client_id"]
    used, _ = issue_tokens(services, make_keys(services).full)
    clock.advance(days=1, seconds=1)
    assert services.oauth is not None
    assert services.oauth.client(unused) is None and services.oauth.client(used) is not None
    async with client(app) as http:
        query = {"response_type": "code", "code_challenge": CHALLENGE, "code_challenge_method": "S256"}
        page = await http.get("/authorize?" + urlencode({**query, "client_id": unused}))
        assert page.status_code == 400 and "register again" in page.text
        assert (await http.get("/authorize?" + urlencode({**query, "client_id": used}))).status_code == 200


async def test_the_register_function_keeps_its_budget_across_invocations(stack: str) -> None:  # noqa: F811
    statuses = [
        (await invoke(httpx2.Request("POST", "https://api.test/register", **registration()))).status_code
        for _ in range(21)
    ]
    assert statuses == [201] * 20 + [429]


def test_source_buckets_refill_over_time_and_keep_a_bounded_number_of_sources() -> None:
    now = [0.0]
    buckets = SourceBuckets(2, 0.5, sources=3, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 2.0]  # the third waits for one token at 0.5/s
    now[0] = 2.0
    assert buckets.take("a") == 0.0
    for source in ("b", "c", "d"):  # "a" is now the longest unseen of four: dropped, it starts full again
        buckets.take(source)
    assert len(buckets._buckets) == 3 and "a" not in buckets._buckets
