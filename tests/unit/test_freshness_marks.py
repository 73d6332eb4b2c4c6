"""Freshness as a read shows it, pure: a client's `files` and `{path: fileHash}` checked and normalised, notes matched
to the files in hand, verdicts from file hashes, and the mark a stale note's line carries, paid for within the
budget of the answer as sent."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.domain.errors import InvalidArgumentError
from notewell.domain.freshness import (
    NAMED_FILE,
    UNDER_DIRECTORY,
    FileText,
    NoteVerdict,
    anchored_first,
    check_file_hashes,
    check_files,
    file_match,
    judge_by_file_hashes,
    stale_mark,
)
from notewell.domain.model import Anchor, Note, NoteType
from notewell.domain.packing import Candidate, ConflictEntry, Detail, Section, pack, priority
from notewell.domain.refs import name_of
from tests.unit.test_packing import ENCODINGS, named_in, note

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
RETRY = b"def backoff(attempt):\n    return min(2**attempt, 30)\n"


def anchor_on(path: str, data: bytes = RETRY, symbol: str | None = None) -> Anchor:
    text = FileText.of(path, data)
    lines = text.symbol(symbol) if symbol else None
    content = text.hash_of(lines) if lines else text.whole_hash
    assert content is not None
    return Anchor("acme/api", path, COMMIT, content, text.whole_hash, symbol, lines)


def file_hash(data: bytes) -> str:
    """What a client sends for a file: the README's definition, computed without Notewell."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n").removesuffix(b"\n")).hexdigest()


def test_files_are_normalised_as_anchor_paths_and_kept_once_in_order() -> None:
    assert check_files(["./src//retry.py", "src/", "src/retry.py", "docs"]) == ("src/retry.py", "src", "docs")
    with pytest.raises(InvalidArgumentError, match=r"files\[0\]: Anchor path '/etc' is absolute"):
        check_files(["/etc"])
    with pytest.raises(InvalidArgumentError, match="files has 21 paths; send at most 20"):
        check_files([f"{n}.py" for n in range(21)])


def test_file_hashes_are_normalised_and_refused_with_what_to_send() -> None:
    upper = "A" * 64
    assert check_file_hashes({"./src/a.py": upper, "b.py": None}) == {"src/a.py": "a" * 64, "b.py": None}
    with pytest.raises(InvalidArgumentError, match=r"checkFreshness: Anchor path 'a\\\\b' uses '\\'"):
        check_file_hashes({"a\\b": None})
    with pytest.raises(InvalidArgumentError, match=r"is 'sha1:abc', not a fileHash: send the file's SHA-256"):
        check_file_hashes({"a.py": "sha1:abc"})


def test_a_note_meets_the_files_by_a_named_file_before_a_directory_and_not_by_a_shared_prefix() -> None:
    anchors = [anchor_on("src/net/retry.py")]
    assert file_match(anchors, ["src/net/retry.py"]) == NAMED_FILE
    assert file_match(anchors, ["src"]) == file_match(anchors, ["src/net"]) == UNDER_DIRECTORY
    assert file_match(anchors, ["src/ne", "src/net/retry", "src/net/retry.py.orig"]) is None


def test_anchored_first_puts_named_files_first_then_the_newest() -> None:
    def anchored(number: int, path: str) -> Note:
        return Note(
            id=f"n_{number}", workspace_id="w", project_id="p", title="t", body="b", version=1,
            created_at="2026-01-01T00:00:00.000Z", updated_at=f"2026-01-0{number}T00:00:00.000Z", author="k",
            write_id="w", anchors=(anchor_on(path),),
        )  # fmt: skip

    notes = [anchored(1, "src/a.py"), anchored(2, "src/b/c.py"), anchored(3, "src/a.py"), anchored(4, "docs/x.md")]
    assert [n.id for n in anchored_first(notes, ["src/a.py", "src/b"])] == ["n_3", "n_1", "n_2"]


def test_a_crlf_checkout_judges_fresh_and_any_edit_judges_the_whole_file_changed() -> None:
    """A client that sends only file hashes cannot tell an edit of the anchored symbol from one elsewhere."""
    anchors = (anchor_on("retry.py", symbol="backoff"), anchor_on("other.py"))
    fresh = judge_by_file_hashes(anchors, {"retry.py": file_hash(RETRY.replace(b"\n", b"\r\n"))})
    assert fresh is not None and fresh.freshness.value == "fresh" and len(fresh.anchors) == 1  # other.py: unjudged
    edited = judge_by_file_hashes(anchors, {"retry.py": file_hash(RETRY + b"# tuned\n"), "other.py": None})
    assert edited is not None and edited.freshness.value == "gone"  # the stalest of changed and gone
    assert [v.freshness.value for v in edited.anchors] == ["changed", "gone"]
    assert judge_by_file_hashes(anchors, {"elsewhere.py": None}) is None


