"""Meaning-aware memory through the real MCP client, with the packaged local model: semantic search finds a note
that shares no word with the question on the embedded store, and every store says which mode answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.ports import Store
from tests.support.mcp_harness import connect, keyword_search_mode, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio

NOTES = {
    "hosting": ("Frontend hosting", "The web app is served from Vercel, one project per environment."),
    "money": ("Money", "Invoice amounts are integer cents; floats caused rounding errors."),
    "queues": ("Background jobs", "Jobs go through SQS with a dead-letter queue watched by on-call."),
}


@pytest.fixture
def services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, embedder="local"), store=store)


async def test_semantic_search_finds_a_note_by_meaning_and_names_its_mode(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "2026-07-28") as client:
        for title, body in NOTES.values():
            ok(await client.call_tool("create_note", {"project": "shop", "title": title, "body": body}))
        question = {"project": "shop", "query": "which platform runs our site?"}
        by_meaning = ok(await client.call_tool("search_notes", {**question, "semantic": True}))
        by_words = ok(await client.call_tool("search_notes", question))
    if isinstance(services.deps.store, SqliteStore):
        assert by_meaning["searchMode"] == "hybrid"
        assert by_meaning["results"][0]["title"] == "Frontend hosting"
    else:  # no vector index on DynamoDB until the AWS search index: keywords, and the answer says so
        assert by_meaning["searchMode"] == keyword_search_mode(services)
        assert "keywords only" in by_meaning["notice"]
    assert by_words["searchMode"] == keyword_search_mode(services)
    assert "Frontend hosting" not in [r["title"] for r in by_words["results"]]  # no shared word: keywords miss it
