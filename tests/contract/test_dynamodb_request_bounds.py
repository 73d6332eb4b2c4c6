"""DynamoDB work per call is a fixed bound, whatever the project's size, and never a Scan."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from notewell.adapters.dynamodb import DynamoDBStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain import packing
from notewell.domain.model import NoteStatus, NoteType, Plan, Principal
from notewell.domain.refs import name_of
from notewell.entrypoints.cli import main
from notewell.services.memory import RememberRequest
from tests.support.dynamo import count_index_reads, count_operations, dynamodb_store

TYPES = [NoteType.DECISION, NoteType.CONSTRAINT, NoteType.FACT, NoteType.TASK, NoteType.FAILED_APPROACH]


def seed(services: Services, me: Principal, count: int) -> None:
    for n in range(count):
        services.notes.create(
            me, "api", title=f"Note {n}", body=f"Body {n} about subsystem {n % 7} and detail {n}.",
            type=TYPES[n % len(TYPES)],
        )  # fmt: skip


def signed_in(store: DynamoDBStore, tmp_path: Path) -> tuple[Services, Principal]:
    """Services on the store and a read-write principal of a new workspace."""
    services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    return services, me


def requests_for(notes: int, tmp_path: Path) -> tuple[Counter[str], Counter[str]]:
    with dynamodb_store() as store:
        services, me = signed_in(store, tmp_path)
        seed(services, me, notes)
        calls = count_operations(store.client)
        services.context.get_context(me, "api", query="subsystem 3 detail")
        context_calls = Counter(calls)
        calls.clear()
        services.memory.remember(me, RememberRequest("api", "Subsystem 3 is owned by the platform team.",
                                                     type=NoteType.DECISION))  # fmt: skip
        return context_calls, Counter(calls)


# One lean Query per GSI4 partition (each type of a section: 8; the rest; those needing attention), key, project.
LEAN_CONTEXT_REQUESTS = 12


def test_get_context_and_remember_make_the_same_requests_at_any_project_size(tmp_path: Path) -> None:
    small_context, small_remember = requests_for(20, tmp_path / "small")
    large_context, large_remember = requests_for(120, tmp_path / "large")
    assert small_context == large_context, (small_context, large_context)  # one Query per index read, always
    for calls in (small_context, large_context, small_remember, large_remember):
        assert "Scan" not in calls
    assert sum(large_context.values()) <= LEAN_CONTEXT_REQUESTS
    # remember: candidates (one bounded index read), neighbours (topped up from the type index only when the
    # search found too few), one transaction. Never more, however large the project.
    assert sum(small_remember.values()) <= 12 and sum(large_remember.values()) <= 12
    assert large_remember["TransactWriteItems"] == 1


def strip_context_index(store: DynamoDBStore, workspace_id: str, project_id: str) -> None:
    """Make the project look as a version before the lean context index left it: no keys, no flag."""
    client, table = store.client, store.table_name
    for item in client.query(
        TableName=table, IndexName="GSI1", KeyConditionExpression="gsi1pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"WS#{workspace_id}#P#{project_id}"}},
    )["Items"]:  # fmt: skip
        client.update_item(
            TableName=table, Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression="REMOVE gsi4pk, gsi4sk, excerpt, bodySize",
        )  # fmt: skip
    client.update_item(
        TableName=table, Key={"pk": {"S": f"WS#{workspace_id}"}, "sk": {"S": f"PROJ#{project_id}"}},
        UpdateExpression="REMOVE contextIndex",
    )  # fmt: skip


def by_whole_id(text: str, store: DynamoDBStore, workspace_id: str, project_id: str) -> str:
    """A get_context text as it names the notes of a project from before refs (model.REF_LAYOUT): by whole id, since
    their refs resolve only once `reindex --stack` rewrites them."""
    for note in store.project_notes(workspace_id, project_id, limit=1_000):
        text = re.sub(rf"(?<=[ ]){name_of(note.id)}(?=[ \n]|$)", note.id, text)
    return text


def test_a_project_from_before_the_lean_index_reads_the_old_way_until_reindex_upgrades_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with dynamodb_store() as store:
        services, me = signed_in(store, tmp_path)
        seed(services, me, 30)
        project = store.get_project(me.workspace_id, "api")
        assert project is not None
        before = services.context.get_context(me, "api", query="subsystem 3 detail").packed.text
        strip_context_index(store, me.workspace_id, project.id)

        calls = count_operations(store.client)
        old_way = services.context.get_context(me, "api", query="subsystem 3 detail")
        assert old_way.packed.text == by_whole_id(before, store, me.workspace_id, project.id)  # by the old reads
        assert calls["Query"] > 10
        monkeypatch.setenv("AWS_REGION", store.client.meta.region_name)
        assert main(["reindex", "--stack", "--table", store.table_name]) == 0
        assert "1 projects moved onto the lean context index (30 notes rewritten)" in capsys.readouterr().out
        calls.clear()
        upgraded = services.context.get_context(me, "api", query="subsystem 3 detail")
        assert upgraded.packed.text == before
        assert sum(calls.values()) <= LEAN_CONTEXT_REQUESTS


def test_a_project_whose_lean_index_kept_disputed_notes_in_its_sections_lists_them_until_reindex_moves_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Layout 1 (before notes needing attention had their own partition): the conflicts come from GSI3, whole notes,
    until `reindex --stack` moves them; then get_context reads them lean and no longer touches GSI3."""
    with dynamodb_store() as store:
        services, me = signed_in(store, tmp_path)
        seed(services, me, 20)
        for n in range(3):
            services.notes.create(
                me, "api", title=f"Disputed {n}", body=f"Which queue serves region {n}? " * 30,
                type=NoteType.DECISION, status=NoteStatus.DISPUTED,
            )  # fmt: skip
        project = store.get_project(me.workspace_id, "api")
        assert project is not None
        before = services.context.get_context(me, "api", query="subsystem 3 detail").packed
        assert len(before.conflicts) == 3
        client, table = store.client, store.table_name
        for item in client.query(
            TableName=table, IndexName="GSI4", KeyConditionExpression="gsi4pk = :pk",
            ExpressionAttributeValues={":pk": {"S": f"WS#{me.workspace_id}#P#{project.id}#S#attention"}},
        )["Items"]:  # fmt: skip
            client.update_item(
                TableName=table, Key={"pk": item["pk"], "sk": item["sk"]}, UpdateExpression="SET gsi4pk = :pk",
                ExpressionAttributeValues={":pk": {"S": f"WS#{me.workspace_id}#P#{project.id}#S#decisions"}},
            )  # fmt: skip
        client.update_item(
            TableName=table, Key={"pk": {"S": f"WS#{me.workspace_id}"}, "sk": {"S": f"PROJ#{project.id}"}},
            UpdateExpression="SET contextIndexed = :on REMOVE contextIndex",
            ExpressionAttributeValues={":on": {"BOOL": True}},
        )  # fmt: skip

        reads = count_index_reads(client)
        layout_one = services.context.get_context(me, "api", query="subsystem 3 detail").packed
        assert layout_one.text == by_whole_id(before.text, store, me.workspace_id, project.id)
        assert reads["GSI3"] == 1
        monkeypatch.setenv("AWS_REGION", client.meta.region_name)
        assert main(["reindex", "--stack", "--table", table]) == 0
        assert "1 projects moved onto the lean context index" in capsys.readouterr().out
        reads.clear()
        upgraded = services.context.get_context(me, "api", query="subsystem 3 detail").packed
        assert upgraded.text == before.text
        assert reads["GSI3"] == 0 and reads["GSI4"] == 10  # each type of a section, the rest, those needing attention


