"""Input no store can keep and stores that cannot answer, through the real MCP client on SQLite and DynamoDB."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from tests.support.mcp_harness import BASE, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

    from starlette.applications import Starlette

pytestmark = pytest.mark.anyio

LONE = "@LONE@"  # stands for a lone surrogate: the client's JSON encoder refuses one, so the transport writes it


@pytest.fixture(params=["sqlite", "dynamodb"])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    if request.param == "sqlite":
        store = SqliteStore(tmp_path / "notewell.db")
        try:
            yield bootstrap(Settings(data_dir=tmp_path), store=store)
        finally:
            store.close()
    else:
        from tests.support.dynamo import dynamodb_store

        with dynamodb_store() as dynamo_store:
            yield bootstrap(Settings(data_dir=tmp_path), store=dynamo_store)


class _EscapingTransport(httpx2.AsyncBaseTransport):
    """Sends LONE as the JSON escape `\\ud800`, as a client whose encoder escapes non-ASCII text would."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        if LONE.encode() in body:
            body = body.replace(LONE.encode(), b"\\ud800")
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
            request = httpx2.Request(
                request.method, request.url, headers=headers, content=body, extensions=request.extensions
            )
        return await self._inner.handle_async_request(request)


@contextlib.asynccontextmanager
async def connect_escaping(
    app: Starlette, token: str, mode: str, statuses: list[tuple[str, int]] | None = None
) -> AsyncIterator[Client]:
    """The real MCP client over `_EscapingTransport`; appends (Mcp-Method or "", HTTP status) to `statuses`."""

    async def record(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append((response.request.headers.get("mcp-method", ""), response.status_code))

    transport = _EscapingTransport(httpx2.ASGITransport(app=app))
    headers = {"authorization": f"Bearer {token}"}
    hooks = {"response": [record]}
    async with httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers, event_hooks=hooks) as http:  # noqa: SIM117
        async with Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode=mode) as client:
            yield client


# Every place a caller's text is stored: note fields, remember/checkpoint text, project texts, idempotency keys;
# the refusal names the argument (every tool's arguments are checked before it runs).
SURROGATE_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("create_note", {"project": "api", "title": f"Deploy{LONE}", "body": "Use SAM."}, "title contains"),
    ("create_note", {"project": "api", "title": "Deploy", "body": f"Use SAM{LONE}."}, "body contains"),
    ("create_note", {"project": "api", "title": "Deploy", "body": "Use SAM.", "tags": [f"ops{LONE}"]}, "tags[0]"),
    ("create_note", {"project": "api", "title": "Deploy", "body": "Use SAM.", "idempotencyKey": f"k{LONE}"},
     "idempotencyKey contains"),
    ("remember", {"project": "api", "content": f"Deploys use SAM{LONE}.", "type": "decision"}, "content contains"),
    ("checkpoint", {"project": "api", "summary": f"Moved deploys to SAM{LONE}."}, "summary contains"),
    ("update_project", {"project": "api", "summary": f"Session service{LONE}."}, "summary contains"),
    ("search_notes", {"project": "api", "query": f"SAM{LONE}"}, "query contains"),
]  # fmt: skip


async def stored_titles(services: Services, workspace_id: str) -> list[str]:
    project = services.deps.store.get_project(workspace_id, "api")
    assert project is not None
    return sorted(n.title for n in services.deps.store.project_notes(workspace_id, project.id, limit=50))


async def test_a_lone_surrogate_in_any_stored_text_is_a_clear_400_in_the_2026_era_and_nothing_is_written(
    services: Services,
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect_escaping(app, keys.full, "2026-07-28") as client:
        ok(await client.call_tool("create_note", {"project": "api", "title": "Existing", "body": "Kept."}))
        for tool, arguments, label in SURROGATE_CALLS:
            refused = err(await client.call_tool(tool, arguments))
            assert (refused["status"], refused["code"]) == (400, "bad_argument"), (tool, refused)
            assert refused["message"].startswith(label), refused["message"]
            assert "lone surrogate (U+D800)" in refused["message"]
        project = ok(await client.call_tool("list_projects", {}))["projects"]
    assert await stored_titles(services, keys.workspace) == ["Existing"]
    assert [p.get("summary") for p in project if p["project"] == "api"] in ([None], [""])


async def test_a_lone_surrogate_in_the_handshake_era_is_a_parse_error_and_nothing_is_written(
    services: Services,
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect_escaping(app, keys.full, "legacy") as client:
        ok(await client.call_tool("create_note", {"project": "api", "title": "Existing", "body": "Kept."}))
        for tool, arguments, _ in SURROGATE_CALLS[:2]:
            with pytest.raises(MCPError) as refused:  # the SDK's strict JSON parser refuses it before any tool
                await client.call_tool(tool, arguments)
            assert refused.value.error.code == -32700 and "Parse error" in refused.value.error.message
    assert await stored_titles(services, keys.workspace) == ["Existing"]


# ----- a store that cannot answer a resource read ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_throttled_resource_read_is_a_retryable_internal_error_not_a_permanent_invalid_params(
    tmp_path: Path, mode: str
) -> None:
    from notewell.adapters.dynamodb import DynamoDBStore
    from tests.support.dynamo import dynamodb_store, inject_faults, throttled

    def note_reads_throttled(store: DynamoDBStore) -> Callable[[], None]:
        """Throttle every GetItem of a note item (never the key lookup) until the returned function is called."""
        throttling = True

        def fault(request: Any) -> Any:
            is_note = json.loads(request.body)["Key"]["sk"]["S"] == "NOTE"
            return throttled()(request) if throttling and is_note else None

        inject_faults(store.client, lambda op, attempt: fault if op == "GetItem" else None)

        def lift() -> None:
            nonlocal throttling
            throttling = False

        return lift

    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store)
        keys = make_keys(services)
        statuses: list[tuple[str, int]] = []
        async with running(make_app(services)) as app, connect_escaping(app, keys.full, mode, statuses) as client:
            note = ok(await client.call_tool("create_note", {"project": "api", "title": "Runbook", "body": "Step 1."}))
            uri = f"notewell://notes/{note['id']}"
            lift = note_reads_throttled(store)
            with pytest.raises(MCPError) as busy:
                await client.read_resource(uri)
            busy_status = statuses[-1]
            lift()
            read = await client.read_resource(uri)
            with pytest.raises(MCPError) as missing:
                await client.read_resource("notewell://notes/n_" + "0" * 26)

    assert busy.value.code == -32603 and "retry" in busy.value.message
    assert busy.value.data == {"uri": uri, "status": 503, "code": "unavailable", "retryAfter": 2}
    assert busy_status[1] == 200  # a JSON-RPC error in a normal reply, not the HTTP 400 of a malformed request
    assert missing.value.code == -32602  # the SDK's resource-not-found: permanent, and still so
    assert read.contents[0].text.startswith("# Runbook")  # type: ignore[union-attr]
