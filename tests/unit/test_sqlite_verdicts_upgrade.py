"""A SQLite file from before freshness verdicts were kept (schema 8): opening it adds their table, and the notes it
holds can be judged and recorded from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from notewell.adapters.sqlite import SCHEMA_VERSION, SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import Anchor

ANCHOR = Anchor("acme/api", "src/app.py", "8a39f054a62fdc5bce054ec2feddfea23c54105f", "1" * 64, "2" * 64)


def downgrade_to_schema_8(path: Path) -> None:
    """What a file written by the previous version holds: no verdicts table."""
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE verdicts")
    connection.execute("PRAGMA user_version = 8")
    connection.commit()
    connection.close()


def test_a_file_from_before_verdicts_opens_and_records_them(tmp_path: Path) -> None:
    path = tmp_path / "notewell.db"
    store = SqliteStore(path)
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    note = services.notes.create(me, "api", title="App", body="The app starts here.", anchors=[ANCHOR]).note
    store.close()
    downgrade_to_schema_8(path)

    store = SqliteStore(path)
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    assert services.console.freshness(me, "api").unchecked == 1
    services.context.get_context(me, "api", check_freshness={"src/app.py": None})
    (gone,) = services.console.freshness(me, "api").stale
    assert (gone.note.id, gone.verdict.freshness.value, gone.verdict.stale_paths) == (note.id, "gone", ("src/app.py",))
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (9,)
    store.close()
