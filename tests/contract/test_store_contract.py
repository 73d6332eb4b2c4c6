"""The Store port's contract: every store (SQLite, DynamoDB) must pass these unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from notewell.domain.errors import VersionConflictError
from notewell.domain.model import (
    ApiKey,
    ChangeScan,
    FeedPosition,
    IdempotencyRecord,
    Link,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Plan,
    Project,
    Workspace,
)
from notewell.ports import IdempotencyKeyTakenError, Store

WS = "ws_alpha"
OTHER_WS = "ws_beta"
PROJECT = "prj_one"
T0 = "2026-01-05T09:00:00.000Z"


def ts(minute: int, millis: int = 0) -> str:
    return f"2026-01-05T09:{minute:02d}:00.{millis:03d}Z"


def note_id(n: int) -> str:
    return f"n_{n:026d}"


def make_note(
    n: int,
    *,
    workspace_id: str = WS,
    project_id: str = PROJECT,
    version: int = 1,
    body: str = "body",
    updated_at: str = T0,
    **fields: object,
) -> Note:
    return Note(
        id=note_id(n),
        workspace_id=workspace_id,
        project_id=project_id,
        title=f"Note {n}",
        body=body,
        version=version,
        created_at=T0,
        updated_at=updated_at,
        author="key_test",
        write_id=f"w_{n}_{version}",
        **fields,  # type: ignore[arg-type]
    )


def insert(store: Store, note: Note, *, revision_cap: int = 50) -> Note:
    store.commit(note.workspace_id, [NoteWrite(note, expected_version=None)], revision_cap=revision_cap)
    return note


def edit(store: Store, current: Note, *, body: str, revision_cap: int = 50, minute: int = 1) -> Note:
    new = replace(
        current,
        body=body,
        version=current.version + 1,
        updated_at=ts(minute, current.version),
        write_id=f"w_{current.id}_{current.version + 1}",
    )
    store.commit(
        current.workspace_id,
        [NoteWrite(new, expected_version=current.version, previous=current)],
        revision_cap=revision_cap,
    )
    return new


def change(store: Store, current: Note, *, minute: int, **fields: object) -> Note:
    """Commit `current` with `fields` changed (type, status, deleted_at, superseded_by…) as its next version."""
    new = replace(
        current,
        version=current.version + 1,
        updated_at=ts(minute, current.version),
        write_id=f"w_{current.id}_{current.version + 1}",
        **fields,  # type: ignore[arg-type]
    )
    store.commit(
        current.workspace_id, [NoteWrite(new, expected_version=current.version, previous=current)], revision_cap=50
    )
    return new


def record(key: str, *, recorded_at: str = T0, expires_at: str = ts(30), request_hash: str = "h1") -> IdempotencyRecord:
    return IdempotencyRecord(
        workspace_id=WS,
        key=key,
        request_hash=request_hash,
        result={"id": note_id(1), "version": 1},
        recorded_at=recorded_at,
        expires_at=expires_at,
    )


def make_key(key_id: str, *, workspace_id: str = WS, secret_hash: str = "hash-1", **fields: object) -> ApiKey:
    return ApiKey(
        id=key_id,
        workspace_id=workspace_id,
        name=f"key {key_id}",
        secret_hash=secret_hash,
        created_at=T0,
        **fields,  # type: ignore[arg-type]
    )


# ----- workspaces and projects ------------------------------------------------------------------------------


def test_workspace_round_trips(store: Store) -> None:
    alpha = Workspace(id=WS, name="Alpha", created_at=T0, plan=Plan.TEAM, revision_cap=7)
    beta = Workspace(id=OTHER_WS, name="Beta", created_at=ts(1))
    store.create_workspace(alpha)
    store.create_workspace(beta)

    assert store.get_workspace(WS) == alpha
    assert store.get_workspace("ws_unknown") is None
    assert {w.id: w for w in store.list_workspaces()} == {WS: alpha, OTHER_WS: beta}


def test_project_round_trips_by_slug_and_by_id(store: Store) -> None:
    project = Project(
        id=PROJECT, workspace_id=WS, slug="billing-api", created_at=T0, updated_at=T0, default_max_tokens=900
    )

    assert store.create_project(project) == project
    assert store.get_project(WS, "billing-api") == project
    assert store.get_project_by_id(WS, PROJECT) == project
    assert store.get_project(WS, "unknown") is None
    assert store.get_project_by_id(WS, "prj_unknown") is None
    assert store.list_projects(WS) == [project]


def test_saving_a_project_overwrites_its_editable_fields(store: Store) -> None:
    project = store.create_project(Project(id=PROJECT, workspace_id=WS, slug="web", created_at=T0, updated_at=T0))
    edited = replace(project, summary="A shop", instructions="Use pnpm", default_max_tokens=1200, updated_at=ts(5))

    store.save_project(edited)

    assert store.get_project(WS, "web") == edited


def test_create_project_returns_the_existing_project_when_the_slug_is_taken(store: Store) -> None:
    first = store.create_project(Project(id="prj_first", workspace_id=WS, slug="web", created_at=T0, updated_at=T0))
    second = store.create_project(
        Project(id="prj_second", workspace_id=WS, slug="web", created_at=ts(1), updated_at=ts(1))
    )

    assert second == first
    assert store.get_project_by_id(WS, "prj_second") is None
    assert [p.id for p in store.list_projects(WS)] == ["prj_first"]


def test_the_same_slug_in_two_workspaces_is_two_projects(store: Store) -> None:
    mine = store.create_project(Project(id="prj_a", workspace_id=WS, slug="web", created_at=T0, updated_at=T0))
    theirs = store.create_project(Project(id="prj_b", workspace_id=OTHER_WS, slug="web", created_at=T0, updated_at=T0))

    assert mine.id == "prj_a"
    assert theirs.id == "prj_b"
    assert store.get_project(WS, "web") == mine
    assert store.get_project_by_id(WS, "prj_b") is None
    assert store.list_projects(OTHER_WS) == [theirs]


# ----- notes ------------------------------------------------------------------------------------------------


def test_committed_note_reads_back_with_every_field(store: Store) -> None:
    note = make_note(
        1,
        type=NoteType.DECISION,
        status=NoteStatus.DISPUTED,
        tags=("auth", "api:v2"),
        links=(Link(note_id(2), "depends_on"), Link(note_id(3))),
        importance=5,
        canonical=True,
        supersedes=(note_id(4),),
        superseded_by=(note_id(5), note_id(6)),
        deleted_at=ts(9),
        body="Unicode survives: café, 東京, emoji 🚀\nand newlines.",
    )
    insert(store, note)

    assert store.get_note(WS, note.id) == note


def test_get_notes_returns_the_found_notes_by_id_and_omits_unknown_ids(store: Store) -> None:
    first = insert(store, make_note(1))
    second = insert(store, make_note(2, body="second"))

    found = store.get_notes(WS, [first.id, note_id(99), second.id])

    assert found == {first.id: first, second.id: second}
    assert store.get_notes(WS, [note_id(98)]) == {}
    assert store.get_note(WS, note_id(99)) is None


def test_inserting_an_existing_id_is_refused_as_a_version_conflict(store: Store) -> None:
    original = insert(store, make_note(1, body="original"))

    with pytest.raises(VersionConflictError) as refused:
        insert(store, make_note(1, body="impostor"))

    assert (refused.value.note_id, refused.value.expected, refused.value.current) == (original.id, 0, 1)
    assert refused.value.code == "version_conflict"
    assert store.get_note(WS, original.id) == original


def test_conditional_update_wins_once(store: Store) -> None:
    base = insert(store, make_note(1, body="v1"))
    winner = edit(store, base, body="winner")

    with pytest.raises(VersionConflictError) as refused:
        edit(store, base, body="loser")

    assert (refused.value.expected, refused.value.current) == (1, 2)
    assert store.get_note(WS, base.id) == winner
    assert [r.body for r in store.list_revisions(WS, base.id, limit=10)] == ["v1"]


def test_stale_expected_version_is_refused_and_nothing_is_written(store: Store) -> None:
    stale = insert(store, make_note(1, body="stale v1"))
    edit(store, stale, body="moved on")
    fresh = insert(store, make_note(2, body="fresh v1"))
    before = store.get_notes(WS, [stale.id, fresh.id])
    new_note = make_note(3, body="would be new")
    fresh_edit = replace(fresh, body="fresh v2", version=2, updated_at=ts(2))
    stale_edit = replace(stale, body="stale v2", version=2, updated_at=ts(2))

    with pytest.raises(VersionConflictError) as refused:
        store.commit(
            WS,
            [
                NoteWrite(new_note, expected_version=None),
                NoteWrite(fresh_edit, expected_version=1, previous=fresh),
                NoteWrite(stale_edit, expected_version=1, previous=stale),
            ],
            revision_cap=50,
            idempotency=record("key-atomic"),
        )

    assert (refused.value.note_id, refused.value.expected, refused.value.current) == (stale.id, 1, 2)
    assert store.get_notes(WS, [stale.id, fresh.id, new_note.id]) == before
    assert store.list_revisions(WS, fresh.id, limit=10) == []
    assert [r.body for r in store.list_revisions(WS, stale.id, limit=10)] == ["stale v1"]
    assert store.get_idempotency(WS, "key-atomic") is None


def test_updating_an_unknown_note_is_a_version_conflict_with_nothing_current(store: Store) -> None:
    ghost = make_note(1, version=2)

    with pytest.raises(VersionConflictError) as refused:
        store.commit(WS, [NoteWrite(ghost, expected_version=1)], revision_cap=50)

    assert (refused.value.expected, refused.value.current) == (1, 0)
    assert store.get_note(WS, ghost.id) is None


def test_one_commit_writes_several_notes_together(store: Store) -> None:
    old = insert(store, make_note(1, body="old"))
    new = make_note(2, body="replacement", supersedes=(old.id,))
    superseded = replace(old, status=NoteStatus.SUPERSEDED, superseded_by=(new.id,), version=2, updated_at=ts(1))

    store.commit(
        WS,
        [NoteWrite(new, expected_version=None), NoteWrite(superseded, expected_version=1, previous=old)],
        revision_cap=50,
    )

    assert store.get_notes(WS, [old.id, new.id]) == {old.id: superseded, new.id: new}
    assert store.list_revisions(WS, old.id, limit=10) == [old]


# ----- revisions --------------------------------------------------------------------------------------------


def test_revisions_are_kept_and_pruned_to_the_cap(store: Store) -> None:
    current = insert(store, make_note(1, body="body 1"), revision_cap=3)
    for version in range(2, 7):
        current = edit(store, current, body=f"body {version}", revision_cap=3, minute=version)

    revisions = store.list_revisions(WS, current.id, limit=50)

    assert current.version == 6
    assert [(r.version, r.body) for r in revisions] == [(5, "body 5"), (4, "body 4"), (3, "body 3")]
    assert store.get_revision(WS, current.id, 2) is None
    assert store.get_note(WS, current.id) == current


def test_list_revisions_pages_newest_first_below_before_version(store: Store) -> None:
    states = [insert(store, make_note(1, body="body 1"))]
    for version in range(2, 7):
        states.append(edit(store, states[-1], body=f"body {version}", minute=version))

    first_page = store.list_revisions(WS, states[0].id, limit=2)
    second_page = store.list_revisions(WS, states[0].id, limit=2, before_version=first_page[-1].version)
    last_page = store.list_revisions(WS, states[0].id, limit=2, before_version=2)

    assert first_page == [states[4], states[3]]
    assert second_page == [states[2], states[1]]
    assert last_page == [states[0]]
    assert store.list_revisions(WS, states[0].id, limit=2, before_version=1) == []


def test_get_revision_returns_the_stored_previous_state(store: Store) -> None:
    first = insert(store, make_note(1, body="first", tags=("a",)))
    second = edit(store, first, body="second")
    edit(store, second, body="third")

    assert store.get_revision(WS, first.id, 1) == first
    assert store.get_revision(WS, first.id, 2) == second
    assert store.get_revision(WS, first.id, 3) is None  # the current state is not a revision
    assert store.get_revision(WS, note_id(99), 1) is None


# ----- idempotency ------------------------------------------------------------------------------------------


def test_idempotency_record_is_stored_with_the_commit(store: Store) -> None:
    stored = record("key-1")

    store.commit(WS, [NoteWrite(make_note(1), expected_version=None)], revision_cap=50, idempotency=stored)

    assert store.get_idempotency(WS, "key-1") == stored
    assert store.get_idempotency(WS, "key-unknown") is None


def test_reused_idempotency_key_is_refused_with_the_stored_record_and_nothing_is_written(store: Store) -> None:
    first = record("key-1", request_hash="first")
    store.commit(WS, [NoteWrite(make_note(1), expected_version=None)], revision_cap=50, idempotency=first)

    with pytest.raises(IdempotencyKeyTakenError) as taken:
        store.commit(
            WS,
            [NoteWrite(make_note(2), expected_version=None)],
            revision_cap=50,
            idempotency=record("key-1", recorded_at=ts(1), request_hash="second"),
        )

    assert taken.value.record == first
    assert store.get_note(WS, note_id(2)) is None
    assert store.get_idempotency(WS, "key-1") == first


def test_expired_idempotency_record_is_replaced(store: Store) -> None:
    expired = record("key-1", recorded_at=T0, expires_at=ts(10), request_hash="old")
    store.commit(WS, [NoteWrite(make_note(1), expected_version=None)], revision_cap=50, idempotency=expired)
    # A record whose expiry equals the new call's time counts as absent.
    fresh = record("key-1", recorded_at=ts(10), expires_at=ts(40), request_hash="new")

    store.commit(WS, [NoteWrite(make_note(2), expected_version=None)], revision_cap=50, idempotency=fresh)

    assert store.get_idempotency(WS, "key-1") == fresh
    assert store.get_note(WS, note_id(2)) is not None


def test_idempotency_keys_are_per_workspace(store: Store) -> None:
    mine = record("key-1")
    theirs = replace(record("key-1", request_hash="theirs"), workspace_id=OTHER_WS)
    store.commit(WS, [NoteWrite(make_note(1), expected_version=None)], revision_cap=50, idempotency=mine)

    store.commit(
        OTHER_WS,
        [NoteWrite(make_note(1, workspace_id=OTHER_WS), expected_version=None)],
        revision_cap=50,
        idempotency=theirs,
    )

    assert store.get_idempotency(WS, "key-1") == mine
    assert store.get_idempotency(OTHER_WS, "key-1") == theirs


# ----- project listing --------------------------------------------------------------------------------------


def test_project_notes_are_most_recently_updated_first_deleted_included(store: Store) -> None:
    oldest = insert(store, make_note(1, updated_at=ts(1)))
    newest = insert(store, make_note(2, updated_at=ts(9), deleted_at=ts(9)))
    middle = insert(store, make_note(3, updated_at=ts(5)))
    # Same millisecond: the later id (created later) comes first.
    tie_low = insert(store, make_note(4, updated_at=ts(3)))
    tie_high = insert(store, make_note(5, updated_at=ts(3)))
    insert(store, make_note(6, project_id="prj_other", updated_at=ts(8)))

    listed = store.project_notes(WS, PROJECT, limit=10)

    assert [n.id for n in listed] == [newest.id, middle.id, tie_high.id, tie_low.id, oldest.id]
    assert listed[0] == newest
    assert [n.id for n in store.project_notes(WS, PROJECT, limit=2)] == [newest.id, middle.id]


def test_project_notes_follow_edits(store: Store) -> None:
    first = insert(store, make_note(1, updated_at=ts(1)))
    second = insert(store, make_note(2, updated_at=ts(2)))

    edited = edit(store, first, body="edited", minute=3)

    assert store.project_notes(WS, PROJECT, limit=10) == [edited, second]


# ----- notes by type and status -----------------------------------------------------------------------------

DECISION, CONSTRAINT, FACT = NoteType.DECISION, NoteType.CONSTRAINT, NoteType.FACT
CURRENT, DISPUTED, HISTORICAL = NoteStatus.CURRENT, NoteStatus.DISPUTED, NoteStatus.HISTORICAL


def ids(notes: list[Note]) -> list[str]:
    return [note.id for note in notes]


def test_notes_by_type_returns_live_notes_of_the_requested_types_and_statuses_newest_first(store: Store) -> None:
    oldest = insert(store, make_note(1, type=DECISION, status=CURRENT, updated_at=ts(1)))
    newest = insert(store, make_note(2, type=CONSTRAINT, status=CURRENT, updated_at=ts(5), tags=("db",)))
    disputed = insert(store, make_note(3, type=DECISION, status=DISPUTED, updated_at=ts(3)))
    # Same millisecond in two pairs: the higher id comes first.
    tie_low = insert(store, make_note(4, type=DECISION, status=CURRENT, updated_at=ts(4)))
    tie_high = insert(store, make_note(5, type=CONSTRAINT, status=DISPUTED, updated_at=ts(4)))
    # Not asked for: another status, another type, deleted, another project, another workspace.
    insert(store, make_note(6, type=DECISION, status=HISTORICAL, updated_at=ts(9)))
    insert(store, make_note(7, type=FACT, status=CURRENT, updated_at=ts(9)))
    insert(store, make_note(8, type=DECISION, status=CURRENT, updated_at=ts(9), deleted_at=ts(9)))
    insert(store, make_note(9, type=DECISION, status=CURRENT, updated_at=ts(9), project_id="prj_other"))
    insert(store, make_note(10, type=DECISION, status=CURRENT, updated_at=ts(9), workspace_id=OTHER_WS))

    listed = store.notes_by_type(WS, PROJECT, [DECISION, CONSTRAINT], [CURRENT, DISPUTED], limit=10)

    assert listed == [newest, tie_high, tie_low, disputed, oldest]
    assert ids(store.notes_by_type(WS, PROJECT, [DECISION], [CURRENT], limit=10)) == [tie_low.id, oldest.id]
    assert ids(store.notes_by_type(WS, PROJECT, [CONSTRAINT, DECISION], [DISPUTED], limit=10)) == [
        tie_high.id,
        disputed.id,
    ]


def test_notes_by_type_honours_the_limit_across_pairs(store: Store) -> None:
    notes = [
        insert(
            store,
            make_note(n, type=(DECISION, CONSTRAINT)[n % 2], status=(CURRENT, DISPUTED)[n // 2 % 2], updated_at=ts(n)),
        )
        for n in range(1, 9)
    ]
    newest_first = [note.id for note in reversed(notes)]

    for limit in (1, 3, 5, 8, 20):
        listed = store.notes_by_type(WS, PROJECT, [DECISION, CONSTRAINT], [CURRENT, DISPUTED], limit=limit)
        assert ids(listed) == newest_first[:limit]


def test_notes_by_type_with_nothing_to_match_is_empty(store: Store) -> None:
    insert(store, make_note(1, type=DECISION, status=CURRENT))

    assert store.notes_by_type(WS, PROJECT, [], [CURRENT], limit=10) == []
    assert store.notes_by_type(WS, PROJECT, [DECISION], [], limit=10) == []
    assert store.notes_by_type(WS, PROJECT, [DECISION], [CURRENT], limit=0) == []
    assert store.notes_by_type(WS, "prj_unknown", [DECISION], [CURRENT], limit=10) == []
    assert store.notes_by_type(OTHER_WS, PROJECT, [DECISION], [CURRENT], limit=10) == []


def test_notes_by_type_counts_a_repeated_type_or_status_once(store: Store) -> None:
    note = insert(store, make_note(1, type=DECISION, status=CURRENT))

    assert store.notes_by_type(WS, PROJECT, [DECISION, DECISION], [CURRENT, CURRENT], limit=10) == [note]


def test_notes_by_type_follows_type_and_status_changes_and_delete_and_restore(store: Store) -> None:
    def listed(note_type: NoteType, status: NoteStatus) -> list[str]:
        return ids(store.notes_by_type(WS, PROJECT, [note_type], [status], limit=10))

    note = insert(store, make_note(1, type=DECISION, status=CURRENT, updated_at=ts(1)))
    assert listed(DECISION, CURRENT) == [note.id]

    note = change(store, note, minute=2, type=CONSTRAINT)
    assert listed(DECISION, CURRENT) == []
    assert store.notes_by_type(WS, PROJECT, [CONSTRAINT], [CURRENT], limit=10) == [note]

    note = change(store, note, minute=3, status=HISTORICAL)
    assert listed(CONSTRAINT, CURRENT) == []
    assert store.notes_by_type(WS, PROJECT, [CONSTRAINT], [HISTORICAL], limit=10) == [note]

    note = change(store, note, minute=4, deleted_at=ts(4))
    assert listed(CONSTRAINT, HISTORICAL) == []
    assert store.notes_by_type(WS, PROJECT, list(NoteType), list(NoteStatus), limit=10) == []

    note = change(store, note, minute=5, deleted_at=None)
    assert store.notes_by_type(WS, PROJECT, [CONSTRAINT], [HISTORICAL], limit=10) == [note]


def test_notes_by_type_follows_edits_that_move_a_note_in_time(store: Store) -> None:
    first = insert(store, make_note(1, type=DECISION, updated_at=ts(1)))
    second = insert(store, make_note(2, type=DECISION, updated_at=ts(2)))

    edited = edit(store, first, body="edited", minute=3)

    assert store.notes_by_type(WS, PROJECT, [DECISION], [CURRENT], limit=10) == [edited, second]


# ----- notes needing attention ------------------------------------------------------------------------------


def test_conflicted_notes_are_disputed_notes_and_unfinished_supersessions_newest_first(store: Store) -> None:
    replacement = insert(store, make_note(1, status=CURRENT, updated_at=ts(1)))
    disputed = insert(store, make_note(2, status=DISPUTED, updated_at=ts(2)))
    # Superseded by another note, yet still marked current: the supersession was left half done.
    unfinished = insert(store, make_note(3, status=CURRENT, superseded_by=(replacement.id,), updated_at=ts(6)))
    pending = insert(store, make_note(4, status=NoteStatus.PENDING, superseded_by=(replacement.id,), updated_at=ts(4)))
    # Same millisecond: the higher id first.
    tie_low = insert(store, make_note(5, status=DISPUTED, updated_at=ts(3), type=DECISION))
    tie_high = insert(store, make_note(6, status=DISPUTED, updated_at=ts(3), type=FACT))
    # Not in the list: finished supersession, deleted, plain notes, other project, other workspace.
    insert(store, make_note(7, status=NoteStatus.SUPERSEDED, superseded_by=(replacement.id,), updated_at=ts(9)))
    insert(store, make_note(8, status=DISPUTED, deleted_at=ts(9), updated_at=ts(9)))
    insert(store, make_note(9, status=HISTORICAL, updated_at=ts(9)))
    insert(store, make_note(10, status=NoteStatus.SUPERSEDED, updated_at=ts(9)))
    insert(store, make_note(11, status=DISPUTED, project_id="prj_other", updated_at=ts(9)))
    insert(store, make_note(12, status=DISPUTED, workspace_id=OTHER_WS, updated_at=ts(9)))

    listed = store.conflicted_notes(WS, PROJECT, limit=10)

    assert listed == [unfinished, pending, tie_high, tie_low, disputed]
    assert ids(store.conflicted_notes(WS, PROJECT, limit=2)) == [unfinished.id, pending.id]
    assert store.conflicted_notes(WS, PROJECT, limit=0) == []
    assert store.conflicted_notes(WS, "prj_unknown", limit=10) == []


def test_a_note_leaves_the_conflicted_notes_when_fixed_and_returns_when_disputed_again(store: Store) -> None:
    def listed() -> list[str]:
        return ids(store.conflicted_notes(WS, PROJECT, limit=10))

    replacement = insert(store, make_note(1, updated_at=ts(1)))
    old = insert(store, make_note(2, superseded_by=(replacement.id,), updated_at=ts(2)))
    disputed = insert(store, make_note(3, status=DISPUTED, updated_at=ts(3)))
    assert listed() == [disputed.id, old.id]

    old = change(store, old, minute=4, status=NoteStatus.SUPERSEDED)  # the supersession finished
    disputed = change(store, disputed, minute=5, status=CURRENT)  # the dispute settled
    assert listed() == []

    disputed = change(store, disputed, minute=6, status=DISPUTED)
    assert store.conflicted_notes(WS, PROJECT, limit=10) == [disputed]

    disputed = change(store, disputed, minute=7, deleted_at=ts(7))
    assert listed() == []

    disputed = change(store, disputed, minute=8, deleted_at=None)
    assert store.conflicted_notes(WS, PROJECT, limit=10) == [disputed]

    replacement = change(store, replacement, minute=9, superseded_by=(old.id,))
    assert listed() == [replacement.id, disputed.id]
    change(store, replacement, minute=10, superseded_by=())
    assert listed() == [disputed.id]


# ----- change feed ------------------------------------------------------------------------------------------

HORIZON = ts(59)


def feed(
    store: Store,
    after: FeedPosition | None = None,
    *,
    horizon: str = HORIZON,
    types: Sequence[NoteType] = (),
    statuses: Sequence[NoteStatus] = (),
    limit: int = 10,
) -> ChangeScan:
    return store.changes_after(
        WS, PROJECT, after, horizon=horizon, types=list(types), statuses=list(statuses), limit=limit
    )


def read_feed(
    store: Store, *, limit: int, types: Sequence[NoteType] = (), statuses: Sequence[NoteStatus] = ()
) -> list[list[Note]]:
    """Every page from the start, each continuing from the previous `position` while `more`."""
    pages: list[list[Note]] = []
    position: FeedPosition | None = None
    for _ in range(200):
        scan = feed(store, position, types=types, statuses=statuses, limit=limit)
        assert len(scan.notes) <= limit
        if scan.notes:
            assert scan.position is not None
            assert (scan.position.updated_at, scan.position.note_id) >= (scan.notes[-1].updated_at, scan.notes[-1].id)
        pages.append(scan.notes)
        position = scan.position
        if not scan.more:
            assert not scan.settling  # nothing is past the horizon in these projects
            return pages
    raise AssertionError("the feed never ended")


def feed_order(notes: Sequence[Note]) -> list[Note]:
    return sorted(notes, key=lambda note: (note.updated_at, note.id))


def insert_all(store: Store, notes: Sequence[Note]) -> list[Note]:
    for start in range(0, len(notes), 25):
        writes = [NoteWrite(note, expected_version=None) for note in notes[start : start + 25]]
        store.commit(WS, writes, revision_cap=50)
    return list(notes)


def at(note: Note) -> FeedPosition:
    return FeedPosition(note.updated_at, note.id)


def test_changes_after_pages_oldest_first_by_updated_at_then_id_even_within_one_millisecond(store: Store) -> None:
    # 30 notes share one timestamp; ids order them. Earlier stamps come first whatever their ids, later ones last.
    tied = [make_note(n, updated_at=ts(5)) for n in range(10, 40)]
    earlier = [make_note(n, updated_at=ts(2, n)) for n in range(40, 43)]
    later = [make_note(n, updated_at=ts(7)) for n in range(1, 4)]
    notes = insert_all(store, [*reversed(tied), *later, *earlier])

    pages = read_feed(store, limit=4)

    assert [len(page) for page in pages] == [4] * 9  # the last full page knows nothing follows
    assert [note for page in pages for note in page] == [*earlier, *tied, *later] == feed_order(notes)
    first = feed(store, limit=4)
    assert (first.position, first.more, first.settling) == (at(tied[0]), True, False)
    middle = feed(store, at(tied[13]), limit=4)
    assert middle.notes == tied[14:18]
    assert middle.position == at(tied[17])


def test_changes_after_stops_at_the_horizon_and_reports_settling_notes(store: Store) -> None:
    old = insert_all(store, [make_note(n, updated_at=ts(n)) for n in (1, 2, 3)])
    new = insert_all(store, [make_note(n, updated_at=ts(n)) for n in (8, 9)])

    scan = feed(store, horizon=ts(5))
    assert scan == ChangeScan(old, at(old[-1]), more=False, settling=True)
    assert feed(store, horizon=ts(5), limit=3) == scan  # exactly `limit` left before the horizon: nothing more
    assert feed(store, at(old[-1]), horizon=ts(5)) == ChangeScan([], at(old[-1]), more=False, settling=True)
    # The horizon itself is included.
    assert feed(store, at(old[-1]), horizon=ts(8)) == ChangeScan([new[0]], at(new[0]), more=False, settling=True)
    assert feed(store, at(old[-1]), horizon=ts(9)) == ChangeScan(new, at(new[-1]), more=False, settling=False)
    # A position already past the horizon: nothing is served, the newer notes are still settling.
    assert feed(store, at(new[0]), horizon=ts(5)) == ChangeScan([], at(new[0]), more=False, settling=True)


def test_settling_counts_only_notes_the_filters_keep(store: Store) -> None:
    kept = insert(store, make_note(1, type=DECISION, updated_at=ts(1)))
    insert(store, make_note(2, type=FACT, updated_at=ts(8)))
    insert(store, make_note(3, type=DECISION, updated_at=ts(9)))

    assert feed(store, horizon=ts(5), types=[DECISION]) == ChangeScan([kept], at(kept), more=False, settling=True)
    assert feed(store, horizon=ts(8), types=[FACT, CONSTRAINT]).settling is False
    nothing = feed(store, horizon=ts(5), types=[CONSTRAINT])
    # A store may move the position past notes it examined and filtered out, never past the horizon.
    assert (nothing.notes, nothing.more, nothing.settling) == ([], False, False)
    assert nothing.position in (None, at(kept))


def test_changes_after_includes_deleted_notes_and_places_an_edited_note_at_its_new_time(store: Store) -> None:
    first = insert(store, make_note(1, updated_at=ts(1)))
    second = insert(store, make_note(2, updated_at=ts(2)))
    third = insert(store, make_note(3, updated_at=ts(3)))
    edited = edit(store, first, body="edited", minute=4)
    deleted = change(store, second, minute=5, deleted_at=ts(5))

    scan = feed(store)

    assert scan.notes == [third, edited, deleted]
    assert scan.notes[-1].deleted_at == ts(5)
    assert feed(store, at(third)).notes == [edited, deleted]


@pytest.mark.parametrize(
    ("types", "statuses"),
    [
        ([DECISION, CONSTRAINT], [CURRENT, DISPUTED]),
        ([FACT], []),
        ([], [HISTORICAL]),
        ([DECISION], [DISPUTED]),
        ([], []),
    ],
)
def test_filtered_pages_yield_every_matching_note_once_in_feed_order(
    store: Store, types: list[NoteType], statuses: list[NoteStatus]
) -> None:
    # Matches and non-matches interleave, several share a timestamp, some are deleted (still in the feed).
    notes = insert_all(
        store,
        [
            make_note(
                n,
                type=(DECISION, CONSTRAINT, FACT)[n % 3],
                status=(CURRENT, DISPUTED, HISTORICAL)[n // 2 % 3],
                updated_at=ts(n // 4),
                deleted_at=ts(n // 4) if n % 7 == 0 else None,
            )
            for n in range(1, 41)
        ],
    )
    expected = [
        note
        for note in feed_order(notes)
        if (not types or note.type in types) and (not statuses or note.status in statuses)
    ]

    pages = read_feed(store, limit=3, types=types, statuses=statuses)

    assert expected
    assert [note for page in pages for note in page] == expected


def test_changes_after_never_shows_other_projects_or_workspaces(store: Store) -> None:
    mine = insert(store, make_note(1, updated_at=ts(1)))
    insert(store, make_note(2, updated_at=ts(1), project_id="prj_other"))
    theirs = insert(store, make_note(1, updated_at=ts(1), workspace_id=OTHER_WS, body="theirs"))

    assert feed(store) == ChangeScan([mine], at(mine), more=False, settling=False)
    assert store.changes_after(OTHER_WS, PROJECT, None, horizon=HORIZON, types=[], statuses=[], limit=10).notes == [
        theirs
    ]
    unknown = store.changes_after(WS, "prj_unknown", None, horizon=HORIZON, types=[], statuses=[], limit=10)
    assert unknown == ChangeScan([], None, more=False, settling=False)


def test_changes_after_keeps_the_position_when_nothing_follows_it(store: Store) -> None:
    assert feed(store) == ChangeScan([], None, more=False, settling=False)
    first = insert(store, make_note(1, updated_at=ts(1)))
    second = insert(store, make_note(2, updated_at=ts(2)))
    beyond = FeedPosition(ts(30), note_id(99))

    assert feed(store, at(second)) == ChangeScan([], at(second), more=False, settling=False)
    assert feed(store, beyond) == ChangeScan([], beyond, more=False, settling=False)
    # An empty id sorts before every id: a position made from a bare timestamp includes notes stamped at it.
    assert feed(store, FeedPosition(ts(1), "")).notes == [first, second]
    assert feed(store, FeedPosition(ts(2), "")).notes == [second]
    with pytest.raises(ValueError, match="limit"):
        feed(store, limit=0)


# ----- API keys ---------------------------------------------------------------------------------------------


def test_key_is_found_by_its_secret_hash(store: Store) -> None:
    key = make_key("key_1", secret_hash="hash-1", project_id=PROJECT, read_only=True, hint="x9Qz")
    store.put_key(key)

    assert store.find_key("hash-1") == key
    assert store.find_key("hash-unknown") is None


def test_keys_are_listed_per_workspace(store: Store) -> None:
    first = make_key("key_1", secret_hash="hash-1")
    second = make_key("key_2", secret_hash="hash-2")
    theirs = make_key("key_3", workspace_id=OTHER_WS, secret_hash="hash-3")
    for key in (first, second, theirs):
        store.put_key(key)

    assert {k.id: k for k in store.list_keys(WS)} == {"key_1": first, "key_2": second}
    assert store.list_keys(OTHER_WS) == [theirs]
    assert store.list_keys("ws_unknown") == []


def test_revoking_a_key_is_idempotent(store: Store) -> None:
    store.put_key(make_key("key_1"))

    revoked = store.revoke_key(WS, "key_1", ts(5))
    again = store.revoke_key(WS, "key_1", ts(6))

    assert revoked is not None
    assert revoked.revoked_at == ts(5)
    assert again == revoked
    assert store.find_key("hash-1") == revoked


def test_revoking_an_unknown_key_or_another_workspaces_key_returns_none(store: Store) -> None:
    theirs = make_key("key_1", workspace_id=OTHER_WS)
    store.put_key(theirs)

    assert store.revoke_key(WS, "key_unknown", ts(5)) is None
    assert store.revoke_key(WS, "key_1", ts(5)) is None
    assert store.find_key("hash-1") == theirs


# ----- tenancy ----------------------------------------------------------------------------------------------


def test_notes_of_another_workspace_are_invisible(store: Store) -> None:
    theirs = insert(store, make_note(1, workspace_id=OTHER_WS, body="secret v1"))
    edit(store, theirs, body="secret v2")

    assert store.get_note(WS, theirs.id) is None
    assert store.get_notes(WS, [theirs.id]) == {}
    assert store.project_notes(WS, PROJECT, limit=10) == []
    assert store.notes_by_type(WS, PROJECT, list(NoteType), list(NoteStatus), limit=10) == []
    assert store.list_revisions(WS, theirs.id, limit=10) == []
    assert store.get_revision(WS, theirs.id, 1) is None
    assert store.get_note(OTHER_WS, theirs.id) is not None


def test_a_workspace_cannot_update_another_workspaces_note(store: Store) -> None:
    theirs = insert(store, make_note(1, workspace_id=OTHER_WS, body="theirs"))
    forged = replace(theirs, workspace_id=WS, body="forged", version=2)

    with pytest.raises(VersionConflictError):
        store.commit(WS, [NoteWrite(forged, expected_version=1)], revision_cap=50)

    assert store.get_note(OTHER_WS, theirs.id) == theirs
    assert store.get_note(WS, theirs.id) is None


def test_the_same_note_id_in_two_workspaces_stays_apart(store: Store) -> None:
    mine = insert(store, make_note(1, body="mine"))
    theirs = insert(store, make_note(1, workspace_id=OTHER_WS, body="theirs"))

    assert store.get_note(WS, mine.id) == mine
    assert store.get_note(OTHER_WS, mine.id) == theirs
