"""`notewell reindex --stack`: a deployed stack's index rebuilt from its table, beside the stream indexer.

Notes written before the collection existed (or while the indexer was failing) become findable; deleted notes get
no document; documents nobody claims (a crash between indexing and the pointer write) are swept; a second run
changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import ALIAS
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap, stack_reindex
from notewell.config import Settings
from notewell.domain.model import NoteType
from notewell.entrypoints.cli import main
from tests.support.aoss import REGION, stand_in_collection
from tests.support.dynamo import dynamodb_store

if TYPE_CHECKING:
    from osmem_server import OsmemServer

SETTINGS = Settings(backend="dynamodb", table_name="notewell-test", aws_region=REGION)


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
