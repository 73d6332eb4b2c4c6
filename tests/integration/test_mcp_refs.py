"""Refs through the real MCP client, on every store: get_context names notes by ref (the last six characters of the
id, ~4.5 tokens instead of ~19), and every tool that takes a note id takes the ref too."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from notewell.domain.refs import note_ref
from tests.support.mcp_harness import Keys, connect, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from mcp import ClientSession as Client
    from mcp.types import CallToolResult

    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio
MODE = "2026-07-28"
TWINS = ("n_01KGES9MPQSCXTJ0770XQ4MF2A", "n_01KHV8JJ9VP28NGEVWR5Q4MF2A")  # imported ids ending alike
_STAMP = "2026-11-02T09:00:00.000Z"


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def export_lines(slug: str, notes: list[tuple[str, str, str]]) -> list[str]:
    """A notewell export of `notes` (id, title, body): how notes with ids of our choosing enter a store."""
    header = {"exportedAt": _STAMP, "format": "notewell-export", "version": 1}
    project = {"kind": "project", "slug": slug, "summary": "", "instructions": "", "defaultMaxTokens": None,
               "createdAt": _STAMP, "updatedAt": _STAMP}  # fmt: skip
    records: list[dict[str, Any]] = [header, project]
    for note_id, title, body in notes:
        records.append({
            "kind": "note", "id": note_id, "title": title, "body": body, "type": "constraint", "status": "current",
            "tags": [], "links": [], "importance": 4, "canonical": False, "supersedes": [], "supersededBy": [],
            "author": "key:key_01kgq3t1v8m2x9c4d7r6p1a0fb", "createdAt": _STAMP, "updatedAt": _STAMP,
            "deletedAt": None, "version": 1, "writeId": f"w_{note_id[2:].lower()}",
        })  # fmt: skip
    return [json.dumps(record) for record in records]


def imported(services: Services, keys: Keys, slug: str, notes: list[tuple[str, str, str]]) -> None:
    """`notes` (id, title, body) imported into `slug` by the workspace's owner, as `notewell import` loads them."""
    owner = services.auth.authenticate(keys.full)
    assert owner is not None
    services.portability.import_file(owner, slug, export_lines(slug, notes))


async def context_text(client: Client, project: str) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool("get_context", {"project": project})
    return text_of(result), ok(result)


async def test_get_context_names_notes_by_ref_and_every_note_tool_takes_it(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, MODE) as client:
        old = ok(await client.call_tool("remember", {
            "project": "billing-api", "type": "constraint",
            "content": "Retries against the card processor are capped at 3.",
        }))["note"]["id"]  # fmt: skip
        ref = note_ref(old)
        assert ref is not None

        text, structured = await context_text(client, "billing-api")
        assert f"- {ref} " in text and old not in text  # ~15 tokens saved on every line
        entries = [e for section in structured["sections"] for e in section["entries"]]
        assert [e["id"] for e in entries] == [old]  # the structured answer keeps whole ids

        assert ok(await client.call_tool("get_note", {"id": ref}))["id"] == old
        assert ok(await client.call_tool("get_note", {"id": ref.lower()}))["id"] == old  # as a model may retype it
        batch = ok(await client.call_tool("get_notes", {"ids": [ref, old, "ZZZZZZ"]}))
        assert [n["id"] for n in batch["notes"]] == [old]  # a ref and its id: one note
        assert batch["missing"] == ["ZZZZZZ"]
        updated = ok(await client.call_tool("update_note", {"id": ref, "expectedVersion": 1, "importance": 5}))
        assert updated["id"] == old and updated["version"] == 2
        ok(await client.call_tool("patch_note", {"id": ref, "mode": "append", "text": "Per charge attempt."}))
        revisions = ok(await client.call_tool("list_note_revisions", {"id": ref}))
        assert revisions["currentVersion"] == 3

        new = ok(await client.call_tool("remember", {
            "project": "billing-api", "type": "constraint", "supersedes": [ref],
            "content": "Retries against the card processor are capped at 5, since the processor got flaky.",
        }))  # fmt: skip
        assert new["status"] == "created"
        replaced = ok(await client.call_tool("get_note", {"id": old}))
        assert replaced["status"] == "superseded" and replaced["supersededBy"] == [new["note"]["id"]]

        linked = ok(await client.call_tool("create_note", {
            "project": "billing-api", "title": "Retry runbook", "body": "How to replay failed charges.",
            "links": [{"target": note_ref(new["note"]["id"]), "relation": "explains"}],
        }))  # fmt: skip
        links = ok(await client.call_tool("get_note", {"id": linked["id"]}))["links"]
        assert links == [{"target": new["note"]["id"], "relation": "explains"}]  # stored as the whole id

        assert ok(await client.call_tool("delete_note", {"id": note_ref(linked["id"])}))["id"] == linked["id"]
        assert ok(await client.call_tool("restore_note", {"id": note_ref(linked["id"])}))["id"] == linked["id"]


async def test_a_ref_two_notes_share_is_refused_with_their_ids_and_named_whole(services: Services, keys: Keys) -> None:
    imported(services, keys, "fleet", [
        (TWINS[0], "Hazmat loads need an endorsed driver", "Only drivers with the H endorsement take hazmat loads."),
        (TWINS[1], "Weights are kept in kilograms", "Every weight is stored in kilograms; convert at the edge."),
    ])  # fmt: skip
    async with running(make_app(services)) as app, connect(app, keys.full, MODE) as client:
        refused = err(await client.call_tool("get_note", {"id": "Q4MF2A"}))
        assert refused["status"] == 400
        assert TWINS[0] in refused["message"] and TWINS[1] in refused["message"]
        refused = err(await client.call_tool("update_note", {"id": "q4mf2a", "importance": 5}))
        assert refused["status"] == 400
        assert ok(await client.call_tool("get_note", {"id": TWINS[1]}))["version"] == 1  # nothing written

        text, _ = await context_text(client, "fleet")
        assert f"- {TWINS[0]} " in text and f"- {TWINS[1]} " in text  # never a name two notes answer to
        assert "- Q4MF2A " not in text


async def test_a_ref_resolves_only_among_the_notes_the_key_may_see(services: Services, keys: Keys) -> None:
    imported(services, keys, "beta", [
        (TWINS[0], "Deploy freeze on Fridays", "No production deploys after 14:00 on Fridays."),
    ])  # fmt: skip
    async with running(make_app(services)) as app:
        async with connect(app, keys.scoped, MODE) as client:  # a key for project alpha only
            hidden = err(await client.call_tool("get_note", {"id": "Q4MF2A"}))
            assert hidden["status"] == 404 and TWINS[0] not in hidden["message"]  # no id of another project leaks
        async with connect(app, keys.other_workspace, MODE) as client:
            hidden = err(await client.call_tool("get_note", {"id": "Q4MF2A"}))
            assert hidden["status"] == 404 and TWINS[0] not in hidden["message"]
        imported(services, keys, "alpha", [
            (TWINS[1], "Feature flags live in LaunchDarkly", "Every flag is created in LaunchDarkly, never in env."),
        ])  # fmt: skip
        async with connect(app, keys.scoped, MODE) as client:  # the other project's twin does not make it ambiguous
            assert ok(await client.call_tool("get_note", {"id": "Q4MF2A"}))["id"] == TWINS[1]
        async with connect(app, keys.full, MODE) as client:  # the whole workspace sees both
            assert err(await client.call_tool("get_note", {"id": "Q4MF2A"}))["status"] == 400
