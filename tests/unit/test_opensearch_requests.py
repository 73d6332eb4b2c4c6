"""What the OpenSearch adapter sends, byte for byte where it matters: the query bodies (golden), the tenant filter on
every one, and SigV4 signatures for `aoss` that a server can verify."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import httpx2
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from notewell.adapters.opensearch import (
    VECTOR_METHOD,
    OpenSearchIndex,
    SignedHttp,
    cosine_of,
    index_name,
    index_settings,
    keyword_query,
    vector_query,
)
from notewell.domain import hybrid
from notewell.domain.calibration import HybridWeights
from notewell.domain.model import NoteStatus, NoteType, SearchFilters
from tests.support.aoss import CREDENTIALS, REGION

if TYPE_CHECKING:
    from collections.abc import Iterator


def test_the_keyword_query_filters_by_tenant_then_by_the_callers_filters() -> None:
    filters = SearchFilters(
        types=frozenset({NoteType.DECISION, NoteType.CONSTRAINT}),
        statuses=frozenset({NoteStatus.CURRENT}),
        tags=frozenset({"db"}),
    )
    assert keyword_query("ws1", "prj1", "orders database", filters, 30) == {
        "size": 30,
        "_source": ["noteId", "version"],
        "query": {
            "bool": {
                "must": [
                    {"multi_match": {"query": "orders database", "fields": ["title^3", "tags^2", "body"],
                                     "operator": "or"}}
                ],
                "filter": [
                    {"term": {"workspace": "ws1"}},
                    {"term": {"projectId": "prj1"}},
                    {"terms": {"type": ["constraint", "decision"]}},
                    {"terms": {"status": ["current"]}},
                    {"terms": {"tags": ["db"]}},
                ],
            }
        },
    }  # fmt: skip


def test_the_vector_query_filters_inside_the_knn_clause() -> None:
    # Efficient filtering: k hits come from the caller's project, not k hits of anyone's then filtered away.
    assert vector_query("ws1", "prj1", "titan/1024", (0.6, 0.8), 30) == {
        "size": 30,
        "_source": ["noteId", "version"],
        "query": {
            "knn": {
                "embedding": {
                    "vector": [0.6, 0.8],
                    "k": 30,
                    "filter": {
                        "bool": {
                            "filter": [
                                {"term": {"workspace": "ws1"}},
                                {"term": {"projectId": "prj1"}},
                                {"term": {"model": "titan/1024"}},
                            ]
                        }
                    },
                }
            }
        },
    }


def test_the_vector_field_is_pinned_to_faiss_hnsw_and_a_new_method_means_a_new_index() -> None:
    mapping = index_settings(512)
    assert mapping["settings"] == {"index.knn": True}
    assert mapping["mappings"]["dynamic"] == "strict"
    # Unnamed, a Serverless collection builds nmslib, which refuses the filter inside every vector query (HTTP 400).
    assert mapping["mappings"]["properties"]["embedding"] == {
        "type": "knn_vector", "dimension": 512,
        "method": {"name": "hnsw", "engine": "faiss", "space_type": "innerproduct"},
    }  # fmt: skip
    names = {index_name(m, d) for m, d in [("titan/1024", 1024), ("titan/512", 512), ("other/1024", 1024)]}
    assert len(names) == 3
    with patch.dict(VECTOR_METHOD, space_type="l2"):  # another method: another index, filled, then the alias moved
        assert index_name("titan/1024", 1024) not in names


@pytest.mark.parametrize(
    ("cosine", "score"),
    # faiss innerproduct scores (k-NN "Spaces", d = -x.y): 1 / (1 + d) when d >= 0, else 1 - d.
    [(1.0, 2.0), (0.5, 1.5), (0.0, 1.0), (-0.25, 0.8), (-1.0, 0.5)],
)
def test_a_knn_score_converts_back_to_the_cosine_of_unit_vectors(cosine: float, score: float) -> None:
    assert cosine_of(score) == pytest.approx(cosine)


def test_vectors_go_out_at_unit_length_so_their_inner_product_is_the_cosine() -> None:
    assert vector_query("ws1", "prj1", "m", (3.0, 4.0), 5)["query"]["knn"]["embedding"]["vector"] == [0.6, 0.8]


def test_a_hybrid_search_sends_both_legs_and_fuses_them_with_the_shared_function() -> None:
    sent: list[dict[str, Any]] = []

    def collection(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent.append(body)
        # k-NN answers faiss innerproduct scores, 1 + cos; BM25 lists "a" twice (an orphan document of one note).
        knn = "knn" in body["query"]
        hits = [("b", 1.95), ("c", 1.9)] if knn else [("a", 10.0), ("b", 5.0), ("a", 9.0)]
        return httpx2.Response(200, json={"hits": {"hits": [
            {"_id": f"doc-{i}", "_score": score, "_source": {"noteId": note, "version": 1}}
            for i, (note, score) in enumerate(hits)
        ]}})  # fmt: skip

    http = SignedHttp(
        "https://abc.eu-west-1.aoss.amazonaws.com", REGION, CREDENTIALS,
        http=httpx2.Client(transport=httpx2.MockTransport(collection)),
    )  # fmt: skip
    index = OpenSearchIndex(http, lambda ws, ids: {})
    keyword = index._query(keyword_query("ws1", "prj1", "orders", SearchFilters(), 30))
    nearest = index.nearest("ws1", "prj1", "m", (1.0, 0.0), 30)
    assert keyword == [("a", 10.0), ("b", 5.0)]  # each note once, at its best document
    assert [(n, round(c, 6)) for n, c in nearest] == [("b", 0.95), ("c", 0.9)]  # cosines
    fused = hybrid.fuse(keyword, nearest, 3, weights=HybridWeights(vector=0.85, entity=0.2))  # a tuned model's
    assert [f.note_id for f in fused] == ["b", "c", "a"]
    assert [body["size"] for body in sent] == [30, 30]
    http.close()


class _Capture(http.server.BaseHTTPRequestHandler):
    captured: list[tuple[str, str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        _Capture.captured.append((self.command, self.path, dict(self.headers.items()), body))
        payload = b'{"hits": {"hits": []}}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return


def _server() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_requests_are_signed_for_aoss_with_the_payload_hash_and_verify() -> None:
    _Capture.captured.clear()
    for base in _server():
        http = SignedHttp(base, REGION, CREDENTIALS)
        body = keyword_query("ws1", "prj1", "orders", SearchFilters(), 5)
        http.request("POST", "/notes/_search", body, timeout=5)
        http.close()
    ((method, path, headers, raw),) = _Capture.captured
    headers = {k.lower(): v for k, v in headers.items()}
    assert raw == json.dumps(body, separators=(",", ":")).encode()
    assert headers["x-amz-content-sha256"] == hashlib.sha256(raw).hexdigest()
    authorization = headers["authorization"]
    date = headers["x-amz-date"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{date[:8]}/{REGION}/aoss/aws4_request")
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-content-sha256", "x-amz-date"} <= set(signed)
    # The server's check: botocore, given the same request and moment, computes the same signature.
    request = AWSRequest(
        method=method, url=base + path, data=raw,
        headers={k: v for k, v in headers.items() if k in signed and k not in ("host", "x-amz-date")},
    )  # fmt: skip
    request.context["timestamp"] = date
    signer = SigV4Auth(CREDENTIALS.get_frozen_credentials(), "aoss", REGION)
    request.headers["X-Amz-Date"] = date
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    assert authorization.endswith(f"Signature={expected}")
