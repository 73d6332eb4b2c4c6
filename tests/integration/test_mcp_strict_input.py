"""Odd digits and look-alike names through the real MCP client: a clear 400 or not-found, never an internal error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.mcp_harness import connect, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_revision_cursor_of_unicode_or_huge_digits_is_a_clear_400(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note = ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
        ok(await client.call_tool("update_note", {"id": note["id"], "body": "alpha two"}))
        for cursor in ["²", "9" * 5000, "1\n"]:
            refused = err(await client.call_tool("list_note_revisions", {"id": note["id"], "cursor": cursor}))
            assert refused["status"] == 400 and "nextCursor" in refused["message"], cursor


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_export_page_of_unicode_or_huge_digits_is_not_found_not_an_internal_error(
    services: Services, mode: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
        for page in ["²", "9" * 5000]:
            with pytest.raises(Exception, match="not a number|out of range|No export page|page") as caught:
                await client.read_resource(f"notewell://exports/api/{page}")
            assert "Internal" not in str(caught.value) and "-32603" not in str(caught.value)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_slug_with_a_trailing_newline_does_not_create_a_look_alike_project(
    services: Services, mode: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
        refused = err(await client.call_tool("create_note", {"project": "api\n", "title": "B", "body": "beta"}))
        assert refused["status"] == 400 and "slug" in refused["message"]
        projects = ok(await client.call_tool("list_projects", {}))
    assert [name for name in (project["project"] for project in projects["projects"]) if "api" in name] == ["api"]
