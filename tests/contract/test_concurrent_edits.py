"""Concurrent conditional edits on every store: one winner per version, and no acknowledged write lost."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from notewell.domain.errors import VersionConflictError
from notewell.domain.model import Note, NoteWrite
from notewell.ports import Store

WS = "ws_race"
THREADS = 6
ROUNDS = 25
WAIT_SECONDS = 5.0


@pytest.fixture
def tiny_switch_interval() -> Iterator[None]:
    """Switch threads as often as possible, so reads and commits interleave in many ways."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


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


@pytest.mark.usefixtures("tiny_switch_interval")
def test_concurrent_conditional_edits_have_one_winner_per_version_and_lose_nothing(store: Store) -> None:
    initial = first_note()
    store.commit(WS, [NoteWrite(initial, expected_version=None)], revision_cap=10_000)
    barrier = threading.Barrier(THREADS, timeout=WAIT_SECONDS)
    acknowledged: list[tuple[int, str]] = []  # list.append is atomic: no lock needed
    conflicts: list[int] = []
    failures: list[BaseException] = []

    def editor(worker: int) -> None:
        try:
            for attempt in range(ROUNDS):
                barrier.wait()  # everyone reads at about the same moment, so most rounds race
                current = store.get_note(WS, initial.id)
                assert current is not None
                body = f"worker {worker} attempt {attempt}"
                new = replace(
                    current,
                    body=body,
                    version=current.version + 1,
                    author=f"key_{worker}",
                    write_id=f"w_{worker}_{attempt}",
                )
                try:
                    store.commit(
                        WS,
                        [NoteWrite(new, expected_version=current.version, previous=current)],
                        revision_cap=10_000,
                    )
                except VersionConflictError as conflict:
                    assert conflict.current > current.version
                    conflicts.append(worker)
                else:
                    acknowledged.append((new.version, body))
        except BaseException as exc:
            failures.append(exc)
            barrier.abort()  # release the others now rather than after the barrier timeout

    workers = [threading.Thread(target=editor, args=(n,), name=f"editor-{n}") for n in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=WAIT_SECONDS * ROUNDS)
    assert not any(worker.is_alive() for worker in workers), "an editor thread is stuck"
    assert failures == []

    final = store.get_note(WS, initial.id)
    assert final is not None
    versions = sorted(version for version, _ in acknowledged)
    assert versions == list(range(2, final.version + 1)), "exactly one acknowledged write per version"
    assert len(acknowledged) + len(conflicts) == THREADS * ROUNDS
    assert len(acknowledged) >= ROUNDS  # every round has a winner
    bodies = dict(acknowledged)
    assert final.body == bodies[final.version]
    revisions = store.list_revisions(WS, initial.id, limit=10_000)
    assert {r.version: r.body for r in revisions} == {
        1: initial.body,
        **{version: body for version, body in bodies.items() if version < final.version},
    }
