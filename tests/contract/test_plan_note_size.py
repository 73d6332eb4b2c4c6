"""The plan's note size is checked before anything is written, on every store.

A free workspace allows 50,000 characters a note (domain/plans.py): a body between that and the absolute limit
(100,000) passes the argument checks and is refused by the plan only. Every way of writing a note is tried with
such a body (checkpoint's items included); each is refused (413, or the import's list of problems) and the
workspace is exactly as before: no project, note, version, revision, idempotency record or counted usage more.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError, NotewellError, TooLargeError
from notewell.domain.model import Note, Plan, Principal, Project
from notewell.domain.plans import limits_for
from notewell.ports import Store
from notewell.services.memory import RememberRequest
from notewell.services.metering import TOTAL, project_period
from notewell.services.notes import NoteChanges, PatchMode, idempotency_scope

LIMIT = limits_for(Plan.FREE).note_chars
OVER = "x" * (LIMIT + 1)


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


@dataclass(frozen=True)
class State:
    projects: list[Project]
    notes: list[Note]
    revisions: dict[str, list[Note]]
    counters: dict[str, dict[str, int]]
    usage: tuple[int, int, int]
    idempotency: list[object]


def state(services: Services, me: Principal) -> State:
    store = services.deps.store
    ws = me.workspace_id
    services.meter.flush()
    projects = store.list_projects(ws)
    notes = [note for project in projects for note in store.project_notes(ws, project.id, limit=1_000)]
    periods = [TOTAL, *(project_period(p.id, TOTAL) for p in projects)]
    report = services.workspaces.usage(me)
    keys = [
        idempotency_scope(me, slug, key)
        for slug in ("p", "fresh")
        for key in ("big-create", "big-remember", "big-checkpoint")
    ]
    return State(
        projects=projects,
        notes=notes,
        revisions={note.id: store.list_revisions(ws, note.id, limit=1_000) for note in notes},
        counters=store.usage(ws, periods),
        usage=(report.notes, report.revisions, report.stored_bytes),
        idempotency=[store.get_idempotency(ws, key) for key in keys],
    )


def refused(write: Any) -> NotewellError:
    with pytest.raises(NotewellError) as caught:
        write()
    return caught.value


def test_every_write_over_the_free_plan_note_size_is_refused_before_anything_is_written(
    services: Services, me: Principal
) -> None:
    assert services.deps.store.get_workspace(me.workspace_id).plan is Plan.FREE  # type: ignore[union-attr]
    note = services.notes.create(me, "p", title="Small", body="A small note.").note
    services.notes.update(me, note.id, NoteChanges(body="A small note, edited."))
    # An export from a team workspace, whose plan allows the big note, to import into the free one.
    team = services.auth.create_workspace("team")
    services.workspaces.set_plan(team.id, Plan.TEAM)
    teammate = services.auth.authenticate(services.auth.create_key(team.id).secret)
    assert teammate is not None
    services.notes.create(teammate, "big", title="Big", body=OVER)
    export = list(services.portability.export_lines(teammate, "big"))
    memory_jsonl = ['{"type":"entity","name":"Big","entityType":"note","observations":["' + OVER + '"]}']
    before = state(services, me)

    writes = {
        "create_note": lambda: services.notes.create(me, "p", title="Big", body=OVER, idempotency_key="big-create"),
        "create_note in a new project": lambda: services.notes.create(me, "fresh", title="Big", body=OVER),
        "update_note": lambda: services.notes.update(me, note.id, NoteChanges(body=OVER), expected_version=2),
        "patch_note": lambda: services.notes.patch(
            me, note.id, mode=PatchMode.APPEND, text="y" * (LIMIT - len("A small note, edited."))
        ),
        "remember": lambda: services.memory.remember(me, RememberRequest("p", OVER, idempotency_key="big-remember")),
        "remember in a new project": lambda: services.memory.remember(me, RememberRequest("fresh", OVER)),
        "checkpoint": lambda: services.memory.checkpoint(
            me, "p", summary="Session over.", decisions=["Small decision.", OVER], idempotency_key="big-checkpoint"
        ),
        "checkpoint in a new project": lambda: services.memory.checkpoint(me, "fresh", summary=OVER),
        "import an export": lambda: services.portability.import_file(me, "p", export),
        "import an export into a new project": lambda: services.portability.import_file(me, "fresh", export),
        "import memory.jsonl": lambda: services.portability.import_file(me, "p", memory_jsonl),
    }
    for name, write in writes.items():
        error = refused(write)
        if name.startswith("import"):  # the import lists every problem of the file at once
            assert isinstance(error, InvalidArgumentError) and "50,000" in error.message, name
        else:
            assert isinstance(error, TooLargeError) and error.status == 413, name
            assert "the free plan allows 50,000" in error.message and "team" in error.message, name
        assert state(services, me) == before, f"{name} wrote something"

    at_limit = services.notes.patch(me, note.id, mode=PatchMode.APPEND, text="y" * (LIMIT - 22))
    assert len(at_limit.note.body) == LIMIT and at_limit.note.version == 3  # the limit itself is allowed
