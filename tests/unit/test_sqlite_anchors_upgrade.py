"""A SQLite file from before anchors (schema 6): opening it adds the anchors columns, its notes and revisions read as
unanchored, and they can be anchored from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from notewell.adapters.sqlite import SCHEMA_VERSION, SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import Anchor
from notewell.services.notes import NoteChanges

ANCHOR = Anchor("acme/api", "src/app.py", "8a39f054a62fdc5bce054ec2feddfea23c54105f", "1" * 64, "2" * 64)


def downgrade_to_schema_6(path: Path) -> None:
    """What a file written by the previous version holds: no anchors columns."""
    connection = sqlite3.connect(path)
    connection.execute("DROP INDEX notes_anchored")  # an index on the anchors column: older files have neither
    for table in ("notes", "revisions"):
        connection.execute(f"ALTER TABLE {table} DROP COLUMN anchors")
    connection.execute("PRAGMA user_version = 6")
    connection.commit()
    connection.close()


def test_a_file_from_before_anchors_opens_reads_its_notes_and_takes_anchors(tmp_path: Path) -> None:
    path = tmp_path / "notewell.db"
    store = SqliteStore(path)
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    note = services.notes.create(me, "api", title="Queue", body="We use SQS.").note
    services.notes.update(me, note.id, NoteChanges(body="We use SQS FIFO."))
    store.close()
    downgrade_to_schema_6(path)

    store = SqliteStore(path)
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    assert services.notes.get(me, note.id).note.anchors == ()
    assert services.notes.revision(me, note.id, 1).anchors == ()
    anchored = services.notes.update(me, note.id, NoteChanges(anchors=[ANCHOR])).note
    assert services.notes.get(me, note.id).note.anchors == (ANCHOR,)
    assert services.notes.revision(me, note.id, anchored.version - 1).anchors == ()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    store.close()
