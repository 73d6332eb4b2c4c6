"""tools/list as an agent pays for it and reads it: within its token budget, lean, and enough to call every tool.

Every agent receives the whole tool list at every session start, so its size is a cost on every session. The
budget test fails when someone adds a verbose schema; the call tests prove the lean schemas still say enough: every
tool is called, through the real MCP client, with arguments that validate against the schema it advertises, and
with every argument it advertises filled in from that schema alone.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import bpe_openai
import httpx2
import jsonschema
import pytest

from notewell.services.notes import NoteChanges
from tests.support.mcp_harness import BASE, connect, make_app, make_keys, ok, running
from tests.support.tool_calls import ARGUMENTS, OTHER

if TYPE_CHECKING:
    from mcp.types import Tool

    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio

TOOL_LIST_BUDGET = 3_500  # cl100k tokens of the whole tools/list result (issue 11; it was 11,682)

# The MCP spec's defaults for absent hints.
HINT_DEFAULTS = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": True}


async def listed(services: Services, token: str, mode: str = "auto") -> list[Tool]:
    async with running(make_app(services)) as app, connect(app, token, mode) as client:
        return list((await client.list_tools()).tools)


def hint(tool: Tool, name: str) -> bool:
    value = getattr(tool.annotations, name, None) if tool.annotations else None
    return HINT_DEFAULTS[name] if value is None else bool(value)


def keywords(schema: object) -> set[str]:
    """The JSON Schema keywords used anywhere in a schema (not the property names)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            children = value.values() if key == "properties" else [value]
            for child in children:
                found |= keywords(child)
    elif isinstance(schema, list):
        for item in schema:
            found |= keywords(item)
    return found


