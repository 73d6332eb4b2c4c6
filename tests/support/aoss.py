"""A stand-in for an OpenSearch Serverless vector collection: osmem-server (a real HTTP engine) behind a guard.

osmem-server (PyPI) answers the OpenSearch API for the keyword leg (mappings, BM25, term filters, aliases, document
add and delete) but runs no `knn` query, and it accepts what Serverless refuses. `ServerlessGuard` sits between the
adapter's HTTP client and osmem, as an httpx2 transport:

* it refuses, with Serverless's own statuses, what a vector collection refuses: a custom document id
  (`PUT|POST <index>/_doc/<id>`, `_create/<id>`), any `refresh` parameter, `_refresh`, `_delete_by_query`,
  `GET /` (search.md §2);
* it answers `knn` queries itself: brute force over the vectors osmem holds, after osmem applies the query's own
  filter (so the filter is exercised by a real engine), scored as the field's engine and space score (k-NN
  "Spaces"); a filter inside `knn` on a field whose engine is nmslib (the engine a Serverless vector collection
  builds when the mapping names none) is refused with 400, as Serverless refuses it;
* it records every request (method, path, query, JSON body, headers) for the tests to inspect.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
from botocore.credentials import Credentials
from osmem_server import OsmemServer

from notewell.adapters.opensearch import SignedHttp

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
REGION = "eu-west-1"


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str
    params: dict[str, str]
    body: Any
    headers: dict[str, str]


def _refusal(status: int, kind: str, reason: str) -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"type": kind, "reason": reason}, "status": status})


@dataclass
class ServerlessGuard(httpx2.BaseTransport):
    upstream: str  # osmem's base URL
    seen: list[Seen] = field(default_factory=list)
    refused: list[Seen] = field(default_factory=list)
    inner: httpx2.BaseTransport = field(default_factory=httpx2.HTTPTransport)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        raw = request.read()
        body = json.loads(raw) if raw else None
        path = request.url.path
        seen = Seen(request.method, path, dict(request.url.params), body, dict(request.headers))
        self.seen.append(seen)
        refusal = self._refusal(seen)
        if refusal is not None:
            self.refused.append(seen)
            return refusal
        if request.method == "POST" and path.endswith("/_search") and isinstance(body, dict):
            knn = body.get("query", {}).get("knn")
            if knn is not None:
                return self._knn(path, body, knn)
        return self._forward(request.method, path, request.url.params, raw)

    def _refusal(self, seen: Seen) -> httpx2.Response | None:
        parts = [p for p in seen.path.split("/") if p]
        if "refresh" in seen.params:
            return _refusal(400, "illegal_argument_exception", "true refresh policy is not supported")
        if seen.method == "GET" and not parts:
            return _refusal(404, "not_found", "GET / is not supported on Serverless")
        if parts and parts[-1] in ("_refresh", "_delete_by_query"):
            return _refusal(404, "not_found", f"{parts[-1]} is not supported on Serverless")
        if len(parts) == 3 and parts[1] in ("_doc", "_create", "_update") and seen.method in ("PUT", "POST"):
            return _refusal(
                400, "illegal_argument_exception", "Document ID is not supported in create/index operation request"
            )
        return None

    def _forward(self, method: str, path: str, params: Any, raw: bytes) -> httpx2.Response:
        url = httpx2.URL(self.upstream + path, params=params)
        upstream = self.inner.handle_request(
            httpx2.Request(method, url, content=raw or None, headers={"content-type": "application/json"})
        )
        upstream.read()
        return httpx2.Response(
            upstream.status_code, content=upstream.content, headers={"content-type": "application/json"}
        )

    def _knn(self, path: str, body: dict[str, Any], knn: dict[str, Any]) -> httpx2.Response:
        ((field_name, spec),) = knn.items()
        mapping = self._forward("GET", path.rsplit("/_search", 1)[0] + "/_mapping", {}, b"")
        if mapping.status_code >= 300:  # no such index: osmem's own answer
            return mapping
        engine, space = _method_of(mapping.json(), field_name)
        if spec.get("filter") is not None and engine not in ("faiss", "lucene"):
            return _refusal(400, "illegal_argument_exception", f"Engine [{engine.upper()}] does not support filters")
        query = [float(x) for x in spec["vector"]]
        candidates_body = {"size": 10_000, "query": spec.get("filter") or {"match_all": {}}}
        response = self._forward("POST", path, {}, json.dumps(candidates_body).encode())
        if response.status_code >= 300:
            return response
        scored: list[tuple[float, dict[str, Any]]] = []
        for hit in response.json()["hits"]["hits"]:
            vector = hit["_source"].get(field_name)
            if vector is None:
                continue
            scored.append((_score(space, query, [float(x) for x in vector]), hit))
        scored.sort(key=lambda pair: -pair[0])
        wanted = body.get("_source")
        hits = []
        for score, hit in scored[: min(int(spec["k"]), int(body.get("size", 10)))]:
            source = hit["_source"]
            if isinstance(wanted, list):
                source = {k: v for k, v in source.items() if k in wanted}
            hits.append({"_index": hit["_index"], "_id": hit["_id"], "_score": score, "_source": source})
        return httpx2.Response(200, json={"hits": {"total": {"value": len(hits)}, "hits": hits}})

    def searches(self) -> list[Seen]:
        return [s for s in self.seen if s.path.endswith("/_search")]


def _method_of(mappings: dict[str, Any], field_name: str) -> tuple[str, str]:
    """The engine and space of a vector field, from `GET <index>/_mapping` (Serverless's defaults: nmslib, l2)."""
    field = next(iter(mappings.values()))["mappings"]["properties"][field_name]
    method = field.get("method", {})
    return method.get("engine", "nmslib"), method.get("space_type", field.get("space_type", "l2"))


def _score(space: str, a: list[float], b: list[float]) -> float:
    """The OpenSearch score of a hit, by space (k-NN "Spaces"; cosinesimil as faiss and Lucene score it from 2.19)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if space == "innerproduct":
        return dot + 1.0 if dot > 0 else 1.0 / (1.0 - dot)
    if space == "cosinesimil":
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return (1.0 + (dot / norm if norm else 0.0)) / 2.0
    return 1.0 / (1.0 + sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def guarded_http(upstream: str) -> tuple[SignedHttp, ServerlessGuard]:
    """A signed client to a stand-in collection at `upstream` (an osmem-server clone), and the guard it goes through."""
    guard = ServerlessGuard(upstream)
    http = SignedHttp(
        "https://abc123.eu-west-1.aoss.amazonaws.com", REGION, CREDENTIALS, http=httpx2.Client(transport=guard)
    )
    return http, guard


@contextlib.contextmanager
def osmem_engine() -> Iterator[OsmemServer]:
    """One osmem-server process; its pipes are closed on exit (the package's own fixture leaves stdout open)."""
    server = OsmemServer.start(japanese=False)
    try:
        yield server
    finally:
        server.close()
        if server.process.stdout is not None:
            server.process.stdout.close()


@contextlib.contextmanager
def stand_in_collection(server: OsmemServer) -> Iterator[tuple[SignedHttp, ServerlessGuard]]:
    """A fresh, empty stand-in collection (an osmem clone) behind the guard; closed on exit."""
    with server.clone() as clone:
        http, guard = guarded_http(clone.url)
        try:
            yield http, guard
        finally:
            http.close()
            guard.inner.close()


@contextlib.contextmanager
def stand_in_endpoint(server: OsmemServer) -> Iterator[tuple[str, ServerlessGuard]]:
    """The stand-in collection as a real HTTP endpoint on 127.0.0.1 (for code that builds its own client from
    NOTEWELL_SEARCH_ENDPOINT, such as the Lambda functions): the guard answers every request, osmem behind it."""
    with server.clone() as clone:
        guard = ServerlessGuard(clone.url)

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = httpx2.Request(self.command, f"http://stand-in{self.path}", content=raw or None,
                                         headers=dict(self.headers.items()))  # fmt: skip
                response = guard.handle_request(request)
                body = response.read()
                self.send_response(response.status_code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any  # noqa: N815 - the stdlib's names

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

        endpoint = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=endpoint.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{endpoint.server_address[1]}", guard
        finally:
            endpoint.shutdown()
            endpoint.server_close()
            guard.inner.close()
