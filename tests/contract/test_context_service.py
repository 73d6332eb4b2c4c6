"""get_context over every store: sections, budget rules, scoring, exclusions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Link, NoteStatus, NoteType, Principal
from notewell.domain.packing import DETAIL_LEVELS, SECTION_ORDER, Detail, Section
from notewell.ports import Store
from notewell.services.memory import RememberRequest
from notewell.services.notes import NoteChanges


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


def add(services: Services, me: Principal, title: str, body: str, type: NoteType, **kw: Any) -> str:
    return services.notes.create(me, "api", title=title, body=body, type=type, **kw).note.id


def context(services: Services, me: Principal, **kw: Any) -> Any:
    return services.context.get_context(me, "api", **kw)


def ids_in(result: Any) -> dict[str, list[str]]:
    return {section.value: [str(e["id"]) for e in entries] for section, entries in result.packed.sections}


def populate(services: Services, me: Principal) -> dict[str, str]:
    return {
        "constraint": add(services, me, "No PII in logs", "Never log emails or names.", NoteType.CONSTRAINT),
        "preference": add(services, me, "Prefer small PRs", "Keep PRs under 400 lines.", NoteType.PREFERENCE),
        "decision": add(services, me, "Opaque tokens", "Sessions use opaque tokens in Redis.", NoteType.DECISION),
        "architecture": add(services, me, "Hexagonal core", "Ports and adapters.", NoteType.ARCHITECTURE),
        "failed": add(services, me, "Sticky sessions", "Broke blue-green deploys.", NoteType.FAILED_APPROACH),
        "status": add(services, me, "Status", "Load test pending on staging.", NoteType.STATUS),
        "task": add(
            services, me, "Write runbook", "Runbook for session outages.", NoteType.TASK, status=NoteStatus.PENDING
        ),  # fmt: skip
        "fact": add(services, me, "Redis cluster size", "Three shards, one replica each.", NoteType.FACT),
    }


def test_sections_come_in_the_contract_order_and_each_note_appears_once(services: Services, me: Principal) -> None:
    ids = populate(services, me)
    services.projects.update(me, "api", summary="Session service.", instructions="Run make test before pushing.")
    result = context(services, me)
    names = [section.value for section, _ in result.packed.sections]
    assert names == [s.value for s in SECTION_ORDER if s.value in names]
    sections = ids_in(result)
    assert sections["constraints"] == [ids["constraint"], ids["preference"]] or set(sections["constraints"]) == {
        ids["constraint"],
        ids["preference"],
    }
    assert set(sections["decisions"]) == {ids["decision"], ids["architecture"]}
    assert sections["failed_approaches"] == [ids["failed"]] and sections["status"] == [ids["status"]]
    assert sections["open_items"] == [ids["task"]] and ids["fact"] in sections["recent_changes"]
    every = [i for entries in sections.values() for i in entries]
    assert len(every) == len(set(every)) == len(ids)
    queried = ids_in(context(services, me, query="redis shards"))
    assert ids["fact"] in queried["relevant"] and ids["decision"] in queried["relevant"]  # claimed by the query
    assert ids["decision"] not in queried.get("decisions", [])
    every = [i for entries in queried.values() for i in entries]
    assert len(every) == len(set(every)) == len(ids)
    assert result.packed.header == {"summary": "Session service.", "instructions": "Run make test before pushing."}


def test_a_tiny_budget_keeps_conflicts_degrades_entries_and_lists_every_omission(
    services: Services, me: Principal
) -> None:
    ids = populate(services, me)
    for n in range(23):  # with the 2 of populate, the 25 decisions the section weighs: every live note is a candidate
        add(services, me, f"Decision {n} about caching layer {n}", "Details " * 60, NoteType.DECISION)
    services.notes.update(me, ids["fact"], NoteChanges(status=NoteStatus.DISPUTED))
    result = context(services, me, max_tokens=200)
    packed = result.packed
    assert [c["id"] for c in packed.conflicts] == [ids["fact"]]
    assert packed.spent <= packed.budget == 200
    assert packed.truncated and result.notice is not None and "raise maxTokens" in result.notice
    shown = {str(e["id"]) for _, entries in packed.sections for e in entries}
    omitted = {i for i, _ in packed.omitted_ids}
    project = services.deps.store.get_project(me.workspace_id, "api")
    assert project is not None
    live = {n.id for n in services.deps.store.project_notes(me.workspace_id, project.id, limit=100)} - {ids["fact"]}
    assert shown | omitted <= live and not shown & omitted
    roomy = context(services, me, max_tokens=4000).packed  # enough to list every candidate: none goes unmentioned
    assert not roomy.truncated
    roomy_shown = {str(e["id"]) for _, entries in roomy.sections for e in entries}
    assert roomy_shown | {i for i, _ in roomy.omitted_ids} == live
    degraded = [
        e
        for budget in range(300, 1600, 100)
        for _, entries in context(services, me, max_tokens=budget).packed.sections
        for e in entries
        if "excerpt" not in e
    ]
    assert degraded and all(set(e) == {"id", "title"} for e in degraded)  # a pointer keeps its id


def test_budget_precedence_is_max_tokens_then_project_default_then_detail(services: Services, me: Principal) -> None:
    populate(services, me)
    assert context(services, me).packed.budget == DETAIL_LEVELS[Detail.BALANCED].budget
    assert context(services, me, detail=Detail.LEAN).packed.budget == DETAIL_LEVELS[Detail.LEAN].budget
    assert context(services, me, detail=Detail.DEEP).packed.budget == DETAIL_LEVELS[Detail.DEEP].budget
    services.projects.update(me, "api", default_max_tokens=1500)
    assert context(services, me, detail=Detail.DEEP).packed.budget == 1500
    assert context(services, me, detail=Detail.DEEP, max_tokens=700).packed.budget == 700
    with pytest.raises(InvalidArgumentError):
        context(services, me, max_tokens=10)
    add(services, me, "Long constraint", "Every request must carry a trace id. " * 40, NoteType.CONSTRAINT)
    lean = context(services, me, detail=Detail.LEAN, max_tokens=5000).packed
    deep = context(services, me, detail=Detail.DEEP, max_tokens=5000).packed
    assert lean.spent < deep.spent  # the detail level still sets the excerpt length


def test_superseded_and_historical_notes_are_left_out_unless_asked_for(services: Services, me: Principal) -> None:
    old = add(services, me, "JWT sessions", "Sessions use JWTs.", NoteType.DECISION)
    new = add(services, me, "Opaque sessions", "Sessions use opaque tokens.", NoteType.DECISION, supersedes=[old])
    past = add(services, me, "Old status", "We were on Heroku.", NoteType.STATUS)
    services.notes.update(me, past, NoteChanges(status=NoteStatus.HISTORICAL))
    shown = {i for entries in ids_in(context(services, me)).values() for i in entries}
    assert new in shown and old not in shown and past not in shown
    everything = {i for entries in ids_in(context(services, me, include_historical=True)).values() for i in entries}
    assert {old, new, past} <= everything


def test_an_old_canonical_decision_stays_but_ranks_below_a_recent_equal_one(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    old = add(services, me, "Postgres", "Postgres is the datastore.", NoteType.DECISION, canonical=True)
    for n in range(3):
        add(services, me, f"Minor {n}", "A small decision.", NoteType.DECISION, importance=1)
    clock.advance(days=730)
    recent = add(services, me, "Redis", "Redis is the cache.", NoteType.DECISION, canonical=True)
    decisions = ids_in(context(services, me))["decisions"]
    assert decisions[:2] == [recent, old]  # canonical first, then recency decides; two years old is not zero


def test_notes_other_notes_link_to_rank_higher(services: Services, me: Principal) -> None:
    plain = add(services, me, "Queue choice", "SQS for jobs.", NoteType.DECISION)
    linked = add(services, me, "Storage choice", "S3 for files.", NoteType.DECISION)
    for n in range(3):
        add(services, me, f"Fact {n}", "Depends on storage.", NoteType.FACT, links=[Link(linked, "depends_on")])
    decisions = ids_in(context(services, me))["decisions"]
    assert decisions.index(linked) < decisions.index(plain)


def test_an_unknown_project_gets_an_empty_context_that_says_how_to_start(services: Services, me: Principal) -> None:
    result = services.context.get_context(me, "ghost")
    assert result.exists is False and result.packed.sections == [] and result.packed.spent <= result.packed.budget
    assert result.notice is not None and "remember(project='ghost'" in result.notice


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    notes=st.lists(
        st.tuples(st.sampled_from(list(NoteType)), st.integers(1, 5), st.text(min_size=1, max_size=400)),
        min_size=0, max_size=25,
    ),
    budget=st.integers(200, 2000),
    detail=st.sampled_from(list(Detail)),
)  # fmt: skip
def test_spent_never_exceeds_the_budget(
    services: Services, me: Principal, notes: list[tuple[NoteType, int, str]], budget: int, detail: Detail
) -> None:
    project = f"p{abs(hash((tuple(notes), budget))) % 10**9}"
    for note_type, importance, body in notes:
        request = RememberRequest(project, body.strip() or "x", type=note_type, importance=importance, force=True)
        services.memory.remember(me, request)
    result = services.context.get_context(me, project, query="x", detail=detail, max_tokens=budget)
    assert result.packed.spent <= result.packed.budget == budget


def test_a_section_with_more_notes_than_are_weighed_says_so(services: Services, me: Principal) -> None:
    for n in range(26):  # one more than a section weighs
        add(services, me, f"Decision {n}", f"We decided item {n} of the rollout plan.", NoteType.DECISION)
    add(services, me, "No PII", "Never log emails.", NoteType.CONSTRAINT)
    packed = context(services, me, max_tokens=8000).packed
    assert packed.beyond == [Section.DECISIONS]  # 25 weighed of 26; one constraint is all there is
    assert "More decisions exist than were weighed: pass a query, or search_notes with types" in packed.text
    assert packed.spent <= packed.budget