def test_the_mark_names_the_stale_paths_briefly_and_fresh_notes_carry_none() -> None:
    deep = "services/billing/internal/adapters/payments/providers/stripe/webhooks/retry_policy.py"
    anchors = (anchor_on("a.py"), anchor_on("b.py"), anchor_on("c.py"), anchor_on(deep))
    changed = judge_by_file_hashes(anchors, dict.fromkeys(("a.py", "b.py", "c.py"), "0" * 64))
    assert stale_mark(changed) == "[changed: a.py b.py +1, re-check]"
    gone = judge_by_file_hashes(anchors, {deep: None})
    assert stale_mark(gone) == "[gone: …" + deep[-59:] + ", re-check]"
    assert stale_mark(judge_by_file_hashes(anchors, {"a.py": file_hash(RETRY)})) is None
    assert stale_mark(None) is None


# ----- packed: marked, and paid for -----------------------------------------------------------------------------------


def verdicts_for(notes: list[Note], stale: list[bool]) -> dict[str, NoteVerdict]:
    judged: dict[str, NoteVerdict] = {}
    for made, is_stale in zip(notes, stale, strict=False):
        path = f"src/{made.id.lower()}/module_with_a_long_name.py"
        anchors = (anchor_on(path),)
        verdict = judge_by_file_hashes(anchors, {path: None if is_stale else file_hash(RETRY)})
        assert verdict is not None
        judged[made.id] = verdict
    return judged


@settings(max_examples=80, deadline=None)
@given(
    count=st.integers(1, 60), budget=st.integers(200, 3000), stale=st.lists(st.booleans(), max_size=60),
    detail=st.sampled_from(list(Detail)),
)  # fmt: skip
def test_marks_are_paid_for_within_the_budget_and_every_shown_stale_note_has_one(
    count: int, budget: int, stale: list[bool], detail: Detail
) -> None:
    notes = [note(n, f"Decision {n}: the retry policy of module {n} caps at {n} attempts", NoteType.DECISION)
             for n in range(count)]  # fmt: skip
    judged = verdicts_for(notes, stale)
    packed = pack(
        budget=budget, detail=detail, summary="", instructions="", project="api", verdicts=judged,
        conflicts=[ConflictEntry(notes[0], "disputed", "Disputed: settle it.")],
        sections=[(Section.DECISIONS, [Candidate(n, -i) for i, n in enumerate(notes[1:])])],
    )  # fmt: skip
    for encoding in ENCODINGS:
        assert len(encoding.encode(packed.text)) <= budget
    entries = [*packed.conflicts, *(e for _, es in packed.sections for e in es)]
    for entry in entries:  # judged: its freshness, and a mark when gone; unjudged (no hash sent): neither
        verdict = judged.get(str(entry["id"]))
        freshness = verdict.freshness.value if verdict is not None else None
        assert entry.get("freshness") == freshness
        (line,) = [line for line in packed.text.splitlines() if line.startswith(f"- {name_of(str(entry['id']))} ")]
        assert ("[gone: " in line) == (freshness == "gone")
    assert named_in(packed.text, notes) >= {str(e["id"]) for e in entries}


def test_notes_on_the_files_in_hand_are_paid_for_first_without_a_query_when_asked() -> None:
    """relevant_first: the relevant section's notes, all of them, before every other section's best."""
    decisions = [Candidate(note(n, f"Decision {n} about caching", NoteType.DECISION), -n) for n in range(5)]
    anchored = [Candidate(note(90 + n, f"Retry rule {n}", NoteType.DECISION), -n) for n in range(3)]
    sections = [(Section.DECISIONS, decisions), (Section.RELEVANT, anchored)]
    led = [c.note.id for _, c in priority(sections, has_query=False, relevant_first=True)]
    assert led[:4] == [c.note.id for c in [*anchored, decisions[0]]]
    unled = [c.note.id for _, c in priority(sections, has_query=False)]
    assert unled[:2] == [decisions[0].note.id, anchored[0].note.id]  # each section's best, in section order
