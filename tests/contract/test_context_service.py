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
from notewell.domain.packing import DETAIL_LEVELS, MATCH_READ, SECTION_ORDER, Detail, Section
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
        for budget in range(250, 4000, 50)
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


def entries_of(result: Any) -> dict[str, dict[str, Any]]:
    return {str(e["id"]): e for _, entries in result.packed.sections for e in entries}


def test_without_a_query_standing_knowledge_is_shown_before_general_notes_and_status(
    services: Services, me: Principal
) -> None:
    # A session hook asks with no query: the rules in force, the choices made, what failed and where work stopped
    # must reach it before the project's day-to-day notes, however many newer ones there are.
    standing = [
        add(services, me, f"Rule {n}", f"Handlers never call vendor {n} synchronously; queue it.", NoteType.CONSTRAINT)
        for n in range(6)
    ] + [
        add(services, me, f"Choice {n}", f"We chose queue {n} and turned down Kinesis.", NoteType.DECISION)
        for n in range(6)
    ]
    chatter = [
        add(services, me, f"Status {n}", f"Deploy {n} went out; dashboards look normal today.", NoteType.STATUS)
        for n in range(20)
    ]
    result = context(services, me, detail=Detail.LEAN, max_tokens=700)
    shown = {i for i, e in entries_of(result).items() if "excerpt" in e}
    assert result.packed.omitted > 0, "the budget leaves notes out: the test is about which"
    assert set(standing) <= shown
    assert not set(chatter) <= shown  # what is left out is day-to-day chatter


def test_a_constraint_leads_its_section_before_a_preference_and_a_decision_before_an_architecture_note(
    services: Services, me: Principal
) -> None:
    preference = add(services, me, "Prefer tabs", "Tabs in Makefiles.", NoteType.PREFERENCE, importance=5)
    constraint = add(services, me, "No PII in logs", "Never log emails.", NoteType.CONSTRAINT, importance=2)
    architecture = add(services, me, "Hexagonal", "Ports and adapters.", NoteType.ARCHITECTURE, importance=5)
    decision = add(services, me, "Opaque tokens", "Opaque tokens, not JWTs.", NoteType.DECISION, importance=2)
    sections = ids_in(context(services, me))
    assert sections["constraints"] == [constraint, preference]
    assert sections["decisions"] == [decision, architecture]


def test_a_handoff_is_read_at_length_when_no_query_is_given(services: Services, me: Principal) -> None:
    stopped = "Work stopped at the S3 sink connector: the archive still reads Kinesis."
    body = "Picking up the MSK migration. " + "Every consumer but one reads from MSK now. " * 8 + stopped
    handoff = add(services, me, "Handoff: MSK migration", body, NoteType.HANDOFF)
    fact = add(services, me, "Broker size", "Three brokers. " * 30, NoteType.FACT)
    bare = entries_of(context(services, me, detail=Detail.BALANCED))
    assert stopped in str(bare[handoff]["excerpt"])  # 450 characters in: past a balanced excerpt of 240
    assert len(str(bare[fact]["excerpt"])) <= DETAIL_LEVELS[Detail.BALANCED].excerpt_chars + 1


def test_with_a_query_a_match_shows_its_lead_then_the_sentence_that_answers_it(
    services: Services, me: Principal
) -> None:
    body = (
        "Driver phone numbers and street addresses are personal data under the carrier contract. "
        "They are encrypted at rest in Postgres with pgcrypto and decrypted only in the dispatch view. "
        "Consignee addresses never go into log lines or trace spans: log the stop id instead."
    )
    note = add(services, me, "Personal data in the dispatch platform", body, NoteType.CONSTRAINT)
    for n in range(8):
        add(services, me, f"Depot {n}", f"Depot {n} opens at 5 am; trucks leave by 6.", NoteType.FACT)
    result = context(services, me, detail=Detail.LEAN, query="may I log the consignee address to debug a stop?")
    excerpt = str(entries_of(result)[note]["excerpt"])
    # The note's first sentence says what the rule is about; the answer is read against it.
    assert excerpt.startswith("Driver phone numbers and street addresses are personal data under the carrier contract.")
    assert "…Consignee addresses never go into log lines or trace spans: log the stop id instead." in excerpt


def test_a_focused_excerpt_cuts_a_long_lead_to_a_third_of_it(services: Services, me: Principal) -> None:
    lead = (
        "A request handler in dispatch-api never calls HERE, Samsara, Twilio or any other metered vendor API "
        "synchronously, whatever the endpoint, the tenant or the feature flag, and whoever asks for it."
    )
    answer = "Geocoding goes through the geocode-backfill worker on its SQS queue."
    note = add(services, me, "Paid calls in handlers", f"{lead} Several paragraphs follow. {answer}",
               NoteType.CONSTRAINT)  # fmt: skip
    result = context(services, me, detail=Detail.LEAN, query="which queue does geocoding use?")
    excerpt = str(entries_of(result)[note]["excerpt"])
    shown_lead, _, rest = excerpt.partition("… ")
    assert lead.startswith(shown_lead) and len(shown_lead) < DETAIL_LEVELS[Detail.LEAN].excerpt_chars * MATCH_READ / 3
    assert rest == answer


def test_with_a_query_a_note_that_says_none_of_its_words_is_not_called_relevant(
    tmp_path: Path, clock: FixedClock
) -> None:
    # In a tiny project the vector leg's nearest notes are every note: nearness alone is no match.
    from notewell.adapters.hash_embedder import HashEmbedder
    from notewell.adapters.sqlite import SqliteStore

    store = SqliteStore(tmp_path / "floor.db")
    try:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock, embedder=HashEmbedder())
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        bank = add(services, me, "Bank API polling", "We poll the bank's API every 5 minutes.", NoteType.FACT)
        entries = add(services, me, "Ledger entries", "Ledger entries are immutable; use reversals.", NoteType.FACT)
        relevant = ids_in(context(services, me, query="how do we correct a wrong ledger entry?")).get("relevant", [])
        assert relevant == [entries]
        assert bank not in relevant
    finally:
        store.close()


def test_without_a_query_excerpts_shorten_so_every_rule_gets_a_line_of_its_own(
    services: Services, me: Principal
) -> None:
    # Breadth before depth: a session start needs every rule in force, each with what it says, more than the
    # first few at length and the rest as bare titles.
    rules = [
        add(
            services, me, f"Rule {n}",
            f"Service {n} never writes to the ledger directly; it posts an event and the ledger worker applies it. "
            "Reviews reject a direct write even behind a flag, because replays would apply it twice. The worker "
            "is the only writer, so balances are rebuilt from events alone after an incident.",
            NoteType.CONSTRAINT,
        )
        for n in range(20)
    ]  # fmt: skip
    packed = context(services, me, detail=Detail.BALANCED, max_tokens=1500).packed
    entries = {str(e["id"]): e for _, es in packed.sections for e in es}
    assert all("excerpt" in entries.get(rule, {}) for rule in rules)
    level = DETAIL_LEVELS[Detail.BALANCED].excerpt_chars
    assert all(level // 2 - 1 <= len(str(entries[rule]["excerpt"])) < level for rule in rules)
