"""The load run's write accounting (tests/bench/load.py): an acknowledged write missing from the export, or stored
with another body, is reported, so `make load` fails on a lost write."""

from __future__ import annotations

from pathlib import Path

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.services.notes import NoteChanges
from tests.bench.load import compare, digest, stored_versions


def test_acknowledged_writes_are_found_in_the_export_as_notes_or_revisions_and_losses_are_named(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=tmp_path), store=store)
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        note = services.notes.create(me, "load", title="T", body="first").note
        services.notes.update(me, note.id, NoteChanges(body="second"), expected_version=1)
        stored = stored_versions(services.portability.export_lines(me, "load"))
    finally:
        store.close()

    acknowledged = {(note.id, 1): digest("first"), (note.id, 2): digest("second")}
    assert compare(acknowledged, stored)["stored"] == 2  # v1 as a revision, v2 as the note

    lost = compare({**acknowledged, (note.id, 3): digest("third")}, stored)
    assert (lost["acknowledged"], lost["stored"], lost["missing"]) == (3, 2, [f"{note.id} v3"])
    changed = compare({**acknowledged, (note.id, 2): digest("other")}, stored)
    assert changed["stored"] == 1 and changed["different_body"] == [f"{note.id} v2"]
