"""Opt-in: the search stack against a real deployment, never part of `make test`:

    pytest tests/aws -m aws --stack NAME       # the stack's outputs (tests/aws/deployment.py), in AWS_REGION

with NOTEWELL_AWS_API_KEY set to a key of a scratch workspace and credentials of the stack's ReindexPrincipal (for
the collection checks). What these check is what the local stand-in assumes. The first test is the vector query
path itself: a filtered k-NN query that the collection runs (an index whose engine does not filter inside `knn`
refuses it with 400) and whose scores convert back to cosines. Then: the index maps its vectors as pinned;
Serverless refuses custom document ids and refresh; remember meets a note written a moment ago.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from notewell.adapters.opensearch import ALIAS, VECTOR_METHOD, cosine_of, vector_query
from notewell.ports import SearchUnavailableError

if TYPE_CHECKING:
    from notewell.adapters.opensearch import SignedHttp
    from tests.aws.deployment import Deployment

pytestmark = pytest.mark.aws

# The stream, Bedrock, then the collection's refresh (60 s on a vector collection, serverless-vector-search).
INDEXING_WAIT_SECONDS = 180


async def _call(deployment: Deployment, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {deployment.api_key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(deployment.mcp_url, http_client=http)) as client,
    ):
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content


def call(deployment: Deployment, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_call(deployment, tool, arguments))


def test_semantic_search_runs_the_filtered_vector_query_and_its_scores_are_cosines(
    deployment: Deployment, collection: SignedHttp
) -> None:
    marker = f"zephyr{uuid.uuid4().hex[:8]}"
    project = f"aws-suite-{marker}"
    created = call(deployment, "create_note", {"project": project, "title": f"Deploys via {marker}",
                                               "body": f"We deploy the {marker} service with blue-green releases.",
                                               "type": "decision"})  # fmt: skip
    # Through MCP: "hybrid" only when the vector leg answered (a refused k-NN query answers "fulltext").
    deadline = time.monotonic() + INDEXING_WAIT_SECONDS
    while True:
        found = call(deployment, "search_notes", {"project": project, "query": f"{marker} releases", "semantic": True})
        if found["searchMode"] == "hybrid" and [r["id"] for r in found["results"]] == [created["id"]]:
            break
        assert time.monotonic() < deadline, f"not found by meaning within {INDEXING_WAIT_SECONDS} s: {found}"
        time.sleep(5)  # polling a real, asynchronous pipeline: nothing to wait on but time

    # The raw query against the alias, as the adapter builds it, with the note's own stored vector.
    lookup = {"size": 1, "_source": ["workspace", "projectId", "model", "embedding"],
              "query": {"term": {"noteId": created["id"]}}}  # fmt: skip
    _, payload = collection.request("POST", f"/{ALIAS}/_search", lookup, timeout=10)
    stored = payload["hits"]["hits"][0]["_source"]
    body = vector_query(stored["workspace"], stored["projectId"], stored["model"], tuple(stored["embedding"]), 5)
    _, answer = collection.request("POST", f"/{ALIAS}/_search", body, timeout=10)
    best = answer["hits"]["hits"][0]
    assert best["_source"]["noteId"] == created["id"]
    assert cosine_of(float(best["_score"])) == pytest.approx(1.0, abs=1e-3)  # a vector is its own nearest: cosine 1


def test_the_index_behind_the_alias_maps_its_vectors_as_pinned(collection: SignedHttp) -> None:
    _, mappings = collection.request("GET", f"/{ALIAS}/_mapping", timeout=10)
    for index, mapped in mappings.items():
        method = mapped["mappings"]["properties"]["embedding"]["method"]
        assert {key: method.get(key) for key in VECTOR_METHOD} == VECTOR_METHOD, index


def test_remember_meets_a_note_written_a_moment_ago(deployment: Deployment) -> None:
    project = f"aws-suite-{uuid.uuid4().hex[:8]}"
    content = "We keep the orders database on PostgreSQL 16 with daily snapshots."
    first = call(deployment, "remember", {"project": project, "content": content, "type": "decision"})
    again = call(deployment, "remember", {"project": project, "content": content, "type": "decision"})
    assert (first["status"], again["status"]) == ("created", "duplicate")


def test_the_collection_refuses_what_the_local_guard_refuses(collection: SignedHttp) -> None:
    with pytest.raises(SearchUnavailableError, match="HTTP 400"):
        collection.request("PUT", f"/{ALIAS}/_doc/custom-id", {"noteId": "x"}, timeout=10)
    with pytest.raises(SearchUnavailableError, match="HTTP (400|404)"):
        collection.request("POST", f"/{ALIAS}/_refresh", timeout=10)
