"""A SQLite file from before the commit sequence: opening it numbers its notes, and the cursors its feed handed
out (version 1, positions by updatedAt and id) continue on the sequence without skipping or repeating a change."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from notewell.adapters.sqlite import SCHEMA_VERSION, SqliteStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import cursor as feed_cursor
from notewell.services.changes import ChangesService
from notewell.services.notes import NoteChanges

KEY = b"k" * 32


def downgrade_to_schema_3(path: Path) -> None:
    """What a file written by the previous version holds: no feed_seq column, no notes_feed index."""
    connection = sqlite3.connect(path)
    connection.execute("DROP INDEX notes_feed")
    connection.execute("ALTER TABLE notes DROP COLUMN feed_seq")
    connection.execute("PRAGMA user_version = 3")
    connection.commit()
    connection.close()


def test_a_cursor_handed_out_before_the_upgrade_continues_on_the_sequence(tmp_path: Path) -> None:
    path, clock = tmp_path / "notewell.db", FixedClock()
    store = SqliteStore(path)
    services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    ids = []
    for n in range(6):
        ids.append(services.notes.create(me, "api", title=f"N{n}", body="b").note.id)
        if n % 2:
            clock.advance(milliseconds=1)  # pairs share a millisecond: the position's id breaks the tie
    services.notes.update(me, ids[0], NoteChanges(body="edited"))  # moves to the end of the old order
    old_feed = ChangesService(services.deps, cursor_key=KEY, horizon=timedelta(0))  # the previous version's
    first = old_feed.since(me, "api", limit=3)
    assert [c.note.id for c in first.changes] == ids[1:4]
    project = services.deps.store.get_project(me.workspace_id, "api")
    assert project is not None

    def unsealed(cursor: str) -> feed_cursor.FeedCursor:
        return feed_cursor.unseal(cursor, KEY, workspace_id=me.workspace_id, project_ids=(project.id,))

    assert unsealed(first.cursor).seq is None  # a version-1 cursor
    store.close()
    downgrade_to_schema_3(path)

    store = SqliteStore(path)  # the upgrade numbers the notes in the order the old feed served them
    services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)
    new_feed = ChangesService(services.deps, cursor_key=KEY, horizon=timedelta(0), sequenced=store)
    clock.advance(seconds=1)
    later = services.notes.create(me, "api", title="After the upgrade", body="b").note.id

    rest = new_feed.since(me, "api", cursor=first.cursor, limit=50)
    assert [c.note.id for c in rest.changes] == [*ids[4:], ids[0], later]  # none skipped, none repeated
    assert [c.note.version for c in rest.changes] == [1, 1, 2, 1]
    assert unsealed(rest.cursor).seq is not None  # and the next cursor is a sequence cursor
    services.notes.update(me, ids[1], NoteChanges(body="edited again"))
    assert [c.note.id for c in new_feed.since(me, "api", cursor=rest.cursor).changes] == [ids[1]]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    store.close()
