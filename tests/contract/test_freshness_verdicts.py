"""The last freshness verdict on each anchored note, kept for the console, on every store: get_context with
checkFreshness records what it judged (a write only where the verdict changed; never failing the read, and never for
a read-only key), a verdict stops applying once its note is edited or re-anchored, it is never a note version nor a
change in the feed, and no workspace ever sees another's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import UnavailableError
from notewell.domain.freshness import CHECKED_STATUSES, FileVerdict, Freshness, FreshnessSummary, RecordedVerdict
from notewell.domain.model import Anchor, LineRange, Note, NoteStatus, NoteType, Principal
from notewell.domain.packing import Section
from notewell.domain.refs import name_of
from notewell.ports import Store, VerdictWrite
from notewell.services.notes import NoteChanges

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
REPO = "github.com/acme/api"


def digest(n: int) -> str:
    return f"{n:064x}"


def anchor(path: str, file_hash: int = 1, symbol: str | None = None) -> Anchor:
    return Anchor(REPO, path, COMMIT, digest(file_hash + 1000), digest(file_hash), symbol,
                  LineRange(1, 3) if symbol else None)  # fmt: skip


class RecordingStore:
    """Delegates to a real store; counts the verdicts each save_verdicts call was given, and fails the verdict calls
    while `failing` is set."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.saves: list[int] = []
        self.failing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def recorded_verdicts(self, workspace_id: str, project_id: str, note_ids: Any) -> dict[str, RecordedVerdict]:
        if self.failing:
            raise UnavailableError("The note store is busy right now; retry in a few seconds.")
        return self._inner.recorded_verdicts(workspace_id, project_id, note_ids)

    def save_verdicts(self, workspace_id: str, writes: Any) -> int:
        if self.failing:
            raise UnavailableError("The note store is busy right now; retry in a few seconds.")
        self.saves.append(len(writes))
        return self._inner.save_verdicts(workspace_id, writes)


@pytest.fixture
def recording(store: Store) -> RecordingStore:
    return RecordingStore(store)


@pytest.fixture
def services(recording: RecordingStore, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=recording, clock=clock)


def decision(services: Services, me: Principal, clock: FixedClock, title: str, *anchors: Anchor) -> Note:
    clock.advance(seconds=1)
    return services.notes.create(
        me, "api", title=title, body=f"{title}, as measured.", type=NoteType.DECISION, anchors=list(anchors)
    ).note


def summary(services: Services, me: Principal) -> FreshnessSummary:
    return services.console.freshness(me, "api")


def stale(services: Services, me: Principal) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {s.note.id: (s.verdict.freshness.value, s.verdict.stale_paths) for s in summary(services, me).stale}


def marks(services: Services, me: Principal, hashes: dict[str, str | None]) -> dict[str, object]:
    result = services.context.get_context(me, "api", check_freshness=hashes)
    return {str(e["id"]): e.get("freshness") for _, entries in result.packed.sections for e in entries}


def test_get_context_records_what_it_judged_and_only_a_changed_verdict_costs_a_write(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    fresh = decision(services, me, clock, "Tokens are opaque", anchor("src/tokens.py", 1))
    changed = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2, "backoff"))
    gone = decision(services, me, clock, "Old queue is drained", anchor("src/old_queue.py", 3))
    unjudged = decision(services, me, clock, "Docs are nightly", anchor("docs/build.md", 4))
    decision(services, me, clock, "Logs are JSON")
    hashes = {"src/tokens.py": digest(1), "src/retry.py": digest(99), "src/old_queue.py": None}

    assert summary(services, me).unchecked == 4  # nothing recorded yet
    clock.advance(minutes=5)
    assert marks(services, me, hashes)[changed.id] == "changed"
    assert recording.saves == [3]  # the three notes judged, in one save
    assert stale(services, me) == {gone.id: ("gone", ("src/old_queue.py",)), changed.id: ("changed", ("src/retry.py",))}
    found = summary(services, me)
    assert [s.note.id for s in found.stale] == [gone.id, changed.id]  # gone first
    assert found.stale[0].note.title == "Old queue is drained" and found.stale[0].verdict.judged_at.startswith("20")
    assert (found.counts[Freshness.FRESH], found.counts[Freshness.MOVED], found.unchecked) == (1, 0, 1)
    assert found.weighed == 4 and found.complete and unjudged.id not in stale(services, me)

    marks(services, me, hashes)  # the same verdicts again: nothing to write
    assert recording.saves == [3]
    marks(services, me, {**hashes, "src/retry.py": digest(2)})  # the code is back: one record changes
    assert recording.saves == [3, 1]
    assert stale(services, me) == {gone.id: ("gone", ("src/old_queue.py",))}
    assert fresh.id not in stale(services, me)


