"""DynamoDB store under faults moto never produces on its own: lost replies, throttling, transaction conflicts,
oversize items; and the promise that nothing ever scans the table."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from notewell.adapters.dynamodb import (
    FEED_PAGE_BUDGET,
    GSI1,
    MAX_ITEM_BYTES,
    DynamoDBStore,
    item_size,
    note_to_item,
)
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.errors import OutcomeUnknownError, TooLargeError, UnavailableError, VersionConflictError
from notewell.domain.model import (
    ChangeScan,
    FeedPosition,
    IdempotencyRecord,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Project,
    Workspace,
)
from tests.support.dynamo import (
    Fault,
    FaultPlan,
    count_operations,
    dynamodb_store,
    error_reply,
    inject_faults,
    throttled,
    transaction_conflict,
)

WS = "ws_faults"
PROJECT = "prj_faults"
T0 = "2026-01-05T09:00:00.000Z"
WRITE = "TransactWriteItems"


@pytest.fixture
def store() -> Iterator[DynamoDBStore]:
    with dynamodb_store() as dynamo_store:
        yield dynamo_store


def ts(second: int) -> str:
    return f"2026-01-05T09:00:{second:02d}.000Z"


def make_note(n: int, *, body: str = "body") -> Note:
    return Note(
        id=f"n_{n:026d}",
        workspace_id=WS,
        project_id=PROJECT,
        title=f"Note {n}",
        body=body,
        version=1,
        created_at=T0,
        updated_at=T0,
        author="key_test",
        write_id=f"w_{n}_1",
    )


def insert(store: DynamoDBStore, note: Note) -> Note:
    store.commit(WS, [NoteWrite(note, expected_version=None)], revision_cap=50)
    return note


def edited(current: Note, body: str) -> Note:
    version = current.version + 1
    return replace(current, body=body, version=version, updated_at=ts(version), write_id=f"w_{current.id}_{version}")


def edit_write(current: Note, body: str) -> NoteWrite:
    return NoteWrite(edited(current, body), expected_version=current.version, previous=current)


def on(operation: str, *attempts: int, fault: Fault) -> FaultPlan:
    """A plan that applies `fault` to the given attempts of one operation and lets everything else through."""
    return lambda op, attempt: fault if op == operation and attempt in attempts else None


def revisions(store: DynamoDBStore, note: Note) -> list[tuple[int, str]]:
    return [(r.version, r.body) for r in store.list_revisions(WS, note.id, limit=100)]


# ----- (a) a reply lost after the commit: the writeId rule ---------------------------------------------------


def test_an_edit_whose_reply_is_lost_is_retried_into_success_with_one_revision(store: DynamoDBStore) -> None:
    base = insert(store, make_note(1, body="v1"))
    write = edit_write(base, "v2")
    sent = inject_faults(store.client, on(WRITE, 1, fault="commit_then_timeout"))

    store.commit(WS, [write], revision_cap=50)  # botocore resends; the resend fails its own condition

    assert sent[WRITE] == 2
    assert store.get_note(WS, base.id) == write.note
    assert revisions(store, base) == [(1, "v1")]


def test_a_create_whose_reply_is_lost_succeeds_with_its_idempotency_record(store: DynamoDBStore) -> None:
    note = make_note(2, body="created once")
    record = IdempotencyRecord(
        workspace_id=WS,
        key="key-1",
        request_hash="h",
        result={"id": note.id, "version": 1},
        recorded_at=T0,
        expires_at=ts(59),
    )
    sent = inject_faults(store.client, on(WRITE, 1, fault="commit_then_timeout"))

    store.commit(WS, [NoteWrite(note, expected_version=None)], revision_cap=50, idempotency=record)

    assert sent[WRITE] == 2
    assert store.get_note(WS, note.id) == note
    assert store.get_idempotency(WS, "key-1") == record


def test_a_commit_applied_before_every_retry_timed_out_is_confirmed_by_reading_it_back(
    store: DynamoDBStore,
) -> None:
    base = insert(store, make_note(3, body="v1"))
    write = edit_write(base, "v2")

    def plan(operation: str, attempt: int) -> Fault | None:
        if operation != WRITE:
            return None
        return "commit_then_timeout" if attempt == 1 else "timeout"

    sent = inject_faults(store.client, plan)

    store.commit(WS, [write], revision_cap=50)

    assert sent[WRITE] == 3
    assert store.get_note(WS, base.id) == write.note
    assert revisions(store, base) == [(1, "v1")]


def test_a_commit_that_never_arrived_is_unavailable_and_writes_nothing(store: DynamoDBStore) -> None:
    base = insert(store, make_note(4, body="v1"))
    inject_faults(store.client, on(WRITE, 1, 2, 3, fault="timeout"))

    with pytest.raises(UnavailableError) as unavailable:
        store.commit(WS, [edit_write(base, "v2")], revision_cap=50)

    assert unavailable.value.code == "unavailable"
    assert store.get_note(WS, base.id) == base
    assert revisions(store, base) == []


def lost_reply_then_throttled_read_back() -> FaultPlan:
    """The commit lands but every reply is lost (botocore's 3 attempts), then the 3 attempts of the GetItem that
    would settle it are throttled; later requests go through."""
    landed, reads_after = False, 0

    def plan(operation: str, attempt: int) -> Fault | None:
        nonlocal landed, reads_after
        if operation == WRITE and not landed:
            landed = attempt == 3
            return "commit_then_timeout" if attempt == 1 else "timeout"
        if operation == "GetItem" and landed:
            reads_after += 1
            return throttled() if reads_after <= 3 else None
        return None

    return plan


def test_a_lost_reply_whose_read_back_is_throttled_is_an_unknown_outcome_not_busy(store: DynamoDBStore) -> None:
    base = insert(store, make_note(30, body="v1"))
    write = edit_write(base, "v2")
    inject_faults(store.client, lost_reply_then_throttled_read_back())

    with pytest.raises(OutcomeUnknownError) as unknown:
        store.commit(WS, [write], revision_cap=50)

    assert (unknown.value.status, unknown.value.code) == (503, "outcome_unknown")
    assert "may have been applied" in unknown.value.message and "idempotencyKey" in unknown.value.message
    assert not isinstance(unknown.value, UnavailableError)  # never the plain "busy, retry"
    assert store.get_note(WS, base.id) == write.note  # it was applied: "unknown" was the honest answer


def test_after_an_unknown_outcome_a_retry_with_the_same_idempotency_key_returns_the_note_written_once(
    store: DynamoDBStore, tmp_path: Path
) -> None:
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    first = services.notes.create(me, "api", title="Existing", body="The project exists already.").note
    inject_faults(store.client, lost_reply_then_throttled_read_back())

    def create() -> Note:
        return services.notes.create(me, "api", title="Deploys", body="Use SAM.", idempotency_key="deploy-1").note

    with pytest.raises(OutcomeUnknownError):
        create()
    retried = create()

    assert (retried.title, retried.version) == ("Deploys", 1)
    stored = store.project_notes(me.workspace_id, first.project_id, limit=10)
    assert sorted(note.title for note in stored) == ["Deploys", "Existing"]


# ----- (b) throttling ----------------------------------------------------------------------------------------


def test_throttling_within_the_retry_budget_succeeds_without_duplicates(store: DynamoDBStore) -> None:
    base = insert(store, make_note(5, body="v1"))
    write = edit_write(base, "v2")
    sent = inject_faults(store.client, on(WRITE, 1, 2, fault=throttled()))

    store.commit(WS, [write], revision_cap=50)

    assert sent[WRITE] == 3
    assert store.get_note(WS, base.id) == write.note
    assert revisions(store, base) == [(1, "v1")]


def test_throttling_beyond_the_retry_budget_is_unavailable_with_a_retry_hint_and_writes_nothing(
    store: DynamoDBStore,
) -> None:
    base = insert(store, make_note(6, body="v1"))
    sent = inject_faults(store.client, on(WRITE, 1, 2, 3, fault=throttled()))

    with pytest.raises(UnavailableError) as unavailable:
        store.commit(WS, [edit_write(base, "v2")], revision_cap=50)

    assert sent[WRITE] == 3  # botocore's budget: 3 attempts in all
    assert unavailable.value.status == 503
    assert unavailable.value.details() == {"retryAfter": unavailable.value.retry_after}
    assert unavailable.value.retry_after >= 1
    assert store.get_note(WS, base.id) == base
    assert revisions(store, base) == []


def test_throttled_reads_beyond_the_retry_budget_are_unavailable(store: DynamoDBStore) -> None:
    note = insert(store, make_note(7))
    inject_faults(store.client, on("GetItem", 1, 2, 3, fault=throttled()))

    with pytest.raises(UnavailableError):
        store.get_note(WS, note.id)

    assert store.get_note(WS, note.id) == note  # the fourth GetItem goes through


def test_server_errors_on_reads_are_retried_by_botocore(store: DynamoDBStore) -> None:
    note = insert(store, make_note(8))
    sent = inject_faults(store.client, on("GetItem", 1, fault=error_reply("InternalServerError", status=500)))

    assert store.get_note(WS, note.id) == note
    assert sent["GetItem"] == 2


def test_unprocessed_batch_keys_are_fetched_again(store: DynamoDBStore) -> None:
    first, second = insert(store, make_note(9)), insert(store, make_note(10))

    def nothing_processed(request: Any) -> AWSResponse:
        asked = json.loads(request.body)["RequestItems"]
        body = {"Responses": {name: [] for name in asked}, "UnprocessedKeys": asked}
        return error_reply("", status=200, **body)(request)

    sent = inject_faults(store.client, on("BatchGetItem", 1, fault=nothing_processed))

    assert store.get_notes(WS, [first.id, second.id]) == {first.id: first, second.id: second}
    assert sent["BatchGetItem"] == 2


# ----- (c) transaction conflicts -----------------------------------------------------------------------------


def test_a_transaction_conflict_is_retried_then_succeeds(store: DynamoDBStore) -> None:
    base = insert(store, make_note(11, body="v1"))
    write = edit_write(base, "v2")
    sent = inject_faults(store.client, on(WRITE, 1, fault=transaction_conflict()))

    store.commit(WS, [write], revision_cap=50)

    assert sent[WRITE] == 2  # botocore does not retry a cancelled transaction; the store does
    assert store.get_note(WS, base.id) == write.note
    assert revisions(store, base) == [(1, "v1")]


def test_transaction_conflicts_that_persist_end_in_a_version_conflict(store: DynamoDBStore) -> None:
    base = insert(store, make_note(12, body="v1"))
    sent = inject_faults(store.client, lambda op, attempt: transaction_conflict() if op == WRITE else None)

    with pytest.raises(VersionConflictError) as conflict:
        store.commit(WS, [edit_write(base, "v2")], revision_cap=50)

    assert sent[WRITE] == 3
    assert (conflict.value.note_id, conflict.value.expected, conflict.value.current) == (base.id, 1, 1)
    assert store.get_note(WS, base.id) == base


def test_transaction_conflicts_that_persist_on_a_create_are_busy_not_a_version_conflict(store: DynamoDBStore) -> None:
    note = make_note(31, body="created under contention")
    sent = inject_faults(store.client, lambda op, attempt: transaction_conflict() if op == WRITE else None)

    with pytest.raises(UnavailableError) as busy:
        store.commit(WS, [NoteWrite(note, expected_version=None)], revision_cap=50)

    assert sent[WRITE] == 3
    assert (busy.value.status, busy.value.code) == (503, "unavailable") and busy.value.retry_after >= 1
    assert "v0" not in busy.value.message and "retry" in busy.value.message
    assert store.get_note(WS, note.id) is None


# ----- (d) all or nothing ------------------------------------------------------------------------------------


def test_a_stale_version_in_a_two_note_commit_writes_neither_note(store: DynamoDBStore) -> None:
    stale = insert(store, make_note(13, body="stale v1"))
    moved_on = edited(stale, "moved on")
    store.commit(WS, [NoteWrite(moved_on, expected_version=1, previous=stale)], revision_cap=50)
    fresh = insert(store, make_note(14, body="fresh v1"))
    calls = count_operations(store.client)

    with pytest.raises(VersionConflictError) as conflict:
        store.commit(WS, [edit_write(fresh, "fresh v2"), edit_write(stale, "stale v2")], revision_cap=50)

    assert calls[WRITE] == 1  # one transaction, refused as a whole
    assert (conflict.value.note_id, conflict.value.expected, conflict.value.current) == (stale.id, 1, 2)
    assert store.get_notes(WS, [stale.id, fresh.id]) == {stale.id: moved_on, fresh.id: fresh}
    assert revisions(store, fresh) == []
    assert revisions(store, stale) == [(1, "stale v1")]


def test_another_writers_edit_with_the_same_write_id_is_still_a_conflict(store: DynamoDBStore) -> None:
    base = insert(store, make_note(15, body="v1"))
    theirs = edit_write(base, "theirs")
    store.commit(WS, [theirs], revision_cap=50)
    mine = NoteWrite(replace(theirs.note, body="mine"), expected_version=1, previous=base)  # same writeId

    with pytest.raises(VersionConflictError):
        store.commit(WS, [mine], revision_cap=50)

    assert store.get_note(WS, base.id) == theirs.note


# ----- (e) size limits ---------------------------------------------------------------------------------------


def body_for_item_bytes(target: int) -> str:
    """A body that makes the stored note item `target` bytes long."""
    overhead = item_size(note_to_item(make_note(16, body="")))
    return "x" * (target - overhead)


def test_a_note_over_the_item_limit_is_refused_before_sending_and_nothing_is_written(store: DynamoDBStore) -> None:
    note = make_note(16, body=body_for_item_bytes(MAX_ITEM_BYTES + 1))
    calls = count_operations(store.client)

    with pytest.raises(TooLargeError) as too_large:
        store.commit(WS, [NoteWrite(note, expected_version=None)], revision_cap=50)

    assert too_large.value.status == 413
    assert calls[WRITE] == 0
    assert store.get_note(WS, note.id) is None


def test_an_item_refused_by_dynamodb_for_its_size_is_too_large_and_nothing_is_written(store: DynamoDBStore) -> None:
    # Under our 409,600-byte estimate, over moto's 405,000: the refusal comes from the service.
    base = insert(store, make_note(16, body="v1"))
    write = edit_write(base, body_for_item_bytes(407_000))
    calls = count_operations(store.client)

    with pytest.raises(TooLargeError):
        store.commit(WS, [write], revision_cap=50)

    assert calls[WRITE] == 1
    assert store.get_note(WS, base.id) == base
    assert revisions(store, base) == []


def test_a_change_over_the_transaction_size_limit_is_refused_whole(store: DynamoDBStore) -> None:
    notes = [make_note(100 + n, body=body_for_item_bytes(300_000)) for n in range(14)]  # 4.2 MB together

    with pytest.raises(TooLargeError):
        store.commit(WS, [NoteWrite(note, expected_version=None) for note in notes], revision_cap=50)

    assert store.get_notes(WS, [note.id for note in notes]) == {}


# ----- (f) no Scan -------------------------------------------------------------------------------------------


def test_no_store_operation_scans_the_table(store: DynamoDBStore) -> None:
    calls = count_operations(store.client)
    store.create_workspace(Workspace(id=WS, name="Faults", created_at=T0))
    store.get_workspace(WS)
    store.list_workspaces()
    project = store.create_project(Project(id=PROJECT, workspace_id=WS, slug="web", created_at=T0, updated_at=T0))
    store.create_project(Project(id="prj_other", workspace_id=WS, slug="web", created_at=T0, updated_at=T0))
    store.get_project(WS, "web")
    store.save_project(replace(project, summary="A shop", updated_at=ts(1)))
    store.list_projects(WS)
    first = insert(store, make_note(20, body="v1"))
    second = edited(first, "v2")
    store.commit(WS, [NoteWrite(second, expected_version=1, previous=first)], revision_cap=1)
    store.commit(WS, [edit_write(second, "v3")], revision_cap=1)
    store.get_note(WS, first.id)
    store.get_notes(WS, [first.id, make_note(21).id])
    store.list_revisions(WS, first.id, limit=5)
    store.list_revisions(WS, first.id, limit=5, before_version=3)
    store.get_revision(WS, first.id, 2)
    store.get_idempotency(WS, "absent")
    store.project_notes(WS, PROJECT, limit=5)
    store.notes_by_type(WS, PROJECT, [NoteType.NOTE, NoteType.DECISION], [NoteStatus.CURRENT], limit=5)
    store.conflicted_notes(WS, PROJECT, limit=5)
    store.changes_after(WS, PROJECT, None, horizon=ts(59), types=[], statuses=[], limit=5)
    store.changes_after(
        WS, PROJECT, FeedPosition(T0, ""), horizon=ts(59), types=[NoteType.NOTE], statuses=[NoteStatus.CURRENT], limit=5
    )

    assert "Scan" not in calls
    assert {"TransactWriteItems", "GetItem", "BatchGetItem", "Query", "UpdateItem"} <= set(calls)


# ----- (g) index reads cost what their arguments say, not what the project holds ----------------------------

TYPES = (NoteType.DECISION, NoteType.CONSTRAINT, NoteType.FACT)
SUPERSEDED = NoteStatus.SUPERSEDED
STATUSES = (NoteStatus.CURRENT, NoteStatus.HISTORICAL, NoteStatus.DISPUTED, SUPERSEDED)


def varied_note(n: int) -> Note:
    """Note n of a project mixing types and statuses; every fifth is an unfinished supersession, every ninth deleted."""
    updated_at = f"2026-01-05T09:{n // 60:02d}:{n % 60:02d}.000Z"
    return replace(
        make_note(n),
        type=TYPES[n % len(TYPES)],
        status=STATUSES[n // len(TYPES) % len(STATUSES)],
        superseded_by=(make_note(0).id,) if n % 5 == 0 else (),
        deleted_at=updated_at if n % 9 == 0 else None,
        updated_at=updated_at,
    )


def add_notes(store: DynamoDBStore, numbers: range) -> list[Note]:
    notes = [varied_note(n) for n in numbers]
    for start in range(0, len(notes), 25):
        writes = [NoteWrite(note, expected_version=None) for note in notes[start : start + 25]]
        store.commit(WS, writes, revision_cap=50)
    return notes


def newest(notes: list[Note], limit: int) -> list[Note]:
    return sorted(notes, key=lambda note: (note.updated_at, note.id), reverse=True)[:limit]


def test_notes_by_type_costs_one_query_per_pair_and_conflicted_notes_one_whatever_the_project_size(
    store: DynamoDBStore,
) -> None:
    types, statuses = [NoteType.DECISION, NoteType.CONSTRAINT], [*STATUSES[:3]]
    calls = count_operations(store.client)
    asked: list[tuple[str, int]] = []  # (index, Limit) of each Query

    def record_query(params: dict[str, Any], **kwargs: Any) -> None:
        asked.append((params.get("IndexName", ""), params.get("Limit", 0)))

    store.client.meta.events.register("provide-client-params.dynamodb.Query", record_query)
    notes: list[Note] = []
    for numbers in (range(1, 31), range(31, 121)):  # 30 notes, then 120
        notes += add_notes(store, numbers)
        live = [note for note in notes if not note.is_deleted]
        for limit in (5, 200):
            before = collections.Counter(calls)
            asked.clear()
            by_type = store.notes_by_type(WS, PROJECT, types, statuses, limit=limit)
            assert dict(calls - before) == {"Query": 6}
            assert asked == [("GSI2", limit)] * 6  # each pair's Query reads at most `limit` items
            assert by_type == newest([n for n in live if n.type in types and n.status in statuses], limit)

            before = collections.Counter(calls)
            asked.clear()
            conflicted = store.conflicted_notes(WS, PROJECT, limit=limit)
            assert dict(calls - before) == {"Query": 1}
            assert asked == [("GSI3", limit)]
            attention = [
                n for n in live if n.status == NoteStatus.DISPUTED or (n.superseded_by and n.status != SUPERSEDED)
            ]
            assert conflicted == newest(attention, limit)

    assert len(notes) == 120
    assert "Scan" not in calls


Filters = tuple[list[NoteType], list[NoteStatus]]


def oldest(notes: list[Note], limit: int) -> list[Note]:
    return sorted(notes, key=lambda note: (note.updated_at, note.id))[:limit]


def at(notes: list[Note], index: int) -> FeedPosition:
    """The feed position of the notes' `index`-th note, oldest first."""
    note = oldest(notes, len(notes))[index]
    return FeedPosition(note.updated_at, note.id)


def test_a_change_feed_page_costs_a_bounded_number_of_queries_whatever_the_project_size(store: DynamoDBStore) -> None:
    calls = count_operations(store.client)
    asked: list[tuple[str, int, bool]] = []  # (index, Limit, whether a FilterExpression was sent) of each Query

    def record_query(params: dict[str, Any], **kwargs: Any) -> None:
        asked.append((params.get("IndexName", ""), params.get("Limit", 0), "FilterExpression" in params))

    def changes(
        types: list[NoteType],
        statuses: list[NoteStatus],
        after: FeedPosition | None = None,
        *,
        horizon: str = "2026-01-05T10:00:00.000Z",  # after every note
    ) -> tuple[ChangeScan, int]:
        before = collections.Counter(calls)
        asked.clear()
        scan = store.changes_after(WS, PROJECT, after, horizon=horizon, types=types, statuses=statuses, limit=10)
        spent = calls - before
        assert set(spent) == {"Query"}
        assert spent["Query"] == len(asked) <= FEED_PAGE_BUDGET
        assert all(index == GSI1 and 0 < limit <= 100 and not filtered for index, limit, filtered in asked)
        return scan, spent["Query"]

    store.client.meta.events.register("provide-client-params.dynamodb.Query", record_query)
    notes: list[Note] = []
    rare_queries: list[int] = []
    rare: Filters = ([NoteType.DECISION], [NoteStatus.CURRENT])  # one note in twelve (varied_note)
    absent: Filters = ([NoteType.TASK], [])  # no note at all
    for numbers in (range(1, 21), range(21, 151), range(151, 301)):  # 20 notes, then 150, then 300
        notes += add_notes(store, numbers)

        scan, queries = changes([], [])
        assert queries == 1 and asked[0][1] == 11  # `limit` + 1 items: the extra one tells `more`
        assert (scan.notes, scan.more) == (oldest(notes, 10), True)

        scan, queries = changes(*rare)  # as many pages as it takes to find 10 matches, within the budget
        rare_queries.append(queries)
        matching = [note for note in notes if note.type in rare[0] and note.status in rare[1]]
        assert scan.notes == oldest(matching, 10)

        # The first note past the horizon ends the read: everything after it is newer still.
        scan, queries = changes(*absent, horizon=varied_note(5).updated_at)
        assert (scan.notes, scan.more, scan.position, queries) == ([], False, at(notes, 4), 1)

        scan, queries = changes(*absent)
        assert scan.notes == []
        if len(notes) < 200:  # pages of 25 items: the whole project fits in the budget
            assert (scan.more, scan.position) == (False, at(notes, -1))
        else:  # the budget is spent: the next call resumes after the last note examined, never before it
            assert queries == FEED_PAGE_BUDGET
            assert (scan.more, scan.position) == (True, at(oldest(notes, 200), -1))
            rest, rest_queries = changes(*absent, after=scan.position)
            assert (rest.notes, rest.more, rest.position) == ([], False, at(notes, -1))
            assert rest_queries <= 5  # 100 items left, in pages of 25 (and maybe one empty page at the end)

    assert rare_queries[1] == rare_queries[2]  # where the matches lie decides, not how many notes follow them
    assert "Scan" not in calls
