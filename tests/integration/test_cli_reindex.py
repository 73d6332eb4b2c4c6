"""`notewell reindex` as a person runs it: after an upgrade from keyword-only, after the model changes, and on a
deployed stack after the embedding model was failing (`--stack --missing-vectors`)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import OpenSearchIndex, SignedHttp
from notewell.adapters.sqlite import SqliteStore, SqliteVectorIndex
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap, indexer
from notewell.config import Settings
from notewell.domain.hybrid import embedding_text
from notewell.domain.model import NoteType
from notewell.entrypoints.cli import main
from notewell.services.indexing import Indexed
from tests.integration.test_stream_indexer import DownEmbedder
from tests.support.aoss import CREDENTIALS, REGION, stand_in_endpoint
from tests.support.dynamo import dynamodb_store

if TYPE_CHECKING:
    from osmem_server import OsmemServer

MEMORY = [
    {"type": "entity", "name": "Hosting", "entityType": "decision", "observations": ["Frontend deploys to Vercel"]},
    {"type": "entity", "name": "Billing", "entityType": "rule", "observations": ["Invoices are stored in cents"]},
    {"type": "entity", "name": "Queues", "entityType": "decision", "observations": ["Jobs go through SQS"]},
]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in MEMORY), encoding="utf-8")
    return path


def reindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["reindex", "--json", "--data-dir", str(tmp_path)]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def vector_models(tmp_path: Path) -> list[str]:
    store = SqliteStore(tmp_path / "notewell.db")
    try:
        return [row[0] for row in store.connection().execute("SELECT model FROM note_vectors ORDER BY model")]
    finally:
        store.close()


def test_reindex_embeds_notes_written_without_a_model_then_has_nothing_left(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "none")
    assert main(["import", str(memory_file), "--project", "p", "--data-dir", str(tmp_path)]) == 0
    assert vector_models(tmp_path) == []
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")
    assert reindex(tmp_path, capsys) == {"model": "notewell-hash-v1-64", "embedded": 3, "failed": 0, "dropped": 0}
    assert vector_models(tmp_path) == ["notewell-hash-v1-64"] * 3
    assert reindex(tmp_path, capsys)["embedded"] == 0


def test_a_model_change_drops_the_old_vectors_and_embeds_again(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")
    assert main(["import", str(memory_file), "--project", "p", "--data-dir", str(tmp_path)]) == 0
    assert vector_models(tmp_path) == ["notewell-hash-v1-64"] * 3  # import embeds as it writes
    store = SqliteStore(tmp_path / "notewell.db")
    store.connection().execute("UPDATE note_vectors SET model = 'an-older-model'")
    store.close()
    assert reindex(tmp_path, capsys) == {"model": "notewell-hash-v1-64", "embedded": 3, "failed": 0, "dropped": 3}
    assert vector_models(tmp_path) == ["notewell-hash-v1-64"] * 3


def test_the_progress_bar_is_drawn_on_a_terminal(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "none")
    assert main(["import", str(memory_file), "--project", "p", "--data-dir", str(tmp_path)]) == 0
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["reindex", "--data-dir", str(tmp_path)]) == 0
    drawn = terminal.getvalue()
    assert "\rEmbedding notes [" in drawn and drawn.rstrip().endswith("3/3")
    assert capsys.readouterr().out.endswith("\nReindexed with notewell-hash-v1-64: 3 notes embedded.\n")


def test_without_a_model_reindex_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTEWELL_EMBEDDER", "none")
    assert main(["reindex", "--data-dir", str(tmp_path)]) == 2
    assert "embed extra" in capsys.readouterr().err


def test_vectors_of_an_older_note_version_never_replace_a_newer_one(tmp_path: Path) -> None:
    from notewell.ports import NoteVector

    store = SqliteStore(tmp_path / "notewell.db")
    index = SqliteVectorIndex(store, 2)
    index.save_vectors("ws", [NoteVector("n1", "p", 3, "m", (1.0, 0.0))])
    index.save_vectors("ws", [NoteVector("n1", "p", 2, "m", (0.0, 1.0))])  # a late, older write
    assert index.vectors_of("ws", ["n1"], "m")["n1"].vector == (1.0, 0.0)
    # Another process's write reaches this process's in-memory matrix: the next query sees it.
    other = SqliteVectorIndex(SqliteStore(tmp_path / "notewell.db"), 2)
    assert index.nearest("ws", "p", "m", (0.0, 1.0), 5) == [("n1", 0.0)]
    other.save_vectors("ws", [NoteVector("n1", "p", 4, "m", (0.0, 1.0)), NoteVector("n2", "p", 1, "m", (0.6, 0.8))])
    assert index.nearest("ws", "p", "m", (0.0, 1.0), 5) == [("n1", 1.0), ("n2", 0.8)]
    assert index.nearest("ws", "other-project", "m", (0.0, 1.0), 5) == []
    store.close()


def test_missing_vectors_gives_their_vector_to_the_notes_indexed_while_the_model_failed(
    osmem_server: OsmemServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with stand_in_endpoint(osmem_server) as (endpoint, guard), dynamodb_store() as store:
        monkeypatch.setenv("AWS_REGION", store.client.meta.region_name)
        monkeypatch.setenv("NOTEWELL_EMBEDDER", "hash")  # Bedrock in a deployed stack
        services = bootstrap(Settings(), store=store, clock=FixedClock())
        ws = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(ws.id).secret)
        assert me is not None
        bodies = ["Jobs go through SQS with a dead-letter queue.", "The frontend deploys to Vercel from main.",
                  "Invoices are stored in cents."]  # fmt: skip
        notes = [services.notes.create(me, "api", title=f"Note {n}", body=body, type=NoteType.DECISION).note
                 for n, body in enumerate(bodies)]  # fmt: skip
        http = SignedHttp(endpoint, REGION, CREDENTIALS)
        settings = Settings(backend="dynamodb", table_name=store.table_name, aws_region=REGION)
        while_down = indexer(settings, store=store, embedder=DownEmbedder(), http=http)
        assert [while_down.upsert(note) for note in notes] == [Indexed.WITHOUT_VECTOR] * 3
        search = OpenSearchIndex(http, store.get_notes)
        query = HashEmbedder().embed([embedding_text(notes[0].title, notes[0].body)])[0]  # as the note was embedded
        assert search.nearest(ws.id, notes[0].project_id, HashEmbedder().model_id, query, 5) == []

        command = ["reindex", "--stack", "--table", store.table_name, "--search-endpoint", endpoint,
                   "--missing-vectors", "--json"]  # fmt: skip
        capsys.readouterr()
        assert main(command) == 0
        report = json.loads(capsys.readouterr().out)["index"]
        assert (report["found"], report["embedded"], report["removed"], report["unchanged"]) == (3, 3, 0, 0)
        nearest = search.nearest(ws.id, notes[0].project_id, HashEmbedder().model_id, query, 5)
        assert nearest[0][0] == notes[0].id and nearest[0][1] == pytest.approx(1.0)  # its own vector: cosine 1
        assert sorted(note_id for note_id, _ in nearest) == sorted(n.id for n in notes)

        assert main(command) == 0
        assert json.loads(capsys.readouterr().out)["index"]["found"] == 0  # nothing left without a vector
        http.close()
        assert guard.refused == []


def test_missing_vectors_is_for_a_deployed_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reindex", "--missing-vectors", "--data-dir", str(tmp_path)]) == 2
    assert "add --stack NAME" in capsys.readouterr().err
