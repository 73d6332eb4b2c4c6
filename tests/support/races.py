"""Races forced on every run, not left to the scheduler: commits wait at a door until every racer has arrived.

`CommitDoor` is a commit hook: each thread's first `rounds` commits wait in `arrive()` until `parties` of them are
there, then all go into the store together, so every racer has read the same state before any of them writes.
`DoorStore` puts a store behind a door and records what each commit answered. A race that no longer happens (a
racer that stops committing, or one that commits past the door) breaks the barrier, and `raced()` says whether
every round was a real race: all of its commits had arrived before the first of them reached the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from notewell.domain.model import IdempotencyRecord, NoteWrite, Project
from notewell.ports import Store

WAIT_SECONDS = 10.0  # only reached when a race stopped happening: the barrier breaks and the test fails


class CommitDoor:
    def __init__(self, parties: int, *, rounds: int = 1) -> None:
        self.parties = parties
        self.rounds = rounds
        self._barrier = threading.Barrier(parties, timeout=WAIT_SECONDS)
        self._lock = threading.Lock()
        self._held: dict[int, int] = {}  # thread -> commits it has taken through the door
        self.log: list[tuple[str, int, str]] = []  # ("arrive" | "enter", round, thread name), in order

    def arrive(self) -> None:
        """Call just before a commit reaches the store: waits for the other racers of this round, if it races."""
        me = threading.get_ident()
        with self._lock:
            taken = self._held.get(me, 0)
            if taken >= self.rounds:
                return
            self._held[me] = taken + 1
            self.log.append(("arrive", taken, threading.current_thread().name))
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise AssertionError(f"only some racers reached the commit of round {taken}: {self.log}") from None
        with self._lock:
            self.log.append(("enter", taken, threading.current_thread().name))

    def abort(self) -> None:
        """Release everyone now (a racer failed), rather than after the barrier's timeout."""
        self._barrier.abort()

    def raced(self) -> bool:
        """Every round had all its racers at the door before the first of them went in."""
        for round_ in range(self.rounds):
            events = [kind for kind, number, _ in self.log if number == round_]
            if events[: self.parties] != ["arrive"] * self.parties or len(events) != 2 * self.parties:
                return False
        return True


class DoorStore:
    """Delegates to a real store; once `door` is set (after the setup), every commit passes it first. What each
    commit answered is kept in `outcomes` ("committed" or the exception's class name), in the order of answers."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.door: CommitDoor | None = None
        self.outcomes: list[str] = []
        self.answers: dict[str, list[str]] = {}  # thread name -> what its commits answered, in order

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def commit(
        self, workspace_id: str, writes: Sequence[NoteWrite], *, revision_cap: int,
        idempotency: IdempotencyRecord | None = None,
    ) -> None:  # fmt: skip
        if self.door is None:
            self._inner.commit(workspace_id, writes, revision_cap=revision_cap, idempotency=idempotency)
            return
        self.door.arrive()
        try:
            self._inner.commit(workspace_id, writes, revision_cap=revision_cap, idempotency=idempotency)
        except Exception as exc:
            self._answer(type(exc).__name__)
            raise
        self._answer("committed")

    def _answer(self, outcome: str) -> None:
        self.outcomes.append(outcome)
        self.answers.setdefault(threading.current_thread().name, []).append(outcome)


class SaveRacingStore:
    """Delegates to a real store; `before_save` runs once, just before the next save_project reaches the store, so
    a competing update lands between another update's read and its write. `saves` records what each answered."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.before_save: Callable[[], object] | None = None
        self.saves: list[bool] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def save_project(self, project: Project, *, expected: Project | None = None) -> bool:
        hook, self.before_save = self.before_save, None
        if hook is not None:
            hook()
        written = self._inner.save_project(project, expected=expected)
        self.saves.append(written)
        return written
