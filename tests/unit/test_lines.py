"""A listed note says its words once, however its title and its excerpt overlap, and goes by its ref."""

from __future__ import annotations

from dataclasses import replace

from notewell.domain.model import Note, NoteStatus, NoteType, SearchHit
from notewell.domain.packing import Section, entry_line
from notewell.domain.refs import name_of, names
from notewell.domain.rules import estimate_tokens
from notewell.domain.titles import derive_title
from notewell.entrypoints.wire import ChangesOut, SearchResult
from notewell.services.changes import ChangesPage, _change, _Names
from notewell.services.search import SearchMode, SearchOutcome

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


# ----- search_notes and get_changes_since name notes as get_context does ------------------------------------------

TWINS = ("n_01KGES9MPQSCXTJ0770XQ4MF2A", "n_01KHV8JJ9VP28NGEVWR5Q4MF2A")  # ids ending alike: one ref
LONER = "n_01M8ERBBKZART3A3SH4GQ6R173"
FOREIGN = "n_imported-from-elsewhere-1"  # an id of another shape has no ref


def test_names_are_refs_but_where_two_notes_share_one_or_refs_do_not_resolve() -> None:
    assert names([LONER, *TWINS, FOREIGN, LONER]) == {
        LONER: "Q6R173", TWINS[0]: TWINS[0], TWINS[1]: TWINS[1], FOREIGN: FOREIGN,
    }  # fmt: skip
    assert names([LONER, TWINS[0]]) == {LONER: name_of(LONER), TWINS[0]: "Q4MF2A"}  # a twin alone: by its ref
    assert names([LONER, *TWINS], by_ref=False) == {note_id: note_id for note_id in (LONER, *TWINS)}


def hits(*note_ids: str) -> list[SearchHit]:
    return [SearchHit(replace(status_note(f"Note {n}"), id=note_id), 1.0, "") for n, note_id in enumerate(note_ids)]


def opening_names(text: str) -> list[str]:
    return [line.split(" ", 2)[1] for line in text.splitlines() if line.startswith("- ")]


def test_search_text_names_hits_by_ref_unless_they_share_one_or_the_project_has_no_refs_yet() -> None:
    outcome = SearchOutcome(hits(LONER, *TWINS), SearchMode.FULLTEXT, True, by_ref=True)
    result = SearchResult.of(outcome, project="p", include_body=False, notice=None)
    assert opening_names(result.as_text()) == ["Q6R173", *TWINS]
    assert [item.id for item in result.results] == [LONER, *TWINS]  # structuredContent: whole ids
    below = SearchResult.of(replace(outcome, by_ref=False), project="p", include_body=False, notice=None)
    assert opening_names(below.as_text()) == [LONER, *TWINS]


def test_change_text_names_notes_by_ref_unless_they_share_one_or_the_project_has_no_refs_yet() -> None:
    changes = [_change(hit.note) for hit in hits(*TWINS, LONER)]
    page = ChangesPage("p", changes, False, "cursor", None, None, True)
    assert opening_names(ChangesOut.of(page).as_text()) == [*TWINS, "Q6R173"]
    assert [change.id for change in ChangesOut.of(page).changes] == [*TWINS, LONER]
    below = ChangesOut.of(replace(page, by_ref=False)).as_text()
    assert opening_names(below) == [*TWINS, LONER]


def test_a_change_page_charges_each_line_as_it_is_sent_twins_too() -> None:
    """get_changes_since budgets a page by its lines: each as its text names the note, a twin's line lengthening
    the line of the twin already on the page (services/changes.py _Names)."""
    changes = [_change(hit.note) for hit in hits(LONER, TWINS[0], FOREIGN, TWINS[1])]
    for by_ref in (True, False):
        tally = _Names(by_ref)
        spent = 0
        for change in changes:
            spent += tally.cost(change)
            tally.add(change)
        text = ChangesOut.of(ChangesPage("p", changes, False, "c", None, None, by_ref)).as_text()
        assert spent == sum(estimate_tokens(line) + 1 for line in text.splitlines() if line.startswith("- "))
