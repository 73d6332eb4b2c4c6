"""The verdicts kept for the console, pure: a new judgment replaces what it judged and keeps the rest of the same
note version, a judgment that finds nothing new writes nothing, an older version's never overwrites a newer one, and
a project's summary counts a note edited since its verdict as not checked."""

from __future__ import annotations

from notewell.domain.freshness import (
    AnchorVerdict,
    FileVerdict,
    Freshness,
    NoteVerdict,
    RecordedVerdict,
    judge_note,
    record_verdict,
    summarize,
)
from notewell.domain.freshness import facts_from_file_hash as by_hash
from notewell.domain.model import Anchor, LineRange, Note

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
T1, T2, T3 = "2026-03-01T10:00:00.000Z", "2026-03-02T10:00:00.000Z", "2026-03-03T10:00:00.000Z"


def digest(n: int) -> str:
    return f"{n:064x}"


def anchor(path: str, n: int = 1, symbol: str | None = None, repo: str = "acme/api") -> Anchor:
    return Anchor(repo, path, COMMIT, digest(n + 100), digest(n), symbol, LineRange(1, 2) if symbol else None)


def note(version: int = 1, *anchors: Anchor, note_id: str = "n_1") -> Note:
    return Note(
        id=note_id, workspace_id="ws", project_id="prj", title=f"Note {note_id}", body="b", version=version,
        created_at=T1, updated_at=T1, author="key:k", write_id="w", anchors=anchors,
    )  # fmt: skip


def judged(target: Note, hashes: dict[str, str | None]) -> NoteVerdict:
    verdict = judge_note((a, by_hash(a, hashes[a.path])) for a in target.anchors if a.path in hashes)
    assert verdict is not None
    return verdict


def files(record: RecordedVerdict | None) -> dict[str, str]:
    assert record is not None
    return {f.path: f.freshness.value for f in record.files}


def test_a_note_is_recorded_by_file_with_the_stalest_of_its_anchors_in_each() -> None:
    target = note(1, anchor("src/retry.py", 1, "backoff"), anchor("src/retry.py", 1, "jitter"), anchor("src/q.py", 2))
    verdict = NoteVerdict(Freshness.CHANGED, (
        AnchorVerdict(target.anchors[0], Freshness.FRESH), AnchorVerdict(target.anchors[1], Freshness.CHANGED),
        AnchorVerdict(target.anchors[2], Freshness.MOVED),
    ))  # fmt: skip
    record = record_verdict(target, verdict, None, T1)
    assert record == RecordedVerdict(
        "n_1", "prj", 1,
        (FileVerdict("acme/api", "src/q.py", Freshness.MOVED), FileVerdict("acme/api", "src/retry.py",
                                                                             Freshness.CHANGED)), T1,
    )  # fmt: skip
    assert record.freshness is Freshness.CHANGED and record.stale_paths == ("src/retry.py",)


def test_a_check_of_some_files_keeps_what_earlier_checks_found_in_the_others() -> None:
    target = note(3, anchor("a.py", 1), anchor("b.py", 2))
    first = record_verdict(target, judged(target, {"a.py": digest(9)}), None, T1)
    assert files(first) == {"a.py": "changed"}
    second = record_verdict(target, judged(target, {"b.py": digest(2)}), first, T2)
    assert files(second) == {"a.py": "changed", "b.py": "fresh"}
    assert second is not None and second.freshness is Freshness.CHANGED and second.judged_at == T2
    third = record_verdict(target, judged(target, {"a.py": digest(1), "b.py": None}), second, T3)
    assert files(third) == {"a.py": "fresh", "b.py": "gone"} and third is not None and third.stale_paths == ("b.py",)


def test_finding_the_same_again_writes_nothing_and_an_older_version_never_overwrites_a_newer() -> None:
    target = note(2, anchor("a.py", 1))
    record = record_verdict(target, judged(target, {"a.py": None}), None, T1)
    assert record_verdict(target, judged(target, {"a.py": None}), record, T2) is None  # nothing new: no write
    older = note(1, anchor("a.py", 1))
    assert record_verdict(older, judged(older, {"a.py": digest(1)}), record, T2) is None  # a read from before v2
    newer = note(3, anchor("a.py", 5))
    replaced = record_verdict(newer, judged(newer, {"a.py": digest(5)}), record, T2)
    assert replaced is not None and (replaced.version, files(replaced)) == (3, {"a.py": "fresh"})


def test_a_summary_lists_gone_then_changed_newest_first_and_counts_the_rest() -> None:
    notes = [note(1, anchor(f"f{n}.py", n), note_id=f"n_{n}") for n in range(7)]

    def recorded(n: int, value: Freshness, at: str, version: int = 1) -> RecordedVerdict:
        return RecordedVerdict(f"n_{n}", "prj", version, (FileVerdict("acme/api", f"f{n}.py", value),), at)

    records = {
        "n_0": recorded(0, Freshness.CHANGED, T1), "n_1": recorded(1, Freshness.CHANGED, T3),
        "n_2": recorded(2, Freshness.GONE, T1), "n_3": recorded(3, Freshness.FRESH, T2),
        "n_4": recorded(4, Freshness.MOVED, T2), "n_5": recorded(5, Freshness.GONE, T3, version=0),  # edited since
    }  # fmt: skip
    summary = summarize(notes, records, complete=True)
    assert [(s.note.id, s.verdict.freshness.value) for s in summary.stale] == [
        ("n_2", "gone"), ("n_1", "changed"), ("n_0", "changed"),
    ]  # fmt: skip
    assert summary.counts == {Freshness.FRESH: 1, Freshness.MOVED: 1}
    assert (summary.unchecked, summary.weighed) == (2, 7)  # n_5 judged at another version, n_6 never
