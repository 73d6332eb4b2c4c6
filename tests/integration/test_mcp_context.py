"""get_context, the orientation prompts and note resources through the real MCP client, both eras."""

from __future__ import annotations

import re

import bpe_openai
import pytest

from notewell.bootstrap import Services
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.packing import names_in
from notewell.domain.refs import note_ref
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_get_context_returns_sections_in_order_within_the_budget(services: Services, mode: str) -> None:
    key = make_keys(services).full
    async with running(make_app(services)) as app, connect(app, key, mode) as client:
        for content, kind in [
            ("Never log emails or names.", "constraint"),
            ("Sessions use opaque tokens stored in Redis.", "decision"),
            ("Sticky sessions broke blue-green deploys.", "failed_approach"),
            ("Write the session outage runbook.", "task"),
            ("Redis runs three shards with one replica each.", "fact"),
        ]:
            ok(await client.call_tool("remember", {"project": "api", "content": content, "type": kind}))
        ok(await client.call_tool("update_project", {"project": "api", "summary": "Session service."}))
        context = ok(await client.call_tool("get_context", {"project": "api", "query": "redis shards"}))
        tiny = ok(await client.call_tool("get_context", {"project": "api", "maxTokens": 200, "detail": "lean"}))
        empty = ok(await client.call_tool("get_context", {"project": "ghost"}))
        bad = err(await client.call_tool("get_context", {"project": "api", "maxTokens": 5}))
    names = [s["name"] for s in context["sections"]]
    # with a query, the notes matching it are shown (and paid for first) under relevant
    assert names == ["constraints", "failed_approaches", "relevant", "open_items"]
    relevant = next(s for s in context["sections"] if s["name"] == "relevant")["entries"]
    assert {e["title"] for e in relevant} >= {"Redis runs three shards with one replica each"}
    assert context["summary"] == "Session service." and context["meta"]["detail"] == "balanced"
    assert context["meta"]["spent"] <= context["meta"]["budget"] == 3000
    assert "body" not in context["sections"][0]["entries"][0]
    assert tiny["meta"]["budget"] == 200 and tiny["meta"]["spent"] <= 200
    assert empty["sections"] == [] and "no notes yet" in empty["notice"]
    assert bad["status"] == 400


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_start_here_description_and_server_instructions_orient_the_agent(
    services: Services, mode: str
) -> None:
    key = make_keys(services).full
    async with running(make_app(services)) as app, connect(app, key, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        start = await client.get_prompt("start_task", {"project": "api", "task": "add rate limiting"})
        end = await client.get_prompt("end_session", {"project": "api"})
        instructions = client.instructions
    assert tools["get_context"].description.startswith("START HERE for project work")  # type: ignore[union-attr]
    assert {"start_task", "end_session"} <= set(prompts)
    assert "get_context(project='api', query='add rate limiting')" in start.messages[0].content.text  # type: ignore[union-attr]
    assert "checkpoint(project='api'" in end.messages[0].content.text  # type: ignore[union-attr]
    assert instructions is not None and "START every task with get_context" in instructions
    assert "END every session with checkpoint" in instructions


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_notes_are_readable_as_resources_and_other_tenants_are_not(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, mode) as client:
            note = ok(await client.call_tool("create_note", {"project": "api", "title": "Runbook", "body": "Step 1."}))
            templates = await client.list_resource_templates()
            assert any(t.uri_template == "notewell://notes/{id}" for t in templates.resource_templates)
            read = await client.read_resource(f"notewell://notes/{note['id']}")
            text = read.contents[0].text  # type: ignore[union-attr]
            assert text.startswith("# Runbook") and text.endswith("Step 1.")
            # the ref get_context names the note by reads it too, whatever its case
            by_ref = await client.read_resource(f"notewell://notes/{note_ref(note['id']).lower()}")
            assert by_ref.contents[0].text == text  # type: ignore[union-attr]
        async with connect(app, keys.other_workspace, mode) as rival:
            for name in (note["id"], note_ref(note["id"])):
                with pytest.raises(Exception, match="No note"):
                    await rival.read_resource(f"notewell://notes/{name}")


KINDS = ["constraint", "decision", "failed_approach", "status", "task", "fact", "incident", "note", "architecture"]


def text_of(result: object) -> str:
    return result.content[0].text  # type: ignore[attr-defined,no-any-return]


async def test_every_section_shows_its_best_and_the_answer_as_sent_fits_the_budget(services: Services) -> None:
    """A 150-note project of mixed types at the default budget and at a tiny one: every section that has notes is
    shown, every candidate left out is listed or counted, and the text the model reads fits by cl100k."""
    encoding = bpe_openai.get_encoding("cl100k_base")
    owner = services.auth.authenticate(make_keys(services).full)
    assert owner is not None
    notes = []
    for n in range(150):
        kind = NoteType(KINDS[n % len(KINDS)])
        body = f"Item {n}: the {kind.value} about shard {n % 13} and its retry policy, with the reasons we hold."
        status = NoteStatus.PENDING if kind is NoteType.TASK else NoteStatus.CURRENT
        notes.append(services.notes.create(
            owner, "big", title=f"{kind.value} {n}", body=body * (1 + n % 3), type=kind, status=status
        ).note)  # fmt: skip
    # The text names a note by its ref, or by its id where two notes share a ref (packing.names_in).
    named = {name: note_id for note_id, name in names_in(notes).items()} | {n.id: n.id for n in notes}
    key = services.auth.create_key(owner.workspace_id, name="agent").secret
    async with running(make_app(services)) as app, connect(app, key, "auto") as client:
        answers = [await client.call_tool("get_context", {"project": "big", **extra})
                   for extra in ({}, {"maxTokens": 600}, {"maxTokens": 200, "detail": "lean"})]  # fmt: skip
    for result in answers:
        context = ok(result)
        text, meta = text_of(result), context["meta"]
        assert len(encoding.encode(text)) <= meta["budget"], meta
        shown = {e["id"] for s in context["sections"] for e in s["entries"]}
        listed = {o["id"] for o in meta["omittedIds"]}
        assert meta["omitted"] == len(listed) + meta["unlisted"] and not shown & listed
        names = re.findall(r"(?<![0-9A-Za-z_])(n_[0-9A-Z]{26}|[0-9A-HJKMNP-TV-Z]{6})(?![0-9A-Za-z_])", text)
        assert set(names) <= set(named), set(names) - set(named)
        assert {named[name] for name in names} == shown | listed
        assert (meta["unlisted"] > 0) == (f"{meta['unlisted']} more not listed" in text)
    default = ok(answers[0])
    assert [s["name"] for s in default["sections"]] == [
        "constraints", "decisions", "failed_approaches", "status", "open_items", "recent_changes"
    ]  # fmt: skip
    assert len(ok(answers[1])["sections"]) >= 4  # 600 tokens still show the best of most sections
