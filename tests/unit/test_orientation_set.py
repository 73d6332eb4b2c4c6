"""The orientation set (tests/quality/orientation_*.jsonl) holds what its harness counts on: one project of 300 notes
that `notewell import` accepts, with the mix of types the issue asks for, and 40 questions each answered by exactly
one current constraint, decision, failed approach or newest handoff whose evidence only that note's body holds."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import rules
from tests.quality.coding import split_of
from tests.quality.orientation import (
    ANSWER_TYPES,
    PROJECT,
    QUESTIONS,
    Answer,
    Question,
    normalised,
    read_questions,
    shifted_lines,
)

if TYPE_CHECKING:
    from pathlib import Path

TYPE_COUNTS = {
    "decision": 25, "constraint": 15, "failed_approach": 15, "handoff": 10, "task": 10, "architecture": 10,
}  # fmt: skip
GENERAL_TYPES = {"note", "fact", "procedure", "reference", "incident", "status", "preference"}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


NOTES = {r["id"]: r for r in records(PROJECT) if r.get("kind") == "note"}
PROJECT_LINE = next(r for r in records(PROJECT) if r.get("kind") == "project")
ASKED = records(QUESTIONS)


def test_the_project_has_300_notes_in_the_issues_mix_of_types() -> None:
    kinds = Counter(note["type"] for note in NOTES.values())
    assert len(NOTES) == 300
    assert {kind: kinds[kind] for kind in TYPE_COUNTS} == TYPE_COUNTS
    assert sum(kinds[kind] for kind in GENERAL_TYPES) == 215
    assert set(kinds) == set(TYPE_COUNTS) | GENERAL_TYPES


def test_the_file_imports_through_the_import_service_whole(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=tmp_path), store=store)
        workspace = services.auth.create_workspace("orientation")
        principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert principal is not None
        lines = PROJECT.read_text(encoding="utf-8").splitlines()
        imported = services.portability.import_file(principal, PROJECT_LINE["slug"], lines)
    finally:
        store.close()
    assert (imported.notes_written, imported.notes_skipped) == (300, 0)


def test_supersession_is_recorded_on_both_sides_and_the_old_side_is_not_current() -> None:
    for note in NOTES.values():
        for old_id in note["supersedes"]:
            assert NOTES[old_id]["supersededBy"] == [note["id"]] and NOTES[old_id]["status"] == "superseded"
        for new_id in note["supersededBy"]:
            assert note["id"] in NOTES[new_id]["supersedes"]
    superseded = Counter(n["type"] for n in NOTES.values() if n["status"] == "superseded")
    assert superseded["decision"] >= 3  # old decisions the answer must not be


def test_each_thread_of_handoffs_has_one_current_handoff_its_newest() -> None:
    handoffs = [n for n in NOTES.values() if n["type"] == "handoff"]
    earlier = {old for n in handoffs for old in n["supersedes"]}
    earlier |= {link["target"] for n in handoffs for link in n["links"] if link["relation"] == "continues"}
    current = [n for n in handoffs if n["status"] == "current"]
    assert len(current) in (3, 4) and not earlier & {n["id"] for n in current}
    assert all(n["status"] in ("superseded", "historical") for n in handoffs if n["id"] in earlier)
    for old_id in earlier:
        assert any(NOTES[old_id]["createdAt"] < n["createdAt"] for n in current if old_id in thread_of(n["id"]))


def thread_of(note_id: str) -> set[str]:
    """The handoffs a handoff continues, directly or through others."""
    note, found = NOTES[note_id], set()
    for earlier in [
        *note["supersedes"],
        *(link["target"] for link in note["links"] if link["relation"] == "continues"),
    ]:
        found |= {earlier, *thread_of(earlier)}
    return found


def test_there_are_40_questions_with_unique_ids_and_the_fields_the_harness_reads() -> None:
    assert len(ASKED) == 40
    assert len({q["id"] for q in ASKED}) == 40
    assert all(set(q) == {"id", "question", "answer", "evidence"} for q in ASKED)


@pytest.mark.parametrize("question", ASKED, ids=[q["id"] for q in ASKED])
def test_each_answer_is_one_current_note_of_an_answering_type(question: dict[str, Any]) -> None:
    note = NOTES.get(question["answer"])
    assert note is not None, "the answer names no note of the project"
    assert note["type"] in ANSWER_TYPES and note["status"] == "current" and note["deletedAt"] is None


@pytest.mark.parametrize("question", ASKED, ids=[q["id"] for q in ASKED])
def test_each_evidence_is_in_its_answers_body_only(question: dict[str, Any]) -> None:
    """Only the answer's own text can show it: not its title (a pointer keeps the title), not another note, not the
    project's header."""
    evidence = normalised(question["evidence"])
    note = NOTES[question["answer"]]
    assert evidence in normalised(note["body"])
    assert evidence not in normalised(note["title"])
    others = [n["id"] for n in NOTES.values() if n is not note and evidence in normalised(n["title"] + " " + n["body"])]
    assert others == []
    assert evidence not in normalised(PROJECT_LINE["summary"] + " " + PROJECT_LINE["instructions"])


def test_the_answers_mix_the_kinds_the_issue_names() -> None:
    kinds = Counter(NOTES[q["answer"]]["type"] for q in ASKED)
    assert kinds["constraint"] >= 10 and kinds["decision"] >= 10
    assert kinds["failed_approach"] >= 6 and kinds["handoff"] >= 6


def test_the_splits_are_disjoint_halves_that_cover_every_question() -> None:
    tune = {q.id for q in read_questions(QUESTIONS, "tune")}
    report = {q.id for q in read_questions(QUESTIONS, "report")}
    assert tune and report and not tune & report
    assert tune | report == {q["id"] for q in ASKED}
    assert all(split_of(q) == "tune" for q in tune)


def test_timestamps_move_together_so_the_newest_note_is_a_day_old() -> None:
    now = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
    moved = {r["id"]: r for r in map(json.loads, shifted_lines(PROJECT, now)) if r.get("kind") == "note"}
    assert max(rules.parse_ts(n["updatedAt"]) for n in moved.values()) == datetime(2030, 5, 31, 12, 0, tzinfo=UTC)
    for note_id, note in NOTES.items():
        before = rules.parse_ts(note["updatedAt"]) - rules.parse_ts(note["createdAt"])
        assert rules.parse_ts(moved[note_id]["updatedAt"]) - rules.parse_ts(moved[note_id]["createdAt"]) == before


def test_an_answer_counts_only_where_its_evidence_is_in_the_text() -> None:
    question = Question("q", "Where did the migration stop?", "n_1", "stopped at the S3   sink")
    pointer = Answer("- n_1 Handoff: MSK migration", 10, 1000, frozenset(), frozenset({"n_1"}), frozenset())
    entry = Answer("- n_1 Handoff: MSK migration: It Stopped at the S3\nsink…", 12, 1000, frozenset({"n_1"}),
                   frozenset(), frozenset())  # fmt: skip
    assert not pointer.shows(question) and pointer.form_of("n_1") == "pointer only"
    assert entry.shows(question)
