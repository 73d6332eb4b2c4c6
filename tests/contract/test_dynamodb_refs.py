"""DynamoDB finds notes by ref (GSI5): every note whose id has one, deleted ones too, in its own workspace only; notes
written before the index gain its key when `notewell reindex --stack` rewrites them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from notewell.adapters.dynamodb import DynamoDBStore, note_pk, note_to_item, ref_pk
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import REF_LAYOUT, TYPE_PARTITION_LAYOUT, Note, NoteType, NoteWrite
from notewell.domain.refs import note_ref
from notewell.entrypoints.cli import main
from tests.support.dynamo import count_index_reads, dynamodb_store, table_spec
from tests.support.mcp_harness import connect, make_app, make_keys, ok, running

WS = "ws_refs"
OTHER_WS = "ws_elsewhere"
PROJECT = "prj_refs"
T0 = "2026-01-05T09:00:00.000Z"
REF = "7Q3KX9"
ENOUGH = 10


@pytest.fixture
def store() -> Iterator[DynamoDBStore]:
    with dynamodb_store() as dynamo:
        yield dynamo


def note_id(n: int, ref: str = REF) -> str:
    """An id of the store's shape (`n_` and 26 Crockford characters) ending in `ref`: notes sharing a ref on purpose."""
    return f"n_{n:020d}{ref}"


def make_note(note_id: str, *, workspace_id: str = WS) -> Note:
    return Note(
        id=note_id, workspace_id=workspace_id, project_id=PROJECT, title=f"Note {note_id}", body="body", version=1,
        created_at=T0, updated_at=T0, author="key_test", write_id=f"w_{note_id}_1",
    )  # fmt: skip


def insert(store: DynamoDBStore, note: Note) -> Note:
    store.commit(note.workspace_id, [NoteWrite(note, expected_version=None)], revision_cap=50)
    return note


def test_a_committed_note_and_an_imported_one_are_found_by_their_refs(store: DynamoDBStore) -> None:
    committed = insert(store, make_note(note_id(1, "7Q3KX9")))
    imported = make_note(note_id(2, "M4T0ZZ"))
    assert store.import_notes(WS, [(imported, ())]) == 1

    assert store.ids_with_ref(WS, "7Q3KX9", limit=ENOUGH) == [committed.id]
    assert store.ids_with_ref(WS, "M4T0ZZ", limit=ENOUGH) == [imported.id]
    assert store.ids_with_ref(WS, "000000", limit=ENOUGH) == []


def test_a_deleted_note_is_still_found_by_its_ref(store: DynamoDBStore) -> None:
    """A ref resolves as the id does: to the deleted note, which the tool then says is deleted."""
    note = insert(store, make_note(note_id(1)))
    deleted = replace(note, version=2, updated_at="2026-01-05T09:00:01.000Z", deleted_at="2026-01-05T09:00:01.000Z",
                      write_id=f"w_{note.id}_2")  # fmt: skip
    store.commit(WS, [NoteWrite(deleted, expected_version=1, previous=note)], revision_cap=50)

    assert store.ids_with_ref(WS, REF, limit=ENOUGH) == [note.id]


def test_notes_sharing_a_ref_come_back_in_id_order_and_limit_caps_them(store: DynamoDBStore) -> None:
    shared = [insert(store, make_note(note_id(n))).id for n in (3, 1, 2)]  # written out of id order
    insert(store, make_note(note_id(4, "M4T0ZZ")))

    assert store.ids_with_ref(WS, REF, limit=ENOUGH) == sorted(shared)
    capped = store.ids_with_ref(WS, REF, limit=2)
    assert len(capped) == 2 and capped == sorted(capped) and set(capped) <= set(shared)
    assert store.ids_with_ref(WS, REF, limit=0) == []


def test_another_workspaces_note_with_the_same_ref_is_not_returned(store: DynamoDBStore) -> None:
    mine = insert(store, make_note(note_id(1)))
    theirs = insert(store, make_note(note_id(2), workspace_id=OTHER_WS))

    assert store.ids_with_ref(WS, REF, limit=ENOUGH) == [mine.id]
    assert store.ids_with_ref(OTHER_WS, REF, limit=ENOUGH) == [theirs.id]


def test_only_a_note_whose_id_has_a_ref_carries_the_ref_key() -> None:
    """An imported id of another shape has no ref: its note is named by the whole id and stays out of GSI5."""
    assert note_to_item(make_note(note_id(1)))["gsi5pk"] == {"S": ref_pk(WS, REF)}
    legacy = make_note("n_imported-from-elsewhere-1")
    assert note_ref(legacy.id) is None
    assert "gsi5pk" not in note_to_item(legacy)


def test_the_ref_index_is_keyed_by_ref_alone_and_holds_only_keys() -> None:
    """moto may answer with more than an index projects: the template must give ids_with_ref the table key it reads."""
    (gsi5,) = [g for g in table_spec()["GlobalSecondaryIndexes"] if g["IndexName"] == "GSI5"]
    assert gsi5["KeySchema"] == [{"AttributeName": "gsi5pk", "KeyType": "HASH"}]
    assert gsi5["Projection"] == {"ProjectionType": "KEYS_ONLY"}  # the table's pk and sk come with the keys


