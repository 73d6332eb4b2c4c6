"""SqliteFullTextIndex: FTS5 ranking, stemming, filters, scoping, hostile input and failure."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.adapters import sqlite as sqlite_adapter
from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore, match_expression, split_terms
from notewell.domain import rules
from notewell.domain.model import Note, NoteStatus, NoteType, NoteWrite, SearchFilters, SearchHit
from notewell.ports import SearchUnavailableError

WS = "ws_alpha"
PROJECT = "prj_one"
T0 = "2026-01-05T09:00:00.000Z"
NO_FILTERS = SearchFilters()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    sqlite_store = SqliteStore(tmp_path / "notewell.db")
    try:
        yield sqlite_store
    finally:
        sqlite_store.close()


@pytest.fixture
def index(store: SqliteStore) -> SqliteFullTextIndex:
    return SqliteFullTextIndex(store)


def make_note(n: int, title: str, body: str = "", **fields: object) -> Note:
    values: dict[str, object] = {"workspace_id": WS, "project_id": PROJECT, **fields}
    return Note(
        id=f"n_{n:026d}",
        title=title,
        body=body,
        version=1,
        created_at=T0,
        updated_at=T0,
        author="key_test",
        write_id=f"w_{n}",
        **values,  # type: ignore[arg-type]
    )


def add(store: SqliteStore, *notes: Note) -> None:
    for note in notes:
        store.commit(note.workspace_id, [NoteWrite(note, expected_version=None)], revision_cap=50)


def ids(hits: list[SearchHit]) -> list[str]:
    """The notes' numbers, in hit order."""
    return [str(int(hit.note.id[2:])) for hit in hits]


