"""get_changes_since over every store, with an injected clock: ordering, paging, cursors, the horizon."""

from __future__ import annotations

import base64
import json
import random
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import SQLITE_FEED_HORIZON, Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError, InvalidCursorError
from notewell.domain.model import NoteStatus, NoteType, NoteWrite, Principal
from notewell.ports import Store
from notewell.services.changes import ChangesPage
from notewell.services.notes import NoteChanges

HORIZON = SQLITE_FEED_HORIZON  # both stores run with the same horizon in these tests


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    settings = Settings(data_dir=tmp_path, feed_horizon_seconds=HORIZON.total_seconds())
    return bootstrap(settings, store=store, clock=clock)


def settle(clock: FixedClock) -> None:
    clock.advance(seconds=HORIZON.total_seconds() + 1)


def drain(services: Services, me: Principal, cursor: str | None = None, **kw: Any) -> tuple[list[Any], str]:
    """Follow pages while hasMore, as the contract tells callers to; bounded."""
    seen: list[Any] = []
    for _ in range(1_000):
        page = services.changes.since(me, "api", cursor=cursor, **kw)
        seen += page.changes
        cursor = page.cursor
        if not page.has_more:
            return seen, cursor
    raise AssertionError("the feed never ended")


def create(services: Services, me: Principal, n: int, **kw: Any) -> str:
    return services.notes.create(me, "api", title=f"Note {n}", body=f"Body {n}", **kw).note.id


