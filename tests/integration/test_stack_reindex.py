"""`notewell reindex --stack`: a deployed stack's index rebuilt from its table, beside the stream indexer.

Notes written before the collection existed (or while the indexer was failing) become findable; deleted notes get
no document; documents nobody claims (a crash between indexing and the pointer write) are swept; a second run
changes nothing. When the index is a new one (another model, size or vector method), search moves onto it once it
is full, in one step, and the index it leaves is deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx2
import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import ALIAS, OpenSearchIndex, SignedHttp, alias_actions, document, index_settings
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap, stack_reindex
from notewell.config import Settings
from notewell.domain.model import NoteType
from notewell.entrypoints.cli import main
from notewell.services.search import SearchMode
from tests.support.aoss import CREDENTIALS, REGION, stand_in_collection
from tests.support.dynamo import dynamodb_store

if TYPE_CHECKING:
    from collections.abc import Sequence

    from osmem_server import OsmemServer

    from notewell.adapters.dynamodb import DynamoDBStore
    from notewell.bootstrap import Services
    from notewell.domain.model import Principal
    from tests.support.aoss import ServerlessGuard

SETTINGS = Settings(backend="dynamodb", table_name="notewell-test", aws_region=REGION)
LEGACY = "notes-legacy"


def serve_from_a_legacy_index(
    http: SignedHttp, services: Services, me: Principal, note_ids: Sequence[str], embedder: HashEmbedder
) -> None:
    """The alias on an index as the version before made it, holding the notes: a vector field with no engine named
    (a Serverless collection builds nmslib, which refuses a filter inside `knn`) and cosinesimil."""
    legacy = index_settings(embedder.dimensions)
    legacy["mappings"]["properties"]["embedding"] = {
        "type": "knn_vector", "dimension": embedder.dimensions, "space_type": "cosinesimil",
    }  # fmt: skip
    http.request("PUT", f"/{LEGACY}", legacy, timeout=5)
    for note_id in note_ids:
        note = services.notes.get(me, note_id).note
        http.request("POST", f"/{LEGACY}/_doc", document(note, embedder.embed([note.body])[0], embedder.model_id),
                     timeout=5)  # fmt: skip
    status, aliases = http.request("GET", f"/_alias/{ALIAS}", timeout=5, allow=(404,))
    http.request("POST", "/_aliases", alias_actions(ALIAS, LEGACY, [] if status == 404 else list(aliases)), timeout=5)


def test_reindex_backfills_sweeps_orphans_and_is_idempotent(osmem_server: OsmemServer) -> None:
    embedder = HashEmbedder()
    with stand_in_collection(osmem_server) as (http, guard), dynamodb_store() as store:
        services = bootstrap(Settings(), store=store, clock=FixedClock())
        ws = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(ws.id).secret)
        assert me is not None
        ids = [
            services.notes.create(me, project, title=f"Note {n}", body=f"Body {n} about queues.",
                                  type=NoteType.DECISION).note.id
            for n, project in enumerate(["api", "api", "api", "web"])
        ]  # fmt: skip
        gone = services.notes.delete(me, ids[1]).note
        assert gone.is_deleted

        first = stack_reindex(SETTINGS, store=store, embedder=embedder, http=http)
        assert (first.notes, first.written, first.removed, first.orphans) == (4, 3, 1, 0)

        # An orphan: a document of a live note that no pointer claims.
        orphan = {"noteId": ids[0], "workspace": ws.id, "projectId": gone.project_id, "type": "decision",
                  "status": "current", "tags": [], "model": embedder.model_id, "version": 1,
                  "updatedAt": gone.updated_at, "title": "Note 0", "body": "stale copy"}  # fmt: skip
        http.request("POST", f"/{first.index}/_doc", orphan, timeout=5)
        second = stack_reindex(SETTINGS, store=store, embedder=embedder, http=http)
        assert (second.written, second.removed, second.unchanged, second.orphans) == (0, 0, 4, 1)

        _, payload = http.request("POST", f"/{ALIAS}/_search", {"size": 50, "query": {"match_all": {}}}, timeout=5)
        indexed = sorted(hit["_source"]["noteId"] for hit in payload["hits"]["hits"])
        assert indexed == sorted([ids[0], ids[2], ids[3]])  # one document per live note, none of the deleted one
        assert guard.refused == []


def test_reindex_stack_without_an_endpoint_upgrades_the_table_and_says_the_index_was_left(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NOTEWELL_SEARCH_ENDPOINT", raising=False)
    with dynamodb_store() as store:
        monkeypatch.setenv("AWS_REGION", store.client.meta.region_name)
        assert main(["reindex", "--stack", "--table", store.table_name]) == 0
    out = capsys.readouterr().out
    assert "0 projects moved onto the lean context index" in out
    assert "No search collection given (--search-endpoint)" in out


class Stack:
    def __init__(self, store: DynamoDBStore, http: SignedHttp, guard: ServerlessGuard) -> None:
        self.store, self.http, self.guard, self.embedder = store, http, guard, HashEmbedder()
        self.services = self.compose(http)
        ws = self.services.auth.create_workspace("acme")
        me = self.services.auth.authenticate(self.services.auth.create_key(ws.id).secret)
        assert me is not None
        self.me = me

    def compose(self, http: SignedHttp) -> Services:
        return bootstrap(Settings(), store=self.store, search=OpenSearchIndex(http, self.store.get_notes),
                         clock=FixedClock(), embedder=self.embedder)  # fmt: skip

    def note(self, title: str, body: str) -> str:
        return self.services.notes.create(self.me, "api", title=title, body=body, type=NoteType.DECISION).note.id

    def alias_targets(self) -> list[str]:
        _, aliases = self.http.request("GET", f"/_alias/{ALIAS}", timeout=5)
        return sorted(aliases)

    def exists(self, index: str) -> bool:
        status, _ = self.http.request("HEAD", f"/{index}", timeout=5, allow=(404,))
        return status == 200


def test_reindex_moves_search_onto_the_rebuilt_index_in_one_step_then_deletes_the_old(
    osmem_server: OsmemServer,
) -> None:
    with stand_in_collection(osmem_server) as (http, guard), dynamodb_store() as store:
        stack = Stack(store, http, guard)
        queue = stack.note("Queue", "Jobs go through SQS with a dead-letter queue.")
        stack.note("Hosting", "The frontend deploys to Vercel from the main branch.")
        serve_from_a_legacy_index(http, stack.services, stack.me, [queue], stack.embedder)
        before = stack.services.search.run(stack.me, "api", "jobs dead-letter queue", semantic=True)
        assert before.mode is SearchMode.FULLTEXT and "HTTP 400" in (before.fallback or "")  # the vector leg refused

        report = stack_reindex(SETTINGS, store=store, embedder=stack.embedder, http=http)
        assert (report.written, report.moved_from, report.kept) == (2, (LEGACY,), ())
        assert stack.alias_targets() == [report.index] and not stack.exists(LEGACY)
        swaps = [s.body for s in guard.seen if s.method == "POST" and s.path == "/_aliases"]
        assert swaps[-1] == {"actions": [{"remove": {"index": LEGACY, "alias": ALIAS}},
                                         {"add": {"index": report.index, "alias": ALIAS}}]}  # fmt: skip
        after = stack.services.search.run(stack.me, "api", "jobs dead-letter queue", semantic=True)
        assert after.mode is SearchMode.HYBRID and after.hits[0].note.id == queue

        again = stack_reindex(SETTINGS, store=store, embedder=stack.embedder, http=http)
        assert (again.written, again.moved_from) == (0, ())
        assert guard.refused == []


class WithoutDeleteIndex(httpx2.BaseTransport):
    """The collection as a principal without aoss:DeleteIndex meets it: deleting an index is refused with 403."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "DELETE" and "/_doc/" not in request.url.path:
            return httpx2.Response(403, json={"status": 403, "message": "User does not have permissions"})
        return self.inner.handle_request(request)


def test_an_old_index_that_cannot_be_deleted_is_reported_and_search_still_moves(osmem_server: OsmemServer) -> None:
    with stand_in_collection(osmem_server) as (http, guard), dynamodb_store() as store:
        stack = Stack(store, http, guard)
        queue = stack.note("Queue", "Jobs go through SQS with a dead-letter queue.")
        serve_from_a_legacy_index(http, stack.services, stack.me, [queue], stack.embedder)
        limited = SignedHttp(
            "https://abc123.eu-west-1.aoss.amazonaws.com", REGION, CREDENTIALS,
            http=httpx2.Client(transport=WithoutDeleteIndex(guard)),
        )  # fmt: skip
        report = stack_reindex(SETTINGS, store=store, embedder=stack.embedder, http=limited)
        assert (report.moved_from, report.kept) == ((LEGACY,), (LEGACY,))
        assert stack.alias_targets() == [report.index] and stack.exists(LEGACY)
        found = stack.services.search.run(stack.me, "api", "jobs dead-letter queue", semantic=True)
        assert found.mode is SearchMode.HYBRID and found.hits[0].note.id == queue
        limited.close()