def test_a_title_match_ranks_above_a_body_match(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(
        store,
        make_note(1, "Deploy checklist", "Before shipping, rotate the webhook secret."),
        make_note(2, "Webhook secret rotation", "Rotate every quarter."),
        make_note(3, "Unrelated", "Nothing to see."),
    )

    hits = index.search(WS, PROJECT, "webhook", NO_FILTERS, 10)

    assert ids(hits) == ["2", "1"]
    assert hits[0].score > hits[1].score > 0


def test_word_forms_match_through_stemming_and_diacritics(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, make_note(1, "Jobs", "The importer is running nightly."), make_note(2, "Menu", "Café opening hours."))

    assert ids(index.search(WS, PROJECT, "run", NO_FILTERS, 10)) == ["1"]
    assert ids(index.search(WS, PROJECT, "runs", NO_FILTERS, 10)) == ["1"]
    assert ids(index.search(WS, PROJECT, "cafe", NO_FILTERS, 10)) == ["2"]


def test_any_word_of_the_query_is_enough_and_more_words_rank_higher(
    store: SqliteStore, index: SqliteFullTextIndex
) -> None:
    add(
        store,
        make_note(1, "Cache", "Redis cache for sessions."),
        make_note(2, "Sessions", "Sessions expire after an hour."),
        make_note(3, "Both", "The redis cache holds sessions that expire."),
    )

    hits = index.search(WS, PROJECT, "redis expire banana", NO_FILTERS, 10)

    assert ids(hits)[0] == "3"
    assert set(ids(hits)) == {"1", "2", "3"}


def test_tags_are_searched(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, make_note(1, "Login", "Password rules.", tags=("authentication",)), make_note(2, "Other", "x"))

    assert ids(index.search(WS, PROJECT, "authentication", NO_FILTERS, 10)) == ["1"]


def test_filters_by_type_status_and_tag(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(
        store,
        make_note(1, "Queue decision", "queue", type=NoteType.DECISION, tags=("infra",)),
        make_note(2, "Queue fact", "queue", type=NoteType.FACT, tags=("infra", "aws")),
        make_note(3, "Queue old", "queue", type=NoteType.DECISION, status=NoteStatus.HISTORICAL),
    )

    def found(filters: SearchFilters) -> set[str]:
        return set(ids(index.search(WS, PROJECT, "queue", filters, 10)))

    assert found(NO_FILTERS) == {"1", "2", "3"}
    assert found(SearchFilters(types=frozenset({NoteType.DECISION}))) == {"1", "3"}
    assert found(SearchFilters(statuses=frozenset({NoteStatus.CURRENT}))) == {"1", "2"}
    assert found(SearchFilters(tags=frozenset({"aws", "missing"}))) == {"2"}
    assert found(SearchFilters(types=frozenset({NoteType.DECISION}), tags=frozenset({"infra"}))) == {"1"}
    assert found(SearchFilters(types=frozenset({NoteType.TASK}))) == set()


def test_deleted_notes_are_not_found(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, make_note(1, "Kafka topic", "kafka"), make_note(2, "Kafka gone", "kafka", deleted_at=T0))

    assert ids(index.search(WS, PROJECT, "kafka", NO_FILTERS, 10)) == ["1"]


def test_other_workspaces_and_projects_are_not_searched(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(
        store,
        make_note(1, "Mine", "terraform"),
        make_note(2, "Other project", "terraform", project_id="prj_two"),
        make_note(3, "Other workspace", "terraform", workspace_id="ws_beta"),
    )

    assert ids(index.search(WS, PROJECT, "terraform", NO_FILTERS, 10)) == ["1"]
    assert ids(index.search("ws_beta", PROJECT, "terraform", NO_FILTERS, 10)) == ["3"]


def test_the_index_follows_edits(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    before = make_note(1, "Broker", "We use rabbitmq.")
    add(store, before)
    after = replace(before, body="We moved to nats.", version=2)

    store.commit(WS, [NoteWrite(after, expected_version=1, previous=before)], revision_cap=50)

    assert index.search(WS, PROJECT, "rabbitmq", NO_FILTERS, 10) == []
    assert [hit.note for hit in index.search(WS, PROJECT, "nats", NO_FILTERS, 10)] == [after]


def test_limit_caps_the_hits(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, *(make_note(n, f"Lambda note {n}", "lambda") for n in range(1, 8)))

    assert len(index.search(WS, PROJECT, "lambda", NO_FILTERS, 3)) == 3
    assert index.search(WS, PROJECT, "lambda", NO_FILTERS, 0) == []


def test_snippet_is_short_text_from_the_body_around_the_match(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    body = "filler words here. " * 200 + "The flaky integration test needs a retry.\n" + "more filler. " * 200
    add(store, make_note(1, "Testing", body))

    (hit,) = index.search(WS, PROJECT, "flaky", NO_FILTERS, 10)

    assert "flaky" in hit.snippet
    assert len(hit.snippet) <= 201
    assert "\n" not in hit.snippet


def test_snippet_falls_back_to_the_body_start_when_only_the_title_matches(
    store: SqliteStore, index: SqliteFullTextIndex
) -> None:
    add(store, make_note(1, "Postgres upgrade", "Plan:\n1. snapshot\n2. upgrade"), make_note(2, "Postgres", ""))

    hits = {hit.note.id[-1]: hit for hit in index.search(WS, PROJECT, "postgres", NO_FILTERS, 10)}

    assert hits["1"].snippet.startswith("Plan: 1. snapshot")
    assert hits["2"].snippet == ""


@pytest.mark.parametrize(
    "query",
    [
        'foo"bar',
        '"',
        "AND",
        "OR NOT",
        "*",
        "foo*",
        "NEAR(",
        "NEAR(a b",
        "title:x",
        "^start",
        "a + b",
        "(((",
        "-",
        "…",
        "   ",
        "",
        "'; DROP TABLE notes; --",
        "{title body}: x",
        "\x00",
    ],
)
def test_hostile_queries_never_raise(store: SqliteStore, index: SqliteFullTextIndex, query: str) -> None:
    add(store, make_note(1, "foo bar and near title", "start x b"))

    hits = index.search(WS, PROJECT, query, NO_FILTERS, 10)

    assert all(hit.note.id.endswith("1") for hit in hits)
    assert store.get_note(WS, "n_" + "0" * 25 + "1") is not None


def test_queries_are_quoted_terms_joined_by_or() -> None:
    assert match_expression('Foo"bar AND near(') == '"foo" OR "bar" OR "and" OR "near"'
    assert match_expression("foo foo FOO") == '"foo"'
    assert match_expression(" *-( ") is None


def test_a_missing_fulltext_table_raises_search_unavailable(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, make_note(1, "Indexed", "text"))
    store.connection().execute("DROP TABLE notes_fts")

    with pytest.raises(SearchUnavailableError):
        index.search(WS, PROJECT, "indexed", NO_FILTERS, 10)


def test_reopening_rebuilds_a_missing_fulltext_index(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path / "notewell.db")
    try:
        add(first, make_note(1, "Survivor", "kept across restarts"))
        first.connection().execute("DROP TABLE notes_fts")
    finally:
        first.close()

    reopened = SqliteStore(tmp_path / "notewell.db")
    try:
        assert ids(SqliteFullTextIndex(reopened).search(WS, PROJECT, "restarts", NO_FILTERS, 10)) == ["1"]
        assert reopened.get_note(WS, "n_" + "0" * 25 + "1") is not None
    finally:
        reopened.close()


# ----- ranking with the project's own statistics ------------------------------------------------------------


def test_split_terms_drops_unmatched_and_half_table_terms_and_splits_at_the_budget() -> None:
    rows = {"common": 600, "none": 0, "mid": 300, "rare": 5, "rarer": 2}

    assert split_terms(rows, total_rows=1_000, budget=10) == (["rarer", "rare"], ["mid"])
    assert split_terms(rows, total_rows=1_000, budget=500) == (["rarer", "rare", "mid"], [])
    # The rarest term is kept whatever the budget; a term in half the rows or more and past the budget only when
    # nothing is rarer.
    assert split_terms({"a": 700, "b": 900}, total_rows=1_000, budget=10) == (["a"], ["b"])
    assert split_terms({"a": 300, "b": 900}, total_rows=1_000, budget=10) == (["a"], [])
    assert split_terms({"a": 0}, total_rows=1_000, budget=10) == ([], [])
    # In a small table a word in most rows still ranks: it may be all a candidate shares with the query.
    assert split_terms({"flag": 6, "false": 2}, total_rows=8, budget=10) == (["false", "flag"], [])
    # At least `min_terms` words rank, past the budget if need be.
    assert split_terms(rows, total_rows=1_000, budget=10, min_terms=3) == (["rarer", "rare", "mid"], [])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=st.dictionaries(st.sampled_from("abcdefgh"), st.integers(0, 40) | st.just(0), max_size=8),
    spare=st.integers(0, 50),
    budget=st.integers(1, 30),
    min_terms=st.integers(1, 4),
)
def test_counting_words_only_up_to_the_budget_leaves_the_essential_terms_as_exact_counts_do(
    rows: dict[str, int], spare: int, budget: int, min_terms: int
) -> None:
    """What _rows_by_term relies on: counts past the budget reported as budget + 1 pick the same essential terms
    as exact counts whenever at least `min_terms` words are within the budget."""
    total_rows = max([1, *rows.values()]) + spare
    within = sum(0 < count <= budget for count in rows.values())
    reported = rows if within < min_terms else {word: min(count, budget + 1) for word, count in rows.items()}

    essential, _ = split_terms(rows, total_rows, budget, min_terms)
    assert split_terms(reported, total_rows, budget, min_terms)[0] == essential


def test_candidates_count_common_words_exactly_only_when_the_rarer_ones_cannot_settle_the_ranking(
    store: SqliteStore,
) -> None:
    add(store, *many_notes())  # 'service' in 40 notes, 'deploy' in 13, 'rollback' in 4, 'canary' in 3
    words = ["service", "deploy", "canary", "rollback", "vendor"]
    connection = store.connection()

    exact = {"service": 40, "deploy": 13, "canary": 3, "rollback": 4, "vendor": 0}
    capped = {"service": 4, "deploy": 4, "canary": 3, "rollback": 4, "vendor": 0}
    # (budget, terms to rank): 'canary' within 3 settles one term, so the rest are capped; none within 2; or several
    for budget, min_terms, counted in ((3, 1, capped), (2, 1, exact), (3, 2, exact), (50, 4, exact)):
        assert sqlite_adapter._rows_by_term(connection, words, budget, min_terms) == counted


def many_notes() -> list[Note]:
    """40 notes sharing 'service'; 'deploy' in every third, 'canary' and 'rollback' in a few, 'vendor' in none."""
    notes = []
    for n in range(1, 41):
        words = ["service"]
        if n % 3 == 0:
            words.append("deploy deploy" if n % 2 else "deploy")
        if n in (4, 9, 30):
            words.append("canary")
        if n in (9, 12, 30, 33):
            words.append("rollback")
        notes.append(make_note(n, f"Note {n} {' '.join(words[1:2])}", " ".join(words) + f" filler{n}"))
    return notes


def scored(hits: list[SearchHit]) -> list[tuple[str, float]]:
    return [(hit.note.title, hit.score) for hit in hits]


@pytest.mark.parametrize("query", ["canary rollback deploy service", "deploy canary", "service", "rollback vendor"])
def test_scores_depend_on_the_searched_project_alone(
    store: SqliteStore, index: SqliteFullTextIndex, query: str
) -> None:
    notes = many_notes()
    add(store, *notes)
    alone = index.search(WS, PROJECT, query, NO_FILTERS, 5)
    # the same words, many times over, in another project and in another workspace
    add(
        store, *(replace(n, id=f"n_{900 + i:026d}", project_id="prj_two", body=n.body * 3) for i, n in enumerate(notes))
    )
    add(store, *(replace(n, id=f"n_{700 + i:026d}", workspace_id="ws_other") for i, n in enumerate(notes[:10])))

    assert scored(index.search(WS, PROJECT, query, NO_FILTERS, 5)) == scored(alone)


def test_a_word_in_most_notes_still_adds_to_the_score(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    add(store, *many_notes())
    # 'service' is in every note: it weighs little, never nothing (FTS5's bm25 weighed it 1e-6)
    hits = index.search(WS, PROJECT, "service", NO_FILTERS, 3)
    assert len(hits) == 3 and all(hit.score > 0.01 for hit in hits)
    # and it never outweighs a rare word
    assert set(ids(index.search(WS, PROJECT, "service canary", NO_FILTERS, 3))) == {"4", "9", "30"}


def test_hits_keep_to_the_project_and_the_filters(store: SqliteStore, index: SqliteFullTextIndex) -> None:
    notes = many_notes()
    add(store, *notes, *(replace(n, id=f"n_{900 + i:026d}", project_id="prj_two") for i, n in enumerate(notes)))
    add(store, replace(notes[29], id="n_" + "8" * 26, type=NoteType.DECISION, title="Canary rollback"))

    hits = index.search(WS, PROJECT, "canary rollback deploy", NO_FILTERS, 2)
    decisions = index.search(
        WS, PROJECT, "canary rollback deploy", SearchFilters(types=frozenset({NoteType.DECISION})), 1
    )

    assert {hit.note.project_id for hit in hits} == {PROJECT}
    assert [hit.note.id for hit in decisions] == ["n_" + "8" * 26]


@pytest.mark.parametrize("query", ['foo"bar near" title:x', "AND OR NOT x", "_ __ a_b", "… — ×", "x " * 40])
def test_hostile_queries_never_raise_on_many_notes(store: SqliteStore, index: SqliteFullTextIndex, query: str) -> None:
    add(store, *many_notes(), make_note(99, "foo bar and near title", "start x b"))

    hits = index.search(WS, PROJECT, query, NO_FILTERS, 10)

    assert all(hit.note.project_id == PROJECT for hit in hits)


def test_a_search_answers_from_one_state_while_notes_are_committed_between_its_reads(
    store: SqliteStore, index: SqliteFullTextIndex
) -> None:
    # The load run (tests/bench/load.py) found remember failing with 500 when writes landed between the index's
    # statistics and its per-word counts; here the writes are made to land there on every run.
    add(store, make_note(1, "Cache warming", "cache"), make_note(2, "Queues", "sqs"))
    landed: list[str] = []

    def commit_more_notes_before_the_word_count(statement: str) -> None:
        if statement.startswith("SELECT count(*) FROM notes_fts WHERE") and not landed:
            more = [make_note(10 + n, f"Cache {n}", "cache cache") for n in range(5)]
            writer = threading.Thread(target=add, args=(store, *more))  # another connection, as in the server
            writer.start()
            writer.join()
            landed.append(statement)

    connection = store.connection()
    connection.set_trace_callback(commit_more_notes_before_the_word_count)
    try:
        hits = index.search(WS, PROJECT, "cache", NO_FILTERS, 10)
    finally:
        connection.set_trace_callback(None)

    assert landed, "the other writer committed in the middle of the search"
    assert ids(hits) == ["1"]  # the state the search began with
    assert len(index.search(WS, PROJECT, "cache", NO_FILTERS, 10)) == 6  # and the next search sees the new notes


# Letters from several scripts, digits, a decomposed accent, Devanagari signs, separators the index splits on.
_ALPHABET = (
    "abcxyzABCXYZ0189éüßçÅ" + "\u0301" + "αβΩжЯ日本語" + "हिन्दी" + "٣"  # word characters (and marks)
    + " _-.,;:/'\"()[]{}!?@#$%^&*+=<>|\\~`\n\t" + "\u00a0\u2014\u2019\u201c\u3001"  # separators
)  # fmt: skip


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet=_ALPHABET, min_size=1, max_size=40))
def test_every_word_the_splitter_sees_is_a_term_the_index_holds_for_that_text(tmp_path_factory: Any, text: str) -> None:
    """rules.words is what remember and the in-process ranking use: each of its words must find the note."""
    sqlite_store = SqliteStore(tmp_path_factory.mktemp("words") / "notewell.db")
    try:
        add(sqlite_store, make_note(1, "Probe", text))
        index = SqliteFullTextIndex(sqlite_store)
        for word in rules.words(text):
            assert ids(index.search(WS, PROJECT, word, NO_FILTERS, 5)) == ["1"], (text, word)
    finally:
        sqlite_store.close()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("alpha123 v2beta3", ["alpha123", "v2beta3"]),
        ("foo_bar x-y", ["foo", "bar", "x", "y"]),
        ("Cafe\u0301s STRASSE Straße", ["cafés", "strasse", "straße"]),
        ("日本語テキスト, кириллица.", ["日本語テキスト", "кириллица"]),
    ],
)
def test_words_split_as_the_full_text_index_splits(text: str, expected: list[str]) -> None:
    assert rules.words(text) == expected


# ----- candidates: remember's cheaper ranking -----------------------------------------------------------------


def test_candidates_rank_the_closest_notes_first_and_keep_to_project_filters_and_live_notes(
    store: SqliteStore, index: SqliteFullTextIndex
) -> None:
    add(
        store,
        make_note(1, "Payments retry", "payments retry with exponential backoff"),
        make_note(2, "Retry", "retry"),
        make_note(3, "Unrelated", "dashboards"),
        make_note(4, "Payments retry gone", "payments retry with exponential backoff", deleted_at=T0),
        make_note(5, "Payments retry elsewhere", "payments retry exponential backoff", project_id="prj_two"),
        make_note(6, "Payments retry other tenant", "payments retry exponential backoff", workspace_id="ws_beta"),
        make_note(7, "Payments retry fact", "payments retry exponential backoff", type=NoteType.FACT),
    )
    plain_notes = SearchFilters(types=frozenset({NoteType.NOTE}))

    assert ids(index.candidates(WS, PROJECT, "payments exponential retry", plain_notes, 10)) == ["1", "2"]
    assert set(ids(index.candidates(WS, PROJECT, "payments exponential retry", NO_FILTERS, 10))) == {"1", "2", "7"}
    assert ids(index.candidates(WS, PROJECT, "payments exponential retry", NO_FILTERS, 1)) in (["1"], ["7"])
    assert index.candidates(WS, PROJECT, "", NO_FILTERS, 10) == []


@pytest.mark.parametrize("query", ["canary rollback deploy", "service", "service canary", "nothing-like-this"])
def test_ranked_ids_are_the_search_ranking_without_reading_the_notes(
    store: SqliteStore, index: SqliteFullTextIndex, query: str
) -> None:
    notes = many_notes()
    add(store, *notes, *(replace(n, id=f"n_{900 + i:026d}", project_id="prj_two") for i, n in enumerate(notes)))
    add(store, replace(notes[29], id="n_" + "8" * 26, type=NoteType.DECISION, title="Canary rollback"))
    decisions = SearchFilters(types=frozenset({NoteType.DECISION}))

    for filters in (NO_FILTERS, decisions):
        searched = [(hit.note.id, hit.score) for hit in index.search(WS, PROJECT, query, filters, 7)]
        assert index.ranked_ids(WS, PROJECT, query, filters, 7) == searched


@pytest.mark.parametrize("ranking", ["candidates", "ranked_ids"])
def test_candidates_and_ranked_ids_raise_search_unavailable_when_the_index_is_gone(
    store: SqliteStore, index: SqliteFullTextIndex, ranking: str
) -> None:
    add(store, make_note(1, "Indexed", "text"))
    store.connection().execute("DROP TABLE notes_fts")

    with pytest.raises(SearchUnavailableError):
        getattr(index, ranking)(WS, PROJECT, "indexed", NO_FILTERS, 10)


def test_candidates_rank_by_the_rarest_words_and_skip_words_in_most_notes(
    store: SqliteStore, index: SqliteFullTextIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(store, *many_notes())
    # 'service' is in every note: it adds nothing to a score, so the notes with the rarer words rank first; within
    # the row budget it still makes the other notes candidates, after them.
    found = ids(index.candidates(WS, PROJECT, "service canary rollback", NO_FILTERS, 40))
    assert set(found[:5]) == {"4", "9", "12", "30", "33"}
    assert len(found) == 40
    # Both rare words in the body, or one in the title (weighted 10), rank first.
    assert set(ids(index.candidates(WS, PROJECT, "service canary rollback", NO_FILTERS, 3))) == {"4", "9", "30"}
    # Past the row budget only the rarest words rank (at least one word, whatever the budget).
    monkeypatch.setattr(sqlite_adapter, "CANDIDATE_ROWS", 3)
    assert set(ids(index.candidates(WS, PROJECT, "service canary rollback", NO_FILTERS, 40))) == {"4", "9", "30"}
    wider = index.candidates(WS, PROJECT, "service canary rollback", NO_FILTERS, 40, min_terms=2)
    assert set(ids(wider)) == {"4", "9", "12", "30", "33"}
    assert index.candidates(WS, PROJECT, "vendor", NO_FILTERS, 40) == []


def test_candidates_are_fts5s_bm25_order_with_ties_by_id_and_its_scores(
    store: SqliteStore, index: SqliteFullTextIndex
) -> None:
    # Notes 1-6 say the same (one score); the limit cuts among them by id, and the better notes come first.
    add(store, *(make_note(n, "Queue", "jobs retry on the dead letter queue") for n in (6, 2, 5, 1, 4, 3)))
    add(store, make_note(7, "Dead letter queue", "jobs retry on the dead letter queue"), make_note(8, "Other", "x"))

    hits = index.candidates(WS, PROJECT, "letter queue", NO_FILTERS, 4)

    assert ids(hits) == ["7", "1", "2", "3"]
    bm25 = dict(store.connection().execute(
        f"""SELECT n.id, -bm25(notes_fts, {sqlite_adapter.BM25_WEIGHTS}) FROM notes_fts
            JOIN notes AS n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH '"letter" OR "queue"'"""
    ).fetchall())  # fmt: skip
    assert [hit.score for hit in hits] == [round(bm25[hit.note.id], 6) for hit in hits]
    assert hits[0].score > hits[1].score == hits[2].score == hits[3].score > 0


def test_notes_starting_like_a_text_are_the_live_notes_of_the_project_with_its_first_64_characters(
    store: SqliteStore,
) -> None:
    start = "Payments retry with exponential backoff, capped at five attempts per charge and "
    add(
        store,
        make_note(1, "Retry", start + "then alert."),
        make_note(2, "Retry again", start + "then give up."),
        make_note(3, "Gone", start + "then alert.", deleted_at=T0),
        make_note(4, "Elsewhere", start + "then alert.", project_id="prj_two"),
        make_note(5, "Other", "Payments never retry."),
    )

    assert sorted(n.id[-1] for n in store.notes_starting_like(WS, PROJECT, start + "whatever follows", 10)) == [
        "1",
        "2",
    ]
    assert store.notes_starting_like(WS, PROJECT, start + "then alert.", 1)[0].id[-1] in "12"
    assert store.notes_starting_like(WS, PROJECT, "Payments never", 10) == []  # the whole start must match
