"""DynamoDB's commit sequence: the feed head under contention, a change seen half-way, and projects written before
the sequence existed (they keep the (updatedAt, id) feed with its horizon, and their cursors keep working)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.dynamodb import (
    FEED_HEAD_SK,
    DynamoDBStore,
    feed_record_sk,
    note_to_item,
    sequence_pk,
)
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import Principal
from notewell.services.changes import ChangesService
from notewell.services.notes import NoteChanges
from tests.support.dynamo import dynamodb_store

KEY = b"k" * 32


@pytest.fixture
def store() -> Iterator[DynamoDBStore]:
    with dynamodb_store() as dynamo:
        yield dynamo


@pytest.fixture
def services(store: DynamoDBStore, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, cursor_secret=KEY.decode()), store=store, clock=clock)


def project_id(services: Services, me: Principal, slug: str = "api") -> str:
    project = services.deps.store.get_project(me.workspace_id, slug)
    assert project is not None
    return project.id


def records(store: DynamoDBStore, workspace_id: str, project: str) -> list[dict[str, Any]]:
    response = store.client.query(
        TableName="notewell-test",
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": sequence_pk(workspace_id, project)}},
        ConsistentRead=True,
    )
    return response["Items"]


def test_a_commit_that_loses_the_feed_head_takes_the_next_number_and_both_are_served_in_commit_order(
    services: Services, me: Principal, store: DynamoDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = services.notes.create(me, "api", title="First", body="b").note
    reads: list[int] = []
    real_head = store._feed_head

    def head_then_another_commit(workspace_id: str, project: str) -> Any:
        head = real_head(workspace_id, project)
        reads.append(head.seq)
        if len(reads) == 1:  # another writer commits between this commit's read of the head and its transaction
            services.notes.update(me, first.id, NoteChanges(body="edited meanwhile"))
        return head

    monkeypatch.setattr(store, "_feed_head", head_then_another_commit)
    second = services.notes.create(me, "api", title="Second", body="b").note

    assert reads == [1, 1, 2]  # ours (stale once the edit lands), the edit's, then ours again: the race happened
    items = records(store, me.workspace_id, project_id(services, me))
    numbered = sorted((item["sk"]["S"], item["noteId"]["S"]) for item in items if item["sk"]["S"] != FEED_HEAD_SK)
    assert numbered == [(feed_record_sk(1), first.id), (feed_record_sk(2), first.id), (feed_record_sk(3), second.id)]
    page = services.changes.since(me, "api")
    assert [(c.note.id, c.note.version) for c in page.changes] == [(first.id, 2), (second.id, 1)]


def test_a_change_whose_note_is_not_visible_yet_ends_the_page_and_says_when_to_look_again(
    services: Services, me: Principal, store: DynamoDBStore
) -> None:
    note = services.notes.create(me, "api", title="N", body="b").note
    project = project_id(services, me)
    # A record numbered after the note's, for a version the note does not show yet (a transaction that reads of
    # different items see half-way): the reader must not pass it.
    store.client.put_item(
        TableName="notewell-test",
        Item={
            "pk": {"S": sequence_pk(me.workspace_id, project)}, "sk": {"S": feed_record_sk(2)},
            "noteId": {"S": note.id}, "version": {"N": "2"}, "updatedAt": {"S": note.updated_at},
        },
    )  # fmt: skip
    store.client.put_item(
        TableName="notewell-test",
        Item={"pk": {"S": sequence_pk(me.workspace_id, project)}, "sk": {"S": FEED_HEAD_SK}, "seq": {"N": "2"},
              "complete": {"BOOL": True}},
    )  # fmt: skip
    page = services.changes.since(me, "api")
    assert [c.note.id for c in page.changes] == [note.id]  # seq 1
    assert page.retry_after == 1 and not page.has_more
    # The rest of that transaction becomes visible.
    shown = replace(note, body="now version 2", version=2)
    store.client.put_item(TableName="notewell-test", Item=note_to_item(shown))
    later = services.changes.since(me, "api", cursor=page.cursor)
    assert [(c.note.id, c.note.version) for c in later.changes] == [(note.id, 2)]


def forget_the_sequence(store: DynamoDBStore, workspace_id: str, project: str) -> None:
    """What a table written by the previous version holds: notes, no feed head, no change records."""
    for item in records(store, workspace_id, project):
        store.client.delete_item(TableName="notewell-test", Key={"pk": item["pk"], "sk": item["sk"]})


def test_a_project_written_before_the_sequence_keeps_its_feed_and_its_cursors(
    services: Services, me: Principal, store: DynamoDBStore, clock: FixedClock
) -> None:
    ids = [services.notes.create(me, "api", title=f"N{n}", body="b").note.id for n in range(4)]
    project = project_id(services, me)
    forget_the_sequence(store, me.workspace_id, project)
    clock.advance(seconds=60)
    old_feed = ChangesService(services.deps, cursor_key=KEY, horizon=timedelta(seconds=30))  # the previous version
    first = old_feed.since(me, "api", limit=2)
    assert [c.note.id for c in first.changes] == ids[:2]

    services.notes.update(me, ids[0], NoteChanges(body="edited after the upgrade"))  # makes an incomplete head
    rest = services.changes.since(me, "api", cursor=first.cursor)
    assert [c.note.id for c in rest.changes] == ids[2:] and rest.retry_after == 30  # the edit is settling
    clock.advance(seconds=31)
    edited = services.changes.since(me, "api", cursor=rest.cursor)
    assert [(c.note.id, c.note.version) for c in edited.changes] == [(ids[0], 2)]
    # A new project of the same workspace is on the sequence from its first note.
    fresh = services.notes.create(me, "web", title="W", body="b").note
    assert [c.note.id for c in services.changes.since(me, "web").changes] == [fresh.id]


def test_a_first_commit_landing_while_a_reader_looks_for_the_head_is_read_as_the_sequence(
    services: Services, me: Principal, store: DynamoDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.projects.update(me, "api", summary="No notes yet")
    start = services.changes.since(me, "api")  # no head, no notes: the sequence, from 0
    landed: list[str] = []
    asked: list[bool] = []
    real_has_notes = store._has_notes

    def first_commit_lands_meanwhile(workspace_id: str, project: str) -> bool:
        asked.append(True)
        if len(asked) == 1:  # the project's first commit lands between the reader's read of the head and this Query
            landed.append(services.notes.create(me, "api", title="First", body="b").note.id)
        return real_has_notes(workspace_id, project)

    monkeypatch.setattr(store, "_has_notes", first_commit_lands_meanwhile)
    page = services.changes.since(me, "api", cursor=start.cursor)

    assert landed and [c.note.id for c in page.changes] == landed  # not taken for a project from before