def test_notes_sharing_one_millisecond_come_once_each_in_order(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    ids = [create(services, me, n) for n in range(250)]  # the clock stands still: one millisecond for all
    settle(clock)
    seen, _ = drain(services, me, limit=7)
    assert [c.note.id for c in seen] == sorted(ids)  # ties ordered by id
    assert {c.note.updated_at for c in seen} == {seen[0].note.updated_at}
    assert all(c.kind == "created" for c in seen)


def test_edits_between_pages_show_up_later_and_never_twice(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    ids = [create(services, me, n) for n in range(20)]
    settle(clock)
    first = services.changes.since(me, "api", limit=5)
    assert [c.note.id for c in first.changes] == ids[:5] and first.has_more
    services.notes.update(me, ids[2], NoteChanges(body="edited after it was read"))  # already delivered
    services.notes.update(me, ids[12], NoteChanges(body="edited before it was read"))  # not delivered yet
    settle(clock)
    rest, _ = drain(services, me, first.cursor, limit=5)
    order = [c.note.id for c in rest]
    assert order == [i for i in ids[5:] if i != ids[12]] + [ids[2], ids[12]]
    assert [(c.kind, c.note.version) for c in rest[-2:]] == [("updated", 2), ("updated", 2)]


def test_deletes_carry_the_last_title_and_restores_read_as_updates(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    note = create(services, me, 1)
    settle(clock)
    _, cursor = drain(services, me)
    services.notes.update(me, note, NoteChanges(title="Renamed before deletion"))
    services.notes.delete(me, note)
    settle(clock)
    deleted, cursor = drain(services, me, cursor)
    assert [(c.kind, c.note.title, c.note.version) for c in deleted] == [("deleted", "Renamed before deletion", 3)]
    services.notes.restore(me, note)
    settle(clock)
    restored, _ = drain(services, me, cursor)
    assert [(c.kind, c.note.version) for c in restored] == [("updated", 4)]


def test_since_starts_at_a_time_and_a_change_is_served_as_soon_as_it_is_acknowledged(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    create(services, me, 1)
    clock.advance(hours=1)
    start = clock.now()
    later = create(services, me, 2)
    page = services.changes.since(me, "api", since=start.isoformat())
    assert [c.note.id for c in page.changes] == [later] and page.retry_after is None and not page.has_more
    clock.advance(milliseconds=1)
    newest = create(services, me, 3)  # the clock has not moved past any horizon: nothing to wait for
    page = services.changes.since(me, "api", cursor=page.cursor)
    assert [c.note.id for c in page.changes] == [newest] and page.retry_after is None


def test_since_a_time_between_changes_of_one_millisecond_and_later_edits_serves_each_once(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    before = [create(services, me, n) for n in range(3)]
    clock.advance(minutes=5)
    start = clock.now()
    after = [create(services, me, n) for n in range(3, 6)]
    services.notes.update(me, before[1], NoteChanges(body="edited after since"))
    first = services.changes.since(me, "api", since=start.isoformat(), limit=2)
    rest, _ = drain(services, me, first.cursor, limit=2)
    seen = [(c.note.id, c.note.version) for c in [*first.changes, *rest]]
    assert seen == [*((i, 1) for i in after), (before[1], 2)]


def test_a_change_stamped_before_a_read_but_committed_after_it_is_not_lost(
    services: Services, me: Principal, clock: FixedClock, store: Store
) -> None:
    create(services, me, 0)
    settle(clock)
    _, cursor = drain(services, me)
    slow = create(services, me, 1)
    slow_note = store.get_note(me.workspace_id, slow)
    assert slow_note is not None
    # Another writer stamps a change now, but its commit lands only after the follower has read a page.
    clock.advance(seconds=1)
    stamped = services.notes.create(me, "api", title="Fast", body="committed first").note
    page = services.changes.since(me, "api", cursor=cursor)  # the follower reads in between
    # The commit sequence serves what is committed at once, the slow note's first version too.
    assert [c.note.id for c in page.changes] == [slow, stamped.id]
    late = replace(slow_note, body="stamped earlier, committed later", version=2)
    store.commit(me.workspace_id, [NoteWrite(late, expected_version=1, previous=slow_note)], revision_cap=50)
    settle(clock)
    rest, _ = drain(services, me, page.cursor)
    seen = [(c.note.id, c.note.version) for c in [*page.changes, *rest]]
    assert len(seen) == len(set(seen))  # nothing served twice
    assert {note_id for note_id, _ in seen} == {slow, stamped.id}
    assert max(version for note_id, version in seen if note_id == slow) == 2  # the late commit was not lost


def test_filters_are_locked_to_the_cursor_but_limit_and_max_tokens_may_change(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    for n in range(6):
        create(services, me, n, type=NoteType.DECISION if n % 2 else NoteType.FACT)
    settle(clock)
    first = services.changes.since(me, "api", types=[NoteType.DECISION], limit=1)
    assert [c.note.type for c in first.changes] == [NoteType.DECISION]
    more = services.changes.since(me, "api", cursor=first.cursor, types=[NoteType.DECISION], limit=5, max_tokens=500)
    assert [c.note.type for c in more.changes] == [NoteType.DECISION] * 2
    with pytest.raises(InvalidArgumentError, match="only limit and maxTokens"):
        services.changes.since(me, "api", cursor=first.cursor, types=[NoteType.FACT])
    with pytest.raises(InvalidArgumentError):
        services.changes.since(me, "api", cursor=first.cursor, types=[NoteType.DECISION],
                               statuses=[NoteStatus.CURRENT])  # fmt: skip
    with pytest.raises(InvalidArgumentError):
        services.changes.since(me, "api", cursor=first.cursor, since="2026-01-01T00:00:00Z")


def test_forged_truncated_and_foreign_cursors_are_refused_with_400(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    create(services, me, 1)
    services.notes.create(me, "web", title="Other", body="project")
    settle(clock)
    cursor = services.changes.since(me, "api", limit=1).cursor
    forged = ("A" if cursor[0] != "A" else "B") + cursor[1:]
    for bad in (
        forged,
        cursor[:-3],
        cursor + "x",
        "garbage",
        "",
        "a.b.c",
        "..",
        "é" * 10,
        *well_formed_forgeries(cursor),
    ):
        with pytest.raises(InvalidCursorError):
            services.changes.since(me, "api", cursor=bad)
    with pytest.raises(InvalidCursorError, match="another project"):
        services.changes.since(me, "web", cursor=cursor)
    other = services.auth.create_workspace("rival")
    rival = services.auth.authenticate(services.auth.create_key(other.id, project="api").secret)
    assert rival is not None
    with pytest.raises(InvalidCursorError):
        services.changes.since(rival, "api", cursor=cursor)


def well_formed_forgeries(cursor: str) -> list[str]:
    """The cursor with each value of its body changed, re-encoded, with the original signature: only the signature
    check can tell these from cursors the server issued. A compact cursor (no '.') has each byte of its body
    changed in turn; a JSON one each value."""
    if "." not in cursor:
        data = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body, mac = data[:-12], data[-12:]
        changed = [body[:i] + bytes([body[i] ^ 1]) + body[i + 1 :] for i in range(len(body))]
        return [base64.urlsafe_b64encode(b + mac).decode().rstrip("=") for b in changed]
    body, signature = cursor.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forgeries = []
    for field, value in payload.items():
        if isinstance(value, bool) or field == "v":
            continue
        changed = dict(payload)
        if isinstance(value, int):
            changed[field] = value + 1_000
        elif isinstance(value, list) and value and isinstance(value[0], str):  # the (updatedAt, id) position
            changed[field] = ["2099-01-01T00:00:00.000Z", value[1]] if len(value) == 2 else [*value, "decision"]
        elif isinstance(value, list):
            changed[field] = ["decision"]
        elif value is None:
            changed[field] = ["2099-01-01T00:00:00.000Z", ""]
        else:
            changed[field] = str(value) + "x"
        text = json.dumps(changed, separators=(",", ":"), sort_keys=True).encode()
        forgeries.append(base64.urlsafe_b64encode(text).decode().rstrip("=") + "." + signature)
    return forgeries


def test_a_cursor_with_a_well_formed_body_and_the_old_signature_is_refused(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    for n in range(3):
        create(services, me, n)
    settle(clock)
    page = services.changes.since(me, "api", limit=1)
    forgeries = well_formed_forgeries(page.cursor)
    assert len(forgeries) >= 4  # the filters and the position were each changed (and, in JSON, the ids)
    for forged in forgeries:
        with pytest.raises(InvalidCursorError):
            services.changes.since(me, "api", cursor=forged)
    assert len(services.changes.since(me, "api", cursor=page.cursor).changes) == 2  # the real one still works


def test_max_tokens_bounds_a_page_but_one_change_always_comes(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    huge = services.notes.create(me, "api", title="Huge", body="word " * 9_000).note.id
    for n in range(10):
        create(services, me, n)
    settle(clock)
    page = services.changes.since(me, "api", max_tokens=100, limit=50)
    assert [c.note.id for c in page.changes][:1] == [huge] and page.has_more
    assert len(page.changes[0].excerpt) <= 161  # a huge note degrades to its excerpt
    small = services.changes.since(me, "api", cursor=page.cursor, max_tokens=100)
    assert 1 <= len(small.changes) < 10 and small.has_more


def test_an_unknown_project_has_nothing_to_resume_and_its_cursor_works_later(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    empty = services.changes.since(me, "api")
    assert empty.changes == [] and empty.notice is not None and not empty.has_more
    note = create(services, me, 1)
    settle(clock)
    seen, _ = drain(services, me, empty.cursor)
    assert [c.note.id for c in seen] == [note]


def test_a_follower_honouring_has_more_sees_every_acknowledged_change(
    services: Services, me: Principal, clock: FixedClock, store: Store
) -> None:
    acknowledged: dict[str, int] = {}
    lock = threading.Lock()
    done = threading.Event()
    start = threading.Barrier(4, timeout=10)
    # Writers hold on midway until the follower has been served some of their changes: it reads while they write.
    served_midway = threading.Event()

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[str] = []
        start.wait()
        for n in range(25):
            if mine and rng.random() < 0.4:
                view = services.notes.update(me, rng.choice(mine), NoteChanges(body=f"w{seed} edit {n}"))
            else:
                view = services.notes.create(me, "api", title=f"w{seed} n{n}", body="fresh")
                mine.append(view.note.id)
            with lock:
                acknowledged[view.note.id] = max(acknowledged.get(view.note.id, 0), view.note.version)
            clock.advance(milliseconds=rng.randint(0, 100))
            if n == 10:
                served_midway.wait(10)

    seen: dict[str, int] = {}

    def follower() -> None:
        cursor = None
        start.wait()
        while not done.is_set():
            page: ChangesPage = services.changes.since(me, "api", cursor=cursor, limit=5)
            for change in page.changes:
                seen[change.note.id] = change.note.version
            if page.changes:
                served_midway.set()
            cursor = page.cursor
        settle(clock)
        rest, _ = drain(services, me, cursor, limit=5)
        for change in rest:
            seen[change.note.id] = change.note.version

    writers = [threading.Thread(target=writer, args=(s,)) for s in range(3)]
    reader = threading.Thread(target=follower)
    for thread in [*writers, reader]:
        thread.start()
    for thread in writers:
        thread.join(60)
    done.set()
    reader.join(60)
    assert seen == acknowledged
    assert served_midway.is_set()


@pytest.mark.parametrize("since", ["0999-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "1969-12-31"])
def test_a_since_before_the_first_note_returns_every_note(
    services: Services, me: Principal, clock: FixedClock, since: str
) -> None:
    ids = [create(services, me, n) for n in range(3)]
    settle(clock)
    page = services.changes.since(me, "api", since=since)
    assert [c.note.id for c in page.changes] == sorted(ids)


def test_a_since_past_year_9999_reads_as_now_and_its_cursor_sees_later_notes(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    create(services, me, 1)
    settle(clock)
    page = services.changes.since(me, "api", since="9999-12-31T23:59:59-01:00")
    assert page.changes == []
    later = create(services, me, 2)
    settle(clock)
    assert [c.note.id for c in services.changes.since(me, "api", cursor=page.cursor).changes] == [later]


def test_a_malformed_since_is_refused_naming_the_argument(services: Services, me: Principal) -> None:
    create(services, me, 1)
    with pytest.raises(InvalidArgumentError, match=r"^since: '2026-13-01' is not a real date"):
        services.changes.since(me, "api", since="2026-13-01")
