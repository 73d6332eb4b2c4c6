"""Odd digits and look-alike names through the real MCP client: a clear 400 or not-found, never an internal error."""

from __future__ import annotations

import logging
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


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_misspelt_expected_version_is_refused_with_the_nearest_name_and_nothing_is_overwritten(
    services: Services, mode: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note = ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "original"}))
        refused = err(
            await client.call_tool("update_note", {"id": note["id"], "body": "overwrite", "expected_version": 3})
        )
        assert refused["status"] == 400 and refused["code"] == "bad_argument"
        assert refused["message"] == (
            "Unknown argument 'expected_version'; did you mean 'expectedVersion'? Nothing was written."
        )
        kept = ok(await client.call_tool("get_note", {"id": note["id"]}))
    assert (kept["version"], kept["body"]) == (1, "original")


async def test_every_tool_refuses_an_argument_it_does_not_take_and_lists_what_it_takes(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 20
        for tool in tools:
            refused = err(await client.call_tool(tool.name, {"zzzqqq": 1}))
            assert refused["status"] == 400 and refused["arguments"] == ["zzzqqq"], tool.name
            assert refused["message"].startswith("Unknown argument 'zzzqqq'; " + tool.name + " takes "), tool.name
            for name in tool.input_schema.get("properties", {}):
                assert name in refused["message"], (tool.name, name)


async def test_a_misspelt_link_field_is_refused_instead_of_dropped(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        target = ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
        link = {"target": target["id"], "relaton": "depends_on"}
        refused = err(
            await client.call_tool("create_note", {"project": "api", "title": "B", "body": "b", "links": [link]})
        )
        exported = ok(await client.call_tool("export_project", {"project": "api"}))
    assert refused["status"] == 400 and "links[0].relaton" in refused["message"]
    assert exported["notes"] == 1


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("update_note", {"id": "n_01ARZ3NDEKTSV4RRFFQ69G5FAV", "importance": 9, "tags": "auth"},
         "tags must be an array; importance must be at most 5: fix them and call update_note again."),
        ("get_context", {}, "project is required: fix it and call get_context again."),
        ("get_context", {"project": "api", "detail": "verbose"},
         "detail must be one of 'lean', 'balanced' or 'deep': fix it and call get_context again."),
        ("get_notes", {"ids": []}, "ids must hold at least 1 item(s): fix it and call get_notes again."),
        ("create_note", {"project": "api", "title": "A", "body": "b", "links": [{"target": 1}]},
         "links[0].target must be a string: fix it and call create_note again."),
    ],
)  # fmt: skip
async def test_a_rejected_value_is_one_sentence_per_argument_saying_what_to_send(
    services: Services, tool: str, arguments: dict[str, object], message: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        refused = err(await client.call_tool(tool, arguments))
    assert refused["status"] == 400 and refused["message"] == message  # no validator dump, no URL


async def test_an_unknown_tool_is_refused_naming_the_nearest_tool(services: Services) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        refused = err(await client.call_tool("serch_notes", {"project": "api"}))
    assert refused["status"] == 400 and refused["message"] == "Unknown tool 'serch_notes'; did you mean 'search_notes'?"


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0999-01-01"])
async def test_get_changes_since_at_the_edges_of_time_answers_instead_of_an_internal_error(
    services: Services, since: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "alpha"}))
        page = ok(await client.call_tool("get_changes_since", {"project": "api", "since": since}))
    assert page["hasMore"] is False and page["cursor"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_boolean_or_a_fraction_for_an_integer_is_refused_and_nothing_is_written(
    services: Services, mode: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        note = ok(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "original"}))
        ok(await client.call_tool("update_note", {"id": note["id"], "body": "second"}))
        as_true = err(await client.call_tool("update_note", {"id": note["id"], "body": "x", "expectedVersion": True}))
        fraction = err(await client.call_tool("update_note", {"id": note["id"], "importance": 4.5}))
        kept = ok(await client.call_tool("get_note", {"id": note["id"]}))
    assert as_true["message"] == "expectedVersion must be a whole number: fix it and call update_note again."
    assert fraction["message"] == "importance must be a whole number: fix it and call update_note again."
    assert (kept["version"], kept["body"], kept["importance"]) == (2, "second", 3)


async def test_an_integer_or_boolean_sent_as_a_string_is_read_only_when_it_spells_one_plainly(
    services: Services,
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
        for n in range(3):
            ok(await client.call_tool("create_note", {"project": "api", "title": f"Deploy {n}", "body": "deploy"}))
        found = ok(await client.call_tool("search_notes", {"project": "api", "query": "deploy", "limit": "2"}))
        bodies = ok(
            await client.call_tool("search_notes", {"project": "api", "query": "deploy", "includeBody": "true"})
        )
        for limit in ["²", " 2", "2.0", "two"]:
            refused = err(await client.call_tool("search_notes", {"project": "api", "query": "deploy", "limit": limit}))
            assert refused["message"].startswith("limit must be a whole number"), limit
    assert len(found["results"]) == 2
    assert all(item["body"] == "deploy" for item in bodies["results"])


async def test_a_refused_call_is_logged_with_the_argument_names_and_never_their_values(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    keys = make_keys(services)
    with caplog.at_level(logging.INFO, logger="notewell.tools"):
        async with running(make_app(services)) as app, connect(app, keys.full, "legacy") as client:
            err(await client.call_tool("create_note", {"project": "api", "title": "A", "body": "s3cr3t", "bodyy": 1}))
    refused = [r for r in caplog.records if r.getMessage() == "tool arguments refused"]
    assert [(r.tool, r.arguments) for r in refused] == [("create_note", ["bodyy"])]  # type: ignore[attr-defined]
    assert "s3cr3t" not in caplog.text
