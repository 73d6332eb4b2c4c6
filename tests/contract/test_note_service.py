"""Note use cases over every store: the same behaviour on SQLite and DynamoDB."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import (
    ForbiddenError,
    IdempotencyKeyReusedError,
    InvalidArgumentError,
    NotFoundError,
    PatchTargetMissingError,
    TooLargeError,
    VersionConflictError,
)
from notewell.domain.model import NoteStatus, NoteType, Principal
from notewell.ports import Store
from notewell.services.notes import NoteChanges, PatchMode
from tests.support.races import WAIT_SECONDS, CommitDoor, DoorStore


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


@pytest.fixture
def principal(services: Services) -> Principal:
    workspace = services.auth.create_workspace("acme")
    found = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert found is not None
    return found


def test_edits_keep_every_previous_state_as_a_revision(services: Services, principal: Principal) -> None:
    notes = services.notes
    note = notes.create(principal, "p", title="Queue", body="We use SQS.").note
    notes.update(principal, note.id, NoteChanges(body="We use SQS FIFO."), expected_version=1)
    notes.patch(principal, note.id, mode=PatchMode.APPEND, text="Dead letters after 5 tries.")
    page = notes.revisions(principal, note.id)
    assert page.note.version == 3
    assert [(r.version, r.body) for r in page.revisions] == [(2, "We use SQS FIFO."), (1, "We use SQS.")]
    assert notes.revision(principal, note.id, 1).body == "We use SQS."


def test_updated_at_moves_forward_even_within_one_millisecond(services: Services, principal: Principal) -> None:
    note = services.notes.create(principal, "p", title="T", body="a").note
    second = services.notes.update(principal, note.id, NoteChanges(body="b")).note
    third = services.notes.update(principal, note.id, NoteChanges(body="c")).note
    assert note.updated_at < second.updated_at < third.updated_at
    assert third.created_at == note.created_at


def test_revisions_beyond_the_workspace_cap_are_pruned_oldest_first(
    services: Services, principal: Principal, store: Store
) -> None:
    workspace = store.get_workspace(principal.workspace_id)
    assert workspace is not None and workspace.revision_cap == 50
    note = services.notes.create(principal, "p", title="T", body="v1").note
    for n in range(2, 56):
        services.notes.update(principal, note.id, NoteChanges(body=f"v{n}"))
    versions = []
    cursor = None
    while True:
        page = services.notes.revisions(principal, note.id, limit=20, cursor=cursor)
        versions += [r.version for r in page.revisions]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert versions == list(range(54, 4, -1))  # 50 revisions kept: v5..v54; the note itself is v55
    with pytest.raises(NotFoundError, match="no longer kept"):
        services.notes.revision(principal, note.id, 4)


def test_a_stale_expected_version_is_refused_and_nothing_is_written(services: Services, principal: Principal) -> None:
    note = services.notes.create(principal, "p", title="T", body="one").note
    services.notes.update(principal, note.id, NoteChanges(body="two"), expected_version=1)
    with pytest.raises(VersionConflictError) as caught:
        services.notes.update(principal, note.id, NoteChanges(body="three"), expected_version=1)
    assert caught.value.code == "version_conflict" and (caught.value.expected, caught.value.current) == (1, 2)
    with pytest.raises(VersionConflictError):
        services.notes.delete(principal, note.id, expected_version=1)
    current = services.notes.get(principal, note.id).note
    assert (current.version, current.body, current.deleted_at) == (2, "two", None)


def test_patch_replace_of_absent_text_fails_loudly_and_writes_nothing(services: Services, principal: Principal) -> None:
    note = services.notes.create(principal, "p", title="T", body="alpha beta alpha").note
    with pytest.raises(PatchTargetMissingError):
        services.notes.patch(principal, note.id, mode=PatchMode.REPLACE, find="gamma", text="x")
    replaced = services.notes.patch(principal, note.id, mode=PatchMode.REPLACE, find="alpha", text="omega").note
    assert replaced.body == "omega beta alpha"  # first occurrence only
    assert services.notes.revisions(principal, note.id).revisions[0].body == "alpha beta alpha"


def test_soft_delete_hides_a_note_until_it_is_restored(services: Services, principal: Principal) -> None:
    note = services.notes.create(principal, "p", title="Flaky test", body="Retry the suite").note
    deleted = services.notes.delete(principal, note.id).note
    assert deleted.deleted_at is not None and deleted.version == 2
    assert services.notes.delete(principal, note.id).note.version == 2  # deleting again changes nothing
    with pytest.raises(NotFoundError, match="restore_note"):
        services.notes.get(principal, note.id)
    with pytest.raises(NotFoundError):
        services.notes.update(principal, note.id, NoteChanges(body="x"))
    assert services.notes.get_many(principal, [note.id]).missing == [note.id]
    assert services.search.run(principal, "p", "flaky").hits == []
    restored = services.notes.restore(principal, note.id).note
    assert restored.deleted_at is None and restored.version == 3
    assert [h.note.id for h in services.search.run(principal, "p", "flaky").hits] == [note.id]


def test_superseding_marks_the_old_notes_atomically_with_the_new_one(services: Services, principal: Principal) -> None:
    old = services.notes.create(principal, "p", title="JWT sessions", body="Use JWTs", type=NoteType.DECISION).note
    new = services.notes.create(
        principal, "p", title="Opaque sessions", body="Use opaque tokens", type=NoteType.DECISION, supersedes=[old.id]
    ).note
    assert new.supersedes == (old.id,)
    after = services.notes.get(principal, old.id).note
    assert after.status is NoteStatus.SUPERSEDED and after.superseded_by == (new.id,) and after.version == 2
    assert services.notes.revision(principal, old.id, 1).status is NoteStatus.CURRENT


def test_a_refused_supersession_writes_nothing(services: Services, principal: Principal, store: Store) -> None:
    old = services.notes.create(principal, "p", title="A", body="a").note
    other = services.notes.create(principal, "q", title="B", body="b").note
    gone = services.notes.create(principal, "p", title="C", body="c").note
    services.notes.delete(principal, gone.id)
    unknown = "n_01ARZ3NDEKTSV4RRFFQ69G5FAV"
    project = store.get_project(principal.workspace_id, "p")
    assert project is not None
    before = len(store.project_notes(principal.workspace_id, project.id, limit=100))
    for supersedes, error in (
        ([old.id, other.id], InvalidArgumentError),
        ([old.id, gone.id], InvalidArgumentError),
        ([old.id, unknown], NotFoundError),
    ):
        with pytest.raises(error):
            services.notes.create(principal, "p", title="New", body="n", supersedes=supersedes)
    assert len(store.project_notes(principal.workspace_id, project.id, limit=100)) == before
    assert services.notes.get(principal, old.id).note.version == 1


def test_superseded_by_can_never_be_written_by_a_client(services: Services, principal: Principal) -> None:
    note = services.notes.create(principal, "p", title="A", body="a").note
    with pytest.raises(InvalidArgumentError, match="supersedes"):
        services.notes.update(principal, note.id, NoteChanges(status=NoteStatus.SUPERSEDED))
    with pytest.raises(InvalidArgumentError):
        services.notes.create(principal, "p", title="B", body="b", status=NoteStatus.SUPERSEDED)


def test_idempotent_create_replays_and_refuses_a_reused_key(services: Services, principal: Principal) -> None:
    first = services.notes.create(principal, "p", title="T", body="b", idempotency_key="k").note
    again = services.notes.create(principal, "p", title="T", body="b", idempotency_key="k").note
    assert again.id == first.id
    with pytest.raises(IdempotencyKeyReusedError):
        services.notes.create(principal, "p", title="T", body="other", idempotency_key="k")


def test_idempotency_keys_expire_after_a_day(services: Services, principal: Principal, clock: FixedClock) -> None:
    first = services.notes.create(principal, "p", title="T", body="b", idempotency_key="k").note
    clock.advance(hours=25)
    later = services.notes.create(principal, "p", title="T", body="b", idempotency_key="k").note
    assert later.id != first.id


def racing_services(store: Store, clock: FixedClock, tmp_path: Path) -> tuple[Services, DoorStore, Principal]:
    racing = DoorStore(store)
    services = bootstrap(Settings(data_dir=tmp_path), store=racing, clock=clock)  # type: ignore[arg-type]
    workspace = services.auth.create_workspace("acme")
    principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert principal is not None
    return services, racing, principal


def run_racers(door: CommitDoor, *racers: Callable[[], object]) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(racer: Callable[[], object]) -> None:
        try:
            racer()
        except BaseException as exc:  # noqa: BLE001 - surfaced by the caller's assertion
            errors.append(exc)
            door.abort()

    threads = [threading.Thread(target=run, args=(racer,), name=f"racer-{n}") for n, racer in enumerate(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS * 3)
    assert not any(thread.is_alive() for thread in threads), "a racer is stuck"
    return errors


def test_concurrent_retries_with_one_idempotency_key_write_once(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    services, racing, principal = racing_services(store, clock, tmp_path)
    services.projects.update(principal, "p", summary="Racing retries")
    door = racing.door = CommitDoor(2)  # both retries pass the replay check, then commit together
    ids: list[str] = []

    def attempt() -> None:
        ids.append(services.notes.create(principal, "p", title="T", body="b", idempotency_key="twin").note.id)

    assert run_racers(door, attempt, attempt) == []
    assert door.raced(), "both retries reached the commit before either wrote"
    assert sorted(racing.outcomes) == ["IdempotencyKeyTakenError", "committed"]  # the loser replayed the winner
    assert len(ids) == 2 and ids[0] == ids[1]
    project = store.get_project(principal.workspace_id, "p")
    assert project is not None
    assert [n.id for n in store.project_notes(principal.workspace_id, project.id, limit=10)] == [ids[0]]


def test_edits_without_expected_version_are_last_write_wins_and_none_is_lost(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    writers = 4
    services, racing, principal = racing_services(store, clock, tmp_path)
    note = services.notes.create(principal, "p", title="Counter", body="").note
    door = racing.door = CommitDoor(writers)  # every writer's first append is made on the version the others read

    def appender(worker: int) -> Callable[[], None]:
        def append() -> None:
            for n in range(5):
                services.notes.patch(principal, note.id, mode=PatchMode.APPEND, text=f"w{worker}-{n}")

        return append

    assert run_racers(door, *(appender(w) for w in range(writers))) == []
    assert door.raced(), "every writer reached its first commit before any of them wrote"
    first_tries = [answers[0] for answers in racing.answers.values()]
    assert sorted(first_tries) == ["VersionConflictError"] * (writers - 1) + ["committed"]  # one won the race
    assert racing.outcomes.count("committed") == writers * 5  # the others re-read and retried, losing nothing
    final = services.notes.get(principal, note.id).note
    assert final.version == 1 + writers * 5
    assert sorted(final.body.split("\n")) == sorted(f"w{w}-{n}" for w in range(writers) for n in range(5))


def test_limits_and_scopes_are_enforced_before_anything_is_written(services: Services, principal: Principal) -> None:
    with pytest.raises(TooLargeError):
        services.notes.create(principal, "p", title="T", body="😀" * 70_000)  # under the characters, over the bytes
    read_only = replace(principal, read_only=True)
    with pytest.raises(ForbiddenError):
        services.notes.create(read_only, "p", title="T", body="b")
    assert services.projects.list(principal) == []


def test_an_update_with_nothing_to_change_is_refused_and_writes_no_version(
    services: Services, principal: Principal
) -> None:
    note = services.notes.create(principal, "p", title="T", body="one").note
    with pytest.raises(InvalidArgumentError, match="at least one of title, body"):
        services.notes.update(principal, note.id, NoteChanges(), expected_version=1)
    assert services.notes.get(principal, note.id).note.version == 1
    assert services.notes.revisions(principal, note.id).revisions == []
