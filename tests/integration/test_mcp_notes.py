"""The note tools through the real MCP client against the real app, in both protocol eras."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2
import pytest

from notewell.domain.refs import note_ref
from tests.support.mcp_harness import (
    MODES,
    Keys,
    connect,
    err,
    keyword_search_mode,
    make_app,
    make_keys,
    ok,
    running,
)

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


@pytest.mark.parametrize("mode", MODES)
async def test_a_note_lives_through_create_edit_patch_delete_and_restore(
    services: Services, keys: Keys, mode: str
) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        created = ok(
            await client.call_tool(
                "create_note",
                {
                    "project": "billing-api",
                    "title": "Use opaque tokens",
                    "body": "We use opaque tokens instead of JWTs for sessions.",
                    "type": "decision",
                    "tags": ["Auth"],
                },
            )
        )
        note_id = created["id"]
        assert created["version"] == 1 and created["project"] == "billing-api"
        assert "body" not in created and created["bodySize"] == 50

        full = ok(await client.call_tool("get_note", {"id": note_id}))
        assert full["body"] == "We use opaque tokens instead of JWTs for sessions."
        assert full["tags"] == ["auth"] and full["type"] == "decision" and full["supersededBy"] == []

        updated = ok(await client.call_tool("update_note", {"id": note_id, "expectedVersion": 1, "importance": 5}))
        assert updated["version"] == 2
        ok(await client.call_tool("patch_note", {"id": note_id, "mode": "append", "text": "Revocation is instant."}))
        patched = ok(
            await client.call_tool(
                "patch_note",
                {
                    "id": note_id,
                    "mode": "replace",
                    "find": "for sessions",
                    "text": "for API sessions",
                    "expectedVersion": 3,
                },
            )
        )
        assert patched["version"] == 4
        body = ok(await client.call_tool("get_note", {"id": note_id}))["body"]
        assert body == "We use opaque tokens instead of JWTs for API sessions.\nRevocation is instant."

        history = ok(await client.call_tool("list_note_revisions", {"id": note_id}))
        assert history["currentVersion"] == 4
        assert [r["version"] for r in history["revisions"]] == [3, 2, 1]
        assert all("body" not in r for r in history["revisions"])
        first = ok(await client.call_tool("get_note_revision", {"id": note_id, "version": 1}))
        assert first["body"] == "We use opaque tokens instead of JWTs for sessions." and first["importance"] == 3

        deleted = ok(await client.call_tool("delete_note", {"id": note_id, "expectedVersion": 4}))
        assert deleted["deletedAt"] and deleted["version"] == 5
        assert err(await client.call_tool("get_note", {"id": note_id}))["status"] == 404
        found = ok(await client.call_tool("search_notes", {"project": "billing-api", "query": "opaque tokens"}))
        assert found["results"] == []

        restored = ok(await client.call_tool("restore_note", {"id": note_id}))
        assert restored["version"] == 6 and "deletedAt" not in restored
        found = ok(await client.call_tool("search_notes", {"project": "billing-api", "query": "opaque tokens"}))
        assert [r["id"] for r in found["results"]] == [note_id]


async def test_create_note_of_a_decision_lists_its_neighbours_like_remember(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        first = ok(await client.call_tool("remember", {
            "project": "api", "content": "Orders are stored in PostgreSQL 16.", "type": "decision",
        }))  # fmt: skip
        second = ok(await client.call_tool("create_note", {
            "project": "api", "title": "Orders database", "body": "Orders are stored in MySQL 8.", "type": "decision",
        }))  # fmt: skip
        plain = ok(await client.call_tool("create_note", {"project": "api", "title": "Scratch", "body": "b"}))
    assert second["reviewRequired"] is True
    assert [n["id"] for n in second["neighbours"]] == [first["note"]["id"]]
    assert set(second["neighbours"][0]) == {"id", "title", "excerpt"}
    assert plain["reviewRequired"] is False and plain["neighbours"] == []


async def test_reads_are_lean_unless_bodies_are_asked_for_and_what_was_asked_for_is_whole_in_the_text(
    services: Services, keys: Keys
) -> None:
    long_body = "Rate limits apply per tenant. " + "detail " * 1_400  # over 10,000 characters
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        note_id = ok(
            await client.call_tool("create_note", {"project": "p", "title": "Rate limits", "body": long_body})
        )["id"]
        lean_result = await client.call_tool("search_notes", {"project": "p", "query": "rate limits"})
        lean = ok(lean_result)
        hit = lean["results"][0]
        assert hit["id"] == note_id and "body" not in hit and hit["bodySize"] == len(long_body)
        assert hit["snippet"] and len(hit["snippet"]) < 300 and lean["searchMode"] == keyword_search_mode(services)
        lean_text = lean_result.content[0].text  # type: ignore[union-attr]
        ref = note_ref(note_id)  # the text names a hit by ref, structuredContent by id
        assert f"1 note in p ({lean['searchMode']})\n- {ref} [note] Rate limits apply per tenant. detail" in lean_text
        assert len(lean_text) < 400
        heavy_result = await client.call_tool("search_notes", {"project": "p", "query": "rate", "includeBody": True})
        assert ok(heavy_result)["results"][0]["body"] == long_body
        assert long_body in heavy_result.content[0].text  # type: ignore[union-attr]
        result = await client.call_tool("get_note", {"id": note_id})
        batch = await client.call_tool("get_notes", {"ids": [note_id, "n_01ARZ3NDEKTSV4RRFFQ69G5FAV"]})
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"# {note_id} [note] Rate limits\nv1 · project p · updated ")
    assert text.endswith("\n\n" + long_body)  # whole: a client that forwards only text still gets the body
    batch_text = batch.content[0].text  # type: ignore[union-attr]
    assert long_body in batch_text and batch_text.endswith(
        "Missing (unknown, deleted or not visible): n_01ARZ3NDEKTSV4RRFFQ69G5FAV"
    )


async def test_get_notes_returns_fifty_notes_and_lists_unknown_ids_as_missing(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "2026-07-28") as client:
        ids = [
            ok(await client.call_tool("create_note", {"project": "p", "title": f"Note {i}", "body": f"b{i}"}))["id"]
            for i in range(48)
        ]
        unknown = ["n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "n_01ARZ3NDEKTSV4RRFFQ69G5FAW"]
        batch = ok(await client.call_tool("get_notes", {"ids": ids + unknown}))
        assert [n["id"] for n in batch["notes"]] == ids
        assert batch["missing"] == unknown
        assert batch["notes"][7]["body"] == "b7"
        too_many = err(await client.call_tool("get_notes", {"ids": ids + unknown + [unknown[0][:-1] + "X"]}))
        assert too_many["status"] == 400


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_stale_expected_version_is_refused_with_409_and_the_contract_message(
    services: Services, keys: Keys, mode: str
) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note_id = ok(await client.call_tool("create_note", {"project": "p", "title": "T", "body": "one"}))["id"]
        ok(await client.call_tool("update_note", {"id": note_id, "body": "two", "expectedVersion": 1}))
        result = await client.call_tool("update_note", {"id": note_id, "body": "three", "expectedVersion": 1})
        error = err(result)
        assert error["status"] == 409 and error["code"] == "version_conflict"
        assert error["message"] == (
            "This note changed since you loaded it (you have v1, current is v2). Reload and reapply your edit."
        )
        assert result.content[0].text == error["message"]  # type: ignore[union-attr]
        assert ok(await client.call_tool("get_note", {"id": note_id}))["body"] == "two"


async def test_patch_with_absent_find_is_refused_with_422_and_writes_nothing(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        note_id = ok(await client.call_tool("create_note", {"project": "p", "title": "T", "body": "alpha beta"}))["id"]
        error = err(
            await client.call_tool(
                "patch_note",
                {
                    "id": note_id,
                    "mode": "replace",
                    "find": "gamma",
                    "text": "delta",
                },
            )
        )
        assert error["status"] == 422 and error["code"] == "patch_target_missing"
        note = ok(await client.call_tool("get_note", {"id": note_id}))
        assert note["version"] == 1 and note["body"] == "alpha beta"


async def test_a_body_over_the_limit_is_refused_with_413_and_nothing_is_written(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        error = err(await client.call_tool("create_note", {"project": "p", "title": "Huge", "body": "x" * 100_001}))
        assert error["status"] == 413 and "100,000" in error["message"]
        note_id = ok(await client.call_tool("create_note", {"project": "p", "title": "Small", "body": "x"}))["id"]
        error = err(await client.call_tool("patch_note", {"id": note_id, "mode": "append", "text": "é" * 99_999}))
        assert error["status"] == 413
        assert ok(await client.call_tool("get_note", {"id": note_id}))["version"] == 1
        listed = ok(await client.call_tool("search_notes", {"project": "p", "query": "huge"}))
        assert listed["results"] == []


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("create_note", {"project": "p", "title": "T", "body": "b", "importance": "high"}),
        ("create_note", {"project": "p", "title": "T", "body": "b", "type": "opinion"}),
        ("create_note", {"project": "p", "title": "T"}),
        ("create_note", {"project": "Billing API", "title": "T", "body": "b"}),
        ("create_note", {"project": "p", "title": " ", "body": "b"}),
        ("create_note", {"project": "p", "title": "T", "body": "b", "status": "superseded"}),
        ("create_note", {"project": "p", "title": "T", "body": "b", "tags": ["two words"]}),
        ("get_note", {"id": "42"}),
        ("get_note", {}),
        ("patch_note", {"id": "n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "mode": "replace", "text": "x"}),
        ("patch_note", {"id": "n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "mode": "sideways", "text": "x"}),
        ("update_note", {"id": "n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "expectedVersion": 0}),
        ("search_notes", {"project": "p", "query": "   "}),
        ("list_note_revisions", {"id": "n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "limit": 1000}),
        ("update_project", {"project": "p"}),
        ("no_such_tool", {}),
    ],
)
async def test_bad_arguments_get_a_400_that_says_what_to_fix_never_a_500(
    services: Services, keys: Keys, tool: str, arguments: dict[str, object]
) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        error = err(await client.call_tool(tool, arguments))
    assert error["status"] == 400, error
    assert error["code"] in ("bad_argument",)
    assert len(error["message"]) > 20


async def test_create_note_with_an_idempotency_key_replays_instead_of_writing_twice(
    services: Services, keys: Keys
) -> None:
    args = {"project": "p", "title": "Deploy freeze", "body": "No deploys on Friday.", "idempotencyKey": "k-1"}
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        first = ok(await client.call_tool("create_note", args))
        again = ok(await client.call_tool("create_note", args))
        assert again["id"] == first["id"] and again["version"] == 1
        changed = err(await client.call_tool("create_note", {**args, "body": "No deploys on Monday."}))
        assert changed["status"] == 422 and changed["code"] == "idempotency_key_reused"
        found = ok(await client.call_tool("search_notes", {"project": "p", "query": "deploy"}))
        assert len(found["results"]) == 1


async def test_projects_are_created_on_first_write_and_can_be_described(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        before = ok(await client.call_tool("list_projects", {}))
        assert [p["project"] for p in before["projects"]] == ["alpha"]  # created by the scoped key
        unknown = ok(await client.call_tool("search_notes", {"project": "ghost", "query": "anything"}))
        assert unknown["results"] == [] and "no notes yet" in unknown["notice"]
        ok(await client.call_tool("create_note", {"project": "web", "title": "T", "body": "b"}))
        described = ok(
            await client.call_tool(
                "update_project",
                {
                    "project": "web",
                    "summary": "The storefront.",
                    "instructions": "Run make test first.",
                    "defaultMaxTokens": 3000,
                },
            )
        )
        assert described["defaultMaxTokens"] == 3000
        listed = ok(await client.call_tool("list_projects", {}))
        assert [(p["project"], p["summary"]) for p in listed["projects"]] == [("alpha", ""), ("web", "The storefront.")]


async def test_semantic_search_falls_through_to_keywords_and_reports_the_mode(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        ok(
            await client.call_tool(
                "create_note", {"project": "p", "title": "Caching", "body": "Redis caches sessions."}
            )
        )
        found = ok(await client.call_tool("search_notes", {"project": "p", "query": "cache", "semantic": True}))
    assert found["searchMode"] == keyword_search_mode(services) and found["results"][0]["title"] == "Caching"


# ----- keys and scopes ---------------------------------------------------------------------------------------


async def test_requests_without_a_valid_key_get_401_with_a_bearer_challenge(services: Services, keys: Keys) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
    async with (
        running(make_app(services)) as app,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://testserver") as http,
    ):
        missing = await http.post("/mcp", json=body, headers=headers)
        bad = await http.post("/mcp", json=body, headers={**headers, "authorization": "Bearer nwk_nope"})
        revoked_key = services.auth.create_key(keys.workspace, name="gone")
        services.auth.revoke_key(keys.workspace, revoked_key.key.id)
        revoked = await http.post(
            "/mcp", json=body, headers={**headers, "authorization": f"Bearer {revoked_key.secret}"}
        )
        good = await http.post("/mcp", json=body, headers={**headers, "authorization": f"Bearer {keys.full}"})
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert revoked.status_code == 401
    assert good.status_code == 200


async def test_a_read_only_key_reads_but_every_write_is_403(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, "auto") as writer:
            note_id = ok(await writer.call_tool("create_note", {"project": "p", "title": "T", "body": "b"}))["id"]
        async with connect(app, keys.read_only, "legacy") as reader:
            assert ok(await reader.call_tool("get_note", {"id": note_id}))["body"] == "b"
            writes = [
                ("create_note", {"project": "p", "title": "T2", "body": "b"}),
                ("update_note", {"id": note_id, "body": "c"}),
                ("patch_note", {"id": note_id, "mode": "append", "text": "c"}),
                ("delete_note", {"id": note_id}),
                ("restore_note", {"id": note_id}),
                ("update_project", {"project": "p", "summary": "s"}),
            ]
            for tool, arguments in writes:
                assert err(await reader.call_tool(tool, arguments))["status"] == 403, tool
        async with connect(app, keys.full, "auto") as writer:
            assert ok(await writer.call_tool("get_note", {"id": note_id}))["version"] == 1


async def test_other_projects_and_workspaces_look_like_nothing_exists(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, "auto") as owner:
            beta = ok(await owner.call_tool("create_note", {"project": "beta", "title": "Secret", "body": "b"}))["id"]
            alpha = ok(await owner.call_tool("create_note", {"project": "alpha", "title": "Open", "body": "a"}))["id"]
        async with connect(app, keys.scoped, "2026-07-28") as scoped:
            assert ok(await scoped.call_tool("get_note", {"id": alpha}))["title"] == "Open"
            assert err(await scoped.call_tool("get_note", {"id": beta}))["status"] == 404
            assert ok(await scoped.call_tool("get_notes", {"ids": [alpha, beta]}))["missing"] == [beta]
            assert err(await scoped.call_tool("search_notes", {"project": "beta", "query": "secret"}))["status"] == 404
            assert (
                err(await scoped.call_tool("create_note", {"project": "beta", "title": "x", "body": "y"}))["status"]
                == 404
            )
            assert err(await scoped.call_tool("update_note", {"id": beta, "body": "z"}))["status"] == 404
            assert [p["project"] for p in ok(await scoped.call_tool("list_projects", {}))["projects"]] == ["alpha"]
        async with connect(app, keys.other_workspace, "legacy") as rival:
            assert err(await rival.call_tool("get_note", {"id": alpha}))["status"] == 404
            assert err(await rival.call_tool("list_note_revisions", {"id": alpha}))["status"] == 404
            assert ok(await rival.call_tool("get_notes", {"ids": [alpha]}))["missing"] == [alpha]
            assert ok(await rival.call_tool("search_notes", {"project": "alpha", "query": "open"}))["results"] == []
            nothing = ok(await rival.call_tool("list_projects", {}))
            assert nothing["projects"] == [] and "No projects" in nothing["notice"]
