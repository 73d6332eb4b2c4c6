"""search_notes over every store: the mode each store answers with, filters, and falling back when an index fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from notewell.adapters import sqlite as sqlite_adapter
from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import NoteStatus, NoteType, Principal, SearchFilters, SearchHit
from notewell.ports import SearchUnavailableError, Store
from notewell.services import search as search_module
from notewell.services.notes import NoteChanges
from notewell.services.search import SearchMode


class DownIndex:
    """A full-text index that is down: every query fails the way a lost connection would."""

    def __init__(self) -> None:
        self.calls = 0

    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        self.calls += 1
        raise SearchUnavailableError("index unreachable")


def seeded(services: Services) -> tuple[Principal, dict[str, str]]:
    workspace = services.auth.create_workspace("acme")
    principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert principal is not None
    notes = services.notes
    ids = {
        "redis": notes.create(
            principal,
            "p",
            title="Redis for sessions",
            body="Sessions live in Redis.",
            type=NoteType.DECISION,
            tags=["cache"],
        ).note.id,
        "memcached": notes.create(
            principal,
            "p",
            title="Memcached tried",
            body="Memcached evicted sessions.",
            type=NoteType.FAILED_APPROACH,
            tags=["cache"],
        ).note.id,
        "deploy": notes.create(
            principal, "p", title="Deploys", body="Blue-green deploys via SAM.", type=NoteType.PROCEDURE
        ).note.id,
        "other": notes.create(principal, "q", title="Sessions elsewhere", body="Sessions in project q.").note.id,
    }
    return principal, ids


def test_each_store_answers_with_its_best_keyword_mode(store: Store, tmp_path: Path) -> None:
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    principal, ids = seeded(services)
    outcome = services.search.run(principal, "p", "sessions")
    expected = SearchMode.FULLTEXT if isinstance(store, SqliteStore) else SearchMode.RANKED_SCAN
    assert outcome.mode is expected
    assert {h.note.id for h in outcome.hits} == {ids["redis"], ids["memcached"]}  # never project q's note
    assert all(h.snippet for h in outcome.hits)
    assert services.search.run(principal, "p", "sessions", semantic=True).mode is expected


def test_filters_and_deletion_narrow_results_on_every_store(store: Store, tmp_path: Path) -> None:
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    principal, ids = seeded(services)
    by_type = services.search.run(
        principal, "p", "sessions", filters=SearchFilters(types=frozenset({NoteType.DECISION}))
    )
    assert [h.note.id for h in by_type.hits] == [ids["redis"]]
    services.notes.update(principal, ids["memcached"], NoteChanges(status=NoteStatus.HISTORICAL))
    by_status = services.search.run(
        principal, "p", "sessions", filters=SearchFilters(statuses=frozenset({NoteStatus.HISTORICAL}))
    )
    assert [h.note.id for h in by_status.hits] == [ids["memcached"]]
    by_tag = services.search.run(principal, "p", "sessions", filters=SearchFilters(tags=frozenset({"cache"})))
    assert len(by_tag.hits) == 2
    services.notes.delete(principal, ids["redis"])
    assert [h.note.id for h in services.search.run(principal, "p", "sessions").hits] == [ids["memcached"]]


def test_a_down_index_falls_back_to_the_ranked_scan_and_says_so(store: Store, tmp_path: Path) -> None:
    index = DownIndex()
    services = bootstrap(Settings(data_dir=tmp_path), store=store, search=index)
    principal, ids = seeded(services)
    outcome = services.search.run(principal, "p", "blue-green deploys", semantic=True)
    assert index.calls == 1
    assert outcome.mode is SearchMode.RANKED_SCAN
    assert [h.note.id for h in outcome.hits] == [ids["deploy"]]


def test_a_ranking_failure_after_a_down_index_ends_in_substring(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = bootstrap(Settings(data_dir=tmp_path), store=store, search=DownIndex())
    principal, ids = seeded(services)

    def broken(*args: object, **kwargs: object) -> list[SearchHit]:
        raise ArithmeticError("a ranking bug")

    monkeypatch.setattr(search_module.ranking, "bm25", broken)
    outcome = services.search.run(principal, "p", "blue-green deploys")
    assert outcome.mode is SearchMode.SUBSTRING
    assert [h.note.id for h in outcome.hits] == [ids["deploy"]]


def test_an_unknown_project_is_an_empty_answer_not_an_error(store: Store, tmp_path: Path) -> None:
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    principal, _ = seeded(services)
    outcome = services.search.run(principal, "ghost", "anything")
    assert outcome.hits == [] and outcome.project_exists is False
    with pytest.raises(InvalidArgumentError):
        services.search.run(principal, "p", "  ")


def test_other_forms_of_a_word_are_found_on_every_store(store: Store, tmp_path: Path) -> None:
    # SQLite's index stems words (porter): the in-process ranking of other stores must find the same notes.
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    principal, ids = seeded(services)
    caching = services.notes.create(principal, "p", title="Caching", body="Redis caches rendered pages.").note.id
    assert {h.note.id for h in services.search.run(principal, "p", "cache").hits} == {
        caching, ids["redis"], ids["memcached"]  # the last two by their tag
    }  # fmt: skip
    assert [h.note.id for h in services.search.run(principal, "p", "deploying").hits] == [ids["deploy"]]
    assert [h.note.id for h in services.search.run(principal, "p", "evicting").hits] == [ids["memcached"]]


def test_a_search_sees_every_write_before_it_even_for_words_in_most_notes(tmp_path: Path) -> None:
    """SQLite's full-text index keeps the matches of a word in many notes between searches (they cost a search
    most); a write, an edit or a deletion in between must show in the next answer all the same."""
    sqlite = SqliteStore(tmp_path / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=tmp_path), store=sqlite)
        me, _ = seeded(services)
        many = sqlite_adapter.CACHED_POSTINGS_ROWS + 5
        made = [
            services.notes.create(me, "p", title=f"Job {n}", body=f"The service runs job {n} every night.").note.id
            for n in range(many)
        ]

        def found(query: str) -> list[str]:
            return [h.note.id for h in services.search.run(me, "p", query, limit=10).hits]

        assert len(found("the service runs")) == 10
        late = services.notes.create(me, "p", title="Late", body="The service runs the late job twice.").note.id
        assert found("the service runs the late job twice")[0] == late
        services.notes.update(me, late, NoteChanges(body="Moved to the batch host."), expected_version=1)
        assert late not in found("the service runs twice")
        services.notes.delete(me, made[0])
        assert made[0] not in found(f"the service runs job {0}")
    finally:
        sqlite.close()
