"""remember and checkpoint through the real MCP client: every status, and the resolving calls sent as given."""

from __future__ import annotations

import pytest

from notewell.bootstrap import Services
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_remember_answers_created_duplicate_updated_and_conflict(services: Services, mode: str) -> None:
    key = make_keys(services).full
    async with running(make_app(services)) as app, connect(app, key, mode) as client:
        created = ok(await client.call_tool("remember", {
            "project": "api", "content": "Use opaque tokens instead of JWTs for sessions.", "type": "decision",
        }))  # fmt: skip
        assert created["status"] == "created" and created["reviewRequired"] is True
        assert created["note"]["title"] == "Use opaque tokens instead of JWTs for sessions"
        note_id = created["note"]["id"]

        duplicate = ok(await client.call_tool("remember", {
            "project": "api", "content": "Use opaque tokens instead of JWTs for sessions.", "type": "decision",
        }))  # fmt: skip
        assert duplicate["status"] == "duplicate" and duplicate["existing"]["id"] == note_id

        updated = ok(await client.call_tool("remember", {
            "project": "api", "type": "decision",
            "content": "Use opaque tokens instead of JWTs for sessions, because revocation must be instant.",
        }))  # fmt: skip
        assert updated["status"] == "updated" and updated["note"]["id"] == note_id
        assert updated["note"]["version"] == 2

        conflict = ok(await client.call_tool("remember", {
            "project": "api", "content": "Use JWTs instead of opaque tokens for sessions.", "type": "decision",
        }))  # fmt: skip
        assert conflict["status"] == "conflict" and "note" not in conflict
        assert conflict["existing"]["id"] == note_id
        assert [r["arguments"].get("supersedes") for r in conflict["resolve"]] == [[note_id], None]
        assert conflict["resolve"][1]["arguments"]["force"] is True

        resolved = ok(await client.call_tool(conflict["resolve"][0]["tool"], conflict["resolve"][0]["arguments"]))
        assert resolved["status"] == "created"
        old = ok(await client.call_tool("get_note", {"id": note_id}))
        assert old["status"] == "superseded" and old["supersededBy"] == [resolved["note"]["id"]]


async def test_the_force_resolution_stores_both_claims(services: Services) -> None:
    key = make_keys(services).full
    async with running(make_app(services)) as app, connect(app, key, "auto") as client:
        ok(await client.call_tool("remember", {"project": "api", "content": "Keep 50 revisions per note."}))
        conflict = ok(await client.call_tool("remember", {"project": "api", "content": "Keep 20 revisions per note."}))
        assert conflict["status"] == "conflict"
        forced = ok(await client.call_tool("remember", conflict["resolve"][1]["arguments"]))
        assert forced["status"] == "created"
        found = ok(await client.call_tool("search_notes", {"project": "api", "query": "revisions"}))
        assert len(found["results"]) == 2


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_checkpoint_reports_each_item_and_a_retry_writes_nothing_more(services: Services, mode: str) -> None:
    key = make_keys(services).full
    args = {
        "project": "api", "summary": "Moved sessions to Redis; load test pending.",
        "decisions": ["Sessions live in Redis with a sliding expiry."], "openItems": ["Load test staging."],
        "nextActions": ["Run the load test"], "failedApproaches": ["Sticky sessions broke blue-green deploys."],
        "idempotencyKey": "session-42",
    }  # fmt: skip
    async with running(make_app(services)) as app, connect(app, key, mode) as client:
        first = ok(await client.call_tool("checkpoint", args))
        assert first["handoff"]["type"] == "handoff" and first["conflicts"] == 0
        assert [(i["kind"], i["status"]) for i in first["items"]] == [
            ("decision", "created"), ("open_item", "created"), ("failed_approach", "created"),
        ]  # fmt: skip
        again = ok(await client.call_tool("checkpoint", args))
        assert again["handoff"]["id"] == first["handoff"]["id"]
        assert [i["id"] for i in again["items"]] == [i["id"] for i in first["items"]]
        found = ok(await client.call_tool("search_notes", {"project": "api", "query": "load test", "limit": 50}))
        assert len(found["results"]) == 2  # the open item and the handoff, once each
        reused = err(await client.call_tool("checkpoint", {**args, "summary": "Something else entirely."}))
        assert reused["status"] == 422


async def test_remember_refuses_bad_input_with_400_and_read_only_keys_with_403(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, "auto") as client:
            assert err(await client.call_tool("remember", {"project": "api", "content": "  "}))["status"] == 400
            assert (
                err(await client.call_tool("remember", {"project": "api", "content": "x", "type": "vibe"}))["status"]
                == 400
            )
            missing = err(await client.call_tool("remember", {
                "project": "api", "content": "A claim.", "supersedes": ["n_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
            }))  # fmt: skip
            assert missing["status"] == 404
        async with connect(app, keys.read_only, "auto") as reader:
            assert err(await reader.call_tool("remember", {"project": "api", "content": "x"}))["status"] == 403
            assert err(await reader.call_tool("checkpoint", {"project": "api", "summary": "x"}))["status"] == 403
