"""The deployed search stack in one process: the MCP function and the indexer function built from their environment
(as template.yaml sets it), a moto table with its stream, and the collection stood in for by osmem-server.

A note created through the MCP function (an API Gateway event from events/) reaches the indexer through the table's
stream, filtered and batched as the template's event source says, and is then found by search_notes through the
MCP function again."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from moto import mock_aws

from functions.indexer import app as indexer_function
from functions.mcp import app as mcp_function
from tests.integration.test_lambda_handler import HOST, FakeContext, body_of, load_event
from tests.support.aoss import stand_in_endpoint
from tests.support.dynamo import _template_resources, no_backoff, table_spec
from tests.support.streams import StreamPump, stream_source

if TYPE_CHECKING:
    from collections.abc import Iterator

    from osmem_server import OsmemServer

TABLE = "notewell-search-stack-test"


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch, osmem_server: OsmemServer) -> Iterator[tuple[str, StreamPump]]:
    with stand_in_endpoint(osmem_server) as (endpoint, guard):
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "NOTEWELL_BACKEND": "dynamodb",
            "NOTEWELL_TABLE": TABLE, "NOTEWELL_ALLOWED_HOSTS": HOST, "LOG_LEVEL": "WARNING",
            "NOTEWELL_CURSOR_SECRET": "lambda-test-cursor-key",
            "NOTEWELL_SEARCH_ENDPOINT": endpoint,  # the collection endpoint (a loopback stand-in here)
            "NOTEWELL_EMBEDDER": "hash",  # Bedrock in the template; moto has no Bedrock data plane
        }.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        with no_backoff(), mock_aws():
            view = _template_resources(__import__("pathlib").Path("template.yaml"))["NotesTable"]["Properties"]
            spec = table_spec() | {
                "StreamSpecification": {
                    "StreamEnabled": True,
                    "StreamViewType": view["StreamSpecification"]["StreamViewType"],
                }
            }
            client = boto3.client("dynamodb", region_name="us-east-1")
            client.create_table(TableName=TABLE, **spec)
            mcp_function._runtime.cache_clear()
            indexer_function._indexer.cache_clear()
            services = mcp_function._runtime()[1]
            workspace = services.auth.create_workspace("acme")
            key = services.auth.create_key(workspace.id, name="lambda").secret
            pump = StreamPump(client, TABLE, lambda event: indexer_function.handler(dict(event), FakeContext("idx")))
            yield key, pump
            services.search._fulltext._http.close()  # type: ignore[union-attr]  # a container never closes them
            indexer_function._indexer()._documents._http.close()  # type: ignore[attr-defined]
            mcp_function._runtime.cache_clear()
            indexer_function._indexer.cache_clear()
        assert guard.refused == []
    asyncio.get_event_loop_policy().get_event_loop().close()
    asyncio.set_event_loop(None)


def call(event_name: str, key: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    event = load_event(event_name, key)
    if arguments is not None:
        message = json.loads(event["body"])
        message["params"]["arguments"] = arguments
        event["body"] = json.dumps(message)
    response = mcp_function.handler(event, FakeContext(f"req-{event_name}"))
    assert response["statusCode"] == 200, response
    result: dict[str, Any] = body_of(response)["result"]
    return result


def test_a_note_created_through_the_function_is_found_through_the_index(deployed: tuple[str, StreamPump]) -> None:
    key, pump = deployed
    created = call("mcp_legacy_create_note", key)["structuredContent"]
    searched = call("mcp_modern_search_notes", key, {"project": "demo", "query": "deploy"})
    # Before the stream is read no note was ever indexed, so the index does not exist yet: the in-process scan
    # answers (and the index is asked again next time: a missing index answers at once, nothing to rest from).
    assert searched["structuredContent"]["searchMode"] == "ranked_scan"
    assert [r["id"] for r in searched["structuredContent"]["results"]] == [created["id"]]
    assert pump.pump() == 1  # one note item: the feed records, head and pointers never reach the indexer
    assert pump.on_failure == []
    searched = call("mcp_modern_search_notes", key, {"project": "demo", "query": "deploy", "semantic": True})
    content = searched["structuredContent"]
    assert content["searchMode"] == "hybrid"
    assert [r["id"] for r in content["results"]] == [created["id"]]


def test_the_template_sends_only_note_items_to_the_indexer() -> None:
    source = stream_source()
    assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert source["BisectBatchOnFunctionError"] is True
    assert 0 <= source["MaximumRetryAttempts"] <= 10 and source["DestinationConfig"]["OnFailure"]["Type"] == "SQS"
    (pattern,) = [json.loads(f["Pattern"]) for f in source["FilterCriteria"]["Filters"]]
    assert pattern == {"dynamodb": {"Keys": {"sk": {"S": ["NOTE"]}}}}
