"""Hybrid retrieval over every store, with the deterministic test embedder: which mode answers, what the vector leg
adds, and falling back (and saying so) when either leg fails."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore, SqliteVectorIndex
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain import calibration
from notewell.domain.calibration import Calibration, HybridWeights
from notewell.domain.model import NoteType, Principal, SearchFilters, SearchHit
from notewell.ports import EmbeddingUnavailableError, SearchUnavailableError, Store
from notewell.services.meaning import BREAKER
from notewell.services.notes import NoteChanges
from notewell.services.search import SearchMode

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from notewell.ports import Vector


class FailingEmbedder(HashEmbedder):
    """An embedder whose model has gone away: every call fails, and the test can count them."""

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        self.calls += 1
        raise EmbeddingUnavailableError("model crashed")


class DownIndex:
    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        raise SearchUnavailableError("index unreachable")


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def services(store: Store, clock: FixedClock, embedder: HashEmbedder) -> Services:
    return bootstrap(Settings(), store=store, clock=clock, embedder=embedder)


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[SqliteStore]:
    """Vectors live only in the SQLite store until the AWS search index (issue 13): these tests run there alone."""
    store = SqliteStore(tmp_path / "notewell.db")
    yield store
    store.close()


def signed_in(services: Services) -> Principal:
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    return me


def create(services: Services, me: Principal, title: str, body: str, **extra: object) -> str:
    return services.notes.create(me, "p", title=title, body=body, **extra).note.id  # type: ignore[arg-type]


def test_semantic_search_is_hybrid_where_the_store_keeps_vectors_and_says_keywords_elsewhere(
    services: Services, me: Principal, store: Store
) -> None:
    wanted = create(services, me, "Frontend hosting", "We deploy the frontend to Vercel from the main branch.")
    create(services, me, "Billing", "Invoices are stored as integer cents.")
    outcome = services.search.run(me, "p", "deploy frontend", semantic=True)
    assert outcome.hits[0].note.id == wanted
    if isinstance(store, SqliteStore):
        assert outcome.mode is SearchMode.HYBRID
        assert outcome.fallback is None
    else:  # DynamoDB keeps no vectors yet: the keyword mode that answered, and why
        assert outcome.mode is SearchMode.RANKED_SCAN
        assert outcome.fallback is not None and "vectors" in outcome.fallback


def test_without_semantic_the_keyword_mode_answers(services: Services, me: Principal, store: Store) -> None:
    create(services, me, "Frontend hosting", "We deploy the frontend to Vercel.")
    outcome = services.search.run(me, "p", "frontend")
    assert outcome.mode is (SearchMode.FULLTEXT if isinstance(store, SqliteStore) else SearchMode.RANKED_SCAN)


def test_a_note_vector_is_stored_on_write_and_found_by_the_vector_leg(sqlite: SqliteStore, clock: FixedClock) -> None:
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    note = create(services, me, "Release train", "Deploys happen every Tuesday after the freeze.")
    meaning = services.search.meaning
    assert meaning is not None
    query = meaning.embed_one("Release train\nDeploys happen every Tuesday after the freeze.")
    project_id = services.notes.get(me, note).note.project_id
    assert meaning.nearest(me.workspace_id, project_id, query, 5)[0] == (note, pytest.approx(1.0, abs=1e-5))


def test_filters_and_deletion_hold_for_notes_only_the_vector_leg_found(sqlite: SqliteStore, clock: FixedClock) -> None:
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    kept = create(services, me, "Queue choice", "Jobs go through SQS with a dead-letter queue.", type=NoteType.DECISION)
    gone = create(services, me, "Queue choice (old)", "Jobs go through SQS without a dead-letter queue.")
    create(services, me, "Queue note", "Jobs go through SQS, and the DLQ is watched.", type=NoteType.NOTE)
    services.notes.delete(me, gone)
    outcome = services.search.run(
        me, "p", "jobs sqs dead-letter", semantic=True, filters=SearchFilters(types=frozenset({NoteType.DECISION}))
    )
    assert outcome.mode is SearchMode.HYBRID
    assert [h.note.id for h in outcome.hits] == [kept]


def test_a_failing_model_falls_back_to_keywords_says_why_and_rests(sqlite: SqliteStore, clock: FixedClock) -> None:
    failing = FailingEmbedder()
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=failing)
    me = signed_in(services)
    note = create(services, me, "Frontend hosting", "We deploy the frontend to Vercel.")  # stored all the same
    first = services.search.run(me, "p", "frontend", semantic=True)
    assert (first.mode, [h.note.id for h in first.hits]) == (SearchMode.FULLTEXT, [note])
    assert first.fallback is not None and "model crashed" in first.fallback
    calls = failing.calls
    services.search.run(me, "p", "frontend", semantic=True)
    assert failing.calls == calls  # resting: the broken model is not asked again at once
    clock.advance(seconds=BREAKER.total_seconds())
    services.search.run(me, "p", "frontend", semantic=True)
    assert failing.calls == calls + 1


def test_a_down_keyword_index_leaves_the_vector_leg_fused_with_the_ranked_scan(
    sqlite: SqliteStore, clock: FixedClock
) -> None:
    services = bootstrap(Settings(), store=sqlite, search=DownIndex(), clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    note = create(services, me, "Frontend hosting", "We deploy the frontend to Vercel.")
    create(services, me, "Billing", "Invoices are stored as integer cents.")
    outcome = services.search.run(me, "p", "deploy the frontend to Vercel", semantic=True)
    assert outcome.mode is SearchMode.HYBRID  # the keyword leg is the in-process scan now, still a ranking
    assert [h.note.id for h in outcome.hits][0] == note


class CountingIndex(SqliteFullTextIndex):
    """SQLite's full-text index, counting which of its rankings each call used."""

    def __init__(self, store: SqliteStore) -> None:
        super().__init__(store)
        self.used: list[str] = []

    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        self.used.append("search")
        return super().search(workspace_id, project_id, query, filters, limit)

    def ranked_ids(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        self.used.append("ranked_ids")
        return super().ranked_ids(workspace_id, project_id, query, filters, limit)

    def ranked_with_ceiling(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> tuple[list[tuple[str, float]], float]:
        self.used.append("ranked_with_ceiling")
        return super().ranked_with_ceiling(workspace_id, project_id, query, filters, limit)

    def candidates(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int, *, min_terms: int = 1
    ) -> list[SearchHit]:
        self.used.append("candidates")
        return super().candidates(workspace_id, project_id, query, filters, limit, min_terms=min_terms)


def test_a_search_reads_keyword_ids_and_candidates_keep_the_index_s_cheaper_ranking(
    sqlite: SqliteStore, clock: FixedClock
) -> None:
    """search_notes fuses the keyword leg's ids (with the query's ceiling, which puts them on an absolute scale) and
    reads only the notes it keeps; get_context's relevant notes and remember's candidates take FTS5's own ranking,
    which costs less than the project-scoped BM25 of a search."""
    index = CountingIndex(sqlite)
    services = bootstrap(Settings(), store=sqlite, search=index, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    wanted = create(services, me, "Frontend hosting", "We deploy the frontend to Vercel from the main branch.")
    create(services, me, "Billing", "Invoices are stored as integer cents.")

    index.used.clear()
    outcome = services.search.run(me, "p", "deploy frontend", semantic=True)
    assert (outcome.mode, outcome.hits[0].note.id, index.used) == (SearchMode.HYBRID, wanted, ["ranked_with_ceiling"])
    assert "Vercel" in outcome.hits[0].snippet

    body = "Timeouts and pools are described below. " * 15 + "Every retry waits."
    long = create(services, me, "Payments client", body)
    found = services.search.run(me, "p", "retries", semantic=True)
    assert found.hits[0].note.id == long and "Every retry waits." in found.hits[0].snippet  # matched by its stem

    index.used.clear()
    context = services.context.get_context(me, "p", query="deploy frontend")
    assert wanted in str(context.packed.sections) and index.used == ["candidates"]


def test_an_edit_replaces_the_note_vector(sqlite: SqliteStore, clock: FixedClock) -> None:
    embedder = HashEmbedder()
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=embedder)
    me = signed_in(services)
    note = create(services, me, "Hosting", "We deploy the frontend to Vercel.")
    services.notes.update(me, note, NoteChanges(body="Invoices are stored as integer cents."), expected_version=1)
    stored = SqliteVectorIndex(sqlite, embedder.dimensions).vectors_of(me.workspace_id, [note], embedder.model_id)
    assert stored[note].version == 2
    [cents] = embedder.embed(["Hosting\nInvoices are stored as integer cents."])
    assert stored[note].vector == pytest.approx(cents, abs=1e-6)


def test_vectors_never_cross_workspaces(sqlite: SqliteStore, clock: FixedClock) -> None:
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    create(services, me, "Hosting", "We deploy the frontend to Vercel.")
    other = services.auth.create_workspace("globex")
    them = services.auth.authenticate(services.auth.create_key(other.id).secret)
    assert them is not None
    services.notes.create(them, "p", title="Mine", body="Nothing about hosting here.")
    hits = services.search.run(them, "p", "deploy the frontend to Vercel", semantic=True).hits
    assert hits and all(h.note.workspace_id == other.id for h in hits)


def test_a_note_naming_who_the_query_names_is_lifted_above_closer_matches(
    sqlite: SqliteStore, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    create(services, me, "Exam week", "The maths exam results came back and the class average went up.")
    lisa = create(services, me, "Grades", "Lisa got her grades back.")

    def ranked(query: str) -> list[str]:
        outcome = services.search.run(me, "p", query, semantic=True, limit=5)
        assert outcome.mode is SearchMode.HYBRID
        return [h.note.id for h in outcome.hits]

    # The hash model has no entry in the calibration table, so its legs are fused by rank, names a list of their own.
    assert ranked("maths exam results for Lisa")[0] == lisa
    assert ranked("how were the maths exam results for Lisa")[0] == lisa  # 'how' opens it: Lisa is the name

    def weigh_names(entity: float) -> None:  # tuned weights for it, as a calibrated model has
        entry = Calibration(duplicate=1.0, related=1.0, hybrid=HybridWeights(vector=0.85, entity=entity))
        monkeypatch.setattr(calibration, "CALIBRATIONS", {HashEmbedder().model_id: entry})

    weigh_names(0.0)
    assert ranked("maths exam results for Lisa")[0] != lisa
    weigh_names(1.0)
    assert ranked("maths exam results for Lisa")[0] == lisa


class ConceptEmbedder(HashEmbedder):
    """A model that knows a little meaning: each concept its words name is one axis, so "latitude" and "geocoded"
    are close and share no word. Texts naming no concept point along an axis of their own."""

    CONCEPTS: ClassVar[dict[str, str]] = {
        "latitude": "place", "longitude": "place", "geocoded": "place", "positions": "place", "coordinates": "place",
        "worker": "jobs", "queue": "jobs",
    }  # fmt: skip

    def _one(self, text: str) -> Vector:
        axes = ["place", "jobs"]
        counts = [0.0] * self.dimensions
        for word in text.lower().replace(".", " ").replace(",", " ").replace("?", " ").split():
            if word in self.CONCEPTS:
                counts[axes.index(self.CONCEPTS[word])] += 1.0
        if not any(counts):
            counts[len(axes)] = 1.0
        norm = sum(x * x for x in counts) ** 0.5
        return tuple(x / norm for x in counts)


def test_a_long_question_s_chatter_does_not_bury_the_note_that_answers_it(
    sqlite: SqliteStore, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question asked at the end of some chatter: the note sharing the chatter's words holds a small share of what
    was asked, the one that answers shares no word with it. Scaled by the best keyword hit, the chatter note counted
    as a perfect keyword match and came first; as a share of the query it counts for what it holds."""
    embedder = ConceptEmbedder()
    entry = Calibration(duplicate=1.0, related=1.0, hybrid=HybridWeights(vector=0.5, entity=0.0))
    monkeypatch.setattr(calibration, "CALIBRATIONS", {embedder.model_id: entry})
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=embedder)
    me = signed_in(services)
    create(services, me, "Team social", "The game night and the party after the long weekend were great fun.")
    answer = create(services, me, "Geocoding", "Stop positions are geocoded by Pelias in a backfill worker.")
    create(services, me, "Billing", "Invoices are pushed to NetSuite every night.")
    question = (
        "Lovely weekend, the game night was great and the party was fun. Quick one though: where do the drop-off "
        "points get their latitude and longitude from?"
    )
    outcome = services.search.run(me, "p", question, semantic=True, limit=3)
    assert outcome.mode is SearchMode.HYBRID
    assert outcome.hits[0].note.id == answer


def test_a_hybrid_search_reports_how_many_notes_its_legs_proposed(sqlite: SqliteStore, clock: FixedClock) -> None:
    services = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(services)
    for number in range(12):
        create(services, me, f"Deploy note {number}", f"Deploy step {number}: run the pipeline for service {number}.")
    create(services, me, "Billing", "Invoices are stored as integer cents.")
    outcome = services.search.run(me, "p", "deploy pipeline", semantic=True, limit=3)
    assert outcome.mode is SearchMode.HYBRID and len(outcome.hits) == 3
    # every note of this small project is proposed by one leg or the other: 12 by their words, all 13 by vectors
    assert outcome.pool == 13
    assert services.search.run(me, "p", "deploy pipeline", limit=3).pool is None  # keywords alone fuse nothing


class BusyEmbedder(HashEmbedder):
    """A model on a busy machine: a write's call with more than a few texts runs past its budget."""

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        if timeout is not None and len(texts) > 4:
            self.calls += 1
            raise EmbeddingUnavailableError(f"The embedding model ran past its {timeout:g} s budget.")
        return super().embed(texts, timeout=timeout)


def test_an_import_on_a_busy_machine_still_gives_every_note_its_vector(sqlite: SqliteStore, clock: FixedClock) -> None:
    """A batch of an import that runs past the write budget is embedded again in smaller parts: before, its notes
    were left without vectors until a reindex, and search could not find them by meaning."""
    writer = bootstrap(Settings(), store=sqlite, clock=clock, embedder=HashEmbedder())
    me = signed_in(writer)
    for number in range(20):
        create(writer, me, f"Runbook {number}", f"Step {number}: restart worker {number} after the deploy.")
    lines = list(writer.portability.export_lines(me, "p"))

    busy = bootstrap(Settings(), store=sqlite, clock=clock, embedder=BusyEmbedder())
    assert busy.portability.import_file(me, "copy", lines).notes_written == 20
    assert busy.meaning is not None and busy.meaning.backlog() == 0
