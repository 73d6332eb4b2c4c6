"""Concurrent conditional edits on every store: one winner per version, and no acknowledged write lost.

The race is forced, not hoped for: every round, all editors read the note and wait at the commit door until all of
them have read it, then commit on the same version together (tests/support/races.py).
"""

from __future__ import annotations

import threading
from dataclasses import replace

from notewell.domain.errors import VersionConflictError
from notewell.domain.model import Note, NoteWrite
from notewell.ports import Store
from tests.support.races import WAIT_SECONDS, CommitDoor, DoorStore

WS = "ws_race"
THREADS = 5
ROUNDS = 8


def first_note() -> Note:
    return Note(
        id="n_" + "0" * 26,
        workspace_id=WS,
        project_id="prj_race",
        title="Contended",
        body="initial",
        version=1,
        created_at="2026-01-05T09:00:00.000Z",
        updated_at="2026-01-05T09:00:00.000Z",
        author="key_setup",
        write_id="w_setup",
    )


def test_concurrent_conditional_edits_have_one_winner_per_version_and_lose_nothing(store: Store) -> None:
    initial = first_note()
    store.commit(WS, [NoteWrite(initial, expected_version=None)], revision_cap=10_000)
    door = CommitDoor(THREADS, rounds=ROUNDS)
    racing = DoorStore(store)
    racing.door = door
    acknowledged: list[tuple[int, str]] = []  # list.append is atomic: no lock needed
    conflicts: list[tuple[int, int]] = []  # (version read, version the conflict reported)
    failures: list[BaseException] = []

    def editor(worker: int) -> None:
        try:
            for attempt in range(ROUNDS):
                current = racing.get_note(WS, initial.id)
                assert current is not None
                body = f"worker {worker} attempt {attempt}"
                new = replace(
                    current, body=body, version=current.version + 1, author=f"key_{worker}",
                    write_id=f"w_{worker}_{attempt}",
                )  # fmt: skip
                try:
                    racing.commit(
                        WS, [NoteWrite(new, expected_version=current.version, previous=current)], revision_cap=10_000
                    )
                except VersionConflictError as conflict:
                    conflicts.append((current.version, conflict.current))
                else:
                    acknowledged.append((new.version, body))
        except BaseException as exc:
            failures.append(exc)
            door.abort()  # release the others now rather than after the barrier timeout

    workers = [threading.Thread(target=editor, args=(n,), name=f"editor-{n}") for n in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=WAIT_SECONDS * ROUNDS)
    assert not any(worker.is_alive() for worker in workers), "an editor thread is stuck"
    assert failures == []
    assert door.raced(), "every round, all editors reached the commit before any of them wrote"

    # Each round all editors wrote on the same version: exactly one won it, every other one was refused.
    assert sorted(version for version, _ in acknowledged) == list(range(2, ROUNDS + 2))
    assert sorted(conflicts) == sorted((v, v + 1) for v in range(1, ROUNDS + 1) for _ in range(THREADS - 1))
    assert racing.outcomes.count("VersionConflictError") == ROUNDS * (THREADS - 1)
    final = store.get_note(WS, initial.id)
    assert final is not None and final.version == ROUNDS + 1
    bodies = dict(acknowledged)
    assert final.body == bodies[final.version]
    revisions = store.list_revisions(WS, initial.id, limit=10_000)
    assert {r.version: r.body for r in revisions} == {
        1: initial.body,
        **{version: body for version, body in bodies.items() if version < final.version},
    }