def test_a_project_whose_lean_index_kept_notes_by_section_reads_them_until_reindex_moves_them_by_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Layout 3 (a partition per section): a new version writes by type, so until `reindex --stack` moves them the
    older notes are read from their section's partition beside the types'; then from the types' alone."""
    with dynamodb_store() as store:
        services, me = signed_in(store, tmp_path)
        seed(services, me, 20)
        project = store.get_project(me.workspace_id, "api")
        assert project is not None
        before = services.context.get_context(me, "api").packed.text
        client, table = store.client, store.table_name
        prefix = f"WS#{me.workspace_id}#P#{project.id}#S#"
        for section, kinds in packing.SECTION_TYPES.items():
            for kind in kinds:
                for item in client.query(
                    TableName=table, IndexName="GSI4", KeyConditionExpression="gsi4pk = :pk",
                    ExpressionAttributeValues={":pk": {"S": prefix + kind.value}},
                )["Items"]:  # fmt: skip
                    client.update_item(
                        TableName=table, Key={"pk": item["pk"], "sk": item["sk"]},
                        UpdateExpression="SET gsi4pk = :pk",
                        ExpressionAttributeValues={":pk": {"S": prefix + section.value}},
                    )  # fmt: skip
        client.update_item(
            TableName=table, Key={"pk": {"S": f"WS#{me.workspace_id}"}, "sk": {"S": f"PROJ#{project.id}"}},
            UpdateExpression="SET contextIndex = :three", ExpressionAttributeValues={":three": {"N": "3"}},
        )  # fmt: skip
        newer = services.notes.create(me, "api", title="Newest rule", body="Never block a handler.",
                                      type=NoteType.CONSTRAINT).note  # fmt: skip

        reads = count_index_reads(client)
        by_section = services.context.get_context(me, "api")
        assert reads["GSI4"] == 14  # each type and each section ("status" is both), the rest, those needing attention
        line = f"- {newer.id} Newest rule: Never block a handler.\n"  # by id until reindexed: refs cannot resolve
        assert line in by_section.packed.text  # written by type, beside its section's older notes
        assert by_section.packed.text.replace(line, "") == by_whole_id(before, store, me.workspace_id, project.id)
        monkeypatch.setenv("AWS_REGION", client.meta.region_name)
        assert main(["reindex", "--stack", "--table", table]) == 0
        assert "1 projects moved onto the lean context index" in capsys.readouterr().out
        reads.clear()
        upgraded = services.context.get_context(me, "api").packed.text
        assert f"- {name_of(newer.id)} Newest rule" in upgraded  # by ref, now that they resolve
        assert by_whole_id(upgraded, store, me.workspace_id, project.id) == by_section.packed.text
        assert reads["GSI4"] == 10


