"""What the quality runs share: a fresh embedded store with the chosen embedder, and reading the converted sets."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.model import Plan, Principal

DEFAULT_DATA = Path("/work/data/quality")


@contextmanager
def fresh_services(embedder: EmbedderChoice) -> Iterator[tuple[Services, Principal]]:
    """A new SQLite store in a temporary directory, one workspace on the plan without quotas, and its principal."""
    with tempfile.TemporaryDirectory(prefix="notewell-quality-") as directory:
        store = SqliteStore(Path(directory) / "notewell.db")
        try:
            services = bootstrap(Settings(data_dir=Path(directory), embedder=embedder), store=store)
            if services.meaning is not None:
                services.meaning.prepare()  # the model loaded before the first call, as serve does at start
            workspace = services.auth.create_workspace("quality")
            services.workspaces.set_plan(workspace.id, Plan.ENTERPRISE)
            principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
            assert principal is not None
            yield services, principal
        finally:
            store.close()


def read_jsonl(path: Path, *, split: str, sets: set[str] | None, limit: int | None) -> list[dict[str, Any]]:
    """The records of one split (and of the named sets), at most `limit` per set, in file order."""
    if not path.exists():
        raise SystemExit(f"{path} is missing: place the data and convert it first (tests/quality/README.md).")
    taken: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            name = record["set"]
            if record["split"] != split or (sets and name not in sets):
                continue
            if limit is not None and taken.get(name, 0) >= limit:
                continue
            taken[name] = taken.get(name, 0) + 1
            records.append(record)
    return records


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
