"""Opt-in: the search stack against a real deployment (`pytest -m aws`), never part of `make test`.

Set NOTEWELL_AWS_MCP_URL (the stack's McpUrl output) and NOTEWELL_AWS_API_KEY (a key of a scratch workspace); for
the collection checks also NOTEWELL_SEARCH_ENDPOINT (SearchEndpoint output), AWS_REGION and credentials of the
stack's ReindexPrincipal. What these check is what the local stand-in assumes: that Serverless refuses custom
document ids and refresh, that a note reaches the index through the stream within a minute or two, and that
remember meets a note written a moment ago.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from notewell.adapters.opensearch import ALIAS, SignedHttp
from notewell.ports import SearchUnavailableError

pytestmark = pytest.mark.aws

INDEXING_WAIT_SECONDS = 180  # stream, Bedrock, collection refresh (seconds each, undocumented for the last)


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: the aws suite runs against a deployed stack (see this module).")
    return value


async def _call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {_env('NOTEWELL_AWS_API_KEY')}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(_env("NOTEWELL_AWS_MCP_URL"), http_client=http)) as client,
    ):
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content


def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_call(tool, arguments))


def test_a_new_note_becomes_findable_by_meaning_through_the_stream() -> None:
    marker = f"zephyr{uuid.uuid4().hex[:8]}"
    project = f"aws-suite-{marker}"
    created = call("create_note", {"project": project, "title": f"Deploys via {marker}",
                                   "body": f"We deploy the {marker} service with blue-green releases.",
                                   "type": "decision"})  # fmt: skip
    deadline = time.monotonic() + INDEXING_WAIT_SECONDS
    while True:
        found = call("search_notes", {"project": project, "query": f"{marker} releases", "semantic": True})
        if found["searchMode"] == "hybrid" and [r["id"] for r in found["results"]] == [created["id"]]:
            break
        assert time.monotonic() < deadline, f"not indexed within {INDEXING_WAIT_SECONDS} s: {found}"
        time.sleep(5)  # polling a real, asynchronous pipeline: nothing to wait on but time


def test_remember_meets_a_note_written_a_moment_ago() -> None:
    project = f"aws-suite-{uuid.uuid4().hex[:8]}"
    content = "We keep the orders database on PostgreSQL 16 with daily snapshots."
    first = call("remember", {"project": project, "content": content, "type": "decision"})
    again = call("remember", {"project": project, "content": content, "type": "decision"})
    assert (first["status"], again["status"]) == ("created", "duplicate")


def test_the_collection_refuses_what_the_local_guard_refuses() -> None:
    http = SignedHttp.from_environment(_env("NOTEWELL_SEARCH_ENDPOINT"), _env("AWS_REGION"))
    try:
        with pytest.raises(SearchUnavailableError, match="HTTP 400"):
            http.request("PUT", f"/{ALIAS}/_doc/custom-id", {"noteId": "x"}, timeout=10)
        with pytest.raises(SearchUnavailableError, match="HTTP (400|404)"):
            http.request("POST", f"/{ALIAS}/_refresh", timeout=10)
    finally:
        http.close()
