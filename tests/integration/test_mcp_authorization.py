"""Authorization of every tool the server lists, through the real MCP client, on both stores.

The tools come from list_tools, so a new tool fails here until ARGUMENTS gives it valid arguments: then every tool
that is not read-only is refused (403) to a read-only key, and every tool naming a project or a note is refused to
a key scoped to another project with the same answer whether that project or note exists or not. Neither changes
anything (the workspaces' exports are compared before and after).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from notewell.bootstrap import Services
from notewell.domain.model import Principal
from tests.support.mcp_harness import connect, err, make_app, ok, running
from tests.support.tool_calls import ARGUMENTS, OTHER

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Workspace:
    owner: Principal
    read_only: str
    scoped: str  # a key scoped to 'alpha'


def workspace(services: Services, name: str) -> tuple[Workspace, str]:
    auth = services.auth
    ws = auth.create_workspace(name).id
    owner = auth.authenticate(auth.create_key(ws, name="owner").secret)
    assert owner is not None
    keys = Workspace(
        owner, auth.create_key(ws, name="ro", read_only=True).secret, auth.create_key(ws, project="alpha").secret
    )
    mine = services.notes.create(owner, "alpha", title="Alpha", body="alpha deploy notes", tags=["ops"])
    return keys, mine.note.id


def seeded(services: Services) -> tuple[Workspace, Workspace, str]:
    """One workspace holding OTHER (a note with two versions), and one without it."""
    with_other, _ = workspace(services, "acme")
    note = services.notes.create(with_other.owner, OTHER, title="Deploy", body="deploy runbook", tags=["ops"])
    services.projects.update(with_other.owner, OTHER, summary="Beta summary")
    from notewell.services.notes import NoteChanges

    services.notes.update(with_other.owner, note.note.id, NoteChanges(body="deploy runbook, v2"))
    without_other, _ = workspace(services, "solo")
    return with_other, without_other, note.note.id


def snapshot(services: Services, owner: Principal) -> list[object]:
    """Every project with its fields, and its export (notes, revisions, deletions) without the export time."""
    state: list[object] = []
    for project in services.projects.list(owner):
        state.append(project)
        state.append(services.portability.export_page(owner, project.slug, 1, 500)[1:])
    return state


async def listed_tools(services: Services, token: str) -> list[Any]:
    async with running(make_app(services)) as app, connect(app, token, "auto") as client:
        return list((await client.list_tools()).tools)


async def test_every_listed_tool_has_arguments_here(services: Services) -> None:
    keys, _, _ = seeded(services)
    tools = await listed_tools(services, keys.read_only)
    assert sorted(t.name for t in tools) == sorted(ARGUMENTS), "add the new tool's arguments to ARGUMENTS"


async def test_a_read_only_key_is_refused_every_tool_that_writes_and_nothing_changes(services: Services) -> None:
    keys, _, note = seeded(services)
    tools = await listed_tools(services, keys.read_only)
    writers = [t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)]
    assert {"remember", "create_note", "rename_project", "update_project"} <= set(writers)
    before = snapshot(services, keys.owner)
    async with running(make_app(services)) as app, connect(app, keys.read_only, "auto") as client:
        for name in writers:
            refused = err(await client.call_tool(name, ARGUMENTS[name](note)))
            assert (name, refused["status"], refused["code"]) == (name, 403, "forbidden")
        for name in sorted(set(ARGUMENTS) - set(writers)):  # and the readers still answer it
            ok(await client.call_tool(name, ARGUMENTS[name](note)))
    assert snapshot(services, keys.owner) == before


async def test_a_scoped_key_gets_the_same_404_for_another_project_that_exists_or_not(services: Services) -> None:
    with_other, without_other, note = seeded(services)
    tools = await listed_tools(services, with_other.scoped)
    targeted = [t.name for t in tools if {"project", "id", "ids"} & set(t.input_schema.get("properties", {}))]
    assert {"get_context", "rename_project", "get_note", "export_project"} <= set(targeted)
    before = (snapshot(services, with_other.owner), snapshot(services, without_other.owner))
    answers: dict[str, list[dict[str, Any]]] = {}
    for keys in (with_other, without_other):
        async with running(make_app(services)) as app, connect(app, keys.scoped, "auto") as client:
            for name in targeted:
                result = await client.call_tool(name, ARGUMENTS[name](note))
                assert result.structured_content is not None
                answers.setdefault(name, []).append(result.structured_content)
    for name, (existing, unknown) in answers.items():
        assert existing == unknown, name  # nothing tells the scoped key whether OTHER or the note exists
        if name == "get_notes":
            assert existing["notes"] == [] and existing["missing"] == [note]
        else:
            assert existing["error"]["status"] == 404, (name, existing)
    assert (snapshot(services, with_other.owner), snapshot(services, without_other.owner)) == before
