"""rename_project, rename_tag, get_usage and export_project through the real MCP client."""

from __future__ import annotations

import json

import pytest

from notewell.bootstrap import Services
from notewell.domain import plans
from notewell.domain.model import Plan
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_projects_and_tags_are_renamed_and_usage_counts_every_call(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note = ok(await client.call_tool("create_note", {
            "project": "billing", "title": "Invoices", "body": "Monthly.", "tags": ["money"],
        }))  # fmt: skip
        ok(await client.call_tool("create_note", {"project": "web", "title": "Site", "body": "Next.js."}))
        renamed = ok(await client.call_tool("rename_project", {"project": "billing", "newName": "invoicing"}))
        assert renamed["project"] == "invoicing"
        again = ok(await client.call_tool("rename_project", {"project": "billing", "newName": "invoicing"}))
        assert again["project"] == "invoicing"  # a retry succeeds
        taken = err(await client.call_tool("rename_project", {"project": "invoicing", "newName": "web"}))
        assert taken["status"] == 409
        assert ok(await client.call_tool("get_note", {"id": note["id"]}))["project"] == "invoicing"

        tag = ok(await client.call_tool("rename_tag", {"project": "invoicing", "from": "money", "to": "finance"}))
        assert tag == {"project": "invoicing", "renamed": 1, "done": True}
        assert ok(await client.call_tool("get_note", {"id": note["id"]}))["tags"] == ["finance"]
        same = err(await client.call_tool("rename_tag", {"project": "invoicing", "from": "x", "to": "x"}))
        assert same["status"] == 400

        usage = ok(await client.call_tool("get_usage", {}))
    assert usage["plan"] == "free" and usage["limits"]["callsPerMonth"] == 20_000
    # every call before get_usage, failed ones included, is counted once by tool
    assert usage["callsByTool"] == {
        "create_note": 2, "rename_project": 3, "get_note": 2, "rename_tag": 2,
    }  # fmt: skip
    assert usage["calls"] == 9 and usage["tokensReturned"] > 0 and usage["notes"] == 2


async def test_calls_over_the_monthly_quota_get_429_with_a_retry_hint(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = plans.PlanLimits(revisions_per_note=50, notes_per_workspace=100, calls_per_month=3, note_chars=50_000)
    monkeypatch.setitem(plans.PLANS, Plan.FREE, small)
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        for _ in range(3):
            ok(await client.call_tool("list_projects", {}))
        refused = err(await client.call_tool("list_projects", {}))
    assert refused["status"] == 429 and refused["retryAfter"] > 0
    assert "3 calls" in refused["message"] and "plan" in refused["message"]
    assert json.dumps(refused)  # structured, serialisable


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_export_project_returns_counts_and_readable_resource_pages(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, mode) as client:
            first = ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
            ok(await client.call_tool("update_note", {"id": first["id"], "body": "alpha two"}))
            gone = ok(await client.call_tool("create_note", {"project": "api", "title": "B", "body": "beta"}))
            ok(await client.call_tool("delete_note", {"id": gone["id"]}))
            exported = ok(await client.call_tool("export_project", {"project": "api"}))
            assert (exported["notes"], exported["deleted"], exported["revisions"], exported["pages"]) == (2, 1, 2, 1)
            page = await client.read_resource(exported["resources"][0])
            lines = [json.loads(line) for line in page.contents[0].text.splitlines()]  # type: ignore[union-attr]
            assert lines[0]["format"] == "notewell-export" and lines[1]["kind"] == "project"
            kinds = [(line["kind"], line.get("id") or line.get("noteId")) for line in lines[2:]]
            assert kinds == [
                ("note", first["id"]), ("revision", first["id"]), ("note", gone["id"]), ("revision", gone["id"]),
            ]  # fmt: skip
            assert lines[4]["deletedAt"] and lines[2]["body"] == "alpha two"
            result = await client.call_tool("export_project", {"project": "api"})
            links = [block for block in result.content if block.type == "resource_link"]
            assert [link.uri for link in links] == exported["resources"]  # type: ignore[union-attr]
            assert links[0].mime_type == "application/x-ndjson"  # type: ignore[union-attr]
            linked = await client.read_resource(links[0].uri)  # type: ignore[union-attr]
            linked_lines = linked.contents[0].text.splitlines()  # type: ignore[union-attr]
            assert linked_lines[1:] == page.contents[0].text.splitlines()[1:]  # type: ignore[union-attr]
            ghost = ok(await client.call_tool("export_project", {"project": "ghost"}))  # a read: empty, says so
            assert (ghost["notes"], ghost["pages"], ghost["resources"]) == (0, 0, [])
            assert "no notes yet" in ghost["notice"]
        async with connect(app, keys.other_workspace, mode) as rival:
            with pytest.raises(Exception, match="No project"):
                await rival.read_resource(exported["resources"][0])


async def test_default_max_tokens_is_set_and_cleared_with_zero_through_the_client(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        set_ = ok(await client.call_tool("update_project", {"project": "web", "defaultMaxTokens": 1200}))
        assert set_["defaultMaxTokens"] == 1200
        cleared = ok(await client.call_tool("update_project", {"project": "web", "defaultMaxTokens": 0}))
        assert cleared.get("defaultMaxTokens") is None
        listed = ok(await client.call_tool("list_projects", {}))
        assert listed["projects"][0].get("defaultMaxTokens") is None
        refused = err(await client.call_tool("update_project", {"project": "web", "defaultMaxTokens": 100}))
    assert refused["status"] == 400 and "0 to clear" in refused["message"]


@pytest.mark.parametrize("mode", MODES)
async def test_resource_reads_are_metered_like_calls(services: Services, mode: str) -> None:
    """Export pages and note resources count against the plan and in the usage report, with their tokens."""
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note = ok(await client.call_tool("create_note", {"project": "api", "title": "Auth", "body": "OAuth 2.1."}))
        export = ok(await client.call_tool("export_project", {"project": "api"}))
        for uri in export["resources"]:
            await client.read_resource(uri)
        await client.read_resource(f"notewell://notes/{note['id']}")
        before = ok(await client.call_tool("get_usage", {}))
        await client.read_resource(export["resources"][0])
        after = ok(await client.call_tool("get_usage", {}))
    assert before["callsByTool"]["resource:export"] == len(export["resources"]) >= 1
    assert before["callsByTool"]["resource:note"] == 1
    assert after["callsByTool"]["resource:export"] == len(export["resources"]) + 1
    assert after["tokensReturned"] > before["tokensReturned"]  # what the page returned is counted too
