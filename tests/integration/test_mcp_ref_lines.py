"""search_notes and get_changes_since name notes in their text as get_context does, through the real MCP client on
every store: by ref (refs.names), by whole id where two notes of one answer share a ref; structuredContent keeps whole
ids. (A project whose refs do not resolve yet is named by id: tests/contract/test_dynamodb_refs.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from notewell.domain.refs import note_ref
from tests.integration.test_mcp_refs import MODE, TWINS, imported, text_of
from tests.support.mcp_harness import Keys, connect, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio
LONER = "n_01KJ2C4Y8D3WB7QZ5N6MTR0HXE"  # a third imported note, its ref its own


@pytest.fixture
def keys(services: Services) -> Keys:
    return make_keys(services)


def names_in(text: str) -> list[str]:
    """The name each note line of a search_notes or get_changes_since text opens with (`- name ...`), in order."""
    return [line.split(" ", 2)[1] for line in text.splitlines() if line.startswith("- ")]


async def test_search_and_changes_name_notes_by_ref_and_the_ref_reads_the_note(services: Services, keys: Keys) -> None:
    async with running(make_app(services)) as app, connect(app, keys.full, MODE) as client:
        ids = [
            ok(await client.call_tool("create_note", {"project": "billing-api", "title": title, "body": body}))["id"]
            for title, body in (
                ("Card retries", "Retries against the card processor are capped at 3."),
                ("Webhook retries", "Webhook retries back off exponentially, up to 5 retries."),
            )
        ]
        refs = [note_ref(note_id) for note_id in ids]
        assert None not in refs

        found = await client.call_tool("search_notes", {"project": "billing-api", "query": "retries"})
        hits = ok(found)["results"]
        assert sorted(hit["id"] for hit in hits) == sorted(ids)  # structuredContent: whole ids
        text = text_of(found)
        assert names_in(text) == [note_ref(hit["id"]) for hit in hits]
        assert not any(note_id in text for note_id in ids)  # ~15 tokens saved on every line

        changes = await client.call_tool("get_changes_since", {"project": "billing-api"})
        assert [change["id"] for change in ok(changes)["changes"]] == ids
        text = text_of(changes)
        assert names_in(text) == refs and not any(note_id in text for note_id in ids)

        for ref, note_id in zip(refs, ids, strict=True):  # what the text names, the tools read
            assert ok(await client.call_tool("get_note", {"id": ref}))["id"] == note_id


async def test_two_notes_of_one_answer_sharing_a_ref_are_named_by_whole_id(services: Services, keys: Keys) -> None:
    imported(services, keys, "fleet", [
        (TWINS[0], "Hazmat loads need an endorsed driver", "Only drivers with the H endorsement take hazmat loads."),
        (TWINS[1], "Hazmat weights are kept in kilograms", "Every hazmat weight is stored in kilograms."),
        (LONER, "Hazmat routes avoid tunnels", "A hazmat load never goes through a tunnel."),
    ])  # fmt: skip
    twin_ref, loner_ref = note_ref(TWINS[0]), note_ref(LONER)
    assert twin_ref == note_ref(TWINS[1]) and loner_ref is not None and loner_ref != twin_ref
    async with running(make_app(services)) as app, connect(app, keys.full, MODE) as client:
        found = await client.call_tool("search_notes", {"project": "fleet", "query": "hazmat"})
        hits = [hit["id"] for hit in ok(found)["results"]]
        assert sorted(hits) == sorted([*TWINS, LONER])
        named = {LONER: loner_ref, TWINS[0]: TWINS[0], TWINS[1]: TWINS[1]}  # never a name two notes answer to
        assert names_in(text_of(found)) == [named[hit] for hit in hits]

        changes = await client.call_tool("get_changes_since", {"project": "fleet"})
        listed = [change["id"] for change in ok(changes)["changes"]]
        assert sorted(listed) == sorted([*TWINS, LONER])
        assert names_in(text_of(changes)) == [named[note_id] for note_id in listed]
        assert ok(await client.call_tool("get_note", {"id": loner_ref}))["id"] == LONER

        # The rule holds within one answer: a twin alone in it goes by the ref, which get_note refuses with both ids.
        alone = await client.call_tool("search_notes", {"project": "fleet", "query": "endorsement"})
        assert [hit["id"] for hit in ok(alone)["results"]] == [TWINS[0]]
        assert names_in(text_of(alone)) == [twin_ref]
        refused = err(await client.call_tool("get_note", {"id": twin_ref}))
        assert refused["status"] == 400 and TWINS[0] in refused["message"] and TWINS[1] in refused["message"]
