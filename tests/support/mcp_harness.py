"""Drive the real app with the real MCP client, in-process over ASGI (transport, auth and headers included)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.types import CallToolResult
    from starlette.applications import Starlette

    from notewell.bootstrap import Services

MODES = ["legacy", "auto", "2026-07-28"]  # handshake era, probe-then-modern, pinned modern
BASE = "http://testserver"


@dataclass
class Keys:
    workspace: str
    full: str
    read_only: str
    scoped: str  # project 'alpha' only
    other_workspace: str


def make_keys(services: Services) -> Keys:
    auth = services.auth
    ws = auth.create_workspace("acme")
    other = auth.create_workspace("rival")
    return Keys(
        workspace=ws.id,
        full=auth.create_key(ws.id, name="full").secret,
        read_only=auth.create_key(ws.id, name="ro", read_only=True).secret,
        scoped=auth.create_key(ws.id, name="alpha", project="alpha").secret,
        other_workspace=auth.create_key(other.id, name="rival").secret,
    )


def make_app(services: Services) -> Starlette:
    return build_app(build_server(services), services, allowed_hosts=["testserver"])


@contextlib.asynccontextmanager
async def running(app: Starlette) -> AsyncIterator[Starlette]:
    async with app.router.lifespan_context(app):  # ASGITransport does not run the lifespan
        yield app


@contextlib.asynccontextmanager
async def connect(app: Starlette, token: str | None, mode: str) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers) as http:  # noqa: SIM117
        async with Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode=mode) as client:
            yield client


def keyword_search_mode(services: Services) -> str:
    """The searchMode a healthy store answers keyword searches with: FTS5 on SQLite, BM25 in process elsewhere."""
    from notewell.adapters.sqlite import SqliteStore

    return "fulltext" if isinstance(services.deps.store, SqliteStore) else "ranked_scan"


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def err(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result.structured_content
    assert result.structured_content is not None, result.content
    error: dict[str, Any] = result.structured_content["error"]
    return error
