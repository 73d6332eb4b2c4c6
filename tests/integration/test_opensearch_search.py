"""Search on the AWS stack, run here: the services on DynamoDB (moto, with its stream), the indexer fed from that
stream as Lambda's event source would feed it (tests/support/streams.py), and the search collection stood in for by
osmem-server behind the Serverless guard (real BM25, filters and document API; k-NN answered by the guard).

A user would notice: any note of the project is found, by words or meaning, never another tenant's; a note written
a moment ago is already known to remember; and when the index fails, search still answers and says how. A query
the index refuses (a bug of ours) costs only its own leg: the other is still asked."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import OpenSearchIndex, SignedHttp
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap, indexer
from notewell.config import Settings
from notewell.domain.model import NoteType, Principal
from notewell.entrypoints.stream import handle_records
from notewell.services import search as search_module
from notewell.services.memory import RememberRequest, RememberStatus
from notewell.services.search import SearchMode
from tests.integration.test_stack_reindex import serve_from_a_legacy_index
from tests.support.aoss import CREDENTIALS, REGION, stand_in_collection
from tests.support.dynamo import count_operations, dynamodb_store
from tests.support.mcp_harness import connect, make_app, ok, running
from tests.support.streams import StreamPump

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from osmem_server import OsmemServer

    from notewell.adapters.dynamodb import DynamoDBStore
    from tests.support.aoss import ServerlessGuard

TABLE = "notewell-test"


class AwsStack:
    def __init__(self, store: DynamoDBStore, http: SignedHttp, guard: ServerlessGuard) -> None:
        self.store, self.http, self.guard = store, http, guard
        self.clock = FixedClock()
        self.embedder = HashEmbedder()
        settings = Settings(backend="dynamodb", table_name=TABLE, aws_region=REGION)
        self.index = OpenSearchIndex(http, store.get_notes)
        self.services = self.compose(self.index)
        feeder = indexer(settings, store=store, embedder=self.embedder, http=http)
        feeder.ensure_ready()  # the deployed stack's index exists before any search (else every search falls back)
        self.pump = StreamPump(store.client, TABLE, lambda event: handle_records(event, feeder))
        ws = self.services.auth.create_workspace("acme")
        self.me = self._principal(ws.id)
        rival = self.services.auth.create_workspace("rival")
        self.rival = self._principal(rival.id)

    def compose(self, index: Any) -> Services:
        return bootstrap(Settings(), store=self.store, search=index, clock=self.clock, embedder=self.embedder)

    def _principal(self, workspace_id: str) -> Principal:
        principal = self.services.auth.authenticate(self.services.auth.create_key(workspace_id).secret)
        assert principal is not None
        return principal

    def note(self, title: str, body: str, *, who: Principal | None = None, project: str = "api") -> str:
        created = self.services.notes.create(who or self.me, project, title=title, body=body, type=NoteType.DECISION)
        return created.note.id


@pytest.fixture
def aws(osmem_server: OsmemServer) -> Iterator[AwsStack]:
    with (
        stand_in_collection(osmem_server) as (http, guard),
        dynamodb_store(TABLE, streams=True) as store,
    ):
        yield AwsStack(store, http, guard)
    assert guard.refused == []


def test_the_index_finds_an_old_note_the_bounded_scan_cannot_reach(
    aws: AwsStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "SCAN_LIMIT", 5)  # the window the in-process scan reads
    old = aws.note("Payment retries", "Stripe webhooks are retried with exponential backoff.")
    for n in range(8):
        aws.note(f"Other {n}", f"Unrelated detail number {n} about the frontend.")
    aws.pump.pump()
    found = aws.services.search.run(aws.me, "api", "stripe webhooks")
    assert found.mode is SearchMode.FULLTEXT and [h.note.id for h in found.hits] == [old]
    assert found.scanned is None
    without_index = bootstrap(Settings(), store=aws.store, clock=aws.clock)
    scanned = without_index.search.run(aws.me, "api", "stripe webhooks")
    assert scanned.mode is SearchMode.RANKED_SCAN and scanned.hits == [] and scanned.scanned == 5


def test_semantic_search_is_hybrid_and_every_request_names_the_workspace_and_project(aws: AwsStack) -> None:
    mine = aws.note("Orders database", "We use PostgreSQL 16 as the primary database for orders.")
    aws.note("Orders database", "We use PostgreSQL 16 as the primary database for orders.", who=aws.rival)
    aws.note("Orders database", "We use PostgreSQL 16 as the primary database for orders.", project="web")
    aws.pump.pump()
    aws.guard.seen.clear()
    found = aws.services.search.run(aws.me, "api", "primary database for orders", semantic=True)
    assert found.mode is SearchMode.HYBRID
    assert [h.note.id for h in found.hits] == [mine]
    project_id = found.hits[0].note.project_id
    searches = aws.guard.searches()
    assert len(searches) == 2  # the keyword leg and the vector leg
    for seen in searches:
        clauses = (
            seen.body["query"]["knn"]["embedding"]["filter"]["bool"]["filter"]
            if "knn" in seen.body["query"]
            else seen.body["query"]["bool"]["filter"]
        )
        assert {"term": {"workspace": aws.me.workspace_id}} in clauses
        assert {"term": {"projectId": project_id}} in clauses


def test_search_answers_the_newest_state_and_never_a_deleted_note(aws: AwsStack) -> None:
    note_id = aws.note("Queue", "Jobs go through SQS with a dead-letter queue.")
    aws.pump.pump()
    current = aws.services.notes.get(aws.me, note_id).note
    aws.services.notes.delete(aws.me, note_id, expected_version=current.version)
    # Not yet indexed: the index still proposes the note, the table says it is gone.
    assert aws.services.search.run(aws.me, "api", "dead-letter queue").hits == []
    aws.pump.pump()
    _, payload = aws.http.request("POST", "/notes/_search", {"query": {"term": {"noteId": note_id}}}, timeout=5)
    assert payload["hits"]["hits"] == []


def test_remember_finds_a_note_written_a_moment_ago_that_the_index_does_not_hold_yet(aws: AwsStack) -> None:
    first = aws.services.memory.remember(
        aws.me, RememberRequest("api", "We deploy the frontend to Vercel from the main branch.", type=NoteType.DECISION)
    )
    assert first.status is RememberStatus.CREATED
    # No pump: the stream has not reached the index.
    again = aws.services.memory.remember(
        aws.me, RememberRequest("api", "We deploy the frontend to Vercel from the main branch.", type=NoteType.DECISION)
    )
    assert again.status is RememberStatus.DUPLICATE
    assert again.note is not None and again.note.note.id == first.note.note.id  # type: ignore[union-attr]


def test_remember_reads_what_it_compares_not_the_newest_500_notes(aws: AwsStack) -> None:
    for n in range(40):
        aws.note(f"Service {n}", f"Service {n} owns the {n}th queue and its consumers.")
    aws.pump.pump()
    aws.clock.advance(seconds=600)  # past the read-your-writes window: the index alone proposes candidates
    calls = count_operations(aws.store.client)
    aws.services.memory.remember(
        aws.me, RememberRequest("api", "Billing owns the invoices queue.", type=NoteType.DECISION)
    )
    assert calls["Query"] <= 3, calls  # no GSI scan of recent notes: the feed head, the fresh-writes records


def search_mode_over_mcp(services: Services, token: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        app = make_app(services)
        async with running(app), connect(app, token, "2026-07-28") as client:
            result = await client.call_tool(
                "search_notes", {"project": "api", "query": "stripe webhooks", "semantic": True}
            )
            return ok(result)

    return asyncio.run(go())


@pytest.mark.parametrize(
    "fault",
    ["timeout", "connection refused", "HTTP 500", "HTTP 503", "HTTP 429", "HTTP 403", "bad JSON"],
)
def test_each_index_fault_falls_through_to_the_ranked_scan_and_says_so(aws: AwsStack, fault: str) -> None:
    aws.note("Payment retries", "Stripe webhooks are retried with exponential backoff.")
    key = aws.services.auth.create_key(aws.me.workspace_id).secret
    calls: list[str] = []

    def broken(request: httpx2.Request) -> httpx2.Response:
        calls.append(request.url.path)
        if fault == "timeout":
            raise httpx2.ReadTimeout("read timed out", request=request)
        if fault == "connection refused":
            raise httpx2.ConnectError("connection refused", request=request)
        if fault == "bad JSON":
            return httpx2.Response(200, content=b"<html>gateway</html>")
        status = int(fault.split()[1])
        return httpx2.Response(status, json={"error": {"type": "x", "reason": fault}})

    http = SignedHttp(
        "https://abc123.eu-west-1.aoss.amazonaws.com", REGION, CREDENTIALS,
        http=httpx2.Client(transport=httpx2.MockTransport(broken)),
    )  # fmt: skip
    services = aws.compose(OpenSearchIndex(http, aws.store.get_notes))
    answer = search_mode_over_mcp(services, key)
    assert answer["searchMode"] == "ranked_scan"
    assert [r["title"] for r in answer["results"]] == ["Payment retries"]
    assert "keywords only" in answer["notice"].lower()
    assert len(calls) == 1  # the vector leg failed; the keyword leg did not ask the resting index again
    again = search_mode_over_mcp(services, key)
    assert again["searchMode"] == "ranked_scan" and len(calls) == 1  # resting: no request, no timeout to pay
    http.close()


def test_a_failed_vector_model_leaves_the_keyword_index_answering(aws: AwsStack) -> None:
    from notewell.ports import EmbeddingUnavailableError

    aws.note("Payment retries", "Stripe webhooks are retried with exponential backoff.")
    aws.pump.pump()

    def throttled(texts: Any, *, timeout: float | None = None) -> Any:
        raise EmbeddingUnavailableError("Bedrock ThrottlingException")

    aws.embedder.embed = throttled  # type: ignore[method-assign]
    found = aws.services.search.run(aws.me, "api", "stripe webhooks", semantic=True)
    assert found.mode is SearchMode.FULLTEXT and len(found.hits) == 1
    assert found.fallback is not None and "throttling" in found.fallback.lower()


def test_a_ranking_failure_after_the_index_failed_ends_in_substring(
    aws: AwsStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.note("Payment retries", "Stripe webhooks are retried with exponential backoff.")
    down = SignedHttp("http://127.0.0.1:9", REGION, CREDENTIALS)
    services = aws.compose(OpenSearchIndex(down, aws.store.get_notes))

    def broken_ranking(*args: Any, **kwargs: Any) -> Callable[..., Any]:
        raise ArithmeticError("ranking bug")

    monkeypatch.setattr(search_module.ranking, "bm25", broken_ranking)
    found = services.search.run(aws.me, "api", "Stripe webhooks")
    assert found.mode is SearchMode.SUBSTRING and len(found.hits) == 1
    down.close()


def test_a_query_naming_someone_reads_both_legs_once_and_favours_their_notes(aws: AwsStack) -> None:
    lisa = aws.note("Exam schedule", "Lisa moved the database exam to Friday after the migration.")
    aws.note("Exam schedule", "The database exam moves to Friday after the migration, Tom says.")
    aws.pump.pump()
    calls = count_operations(aws.store.client)
    found = aws.services.search.run(aws.me, "api", "what did Lisa say about the exam", semantic=True)
    assert found.mode is SearchMode.HYBRID and found.hits[0].note.id == lisa
    assert calls["BatchGetItem"] == 1  # the notes of both legs, read once to see which name Lisa


def test_filters_hold_for_notes_only_the_vector_leg_proposed(aws: AwsStack) -> None:
    from notewell.domain.model import SearchFilters

    aws.note("Queue", "Jobs go through SQS with a dead-letter queue.")
    task = aws.services.notes.create(
        aws.me, "api", title="Queue work", body="Move the jobs queue to SQS.", type=NoteType.TASK
    ).note
    aws.pump.pump()
    only_tasks = SearchFilters(types=frozenset({NoteType.TASK}))
    found = aws.services.search.run(aws.me, "api", "jobs queue", semantic=True, filters=only_tasks)
    assert [h.note.id for h in found.hits] == [task.id]


def test_a_query_the_index_refuses_is_logged_as_a_bug_and_the_keyword_leg_still_answers(
    aws: AwsStack, caplog: pytest.LogCaptureFixture
) -> None:
    # An index as the version before made it: its vector field names no engine, so Serverless built nmslib, which
    # answers every filtered vector query with 400. That is no outage: the keyword leg is still asked, every time.
    note_id = aws.note("Payment retries", "Stripe webhooks are retried with exponential backoff.")
    serve_from_a_legacy_index(aws.http, aws.services, aws.me, [note_id], aws.embedder)
    aws.guard.seen.clear()
    with caplog.at_level(logging.ERROR, logger="notewell.adapters.opensearch"):
        first = aws.services.search.run(aws.me, "api", "stripe webhooks", semantic=True)
        second = aws.services.search.run(aws.me, "api", "stripe webhooks", semantic=True)
    for found in (first, second):
        assert found.mode is SearchMode.FULLTEXT and [h.note.id for h in found.hits] == [note_id]
        assert "HTTP 400" in (found.fallback or "")
    kinds = ["vector" if "knn" in s.body["query"] else "keyword" for s in aws.guard.searches()]
    assert kinds == ["vector", "keyword", "vector", "keyword"]  # nothing rested
    refusals = [r for r in caplog.records if r.levelno == logging.ERROR and "HTTP 400" in r.getMessage()]
    assert len(refusals) == 2