def test_a_verdict_stops_applying_once_its_note_is_edited_or_re_anchored(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    edited = decision(services, me, clock, "Backoff caps at 30 s", anchor("src/retry.py", 1))
    moved = decision(services, me, clock, "Queue name is orders", anchor("src/queue.py", 2))
    marks(services, me, {"src/retry.py": None, "src/queue.py": None})
    assert set(stale(services, me)) == {edited.id, moved.id}

    services.notes.update(me, edited.id, NoteChanges(body="Backoff caps at 60 s now."))
    services.notes.anchor(me, moved.id, [anchor("src/queues/orders.py", 3)])
    after = summary(services, me)
    assert after.stale == () and after.unchecked == 2  # both need a check at their new version

    marks(services, me, {"src/retry.py": digest(1), "src/queues/orders.py": digest(9)})
    assert stale(services, me) == {moved.id: ("changed", ("src/queues/orders.py",))}


def test_a_read_that_judges_only_some_files_keeps_what_earlier_reads_found_in_the_others(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """A session's hook sends the hashes of the files its branch changed, not all of them."""
    note = decision(services, me, clock, "Webhooks retry", anchor("src/hooks.py", 1), anchor("src/retry.py", 2))
    marks(services, me, {"src/hooks.py": digest(7)})
    marks(services, me, {"src/retry.py": digest(2)})  # fresh there: the change in src/hooks.py still stands
    assert stale(services, me) == {note.id: ("changed", ("src/hooks.py",))}
    marks(services, me, {"src/hooks.py": digest(1)})
    assert stale(services, me) == {} and summary(services, me).counts[Freshness.FRESH] == 1


def test_a_read_only_key_gets_its_marked_context_and_records_nothing(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    note = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2))
    key = services.auth.create_key(me.workspace_id, name="auditor", read_only=True).secret
    auditor = services.auth.authenticate(key)
    assert auditor is not None and auditor.read_only
    result = services.context.get_context(auditor, "api", check_freshness={"src/retry.py": None})
    assert f"- {name_of(note.id)} [gone: src/retry.py, re-check] " in result.packed.text
    assert recording.saves == [] and summary(services, me).unchecked == 1


def test_a_store_that_cannot_record_never_fails_the_read(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    note = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2))
    recording.failing = True
    result = services.context.get_context(me, "api", check_freshness={"src/retry.py": None})
    assert f"- {name_of(note.id)} [gone: src/retry.py, re-check] " in result.packed.text
    recording.failing = False
    assert summary(services, me).unchecked == 1  # nothing was kept; the next read records it
    marks(services, me, {"src/retry.py": None})
    assert stale(services, me) == {note.id: ("gone", ("src/retry.py",))}


def test_a_recorded_verdict_is_neither_a_note_version_nor_a_change_in_the_feed(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    note = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2))
    page = services.changes.since(me, "api", since="2000-01-01T00:00:00.000Z")
    clock.advance(minutes=1)
    marks(services, me, {"src/retry.py": None})
    assert stale(services, me) == {note.id: ("gone", ("src/retry.py",))}
    clock.advance(minutes=1)
    after = services.changes.since(me, "api", cursor=page.cursor)
    assert after.changes == []
    stored = services.notes.get(me, note.id).note
    assert (stored.version, stored.updated_at) == (note.version, note.updated_at)
    assert services.notes.revisions(me, note.id).revisions == []


