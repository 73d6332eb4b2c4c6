"""A listed note says its words once, however its title and its excerpt overlap."""

from __future__ import annotations

from dataclasses import replace

from notewell.domain.model import Note, NoteStatus, NoteType
from notewell.domain.packing import Section, entry_line
from notewell.domain.refs import name_of
from notewell.domain.titles import derive_title

STATUS = "Thanksgiving week done: 16,900 stops Mon-Wed, on-time 92.8%. One excursion claim (Fresno, door left open)."


def status_note(title: str) -> Note:
    return Note(
        id="n_01M8ERBBKZART3A3SH4GQ6R173", workspace_id="w", project_id="p", title=title, body=STATUS,
        type=NoteType.STATUS, status=NoteStatus.CURRENT, tags=(), links=(), importance=3, canonical=False,
        supersedes=(), superseded_by=(), version=1, created_at="2026-11-30T10:00:00.000Z",
        updated_at="2026-11-30T10:00:00.000Z", author="k", deleted_at=None, write_id="w1",
    )  # fmt: skip


def test_an_excerpt_shorter_than_a_title_taken_from_it_is_not_said_again() -> None:
    note = status_note("Thanksgiving week done: 16,900 stops Mon-Wed, on-time 92.8%")
    line = entry_line(note, Section.STATUS, 40)
    assert line == f"- {name_of(note.id)} Thanksgiving week done: 16,900 stops Mon-Wed, on-time 92.8%"


def test_an_excerpt_that_goes_on_past_the_title_replaces_it() -> None:
    note = status_note("Thanksgiving week done")
    line = entry_line(note, Section.STATUS, 80)
    assert line.count("Thanksgiving") == 1 and line.endswith("…") and "16,900 stops" in line


def test_a_body_that_opens_with_its_title_as_a_markdown_heading_says_it_once() -> None:
    note = replace(status_note("Peak week report"), body="# Peak week report\n\n" + STATUS)
    line = entry_line(note, Section.STATUS, 80)
    assert line.count("Peak week report") == 1 and line.startswith(f"- {name_of(note.id)} # Peak week report")


def test_a_title_that_says_something_else_leads_its_excerpt() -> None:
    note = status_note("Peak week report")
    assert entry_line(note, Section.STATUS, 30).startswith(f"- {name_of(note.id)} Peak week report: Thanksgiving week")


def test_a_handoff_titled_after_its_first_request_says_the_request_once() -> None:
    note = replace(
        status_note("Handoff: Peak week report for Polar Freight"),
        body="Peak week report for Polar Freight; the Fresno claim is still open.",
    )
    line = entry_line(note, Section.STATUS, 200)
    assert line == f"- {name_of(note.id)} Handoff: Peak week report for Polar Freight; the Fresno claim is still open."


def test_a_title_derived_from_a_body_with_code_says_it_once() -> None:
    body = "Every table except `audit_log` has a `created_at` column."
    note = replace(status_note(derive_title(body)), body=body)
    assert entry_line(note, Section.STATUS, 80) == f"- {name_of(note.id)} {body}"
