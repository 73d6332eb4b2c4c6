"""get_context's reads, on every store: the candidates it weighs are the same whether the store reads them lean (a
section index projecting the start of each body, DynamoDB) or whole (SQLite), and what a model reads is the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain import packing, rules
from notewell.domain.model import Note, NoteStatus, NoteType, Principal
from notewell.domain.packing import Detail, Section
from notewell.ports import Store


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


def add(services: Services, me: Principal, n: int, type: NoteType, clock: FixedClock, **kw: Any) -> Note:
    clock.advance(seconds=1)
    return services.notes.create(me, "api", title=f"Note {n}", body=f"Body of note {n}.", type=type, **kw).note


def test_recent_changes_are_the_newest_live_notes_even_when_one_section_holds_them_all(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """A burst of tasks fills recent changes on its own: the lean read reads that section further (a top-up)."""
    older = [add(services, me, n, NoteType.FACT, clock) for n in range(10)]
    tasks = [add(services, me, 100 + n, NoteType.TASK, clock, status=NoteStatus.PENDING) for n in range(45)]
    gone = add(services, me, 999, NoteType.DECISION, clock)
    services.notes.delete(me, gone.id)
    project = services.deps.store.get_project(me.workspace_id, "api")
    assert project is not None
    read = services.deps.store.context_notes(me.workspace_id, project.id, per_section=26, recent=40)
    assert [n.id for n in read.recent] == [t.id for t in reversed(tasks)][:40]
    assert [n.id for n in read.sections[Section.OPEN_ITEMS]] == [t.id for t in reversed(tasks)][:26]
    assert read.sections[Section.DECISIONS] == []  # deleted notes are no candidates
    assert all(n.id not in {o.id for o in older} for n in read.recent)


def test_a_long_body_shows_the_same_excerpt_at_every_detail(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    body = "Sessions use opaque tokens stored in Redis. " * 40  # 1,760 characters
    note = services.notes.create(me, "api", title="Tokens", body=body, type=NoteType.DECISION).note
    for detail in Detail:
        result = services.context.get_context(me, "api", detail=detail)
        (entry,) = [e for _, entries in result.packed.sections for e in entries if e["id"] == note.id]
        assert entry["excerpt"] == rules.excerpt(body, packing.DETAIL_LEVELS[detail].excerpt_chars)
        assert entry["bodySize"] == len(body)