def test_another_workspaces_verdicts_never_show(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    mine = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2))
    marks(services, me, {"src/retry.py": None})
    rival_ws = services.auth.create_workspace("rival")
    rival = services.auth.authenticate(services.auth.create_key(rival_ws.id).secret)
    assert rival is not None
    theirs = decision(services, rival, clock, "Retries back off", anchor("src/retry.py", 2))
    assert summary(services, rival).stale == () and summary(services, rival).unchecked == 1
    project = recording.get_project(me.workspace_id, "api")
    assert project is not None
    # Asked for by the other workspace with this one's project and note ids: nothing.
    assert recording.recorded_verdicts(rival.workspace_id, project.id, [mine.id, theirs.id]) == {}
    assert set(recording.recorded_verdicts(me.workspace_id, project.id, [mine.id, theirs.id])) == {mine.id}
    marks(services, rival, {"src/retry.py": digest(2)})  # the rival's own note, fresh
    assert stale(services, me) == {mine.id: ("gone", ("src/retry.py",))}
    assert summary(services, rival).counts[Freshness.FRESH] == 1


def test_a_verdict_is_stored_only_over_the_record_its_writer_read(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    """Two reads judged the same note at once: the one that writes second read a record that is no longer stored."""
    note = decision(services, me, clock, "Retries back off", anchor("src/retry.py", 2))
    ws, project = me.workspace_id, note.project_id

    def record(value: Freshness, at: str) -> RecordedVerdict:
        return RecordedVerdict(note.id, project, note.version, (FileVerdict(REPO, "src/retry.py", value),), at)

    first, second = (
        record(Freshness.GONE, "2026-03-01T10:00:00.000Z"),
        record(Freshness.FRESH, "2026-03-01T10:00:01.000Z"),
    )
    assert recording.save_verdicts(ws, [VerdictWrite(first, None)]) == 1
    assert recording.save_verdicts(ws, [VerdictWrite(second, None)]) == 0  # read when there was none: too late
    assert recording.save_verdicts(ws, [VerdictWrite(second, first)]) == 1
    assert recording.save_verdicts(ws, [VerdictWrite(first, first)]) == 0  # `first` is no longer stored
    assert recording.recorded_verdicts(ws, project, [note.id]) == {note.id: second}


def test_anchored_in_project_lists_live_anchored_notes_newest_first(
    services: Services, me: Principal, clock: FixedClock, recording: RecordingStore
) -> None:
    first = decision(services, me, clock, "First", anchor("src/a.py"), anchor("src/b.py"))
    second = decision(services, me, clock, "Second", anchor("src/a.py"))
    deleted = decision(services, me, clock, "Deleted", anchor("src/a.py"))
    historical = decision(services, me, clock, "Historical", anchor("src/c.py"))
    decision(services, me, clock, "Not anchored")
    services.notes.delete(me, deleted.id)
    services.notes.update(me, historical.id, NoteChanges(status=NoteStatus.HISTORICAL))
    ws, project = me.workspace_id, first.project_id

    listed = recording.anchored_in_project(ws, project, statuses=CHECKED_STATUSES, limit=10)
    assert [(n.id, n.title, n.version) for n in listed] == [(second.id, "Second", 1), (first.id, "First", 1)]
    assert len(recording.anchored_in_project(ws, project, statuses=CHECKED_STATUSES, limit=1)) == 1
    with_history = recording.anchored_in_project(ws, project, statuses=list(NoteStatus), limit=10)
    assert {n.id for n in with_history} == {first.id, second.id, historical.id}
    assert recording.anchored_in_project("ws_other", project, statuses=CHECKED_STATUSES, limit=10) == []


def test_notes_shown_in_the_relevant_section_are_judged_and_recorded_too(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """What the session-start hook sends: the files changed on the branch, and their hashes."""
    note = decision(services, me, clock, "Webhooks retry three times", anchor("src/hooks.py", 5))
    result = services.context.get_context(me, "api", files=["src/hooks.py"], check_freshness={"src/hooks.py": None})
    assert [str(e["id"]) for s, es in result.packed.sections if s is Section.RELEVANT for e in es] == [note.id]
    assert stale(services, me) == {note.id: ("gone", ("src/hooks.py",))}
