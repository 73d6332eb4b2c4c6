"""What a checkpoint anchors and what the first prompt asks, pure: the anchors are `notewell anchor`'s own, on the
files with the most lines changed (git's numstat, summed over commits and the work tree), on the notes the
checkpoint made of this session; the prompt becomes a query get_context takes, and its answer says only what the
session start did not."""

from __future__ import annotations

from notewell.domain import rules
from notewell.domain.hooks import (
    ANCHORS_PER_NOTE,
    QUERY_CHARS,
    filed_notes,
    lines_changed,
    most_changed,
    prompt_query,
    shown_lines,
    unseen_lines,
    whole_file_anchor,
)
from notewell.domain.model import Anchor, Note, NoteStatus, NoteType
from notewell.domain.packing import Section, entry_line, pointer_line
from notewell.services.context import MAX_QUERY_CHARS

HEAD = "9f2c1e7a" * 5
HASHED = "ab" * 32


def test_a_whole_file_anchor_is_the_one_notewell_anchor_records() -> None:
    by_cli = rules.anchor_json(rules.check_anchor(Anchor("github.com/acme/api", "src/retry.py", HEAD, HASHED, HASHED)))

    assert whole_file_anchor("github.com/acme/api", "src/retry.py", HEAD, HASHED) == by_cli
    assert ANCHORS_PER_NOTE == rules.MAX_ANCHORS


def test_lines_changed_add_up_over_commits_and_the_work_tree() -> None:
    committed = "2\t1\tretry.py\x003\t0\tjobs.py\x001\t1\tretry.py\x00-\t-\tlogo.png\x00"  # git log --numstat -z
    uncommitted = "4\t0\tjobs.py\x00"  # git diff --numstat -z HEAD

    assert lines_changed(committed, uncommitted) == {"retry.py": 5, "jobs.py": 7, "logo.png": 0}
    assert lines_changed("", "") == {}


def test_the_most_changed_files_come_first_and_ties_keep_their_order() -> None:
    changed = {"a.py": 1, "b.py": 9, "c.py": 1, "d.py": 4}

    assert most_changed(["a.py", "b.py", "c.py", "d.py", "e.py"], changed) == ["b.py", "d.py", "a.py", "c.py", "e.py"]


def test_a_checkpoint_anchors_its_handoff_and_the_decisions_and_failed_approaches_it_made() -> None:
    answer = {
        "handoff": {"id": "n_h", "version": 1},
        "items": [
            {"kind": "decision", "status": "created", "id": "n_d"},
            {"kind": "open_item", "status": "created", "id": "n_o"},  # work still to do
            {"kind": "failed_approach", "status": "created", "id": "n_f"},
            {"kind": "decision", "status": "updated", "id": "n_old"},  # a note from before this session
            {"kind": "decision", "status": "conflict", "existing_id": "n_x"},
        ],
    }

    assert filed_notes(answer) == ["n_h", "n_d", "n_f"]
    assert filed_notes({}) == []


def test_the_first_prompt_is_asked_on_one_line_within_the_query_limit() -> None:
    assert QUERY_CHARS == MAX_QUERY_CHARS
    assert prompt_query("  Cap webhook retries\n\nat 3.  ") == "Cap webhook retries at 3."
    long = prompt_query("retry " * 200)
    assert long is not None and len(long) == QUERY_CHARS and long.endswith("…")
    assert prompt_query("  \n ") is None and prompt_query(None) is None


def decision(note_id: str, body: str) -> Note:
    return Note(
        id=note_id, workspace_id="w", project_id="p", title="", body=body, type=NoteType.DECISION,
        status=NoteStatus.CURRENT, tags=(), links=(), importance=4, canonical=False, supersedes=(), superseded_by=(),
        version=1, created_at="2026-11-30T10:00:00.000Z", updated_at="2026-11-30T10:00:00.000Z", author="k",
        deleted_at=None, write_id="w1",
    )  # fmt: skip


RETRIES = decision("n_01M969D3JH537N8F47QTBKWKW3", "Webhook retries are capped at 3 with exponential backoff; we "
                   "turned down unlimited retries because the partner rate-limits us at 5 calls a second.")  # fmt: skip
QUEUE = decision("n_01M969D3K00RZBDFTZ31NRP79T", "Planner jobs go through an SQS FIFO queue, one group per depot.")
CSV = decision("n_01M969D3KG2TEFZ97P8KJF118Y", "The CSV importer reads UTF-8 only.")


def context(*lines: str) -> str:
    return "\n".join(["# api: lean context", "Summary: the billing API.", *lines])


def test_the_first_prompt_leaves_out_the_lines_the_session_start_showed() -> None:
    started = context(
        "## Decisions",
        entry_line(QUEUE, Section.DECISIONS, 300),
        entry_line(CSV, Section.DECISIONS, 300),
        "## Omitted for the budget: read with get_notes",
        "decisions: n_01M969D3KS32T00S3P3SV6YWYC",
    )
    asked = context("## Relevant", entry_line(RETRIES, Section.RELEVANT, 300), entry_line(QUEUE, Section.RELEVANT, 300),
                    "## Decisions", entry_line(CSV, Section.DECISIONS, 300))  # fmt: skip

    # The queue decision is the same words under another heading (with its type): said once is enough.
    assert unseen_lines(asked, shown_lines(started)) == "\n".join(
        ["## Relevant", entry_line(RETRIES, Section.RELEVANT, 300)]
    )
    assert unseen_lines(started, shown_lines(started)) == ""


def test_a_note_the_start_showed_shorter_or_without_its_freshness_mark_is_shown_again() -> None:
    started = context("## Decisions", pointer_line(RETRIES), entry_line(QUEUE, Section.DECISIONS, 300))
    marked = entry_line(QUEUE, Section.DECISIONS, 300, mark="[changed: planner/queue.py, re-check]")
    asked = context("## Decisions", entry_line(RETRIES, Section.DECISIONS, 300), marked)

    assert unseen_lines(asked, shown_lines(started)).splitlines() == [
        "## Decisions",
        entry_line(RETRIES, Section.DECISIONS, 300),
        marked,
    ]
    assert unseen_lines(asked, set()) == "\n".join(
        ["## Decisions", entry_line(RETRIES, Section.DECISIONS, 300), marked]
    )
