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
from notewell.services.memory import CONFLICTS_SHOWN
from notewell.services.notes import NoteChanges


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
    read = services.deps.store.context_notes(me.workspace_id, project.id, per_section=26, recent=40, attention=20)
    assert [n.id for n in read.recent] == [t.id for t in reversed(tasks)][:40]
    assert [n.id for n in read.sections[Section.OPEN_ITEMS]] == [t.id for t in reversed(tasks)][:26]
    assert read.sections[Section.DECISIONS] == []  # deleted notes are no candidates
    assert all(n.id not in {o.id for o in older} for n in read.recent)


def test_recent_changes_interleave_notes_of_no_section_with_the_sections_newest(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """Notes of no typed section (facts) count for recent changes exactly where their time puts them, older ones
    not at all, however the store reads them."""
    old_facts = [add(services, me, n, NoteType.FACT, clock) for n in range(10)]
    decisions = [add(services, me, 100 + n, NoteType.DECISION, clock) for n in range(30)]
    new_facts = [add(services, me, 200 + n, NoteType.FACT, clock) for n in range(3)]
    constraints = [add(services, me, 300 + n, NoteType.CONSTRAINT, clock) for n in range(10)]
    project = services.deps.store.get_project(me.workspace_id, "api")
    assert project is not None
    read = services.deps.store.context_notes(me.workspace_id, project.id, per_section=26, recent=25, attention=20)
    expected = [*reversed(constraints), *reversed(new_facts), *list(reversed(decisions))[:12]]
    assert [n.id for n in read.recent] == [n.id for n in expected]
    assert not {n.id for n in old_facts} & {n.id for n in read.recent}


def test_an_old_rule_is_weighed_however_many_newer_notes_share_its_section(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """Constraints stay in force however old, and the newest handoff is where work resumes: a run of newer
    preferences or status notes (more than a section weighs) must not push them out before they are ranked."""
    old_rules = [add(services, me, n, NoteType.CONSTRAINT, clock, importance=5) for n in range(3)]
    handoff = add(services, me, 50, NoteType.HANDOFF, clock)
    for n in range(30):
        add(services, me, 100 + n, NoteType.PREFERENCE, clock)
        add(services, me, 200 + n, NoteType.STATUS, clock)
    project = services.deps.store.get_project(me.workspace_id, "api")
    assert project is not None
    read = services.deps.store.context_notes(me.workspace_id, project.id, per_section=26, recent=25, attention=20)
    constraints = [n for n in read.sections[Section.CONSTRAINTS] if n.type is NoteType.CONSTRAINT]
    assert [n.id for n in constraints] == [n.id for n in reversed(old_rules)]
    assert handoff.id in {n.id for n in read.sections[Section.STATUS]}
    assert sum(n.type is NoteType.PREFERENCE for n in read.sections[Section.CONSTRAINTS]) == 26
    shown = shown_ids(services.context.get_context(me, "api", detail=Detail.DEEP))
    assert {n.id for n in old_rules} <= set(shown) and handoff.id in shown


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


def test_an_excerpt_leaves_a_notes_asides_out_so_the_rule_after_them_is_read(services: Services, me: Principal) -> None:
    body = (
        "A request handler (the REST app, not the workers) never calls a metered vendor API (HERE, Samsara) "
        "synchronously: it enqueues the lookup. " + "The workers retry the lookup with backoff. " * 6
    )
    note = services.notes.create(me, "api", title="No vendor calls in handlers", body=body, type=NoteType.CONSTRAINT)
    result = services.context.get_context(me, "api", detail=Detail.LEAN)  # 100-character excerpts
    (entry,) = [e for _, entries in result.packed.sections for e in entries if e["id"] == note.note.id]
    assert entry["excerpt"].startswith("A request handler never calls a metered vendor API synchronously: it enqueues")
    assert entry["excerpt"].endswith("…")  # the body goes on


def shown_ids(result: Any) -> list[str]:
    return [e["id"] for _, entries in result.packed.sections for e in entries]


def test_the_newest_notes_needing_attention_are_the_conflicts_and_older_ones_wait_their_turn(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """Every store: get_context lists the newest CONFLICTS_SHOWN disputed notes as conflicts (never again in a
    section); a disputed note older than those is no section candidate either, until the newer ones are settled."""
    settled = [add(services, me, n, NoteType.DECISION, clock) for n in range(3)]
    disputed = [
        add(services, me, 100 + n, NoteType.DECISION, clock, status=NoteStatus.DISPUTED)
        for n in range(CONFLICTS_SHOWN + 1)
    ]
    result = services.context.get_context(me, "api", detail=Detail.DEEP)
    listed = [c["id"] for c in result.packed.conflicts]
    assert listed == [d.id for d in reversed(disputed)][:CONFLICTS_SHOWN]
    assert disputed[0].id not in listed and disputed[0].id not in shown_ids(result)
    assert {s.id for s in settled} <= set(shown_ids(result))

    services.notes.update(me, disputed[-1].id, NoteChanges(status=NoteStatus.CURRENT))  # settled: its turn ends
    result = services.context.get_context(me, "api", detail=Detail.DEEP)
    listed = [c["id"] for c in result.packed.conflicts]
    assert disputed[0].id in listed and disputed[-1].id not in listed
    assert disputed[-1].id in shown_ids(result)  # back among the decisions


def test_an_unfinished_supersession_names_the_note_that_supersedes_it(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """A superseded note set back to current: the conflict says which note supersedes it and how to finish, even
    where get_context reads its candidates lean."""
    old = add(services, me, 1, NoteType.DECISION, clock)
    clock.advance(seconds=1)
    new = services.notes.create(
        me, "api", title="Note 2", body="Body of note 2.", type=NoteType.DECISION, supersedes=[old.id]
    ).note
    services.notes.update(me, old.id, NoteChanges(status=NoteStatus.CURRENT))
    (conflict,) = services.context.get_context(me, "api").packed.conflicts
    assert conflict["id"] == old.id and conflict["kind"] == "unfinished_supersession"
    assert f"update_note(id='{new.id}', supersedes=['{old.id}'])" in str(conflict["message"])