def seeded(services: Services) -> tuple[str, str]:
    """A full key, and the id of a note of OTHER with two versions and the tag 'ops' (what ARGUMENTS expects)."""
    keys = make_keys(services)
    owner = services.auth.authenticate(keys.full)
    assert owner is not None
    note = services.notes.create(owner, OTHER, title="Deploy", body="deploy runbook", tags=["ops"]).note
    services.notes.update(owner, note.id, NoteChanges(body="deploy runbook, v2"))
    return keys.full, note.id


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_tool_list_fits_its_token_budget(services: Services, mode: str) -> None:
    tools = await listed(services, make_keys(services).full, mode)
    sent = json.dumps(
        {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    tokens = len(bpe_openai.get_encoding("cl100k_base").encode(sent))
    assert len(tools) == len(ARGUMENTS)
    assert tokens <= TOOL_LIST_BUDGET, f"tools/list costs {tokens} cl100k tokens; the budget is {TOOL_LIST_BUDGET}"


async def test_schemas_carry_what_a_model_uses_and_no_generated_noise(services: Services) -> None:
    tools = await listed(services, make_keys(services).full)
    for tool in tools:
        assert tool.description and "\n" not in tool.description and "  " not in tool.description, tool.name
        used = keywords(tool.input_schema)
        assert not {"title", "$ref", "$defs", "anyOf"} & used, (tool.name, used)
        assert '"default": null' not in json.dumps(tool.input_schema), tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description") or name == "title", f"{tool.name}.{name} has no description"
            assert "type" in prop or "enum" in prop, f"{tool.name}.{name} has no type"
    schemas = {t.name: t.input_schema["properties"] for t in tools}
    # What lean must not lose: enums, bounds, defaults and required names.
    assert "failed_approach" in schemas["remember"]["type"]["enum"] and schemas["remember"]["type"]["default"] == "note"
    assert (schemas["remember"]["importance"]["minimum"], schemas["remember"]["importance"]["maximum"]) == (1, 5)
    assert schemas["get_context"]["detail"] == {
        "default": "balanced", "description": schemas["get_context"]["detail"]["description"], "enum":
        ["lean", "balanced", "deep"], "type": "string",
    }  # fmt: skip
    assert schemas["create_note"]["links"]["items"]["required"] == ["target"]
    assert schemas["search_notes"]["types"]["items"]["enum"] == schemas["remember"]["type"]["enum"]
    assert next(t for t in tools if t.name == "remember").input_schema["required"] == ["project", "content"]


async def test_hints_say_which_tools_read_and_which_destroy(services: Services) -> None:
    tools = {t.name: t for t in await listed(services, make_keys(services).full)}
    readers = {n for n, t in tools.items() if hint(t, "read_only_hint")}
    assert readers == {
        "get_context", "get_changes_since", "get_note", "get_notes", "list_note_revisions", "get_note_revision",
        "search_notes", "list_projects", "get_usage", "export_project",
    }  # fmt: skip
    assert all(not hint(t, "open_world_hint") for t in tools.values())
    assert not hint(tools["remember"], "destructive_hint") and not hint(tools["create_note"], "destructive_hint")
    assert hint(tools["delete_note"], "destructive_hint") and hint(tools["update_note"], "destructive_hint")
    assert hint(tools["restore_note"], "idempotent_hint") and not hint(tools["restore_note"], "destructive_hint")


async def test_every_tool_answers_the_example_calls_that_its_advertised_schema_accepts(services: Services) -> None:
    key, note = seeded(services)
    async with running(make_app(services)) as app, connect(app, key, "auto") as client:
        tools = (await client.list_tools()).tools
        for tool in sorted(tools, key=lambda t: t.name == "rename_project"):  # renaming OTHER goes last
            arguments = ARGUMENTS[tool.name](note)
            jsonschema.Draft202012Validator(tool.input_schema).validate(arguments)
            ok(await client.call_tool(tool.name, arguments))


# Values a schema cannot give: they must name things that exist (or not collide with one another).
NAMED = {"project": OTHER, "id": None, "ids": None, "links": [], "anchors": [], "supersedes": [], "cursor": ...,
         "find": ..., "expectedVersion": ..., "since": "2026-01-01T00:00:00Z", "newName": "gamma", "from": "ops",
         "to": "infra", "version": 1}  # fmt: skip


def from_schema(tool: str, name: str, schema: dict[str, Any]) -> Any:
    """A value of the advertised type, as a model would send reading the schema alone."""
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"] if schema["type"] != "boolean" else not schema["default"]
    kind = schema["type"]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return [from_schema(tool, name, schema["items"])]
    if kind == "object":  # a map whose entries the schema leaves to the description (checkFreshness): none
        return {}
    return f"{tool}-{name}".lower()  # one word: what "tags" or "query" take as readily as "content"


async def test_every_tool_accepts_every_argument_it_advertises_filled_from_the_schema(services: Services) -> None:
    key, note = seeded(services)
    async with running(make_app(services)) as app, connect(app, key, "auto") as client:
        tools = (await client.list_tools()).tools
        for tool in sorted(tools, key=lambda t: t.name == "rename_project"):
            arguments: dict[str, Any] = {}
            for name, prop in tool.input_schema.get("properties", {}).items():
                value = NAMED.get(name, from_schema(tool.name, name, prop))
                if value is ...:
                    continue
                arguments[name] = {"id": note, "ids": [note]}.get(name, value)
            jsonschema.Draft202012Validator(tool.input_schema).validate(arguments)
            result = await client.call_tool(tool.name, arguments)
            assert not result.is_error, (tool.name, arguments, result.structured_content)


async def test_a_server_builds_only_the_tools_it_is_asked_for_and_lists_them_in_one_order(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold Lambda answers one request: building every tool's argument model and schema for it cost ~60 ms of
    each cold start. Whatever was called first, tools/list keeps the registration order."""
    from mcp.server.mcpserver.tools import Tool

    built: list[str] = []
    from_function = Tool.from_function

    def counting(fn: Any, name: str | None = None, **options: Any) -> Tool:
        built.append(name or fn.__name__)
        return from_function(fn, name=name, **options)

    monkeypatch.setattr(Tool, "from_function", counting)
    key, note = seeded(services)
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}}  # fmt: skip
    arguments = ARGUMENTS["get_note"](note)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_note", "arguments": arguments, "_meta": envelope}}  # fmt: skip
    headers = {"authorization": f"Bearer {key}", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "get_note"}  # fmt: skip
    async with running(make_app(services)) as app:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http:
            answer = await http.post("/mcp", json=call, headers=headers)  # as a stateless client sends it, alone
        assert answer.status_code == 200 and '"isError":false' in answer.text.replace(" ", ""), answer.text
        assert built == ["get_note"]
        async with connect(app, key, "auto") as client:
            after_a_call = [t.name for t in (await client.list_tools()).tools]
    assert sorted(built) == sorted(ARGUMENTS)  # listing built the rest, each once
    assert after_a_call == [t.name for t in await listed(services, key)]
    assert after_a_call[0] == "get_context"  # the registration order: orientation first
