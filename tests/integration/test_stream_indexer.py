"""The stream indexer, driven by the DynamoDB stream events in events/ (as Lambda delivers them), with the pointers in
a moto table and the documents in a real OpenSearch-compatible engine behind the Serverless guard.

What a user would notice: a note is findable once, at its newest state, whatever order, repetition or failure the
stream brings; a deleted note never comes back; a record that cannot be indexed holds up nothing but itself. An
operator would notice: notes indexed without their vector are counted in the metric an alarm watches, and an index
that maps vectors otherwise than pinned stops the indexer with an error instead of failing every search quietly."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import ALIAS, SignedHttp, index_settings
from notewell.bootstrap import indexer
from notewell.config import Settings
from notewell.entrypoints.stream import handle_records
from notewell.ports import EmbeddingUnavailableError, IndexPointer
from notewell.services.indexing import Indexed, NoteIndexer
from tests.support.aoss import CREDENTIALS, REGION, stand_in_collection
from tests.support.dynamo import dynamodb_store

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from osmem_server import OsmemServer

    from notewell.adapters.dynamodb import DynamoDBStore
    from notewell.ports import Vector
    from tests.support.aoss import ServerlessGuard

EVENTS = Path(__file__).resolve().parents[2] / "events"
WS = "ws_events"
NOTE = "n_01JEVENTS00000000000000001"
OTHER = "n_01JEVENTS00000000000000002"


def event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / f"stream_{name}.json").read_text())
    return loaded


class Stack:
    def __init__(self, store: DynamoDBStore, http: SignedHttp, guard: ServerlessGuard, embedder: HashEmbedder) -> None:
        self.store, self.http, self.guard, self.embedder = store, http, guard, embedder
        self.indexer = self.make_indexer(embedder)

    def make_indexer(self, embedder: HashEmbedder | None) -> NoteIndexer:
        settings = Settings(backend="dynamodb", table_name="notewell-test", aws_region=REGION)
        return indexer(settings, store=self.store, embedder=embedder, http=self.http)

    def deliver(self, name: str) -> list[str]:
        result = handle_records(event(name), self.indexer)
        return [failure["itemIdentifier"] for failure in result["batchItemFailures"]]

    def documents(self, note_id: str) -> list[dict[str, Any]]:
        """Every document of the note in the index (orphans included), by a plain term query."""
        body = {"size": 50, "query": {"term": {"noteId": note_id}}}
        _, payload = self.http.request("POST", f"/{ALIAS}/_search", body, timeout=5)
        return [hit["_source"] | {"_id": hit["_id"]} for hit in payload["hits"]["hits"]]

    def pointer(self, note_id: str) -> IndexPointer | None:
        return self.store.get_pointer(WS, note_id, self.indexer.target.index)

    def adds(self) -> int:
        return sum(1 for s in self.guard.seen if s.method == "POST" and s.path.endswith("/_doc"))


@pytest.fixture
def stack(osmem_server: OsmemServer) -> Iterator[Stack]:
    with stand_in_collection(osmem_server) as (http, guard), dynamodb_store() as store:
        yield Stack(store, http, guard, HashEmbedder())
    assert guard.refused == [], "the indexer sent a request OpenSearch Serverless refuses"


def test_an_inserted_note_is_indexed_once_with_its_vector_and_pointer(stack: Stack) -> None:
    assert stack.deliver("insert") == []
    (doc,) = stack.documents(NOTE)
    assert doc["version"] == 1 and doc["workspace"] == WS and doc["projectId"] == "prj_events"
    assert "PostgreSQL 16" in doc["body"] and len(doc["embedding"]) == stack.embedder.dimensions
    pointer = stack.pointer(NOTE)
    assert pointer is not None and pointer.version == 1 and pointer.doc_id == doc["_id"] and pointer.vectored
    assert len(stack.documents(OTHER)) == 1


def test_a_modified_note_replaces_its_document(stack: Stack) -> None:
    stack.deliver("insert")
    first = stack.documents(NOTE)[0]["_id"]
    assert stack.deliver("modify") == []
    (doc,) = stack.documents(NOTE)
    assert doc["version"] == 2 and "PostgreSQL 17" in doc["body"] and doc["_id"] != first


def test_an_older_state_arriving_after_a_newer_one_never_regresses_the_index(stack: Stack) -> None:
    # The batch carries version 2, then version 1 (a retried, bisected batch delivered late).
    assert stack.deliver("out_of_order") == []
    (doc,) = stack.documents(NOTE)
    assert doc["version"] == 2
    assert stack.adds() == 1  # version 1 was refused by its pointer before anything was written


def test_a_replayed_change_is_acknowledged_without_writing_or_embedding_again(stack: Stack) -> None:
    stack.deliver("insert")
    stack.deliver("modify")
    adds, embeds = stack.adds(), stack.embedder.calls
    assert stack.deliver("duplicate") == []
    assert stack.adds() == adds and stack.embedder.calls == embeds
    assert [d["version"] for d in stack.documents(NOTE)] == [2]


def test_a_deleted_note_leaves_the_index_and_an_older_replay_cannot_bring_it_back(stack: Stack) -> None:
    stack.deliver("insert")
    stack.deliver("modify")
    assert stack.deliver("soft_delete") == []
    assert stack.documents(NOTE) == []
    pointer = stack.pointer(NOTE)
    assert pointer is not None and pointer.doc_id is None and pointer.version == 3
    stack.deliver("insert")  # version 1 again
    stack.deliver("modify")  # version 2 again
    assert stack.documents(NOTE) == []


def test_a_note_removed_from_the_table_is_removed_for_good(stack: Stack) -> None:
    stack.deliver("insert")
    stack.deliver("modify")
    assert stack.deliver("remove") == []
    assert stack.documents(NOTE) == []
    stack.deliver("modify")
    assert stack.documents(NOTE) == []


def test_a_poison_record_fails_alone_and_the_records_before_it_are_kept(stack: Stack) -> None:
    failures = stack.deliver("poison")
    assert failures == ["1000000000000000000013"]  # exactly its SequenceNumber
    assert [d["version"] for d in stack.documents(NOTE)] == [1]  # the record before it was indexed
    assert stack.documents(OTHER) == []
    # Lambda retries from the failed record: it fails again, alone; the shard's later records are not lost.
    retry = {"Records": event("poison")["Records"][1:]}
    assert [f["itemIdentifier"] for f in handle_records(retry, stack.indexer)["batchItemFailures"]] == [
        "1000000000000000000013"
    ]
    after = {"Records": event("poison")["Records"][2:]}  # past it (after MaximumRetryAttempts): indexing goes on
    assert handle_records(after, stack.indexer)["batchItemFailures"] == []
    assert [d["version"] for d in stack.documents(NOTE)] == [2]


def test_an_index_that_is_down_fails_the_record_and_loses_nothing(stack: Stack) -> None:
    down = SignedHttp("http://127.0.0.1:9", REGION, CREDENTIALS)  # nothing listens on the discard port
    stack.indexer = indexer(
        Settings(backend="dynamodb", table_name="notewell-test", aws_region=REGION),
        store=stack.store, embedder=stack.embedder, http=down,
    )  # fmt: skip
    assert stack.deliver("insert") == ["1000000000000000000001"]  # the first record, and processing stopped there
    down.close()
    assert stack.pointer(NOTE) is None  # nothing claimed: the retry indexes it
    stack.indexer = stack.make_indexer(stack.embedder)
    assert stack.deliver("insert") == []
    assert len(stack.documents(NOTE)) == 1


class DownEmbedder(HashEmbedder):
    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        self.calls += 1
        raise EmbeddingUnavailableError("Bedrock throttled")


def test_a_note_the_model_cannot_embed_is_indexed_by_words_and_gets_its_vector_later(stack: Stack) -> None:
    stack.indexer = stack.make_indexer(DownEmbedder())
    assert stack.deliver("insert") == []  # the stream does not stall on the model
    (doc,) = stack.documents(NOTE)
    assert "embedding" not in doc
    pointer = stack.pointer(NOTE)
    assert pointer is not None and not pointer.vectored
    stack.indexer = stack.make_indexer(stack.embedder)
    assert stack.deliver("insert") == []  # the same version again (a reindex): now with its vector
    (doc,) = stack.documents(NOTE)
    assert len(doc["embedding"]) == stack.embedder.dimensions


def test_a_newer_state_indexed_meanwhile_wins_the_pointer_race(stack: Stack) -> None:
    """A reindex writing version 1 while the stream writes version 2: the loser deletes its own document."""
    from notewell.adapters.dynamodb import item_to_note

    v1 = item_to_note(event("insert")["Records"][0]["dynamodb"]["NewImage"])
    v2 = item_to_note(event("modify")["Records"][0]["dynamodb"]["NewImage"])
    original = stack.store.get_pointer

    def read_then_race(workspace_id: str, note_id: str, index: str) -> IndexPointer | None:
        seen = original(workspace_id, note_id, index)
        stack.store.get_pointer = original  # type: ignore[method-assign]
        assert stack.indexer.upsert(v2) is Indexed.INDEXED  # lands between our read and our write
        return seen

    stack.store.get_pointer = read_then_race  # type: ignore[method-assign]
    assert stack.indexer.upsert(v1) is Indexed.OVERTAKEN
    assert [d["version"] for d in stack.documents(NOTE)] == [2]


def test_the_guard_refuses_what_serverless_refuses(stack: Stack) -> None:
    """The stand-in is not lenient: a custom id or a refresh fails as it would on a vector collection."""
    from notewell.ports import SearchUnavailableError

    stack.deliver("insert")
    with pytest.raises(SearchUnavailableError, match="400"):
        stack.http.request("PUT", f"/{stack.indexer.target.index}/_doc/mine", {"noteId": "x"}, timeout=5)
    with pytest.raises(SearchUnavailableError, match="400"):
        stack.http.request("POST", f"/{ALIAS}/_doc", {"noteId": "x"}, timeout=5, params={"refresh": "true"})
    with pytest.raises(SearchUnavailableError, match="404"):
        stack.http.request("POST", f"/{ALIAS}/_refresh", timeout=5)
    stack.guard.refused.clear()


def emf_lines(text: str) -> list[dict[str, Any]]:
    return [line for line in map(json.loads, text.splitlines()) if "_aws" in line]


def test_notes_indexed_without_their_vector_are_counted_in_the_indexer_metric(
    stack: Stack, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from functions.indexer import app

    for name, value in {"NOTEWELL_METRICS": "emf", "POWERTOOLS_METRICS_NAMESPACE": "Notewell",
                        "POWERTOOLS_SERVICE_NAME": "notewell"}.items():  # fmt: skip  # as template.yaml sets them
        monkeypatch.setenv(name, value)
    app._metrics.cache_clear()
    try:
        monkeypatch.setattr(app, "_indexer", lambda: stack.make_indexer(DownEmbedder()))
        capsys.readouterr()
        assert app.handler(event("insert"), None) == {"batchItemFailures": []}
        (line,) = emf_lines(capsys.readouterr().out)
        assert line["_aws"]["CloudWatchMetrics"] == [{
            "Namespace": "Notewell", "Dimensions": [["service"]],
            "Metrics": [{"Name": "NotesIndexedWithoutVector", "Unit": "Count"}],
        }]  # fmt: skip
        assert (line["service"], line["NotesIndexedWithoutVector"]) == ("indexer", [2.0])  # the batch's two notes

        monkeypatch.setattr(app, "_indexer", lambda: stack.indexer)  # the model answers again
        assert app.handler(event("modify"), None) == {"batchItemFailures": []}
        (line,) = emf_lines(capsys.readouterr().out)
        assert line["NotesIndexedWithoutVector"] == [0.0]  # every batch reports: the alarm sees data while all is well
    finally:
        app._metrics.cache_clear()


def test_an_index_that_maps_vectors_otherwise_stops_the_indexer_with_an_error(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    # The index of this model exists already, its vector field naming no engine (a Serverless collection then
    # builds nmslib, which refuses the filter inside every vector query): nothing is written to it.
    wrong = index_settings(stack.embedder.dimensions)
    wrong["mappings"]["properties"]["embedding"] = {"type": "knn_vector", "dimension": stack.embedder.dimensions}
    stack.http.request("PUT", f"/{stack.indexer.target.index}", wrong, timeout=5)
    with caplog.at_level(logging.ERROR):
        assert stack.deliver("insert") == ["1000000000000000000001"]
    assert any("maps its vectors as" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    assert stack.adds() == 0 and stack.pointer(NOTE) is None