def test_a_ref_a_few_notes_share_is_one_query_of_the_ref_index_whatever_the_workspace_holds() -> None:
    from notewell.domain.model import Note

    stamp = "2026-01-01T00:00:00.000Z"
    shared, ref = 3, "7Q3KX9"
    with dynamodb_store() as store:
        notes = [
            Note(id=f"n_{n:020d}{ref if n < shared else f'{n:06d}'}", workspace_id="ws_refs", project_id="prj_refs",
                 title=f"Note {n}", body=f"Detail {n}.", version=1, created_at=stamp, updated_at=stamp,
                 author="import", write_id=f"w{n}")
            for n in range(60)
        ]  # fmt: skip
        store.import_notes("ws_refs", [(note, ()) for note in notes])
        calls, reads = count_operations(store.client), count_index_reads(store.client)
        assert store.ids_with_ref("ws_refs", ref, limit=10) == [note.id for note in notes[:shared]]
        assert calls == Counter({"Query": 1}) and reads == Counter({"GSI5": 1})


def test_the_lean_index_projects_exactly_what_a_lean_note_is_read_from() -> None:
    """moto returns every attribute whatever the projection: the template and the adapter must agree by name."""
    from notewell.adapters.dynamodb import LEAN_ATTRIBUTES
    from tests.support.dynamo import table_spec

    (gsi4,) = [g for g in table_spec()["GlobalSecondaryIndexes"] if g["IndexName"] == "GSI4"]
    assert gsi4["Projection"]["ProjectionType"] == "INCLUDE"
    assert sorted(gsi4["Projection"]["NonKeyAttributes"]) == sorted(LEAN_ATTRIBUTES)
    assert "body" not in LEAN_ATTRIBUTES


def test_without_a_search_index_bounded_lookups_say_so(tmp_path: Path) -> None:
    """No collection deployed: remember compares with the newest 500 notes, get_context ranks its candidates only;
    each answer says what it did not look at."""
    from notewell.domain.model import Note
    from notewell.services.search import RELATED_SCAN_LIMIT

    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
        workspace = services.auth.create_workspace("acme")
        services.workspaces.set_plan(workspace.id, Plan.ENTERPRISE)
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        first = services.notes.create(me, "api", title="Start", body="The project starts.").note
        stamp = "2026-01-01T00:00:00.000Z"
        old = [
            Note(id=f"n_{n:026d}", workspace_id=me.workspace_id, project_id=first.project_id, title=f"Note {n}",
                 body=f"Detail {n} of subsystem {n % 7}.", version=1, created_at=stamp, updated_at=stamp,
                 author="import", write_id=f"w{n}", type=NoteType.FACT)
            for n in range(RELATED_SCAN_LIMIT)
        ]  # fmt: skip
        store.import_notes(me.workspace_id, [(note, ()) for note in old])
        created = services.memory.remember(
            me, RememberRequest("api", "Billing exports run nightly at 02:00 UTC.", type=NoteType.DECISION)
        )
        assert f"Compared with the {RELATED_SCAN_LIMIT} most recently updated notes only" in created.message
        result = services.context.get_context(me, "api", query="billing exports")
        assert result.notice is not None and "no search index" in result.notice
