from __future__ import annotations

from datetime import UTC, datetime

import pytest

from notewell.domain import ranking, rules, stemming
from notewell.domain.errors import InvalidArgumentError, NotewellError, TooLargeError, VersionConflictError
from notewell.domain.model import Note


def note(note_id: str, title: str, body: str, tags: tuple[str, ...] = ()) -> Note:
    return Note(
        id=note_id,
        workspace_id="ws",
        project_id="p",
        title=title,
        body=body,
        version=1,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        author="k",
        write_id="w",
        tags=tags,
    )


def test_the_version_conflict_message_is_the_contract_text() -> None:
    error = VersionConflictError("n_x", 3, 5)
    assert error.status == 409 and error.code == "version_conflict"
    assert error.message == (
        "This note changed since you loaded it (you have v3, current is v5). Reload and reapply your edit."
    )


def test_every_error_has_a_status_and_a_code() -> None:
    def walk(cls: type[NotewellError]) -> list[type[NotewellError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in walk(sub))]

    for cls in walk(NotewellError)[1:]:
        assert 400 <= cls.status < 600 and cls.code and cls.__name__.endswith("Error")


def test_timestamps_are_fixed_width_utc_milliseconds() -> None:
    moment = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert rules.format_ts(moment) == "2026-03-01T12:00:00.123Z"
    assert rules.next_updated_at(moment, "2026-03-01T12:00:00.123Z") == "2026-03-01T12:00:00.124Z"
    assert rules.parse_ts("2026-03-01T12:00:00Z") < moment


def test_slugs_are_checked_and_a_fix_is_suggested() -> None:
    assert rules.check_project_slug("billing-api") == "billing-api"
    with pytest.raises(InvalidArgumentError, match="'billing-api'"):
        rules.check_project_slug("Billing API")


def test_body_limit_counts_characters_and_bytes() -> None:
    rules.check_body("x" * rules.MAX_BODY_CHARS)
    with pytest.raises(TooLargeError):
        rules.check_body("x" * (rules.MAX_BODY_CHARS + 1))
    with pytest.raises(TooLargeError, match="KiB"):
        rules.check_body("😀" * 70_000)


def test_tags_are_normalised_and_deduplicated() -> None:
    assert rules.check_tags(["Auth", "auth", " api:v2 "]) == ("auth", "api:v2")
    with pytest.raises(InvalidArgumentError):
        rules.check_tags(["two words"])


def test_excerpts_cut_at_a_word_and_say_so() -> None:
    text = "The quick brown fox jumps over the lazy dog " * 10
    cut = rules.excerpt(text, 40)
    assert cut.endswith("…") and len(cut) <= 41 and not cut[:-1].endswith(" ")
    assert rules.excerpt("short\n\ntext") == "short text"


def test_bm25_ranks_title_matches_first_and_skips_non_matches() -> None:
    notes = [
        note("a", "Deploy checklist", "Steps to release."),
        note("b", "Caching", "We deploy the cache with the app."),
        note("c", "Unrelated", "Nothing to see."),
    ]
    hits = ranking.bm25(notes, "deploy", 10)
    assert [h.note.id for h in hits] == ["a", "b"]
    assert hits[0].score > hits[1].score > 0


def test_substring_search_is_case_insensitive() -> None:
    hits = ranking.substring([note("a", "T", "Use Redis for SESSIONS")], "redis for sessions", 5)
    assert [h.note.id for h in hits] == ["a"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"), ("ponies", "poni"), ("agreed", "agre"), ("feed", "feed"), ("hopping", "hop"),
        ("filing", "file"), ("happy", "happi"), ("relational", "relat"), ("generalization", "gener"),
        ("adjustment", "adjust"), ("adoption", "adopt"), ("roll", "roll"), ("caching", "cach"), ("is", "is"),
        ("café", "café"), ("v2", "v2"),
    ],
)  # fmt: skip
def test_words_reduce_to_the_porter_stems_sqlite_full_text_uses(word: str, expected: str) -> None:
    assert stemming.stem(word) == expected


def test_a_snippet_shows_the_word_a_query_matched_by_its_stem_not_the_start_of_the_note() -> None:
    # "retries" stems to "retri", which "retry" does not contain: the passage that matched was never shown
    body = "Deploys go out from main after CI passes. " * 20 + "The payments client has a retry budget of 3."
    shown = ranking.snippet_around(body, ranking.tokens("retries"))
    assert "retry budget of 3" in shown and shown.startswith("…")
    assert ranking.snippet_around(body, ranking.tokens("rollback")).startswith("Deploys go out")  # no match: start


def test_bm25_matches_other_forms_of_the_query_words() -> None:
    notes = [note("a", "Caching", "Redis caches pages."), note("b", "Queues", "SQS.")]
    assert [h.note.id for h in ranking.bm25(notes, "cache", 10)] == ["a"]
    assert ranking.bm25(notes, "cache", 10)[0].snippet.startswith("Redis caches")


def test_remember_looks_up_candidates_by_index_words_from_the_start_and_from_the_whole_content() -> None:
    content = "ship alpha123 now. " * 300 + "Reconciliation instrumentation observability dashboards."
    query = ranking.candidate_query(content).split()
    assert {"alpha123", "ship"} <= set(query)  # the start: what a ranked scan reads of the stored note
    assert {"reconciliation", "instrumentation"} <= set(query)  # the longest words anywhere
    assert len(query) <= ranking.CANDIDATE_TERMS


def test_remember_looks_up_candidates_by_two_letter_words_that_are_no_stopwords() -> None:
    """A short note may share only "PR" with the one it turns ("The PR is pending." / "… merged."): by words no
    candidate was found."""
    assert ranking.candidate_query("The PR is merged.").split() == ["merged", "pr"]