def test_notes_from_before_the_ref_index_are_found_once_reindex_rewrites_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project of layout 4 (TYPE_PARTITION_LAYOUT) holds notes without gsi5pk: get_context still reads it lean, one
    Query per type partition, naming its notes by id, since their refs find nothing; `notewell reindex --stack`
    rewrites its notes, the deleted one too, and moves it to REF_LAYOUT: then get_context names them by ref."""
    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        kept = services.notes.create(me, "api", title="Retries", body="Cap them at 3.", type=NoteType.DECISION).note
        gone = services.notes.create(me, "api", title="Old queue", body="Was SQS.", type=NoteType.FACT).note
        services.notes.delete(me, gone.id)
        project = store.get_project(me.workspace_id, "api")
        assert project is not None and project.context_index == REF_LAYOUT
        kept_ref = note_ref(kept.id)
        assert f"- {kept_ref} " in services.context.get_context(me, "api").packed.text
        client, table = store.client, store.table_name
        for note in (kept, gone):
            client.update_item(
                TableName=table, Key={"pk": {"S": note_pk(me.workspace_id, note.id)}, "sk": {"S": "NOTE"}},
                UpdateExpression="REMOVE gsi5pk",
            )  # fmt: skip
        client.update_item(
            TableName=table, Key={"pk": {"S": f"WS#{me.workspace_id}"}, "sk": {"S": f"PROJ#{project.id}"}},
            UpdateExpression="SET contextIndex = :four",
            ExpressionAttributeValues={":four": {"N": str(TYPE_PARTITION_LAYOUT)}},
        )  # fmt: skip

        def found() -> list[list[str]]:
            return [store.ids_with_ref(me.workspace_id, note_ref(n.id) or "", limit=ENOUGH) for n in (kept, gone)]

        reads = count_index_reads(client)
        old_layout = services.context.get_context(me, "api").packed.text
        assert f"- {kept.id} " in old_layout and f"- {kept_ref} " not in old_layout  # no ref the tools cannot resolve
        assert reads["GSI4"] == 10  # each type of a section, the rest, those needing attention: no section partitions
        assert found() == [[], []]
        monkeypatch.setenv("AWS_REGION", client.meta.region_name)
        assert main(["reindex", "--stack", "--table", table]) == 0
        assert "1 projects moved onto the lean context index (2 notes rewritten)" in capsys.readouterr().out
        assert found() == [[kept.id], [gone.id]]
        assert f"- {kept_ref} " in services.context.get_context(me, "api").packed.text
        upgraded = store.get_project(me.workspace_id, "api")
        assert upgraded is not None and upgraded.context_index == REF_LAYOUT


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def set_layout(store: DynamoDBStore, workspace_id: str, project_id: str, layout: int) -> None:
    """Rewind (or move) a project's recorded context-index layout, as a project made by an older Notewell has it."""
    store.client.update_item(
        TableName=store.table_name, Key={"pk": {"S": f"WS#{workspace_id}"}, "sk": {"S": f"PROJ#{project_id}"}},
        UpdateExpression="SET contextIndex = :layout", ExpressionAttributeValues={":layout": {"N": str(layout)}},
    )  # fmt: skip


def names_in(text: str) -> list[str]:
    """The name each note line of a search_notes or get_changes_since text opens with (`- name ...`)."""
    return [line.split(" ", 2)[1] for line in text.splitlines() if line.startswith("- ")]


@pytest.mark.anyio
async def test_search_and_changes_name_a_project_before_the_ref_index_by_id(tmp_path: Path) -> None:
    """search_notes and get_changes_since name notes as get_context does: in a project of layout 4, whose older notes
    a ref finds only once `notewell reindex --stack` rewrites them, by whole id; at REF_LAYOUT, by ref."""
    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store)
        keys = make_keys(services)
        async with running(make_app(services)) as app, connect(app, keys.full, "2026-07-28") as client:
            kept = ok(await client.call_tool("create_note", {
                "project": "api", "title": "Retries", "body": "Retries are capped at 3.",
            }))["id"]  # fmt: skip

            async def texts() -> list[list[str]]:
                found = await client.call_tool("search_notes", {"project": "api", "query": "retries"})
                changes = await client.call_tool("get_changes_since", {"project": "api"})
                assert [hit["id"] for hit in ok(found)["results"]] == [kept]  # structuredContent: whole ids always
                assert [change["id"] for change in ok(changes)["changes"]] == [kept]
                return [names_in(result.content[0].text) for result in (found, changes)]  # type: ignore[union-attr]

            project = store.get_project(keys.workspace, "api")
            assert project is not None and project.context_index == REF_LAYOUT
            assert await texts() == [[note_ref(kept)]] * 2

            set_layout(store, keys.workspace, project.id, TYPE_PARTITION_LAYOUT)
            assert await texts() == [[kept]] * 2  # no ref the tools cannot resolve

            set_layout(store, keys.workspace, project.id, REF_LAYOUT)  # what reindex records once it has rewritten
            assert await texts() == [[note_ref(kept)]] * 2
