"""The Store port's housekeeping contract on every store: plans, usage counters, project renames, note imports.
The DynamoDB-only part checks what moto cannot show by itself: lost replies, unprocessed batches, request counts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from notewell.adapters.dynamodb import MAX_ITEM_BYTES, DynamoDBStore, item_size, note_to_item
from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore
from notewell.domain.errors import AlreadyExistsError, NotFoundError, TooLargeError, UnavailableError
from notewell.domain.model import (
    ApiKey,
    FeedPosition,
    Link,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Plan,
    Project,
    SearchFilters,
    Workspace,
)
from notewell.ports import Store
from tests.support.dynamo import (
    count_operations,
    dynamodb_store,
    error_reply,
    inject_faults,
    throttled,
    transaction_conflict,
)

WS = "ws_alpha"
OTHER_WS = "ws_beta"
PROJECT = "prj_one"
T0 = "2026-01-05T09:00:00.000Z"
HORIZON = "2026-01-05T23:59:59.999Z"
DAY = "2026-01-05"
WRITE = "TransactWriteItems"


def ts(minute: int, millis: int = 0) -> str:
    return f"2026-01-05T09:{minute:02d}:00.{millis:03d}Z"


def note_id(n: int) -> str:
    return f"n_{n:026d}"


def make_note(n: int, *, workspace_id: str = WS, project_id: str = PROJECT, version: int = 1, **fields: object) -> Note:
    base = Note(
        id=note_id(n),
        workspace_id=workspace_id,
        project_id=project_id,
        title=f"Note {n}",
        body=f"body of note {n}",
        version=version,
        created_at=T0,
        updated_at=T0,
        author="key_import",
        write_id=f"w_{n}_{version}",
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def history(note: Note, *versions: int) -> list[Note]:
    """Earlier states of `note` at `versions`, newest first (as list_revisions returns them)."""
    return [
        replace(
            note, version=v, body=f"{note.body} (v{v})", updated_at=ts(v), write_id=f"w_{note.id}_{v}", deleted_at=None
        )
        for v in sorted(versions, reverse=True)
    ]


def insert(store: Store, note: Note) -> Note:
    store.commit(note.workspace_id, [NoteWrite(note, expected_version=None)], revision_cap=50)
    return note


def edit(store: Store, current: Note, *, body: str, minute: int) -> Note:
    new = replace(current, body=body, version=current.version + 1, updated_at=ts(minute), write_id=f"w_edit_{minute}")
    store.commit(current.workspace_id, [NoteWrite(new, current.version, previous=current)], revision_cap=50)
    return new


def feed(store: Store, workspace_id: str = WS, project_id: str = PROJECT) -> list[Note]:
    notes: list[Note] = []
    position: FeedPosition | None = None
    for _ in range(50):
        scan = store.changes_after(workspace_id, project_id, position, horizon=HORIZON, types=[], statuses=[], limit=7)
        notes += scan.notes
        position = scan.position
        if not scan.more:
            return notes
    raise AssertionError("the feed never ended")


def make_project(project_id: str, slug: str, *, workspace_id: str = WS) -> Project:
    return Project(
        id=project_id, workspace_id=workspace_id, slug=slug, created_at=T0, updated_at=T0, summary=f"about {slug}"
    )


# ----- plans ------------------------------------------------------------------------------------------------


def test_set_plan_changes_the_plan_and_revision_cap_of_that_workspace_only(store: Store) -> None:
    alpha = Workspace(id=WS, name="Alpha", created_at=T0)
    beta = Workspace(id=OTHER_WS, name="Beta", created_at=ts(1))
    store.create_workspace(alpha)
    store.create_workspace(beta)

    upgraded = store.set_plan(WS, Plan.TEAM, 200)

    assert upgraded == replace(alpha, plan=Plan.TEAM, revision_cap=200)
    assert store.get_workspace(WS) == upgraded
    assert store.get_workspace(OTHER_WS) == beta
    assert {w.id: w for w in store.list_workspaces()} == {WS: upgraded, OTHER_WS: beta}
    assert store.set_plan(WS, Plan.FREE, 50) == alpha  # and back


def test_set_plan_of_an_unknown_workspace_is_none_and_creates_nothing(store: Store) -> None:
    assert store.set_plan("ws_unknown", Plan.ENTERPRISE, 500) is None
    assert store.get_workspace("ws_unknown") is None
    assert store.list_workspaces() == []


# ----- usage counters ---------------------------------------------------------------------------------------


def test_add_usage_sums_each_counter_per_period(store: Store) -> None:
    store.add_usage(WS, DAY, {"calls:create_note": 1, "tokens:create_note": 120})
    store.add_usage(WS, DAY, {"calls:create_note": 2, "calls:search_notes": 1})
    store.add_usage(WS, "2026-01-06", {"calls:search_notes": 4})
    store.add_usage(WS, "total", {"notes": 3, "bytes": 900})
    store.add_usage(WS, "total", {"notes": -1, "bytes": -300, "revisions": 1})
    store.add_usage(WS, "total", {})  # nothing to add

    assert store.usage(WS, [DAY, "2026-01-06", "2026-01-07", "total"]) == {
        DAY: {"calls:create_note": 3, "tokens:create_note": 120, "calls:search_notes": 1},
        "2026-01-06": {"calls:search_notes": 4},
        "total": {"notes": 2, "bytes": 600, "revisions": 1},
    }


def test_usage_returns_only_the_requested_periods_of_the_workspace(store: Store) -> None:
    store.add_usage(WS, DAY, {"calls:get_note": 2})
    store.add_usage(WS, "total", {"notes": 1})
    store.add_usage(OTHER_WS, DAY, {"calls:get_note": 40})

    assert store.usage(WS, ["total"]) == {"total": {"notes": 1}}
    assert store.usage(WS, [DAY, DAY]) == {DAY: {"calls:get_note": 2}}
    assert store.usage(WS, ["2026-02-01"]) == {}
    assert store.usage(WS, []) == {}
    assert store.usage(OTHER_WS, [DAY, "total"]) == {DAY: {"calls:get_note": 40}}
    assert store.usage("ws_unknown", [DAY, "total"]) == {}


def test_counter_names_are_free_text(store: Store) -> None:
    # Names that are attribute or column names elsewhere, punctuation, non-ASCII: each is just a counter.
    names = ["pk", "sk", "entity", "value", "calls:a#b", "tokens: search notes", "café"]
    store.add_usage(WS, DAY, dict.fromkeys(names, 1))
    store.add_usage(WS, DAY, dict.fromkeys(names, 2))

    assert store.usage(WS, [DAY]) == {DAY: dict.fromkeys(names, 3)}


def test_a_month_of_periods_plus_the_total_is_read_in_one_call(store: Store) -> None:
    days = [f"2026-01-{d:02d}" for d in range(1, 32)]
    for number, day in enumerate(days, start=1):
        store.add_usage(WS, day, {"calls:get_note": number})

    usage = store.usage(WS, [*days, "total"])

    assert usage == {day: {"calls:get_note": number} for number, day in enumerate(days, start=1)}


def test_concurrent_adds_lose_no_increment(store: Store) -> None:
    threads, rounds = 4, 50
    start = threading.Barrier(threads)
    failures: list[BaseException] = []

    def add() -> None:
        try:
            start.wait()
            for _ in range(rounds):
                store.add_usage(WS, DAY, {"calls:remember": 1, "tokens:remember": 3})
        except BaseException as exc:  # reported below
            failures.append(exc)

    workers = [threading.Thread(target=add) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert failures == []
    assert store.usage(WS, [DAY]) == {
        DAY: {"calls:remember": threads * rounds, "tokens:remember": 3 * threads * rounds}
    }


# ----- project renames --------------------------------------------------------------------------------------


def test_a_renamed_project_resolves_by_its_new_slug_only_and_keeps_everything_else(store: Store) -> None:
    project = store.create_project(make_project(PROJECT, "web"))
    first = insert(store, make_note(1, updated_at=ts(1)))
    edit(store, first, body="edited", minute=2)
    insert(store, make_note(2, updated_at=ts(3), status=NoteStatus.DISPUTED))
    key = ApiKey(id="key_scoped", workspace_id=WS, name="ci", secret_hash="hash-1", created_at=T0, project_id=PROJECT)
    store.put_key(key)
    notes_before = store.project_notes(WS, PROJECT, limit=10)
    feed_before = feed(store)
    revisions_before = store.list_revisions(WS, first.id, limit=10)
    conflicted_before = store.conflicted_notes(WS, PROJECT, limit=10)

    renamed = store.rename_project(WS, PROJECT, "shop", ts(5))

    assert renamed == replace(project, slug="shop", updated_at=ts(5))
    assert store.get_project(WS, "shop") == renamed
    assert store.get_project(WS, "web") is None
    assert store.get_project_by_id(WS, PROJECT) == renamed
    assert store.list_projects(WS) == [renamed]
    assert store.project_notes(WS, PROJECT, limit=10) == notes_before
    assert feed(store) == feed_before
    assert store.list_revisions(WS, first.id, limit=10) == revisions_before
    assert store.conflicted_notes(WS, PROJECT, limit=10) == conflicted_before
    assert store.find_key("hash-1") == key
    assert store.list_keys(WS) == [key]
    # The old slug is free again: a new project may take it.
    newcomer = store.create_project(make_project("prj_two", "web"))
    assert newcomer.id == "prj_two"
    assert store.get_project(WS, "web") == newcomer
    assert store.get_project(WS, "shop") == renamed


def test_renaming_onto_a_taken_slug_is_already_exists_and_changes_nothing(store: Store) -> None:
    web = store.create_project(make_project("prj_web", "web"))
    shop = store.create_project(make_project("prj_shop", "shop"))

    with pytest.raises(AlreadyExistsError) as taken:
        store.rename_project(WS, web.id, "shop", ts(5))

    assert taken.value.code == "already_exists"
    assert store.get_project(WS, "web") == web
    assert store.get_project(WS, "shop") == shop
    assert store.get_project_by_id(WS, web.id) == web
    assert store.list_projects(WS) == [shop, web]


def test_renaming_to_the_current_slug_and_retrying_a_rename_both_succeed_unchanged(store: Store) -> None:
    project = store.create_project(make_project(PROJECT, "web"))

    assert store.rename_project(WS, PROJECT, "web", ts(5)) == project  # same slug: nothing written

    renamed = store.rename_project(WS, PROJECT, "shop", ts(6))
    retried = store.rename_project(WS, PROJECT, "shop", ts(7))  # the caller never saw the first answer

    assert retried == renamed == replace(project, slug="shop", updated_at=ts(6))
    assert store.get_project(WS, "shop") == renamed
    assert store.get_project(WS, "web") is None


def test_renaming_an_unknown_project_or_another_workspaces_is_not_found(store: Store) -> None:
    theirs = store.create_project(make_project(PROJECT, "web", workspace_id=OTHER_WS))

    with pytest.raises(NotFoundError):
        store.rename_project(WS, "prj_unknown", "shop", ts(5))
    with pytest.raises(NotFoundError):
        store.rename_project(WS, PROJECT, "shop", ts(5))

    assert store.get_project(OTHER_WS, "web") == theirs
    assert store.get_project(WS, "shop") is None
    assert store.list_projects(WS) == []


def test_a_rename_leaves_the_same_slug_in_another_workspace_alone(store: Store) -> None:
    mine = store.create_project(make_project("prj_mine", "web"))
    theirs = store.create_project(make_project("prj_theirs", "web", workspace_id=OTHER_WS))
    store.create_project(make_project("prj_taken", "shop", workspace_id=OTHER_WS))

    renamed = store.rename_project(WS, mine.id, "shop", ts(5))  # taken in the other workspace only

    assert store.get_project(WS, "shop") == renamed
    assert store.get_project(OTHER_WS, "web") == theirs
    assert store.get_project(OTHER_WS, "shop") is not None
    assert store.get_project(OTHER_WS, "shop") != renamed


def test_a_project_renamed_twice_resolves_only_by_its_last_slug(store: Store) -> None:
    project = store.create_project(make_project(PROJECT, "web"))

    store.rename_project(WS, PROJECT, "shop", ts(5))
    last = store.rename_project(WS, PROJECT, "store", ts(6))

    assert last == replace(project, slug="store", updated_at=ts(6))
    assert [store.get_project(WS, slug) for slug in ("web", "shop", "store")] == [None, None, last]


# ----- imports ----------------------------------------------------------------------------------------------


def exported() -> list[tuple[Note, list[Note]]]:
    """Notes as another store would export them: every lifecycle, pruned history, odd timestamps and content."""
    plain = make_note(1, version=3, updated_at=ts(3), body="Sessions live in Redis.", type=NoteType.DECISION)
    deleted = make_note(2, version=2, updated_at=ts(4), deleted_at=ts(4), body="A deleted note about kafka.")
    replacement = make_note(3, updated_at=ts(5), supersedes=(note_id(4),), body="Postgres replaces MySQL.")
    superseded = make_note(
        4,
        version=2,
        updated_at=ts(5),
        status=NoteStatus.SUPERSEDED,
        superseded_by=(note_id(3),),
        body="MySQL is the database.",
    )
    disputed = make_note(
        5,
        version=7,
        updated_at=ts(2, 500),
        status=NoteStatus.DISPUTED,
        type=NoteType.CONSTRAINT,
        tags=("db", "ops:v2"),
        links=(Link(note_id(1), "depends_on"), Link(note_id(3))),
        importance=5,
        canonical=True,
        author="key_someone",
        write_id="idem-key-77",
        created_at="2025-12-31T23:59:59.999Z",
        body="Unicode survives: café, 東京, 🚀\nand newlines.",
    )
    elsewhere = make_note(6, project_id="prj_other", updated_at=ts(1), body="Another project's note.")
    return [
        (plain, history(plain, 1, 2)),
        (deleted, history(deleted, 1)),
        (replacement, []),
        (superseded, history(superseded, 1)),
        (disputed, history(disputed, 5, 6)),  # versions 1-4 were pruned before the export
        (elsewhere, []),
    ]


def test_imported_notes_read_back_exactly_with_their_revisions(store: Store) -> None:
    items = exported()

    assert store.import_notes(WS, items) == len(items)

    for note, revisions in items:
        assert store.get_note(WS, note.id) == note
        assert store.list_revisions(WS, note.id, limit=50) == revisions
        for revision in revisions:
            assert store.get_revision(WS, note.id, revision.version) == revision
    notes = {note.id: note for note, _ in items}
    assert store.get_notes(WS, list(notes)) == notes
    deleted, superseded = store.get_note(WS, note_id(2)), store.get_note(WS, note_id(4))
    assert deleted is not None and deleted.deleted_at == ts(4)
    assert superseded is not None and (superseded.status, superseded.superseded_by) == (
        NoteStatus.SUPERSEDED,
        (note_id(3),),
    )


def test_imported_notes_reach_every_index(store: Store) -> None:
    items = exported()
    notes = [note for note, _ in items if note.project_id == PROJECT]
    store.import_notes(WS, items)

    in_feed_order = sorted(notes, key=lambda note: (note.updated_at, note.id))
    assert feed(store) == in_feed_order
    assert feed(store, project_id="prj_other") == [items[-1][0]]
    assert store.project_notes(WS, PROJECT, limit=10) == in_feed_order[::-1]
    live = [note for note in in_feed_order[::-1] if not note.is_deleted]
    assert store.notes_by_type(WS, PROJECT, list(NoteType), list(NoteStatus), limit=10) == live
    assert store.notes_by_type(WS, PROJECT, [NoteType.CONSTRAINT], [NoteStatus.DISPUTED], limit=10) == [items[4][0]]
    assert store.conflicted_notes(WS, PROJECT, limit=10) == [items[4][0]]
    if isinstance(store, SqliteStore):
        index = SqliteFullTextIndex(store)
        assert [hit.note.id for hit in index.search(WS, PROJECT, "redis", SearchFilters(), 10)] == [note_id(1)]
        assert [hit.note.id for hit in index.search(WS, PROJECT, "東京", SearchFilters(), 10)] == [note_id(5)]
        assert index.search(WS, PROJECT, "kafka", SearchFilters(), 10) == []  # deleted notes are not found


def test_an_imported_note_can_be_edited_from_its_imported_version(store: Store) -> None:
    (note, revisions), *_ = exported()
    store.import_notes(WS, [(note, revisions)])

    edited = edit(store, note, body="Sessions moved to Valkey.", minute=30)

    assert store.get_note(WS, note.id) == edited
    assert store.list_revisions(WS, note.id, limit=50) == [note, *revisions]


def test_importing_again_writes_nothing_and_existing_notes_are_kept_with_their_history(store: Store) -> None:
    items = exported()
    assert store.import_notes(WS, items[:3]) == 3
    kept = insert(store, make_note(4, body="A note made here, not imported."))

    assert store.import_notes(WS, items) == 2  # the first three were imported, note 4 exists already
    assert store.import_notes(WS, items) == 0

    assert store.get_note(WS, note_id(4)) == kept
    assert store.list_revisions(WS, note_id(4), limit=50) == []  # the skipped note's revisions are skipped too
    for note, revisions in items:
        if note.id != kept.id:
            assert store.get_note(WS, note.id) == note
            assert store.list_revisions(WS, note.id, limit=50) == revisions
    assert len(feed(store)) == 5


def test_a_note_given_twice_in_one_import_is_written_once(store: Store) -> None:
    first = make_note(1, body="first copy")
    second = make_note(1, body="second copy")

    assert store.import_notes(WS, [(first, []), (second, history(second, 1))]) == 1
    assert store.import_notes(WS, []) == 0

    assert store.get_note(WS, first.id) == first
    assert store.list_revisions(WS, first.id, limit=10) == []


def test_imports_stay_in_their_workspace(store: Store) -> None:
    items = exported()
    store.import_notes(WS, items)

    assert store.get_notes(OTHER_WS, [note.id for note, _ in items]) == {}
    assert feed(store, OTHER_WS) == []
    assert store.list_revisions(OTHER_WS, note_id(1), limit=10) == []

    theirs = [
        (replace(note, workspace_id=OTHER_WS), [replace(r, workspace_id=OTHER_WS) for r in revisions])
        for note, revisions in items
    ]
    assert store.import_notes(OTHER_WS, theirs) == len(items)  # the same ids, another workspace: all new
    assert store.get_note(OTHER_WS, note_id(1)) == theirs[0][0]
    assert store.get_note(WS, note_id(1)) == items[0][0]
    with pytest.raises(ValueError, match="workspace"):
        store.import_notes(WS, theirs)


# ----- DynamoDB only ----------------------------------------------------------------------------------------


@pytest.fixture
def dynamo() -> Iterator[DynamoDBStore]:
    with dynamodb_store() as dynamo_store:
        yield dynamo_store


def test_a_rename_whose_reply_is_lost_is_retried_into_success(dynamo: DynamoDBStore) -> None:
    project = dynamo.create_project(make_project(PROJECT, "web"))
    sent = inject_faults(
        dynamo.client, lambda op, attempt: "commit_then_timeout" if (op, attempt) == (WRITE, 1) else None
    )

    renamed = dynamo.rename_project(WS, PROJECT, "shop", ts(5))

    assert sent[WRITE] == 2  # botocore resent it: every condition then failed on the rename already applied
    assert renamed == replace(project, slug="shop", updated_at=ts(5))
    assert dynamo.get_project(WS, "shop") == renamed
    assert dynamo.get_project(WS, "web") is None
    assert dynamo.list_projects(WS) == [renamed]
    assert dynamo.rename_project(WS, PROJECT, "shop", ts(6)) == renamed


def test_a_rename_applied_before_every_retry_timed_out_is_confirmed_by_reading_it_back(dynamo: DynamoDBStore) -> None:
    project = dynamo.create_project(make_project(PROJECT, "web"))

    def plan(operation: str, attempt: int) -> Any:
        if operation != WRITE:
            return None
        return "commit_then_timeout" if attempt == 1 else "timeout"

    inject_faults(dynamo.client, plan)

    assert dynamo.rename_project(WS, PROJECT, "shop", ts(5)) == replace(project, slug="shop", updated_at=ts(5))
    assert dynamo.get_project(WS, "web") is None


def test_a_rename_that_never_arrived_is_unavailable_and_changes_nothing(dynamo: DynamoDBStore) -> None:
    project = dynamo.create_project(make_project(PROJECT, "web"))
    inject_faults(dynamo.client, lambda op, attempt: "timeout" if op == WRITE else None)

    with pytest.raises(UnavailableError):
        dynamo.rename_project(WS, PROJECT, "shop", ts(5))

    assert dynamo.get_project(WS, "web") == project
    assert dynamo.get_project(WS, "shop") is None


def test_a_rename_cancelled_by_a_concurrent_transaction_is_retried(dynamo: DynamoDBStore) -> None:
    dynamo.create_project(make_project(PROJECT, "web"))
    sent = inject_faults(
        dynamo.client, lambda op, attempt: transaction_conflict() if (op, attempt) == (WRITE, 1) else None
    )

    renamed = dynamo.rename_project(WS, PROJECT, "shop", ts(5))

    assert sent[WRITE] == 2
    assert dynamo.get_project(WS, "shop") == renamed
    assert dynamo.get_project(WS, "web") is None


def test_add_usage_is_one_update_and_usage_one_batch_read(dynamo: DynamoDBStore) -> None:
    calls = count_operations(dynamo.client)
    counters = {f"calls:tool_{n}": n for n in range(1, 40)}

    dynamo.add_usage(WS, DAY, counters)
    usage = dynamo.usage(WS, [f"2026-01-{d:02d}" for d in range(1, 32)] + ["total"])

    assert usage == {DAY: counters}
    assert dict(calls) == {"UpdateItem": 1, "BatchGetItem": 1}


def imported_batch(count: int, revisions: int) -> list[tuple[Note, list[Note]]]:
    notes = [make_note(n, version=revisions + 1, updated_at=ts(n % 60, n)) for n in range(1, count + 1)]
    return [(note, history(note, *range(1, revisions + 1))) for note in notes]


def test_an_import_reads_ids_in_batches_of_100_and_writes_items_in_batches_of_25(dynamo: DynamoDBStore) -> None:
    items = imported_batch(130, 2)  # 130 notes, 260 revisions
    calls = count_operations(dynamo.client)

    assert dynamo.import_notes(WS, items) == 130

    # Per 100 ids: one BatchGetItem, then the revisions (8 + 3 requests), then the notes in commits of up to 49
    # with their change records (3 + 1), each after a read of the project's feed head (the first also asks GSI1
    # whether the project has notes from before the commit sequence: it makes the head).
    assert dict(calls) == {
        "BatchGetItem": 2, "BatchWriteItem": 11, "TransactWriteItems": 4, "GetItem": 4, "Query": 1
    }  # fmt: skip
    calls.clear()
    assert dynamo.import_notes(WS, items) == 0
    assert dict(calls) == {"BatchGetItem": 2}
    assert dynamo.get_notes(WS, [note.id for note, _ in items]) == {note.id: note for note, _ in items}


def nothing_processed(request: Any) -> AWSResponse:
    """A BatchWriteItem reply that processed nothing: every item comes back as unprocessed."""
    asked = json.loads(request.body)["RequestItems"]
    return error_reply("", status=200, UnprocessedItems=asked)(request)


def test_unprocessed_import_items_are_sent_again(dynamo: DynamoDBStore) -> None:
    items = imported_batch(3, 1)
    sent = inject_faults(
        dynamo.client, lambda op, attempt: nothing_processed if op == "BatchWriteItem" and attempt <= 2 else None
    )

    assert dynamo.import_notes(WS, items) == 3

    assert sent["BatchWriteItem"] == 3  # revisions: refused twice, then written (the notes go in a commit)
    for note, revisions in items:
        assert dynamo.get_note(WS, note.id) == note
        assert dynamo.list_revisions(WS, note.id, limit=10) == revisions


def test_an_import_interrupted_midway_is_unavailable_and_rerunning_it_completes_every_history(
    dynamo: DynamoDBStore,
) -> None:
    items = imported_batch(3, 2)
    refusing = True

    def plan(operation: str, attempt: int) -> Any:
        # The revisions are written; the notes' commit is throttled until the outage ends.
        return throttled() if refusing and operation == "TransactWriteItems" else None

    inject_faults(dynamo.client, plan)

    with pytest.raises(UnavailableError):
        dynamo.import_notes(WS, items)

    assert dynamo.get_notes(WS, [note.id for note, _ in items]) == {}  # no note without its history
    refusing = False
    assert dynamo.import_notes(WS, items) == 3
    for note, revisions in items:
        assert dynamo.get_note(WS, note.id) == note
        assert dynamo.list_revisions(WS, note.id, limit=10) == revisions


def test_an_import_with_one_oversize_item_writes_nothing(dynamo: DynamoDBStore) -> None:
    items = imported_batch(3, 1)
    note, revisions = items[1]
    overhead = item_size(note_to_item(replace(note, body="")))
    items[1] = (replace(note, body="x" * (MAX_ITEM_BYTES + 1 - overhead)), revisions)
    calls = count_operations(dynamo.client)

    with pytest.raises(TooLargeError):
        dynamo.import_notes(WS, items)

    assert dict(calls) == {}
    assert dynamo.get_notes(WS, [note.id for note, _ in items]) == {}


def test_no_housekeeping_operation_scans_the_table(dynamo: DynamoDBStore) -> None:
    calls = count_operations(dynamo.client)
    dynamo.create_workspace(Workspace(id=WS, name="Alpha", created_at=T0))
    dynamo.set_plan(WS, Plan.TEAM, 100)
    dynamo.add_usage(WS, DAY, {"calls:get_note": 1})
    dynamo.usage(WS, [DAY, "total"])
    dynamo.create_project(make_project(PROJECT, "web"))
    dynamo.rename_project(WS, PROJECT, "shop", ts(5))
    dynamo.import_notes(WS, exported())

    assert "Scan" not in calls
    assert {"TransactWriteItems", "UpdateItem", "BatchGetItem", "BatchWriteItem", "GetItem"} <= set(calls)
