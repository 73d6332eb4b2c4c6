"""OpenSearch Serverless: the notes' full-text and vector index on AWS (one VECTORSEARCH collection).

One index per embedding model and vector method (`index_name`), reached through the alias `notes`, holds one
document per live note: its text fields, keyword filters (workspace, project, type, status, tags) and its vector.
Serverless vector collections take no custom document ids and no refresh, so a document's id is the one the
collection hands out and the stream indexer keeps it, with the note's version, in a pointer item of the table
(services/indexing.py).

The index only proposes: every hit is hydrated from the table (`hydrate`, one BatchGetItem), and a note that is gone,
moved, changed since or filtered out is dropped there; two documents of one note (a crash between indexing and the
pointer write) count once. Every query carries the workspace and the project in its filter (`tenant_filter`); the
vector query filters inside the `knn` clause (efficient filtering), so `k` hits come from the caller's project.

The vector field is pinned to faiss HNSW (`VECTOR_METHOD`): a Serverless vector collection runs no Lucene engine, and
with no engine named it builds nmslib, which refuses a filter inside `knn` (HTTP 400 on every semantic query). The
index is checked after it is made (`OpenSearchDocuments.ensure_index`), so a collection that mapped it otherwise
fails the indexer loudly instead of every query quietly.

Requests are signed with SigV4 for the `aoss` service and sent with one short timeout and no retry: a failure raises
SearchUnavailableError and the caller falls through to the next mode. When the collection cannot serve (a timeout,
no connection, 5xx, 429, 403) the index rests `REST_SECONDS`, so the next calls fall through at once instead of each
paying the timeout again; a request it refuses (another 4xx) is our bug, logged as an error, and the next request,
such as the keyword leg after a refused vector leg, is still sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import httpx2
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from notewell.domain import ranking
from notewell.domain.model import SearchHit
from notewell.ports import NoteVector, SearchUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from notewell.domain.model import Note, SearchFilters
    from notewell.ports import Vector

    Hydrate = Callable[[str, Sequence[str]], Mapping[str, Note]]  # the store's get_notes

logger = logging.getLogger(__name__)

ALIAS = "notes"
QUERY_TIMEOUT_SECONDS = 1.0  # a query's whole budget: connect and read
WRITE_TIMEOUT_SECONDS = 30.0  # the indexer's (a NextGen collection waking from zero takes 10-30 s)
REST_SECONDS = 30.0
KEYWORD_FIELDS = ("title^3", "tags^2", "body")
BODY_CHARS = 20_000  # what the index keeps of a body for BM25 (the note itself is in the table)
LEAN_SOURCE = ["noteId", "version"]
# faiss: the only engine of a Serverless vector collection that filters inside `knn` (Lucene is not offered there).
# `innerproduct` of unit vectors (`unit`) is their cosine, scored by one formula in every k-NN version (`cosine_of`);
# faiss takes `cosinesimil` only from OpenSearch 2.19, the version that also changed its score from 1 / (2 - cos).
VECTOR_METHOD = {"name": "hnsw", "engine": "faiss", "space_type": "innerproduct"}
OUTAGE_STATUSES = (403, 429)  # with every 5xx: the collection cannot serve now; other refusals are bugs of ours


def index_name(model_id: str, dimensions: int) -> str:
    """The index of one embedding model and vector method: a new model, size or method means a new index, filled,
    then the alias moved (`notewell reindex --stack`)."""
    method = json.dumps(VECTOR_METHOD, sort_keys=True)
    digest = hashlib.sha256(f"{model_id}|{dimensions}|{method}".encode()).hexdigest()[:10]
    return f"notes-{digest}"


def vector_field(dimensions: int) -> dict[str, Any]:
    return {"type": "knn_vector", "dimension": dimensions, "method": dict(VECTOR_METHOD)}


def index_settings(dimensions: int) -> dict[str, Any]:
    """The index definition: strict, keyword filters, English text, and the pinned vector field."""
    text = {"type": "text", "analyzer": "english"}
    keyword = {"type": "keyword"}
    return {
        "settings": {"index.knn": True},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "noteId": keyword, "workspace": keyword, "projectId": keyword, "type": keyword, "status": keyword,
                "tags": keyword, "model": keyword, "version": {"type": "long"}, "updatedAt": {"type": "date"},
                "title": text, "body": text, "embedding": vector_field(dimensions),
            },
        },
    }  # fmt: skip


def document(note: Note, vector: Vector | None, model_id: str) -> dict[str, Any]:
    """A note as the index keeps it. Without a vector (the model failed) the note is still found by its words."""
    doc: dict[str, Any] = {
        "noteId": note.id,
        "workspace": note.workspace_id,
        "projectId": note.project_id,
        "type": note.type.value,
        "status": note.status.value,
        "tags": list(note.tags),
        "model": model_id,
        "version": note.version,
        "updatedAt": note.updated_at,
        "title": note.title,
        "body": note.body[:BODY_CHARS],
    }
    if vector is not None:
        doc["embedding"] = unit(vector)
    return doc


def unit(vector: Vector) -> list[float]:
    """`vector` scaled to length 1, so that an inner product of two is their cosine (a zero vector stays as it is)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [float(x) for x in vector]


def tenant_filter(workspace_id: str, project_id: str, filters: SearchFilters | None = None) -> list[dict[str, Any]]:
    """The filter clauses of every query: the caller's workspace and project always, then the caller's filters."""
    clauses: list[dict[str, Any]] = [{"term": {"workspace": workspace_id}}, {"term": {"projectId": project_id}}]
    if filters is not None:
        if filters.types:
            clauses.append({"terms": {"type": sorted(t.value for t in filters.types)}})
        if filters.statuses:
            clauses.append({"terms": {"status": sorted(s.value for s in filters.statuses)}})
        if filters.tags:
            clauses.append({"terms": {"tags": sorted(filters.tags)}})
    return clauses


def keyword_query(
    workspace_id: str, project_id: str, text: str, filters: SearchFilters | None, size: int
) -> dict[str, Any]:
    return {
        "size": size,
        "_source": LEAN_SOURCE,
        "query": {
            "bool": {
                "must": [{"multi_match": {"query": text, "fields": list(KEYWORD_FIELDS), "operator": "or"}}],
                "filter": tenant_filter(workspace_id, project_id, filters),
            }
        },
    }


def vector_query(workspace_id: str, project_id: str, model_id: str, vector: Vector, size: int) -> dict[str, Any]:
    return {
        "size": size,
        "_source": LEAN_SOURCE,
        "query": {
            "knn": {
                "embedding": {
                    "vector": unit(vector),
                    "k": size,
                    "filter": {
                        "bool": {"filter": [*tenant_filter(workspace_id, project_id), {"term": {"model": model_id}}]}
                    },
                }
            }
        },
    }


def vectors_query(workspace_id: str, note_ids: Sequence[str], model_id: str) -> dict[str, Any]:
    return {
        "size": len(note_ids),
        "_source": ["noteId", "projectId", "version", "embedding"],
        "query": {
            "bool": {
                "filter": [
                    {"term": {"workspace": workspace_id}},
                    {"terms": {"noteId": list(note_ids)}},
                    {"term": {"model": model_id}},
                ]
            }
        },
    }


def missing_vectors_query(size: int, after: Sequence[str] | None) -> dict[str, Any]:
    """A page of the documents that have no vector (indexed while the model failed), in (workspace, note) order."""
    body: dict[str, Any] = {
        "size": size,
        "_source": ["workspace", "noteId"],
        "query": {"bool": {"must_not": [{"exists": {"field": "embedding"}}]}},
        "sort": [{"workspace": "asc"}, {"noteId": "asc"}],
    }
    if after is not None:
        body["search_after"] = list(after)
    return body


def alias_actions(alias: str, index: str, previous: Sequence[str]) -> dict[str, Any]:
    """One `_aliases` request: readers move from `previous` to `index` at once, never seeing both or neither."""
    removals = [{"remove": {"index": name, "alias": alias}} for name in previous]
    return {"actions": [*removals, {"add": {"index": index, "alias": alias}}]}


def cosine_of(score: float) -> float:
    """The cosine of a k-NN hit, from its score. faiss scores `innerproduct` (k-NN "Spaces": distance d = -x.y) as
    1 / (1 + d) when d >= 0, else 1 - d; over unit vectors x.y is the cosine. Clipped to [-1, 1]."""
    if score > 1.0:
        return min(score - 1.0, 1.0)
    return max(1.0 - 1.0 / score, -1.0) if score > 0.0 else -1.0


class IndexRefusedError(SearchUnavailableError):
    """The collection answered with an error `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_outage(exc: SearchUnavailableError) -> bool:
    """Whether the collection cannot serve now (no answer in time, no connection, 5xx, throttled, our role refused),
    rather than refusing one request it will refuse again (a 400: a bug in the request)."""
    return not isinstance(exc, IndexRefusedError) or exc.status >= 500 or exc.status in OUTAGE_STATUSES


class SignedHttp:
    """JSON over HTTPS to one collection endpoint, each request signed with SigV4 for `aoss`.

    `credentials`: botocore credentials (refreshed by botocore; frozen per request). `http`: an httpx2 client, shared
    by every request of the container so TLS stays open across warm invocations.
    """

    def __init__(self, endpoint: str, region: str, credentials: Any, *, http: httpx2.Client | None = None) -> None:
        self._endpoint = endpoint.rstrip("/")
        self._region = region
        self._credentials = credentials
        self._http = http or httpx2.Client(follow_redirects=False)

    @classmethod
    def from_environment(cls, endpoint: str, region: str) -> SignedHttp:
        """Signed with the credentials boto3 finds (the function's role in Lambda; a profile or keys elsewhere)."""
        import boto3

        from notewell.config import ConfigError

        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise ConfigError(
                "No AWS credentials found; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
            )
        return cls(endpoint, region, credentials)

    def request(
        self, method: str, path: str, body: Mapping[str, Any] | None = None, *, timeout: float,
        params: Mapping[str, str] | None = None, allow: Sequence[int] = (),
    ) -> tuple[int, dict[str, Any]]:  # fmt: skip
        """Send one request; the status and the decoded JSON answer. Raises SearchUnavailableError on a timeout, a
        lost connection, an answer that is not JSON, or a status of 300 or more that is not in `allow`."""
        url = self._endpoint + path + (f"?{urlencode(params)}" if params else "")
        content = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
        headers = self._signed(method, url, content)
        try:
            response = self._http.request(
                method, url, content=content or None, headers=headers, timeout=httpx2.Timeout(timeout)
            )
        except httpx2.TimeoutException as exc:
            raise SearchUnavailableError(f"the search index did not answer within {timeout:g} s") from exc
        except httpx2.HTTPError as exc:
            raise SearchUnavailableError(f"the search index is unreachable ({type(exc).__name__})") from exc
        status = response.status_code
        if status >= 300 and status not in allow:
            raise IndexRefusedError(status, f"the search index answered HTTP {status}: {_reason(response.text)}")
        try:
            payload = response.json() if response.content else {}
        except ValueError as exc:
            raise SearchUnavailableError(f"the search index answered HTTP {status} with no JSON") from exc
        if not isinstance(payload, dict):
            raise SearchUnavailableError(f"the search index answered HTTP {status} with unexpected JSON")
        return status, payload

    def close(self) -> None:
        self._http.close()

    def _signed(self, method: str, url: str, content: bytes) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "x-amz-content-sha256": hashlib.sha256(content).hexdigest(),  # aoss wants the payload's hash
        }
        request = AWSRequest(method=method, url=url, data=content, headers=headers)
        frozen = self._credentials.get_frozen_credentials()
        SigV4Auth(frozen, "aoss", self._region).add_auth(request)
        return dict(request.headers.items())


def _reason(text: str) -> str:
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return text[:200]
    if isinstance(error, dict):
        return f"{error.get('type', '')} {error.get('reason', '')}".strip()[:200]
    return str(error)[:200]


class OpenSearchIndex:
    """Search over the collection: keywords (SearchIndex, CandidateIndex) and vectors (VectorSearch).

    Writes belong to the stream indexer (OpenSearchDocuments): a note is findable here once its document is.
    """

    def __init__(
        self, http: SignedHttp, hydrate: Hydrate, *, alias: str = ALIAS, timeout: float = QUERY_TIMEOUT_SECONDS,
        rest_seconds: float = REST_SECONDS, monotonic: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self._http = http
        self._hydrate = hydrate
        self._alias = alias
        self._timeout = timeout
        self._rest = rest_seconds
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._resting_until = 0.0

    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        found = self._query(keyword_query(workspace_id, project_id, query, filters, limit))
        terms = ranking.tokens(query)
        return [
            SearchHit(note, score, ranking.snippet_around(note.body, terms))
            for note, score in self._hydrated(workspace_id, project_id, found, filters)
        ][:limit]

    def ranked_ids(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        return self._query(keyword_query(workspace_id, project_id, query, filters, limit))

    def candidates(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int, *, min_terms: int = 1
    ) -> list[SearchHit]:
        # BM25 over every word already weighs rare words most; `min_terms` is met by matching any of them.
        found = self._query(keyword_query(workspace_id, project_id, query, filters, limit))
        return [SearchHit(n, s, "") for n, s in self._hydrated(workspace_id, project_id, found, filters)][:limit]

    def nearest(
        self, workspace_id: str, project_id: str, model_id: str, query: Vector, limit: int
    ) -> list[tuple[str, float]]:
        found = self._query(vector_query(workspace_id, project_id, model_id, query, limit))
        return [(note_id, cosine_of(score)) for note_id, score in found]

    def vectors_of(self, workspace_id: str, note_ids: Sequence[str], model_id: str) -> dict[str, NoteVector]:
        if not note_ids:
            return {}
        payload = self._search(vectors_query(workspace_id, note_ids, model_id))
        vectors: dict[str, NoteVector] = {}
        for hit in _hits(payload):
            source = hit.get("_source", {})
            note_id, embedding = source.get("noteId"), source.get("embedding")
            if not isinstance(note_id, str) or not isinstance(embedding, list):
                continue
            version = int(source.get("version", 0))
            if note_id not in vectors or vectors[note_id].version < version:
                vectors[note_id] = NoteVector(
                    note_id, str(source.get("projectId", "")), version, model_id, tuple(float(x) for x in embedding)
                )
        return vectors

    def _query(self, body: dict[str, Any]) -> list[tuple[str, float]]:
        """(note id, score) pairs, best first, each note once (its best document)."""
        seen: dict[str, float] = {}
        for hit in _hits(self._search(body)):
            note_id = hit.get("_source", {}).get("noteId")
            if isinstance(note_id, str) and note_id not in seen:
                seen[note_id] = float(hit.get("_score") or 0.0)
        return list(seen.items())

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._monotonic() < self._resting_until:
                raise SearchUnavailableError("the search index failed a moment ago; not asking again yet")
        status, payload = 0, dict[str, Any]()
        try:
            status, payload = self._http.request(
                "POST", f"/{quote(self._alias)}/_search", body, timeout=self._timeout, allow=(404,)
            )
        except SearchUnavailableError as exc:
            if not is_outage(exc):
                logger.error("the search index refused a query: a bug in the request, not an outage (%s)", exc)
                raise
            with self._lock:
                self._resting_until = self._monotonic() + self._rest
            raise
        if status == 404:  # answered at once: no index yet (nothing indexed since the stack was made); no rest
            raise SearchUnavailableError(
                f"the search index {self._alias!r} does not exist yet: {_reason(json.dumps(payload))}"
            )
        return payload

    def _hydrated(
        self, workspace_id: str, project_id: str, found: list[tuple[str, float]], filters: SearchFilters
    ) -> list[tuple[Note, float]]:
        notes = self._hydrate(workspace_id, [note_id for note_id, _ in found]) if found else {}
        kept: list[tuple[Note, float]] = []
        for note_id, score in found:
            note = notes.get(note_id)
            if note is not None and note.project_id == project_id and filters.admits(note):
                kept.append((note, score))
        return kept


def _hits(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    hits = payload.get("hits", {}).get("hits", [])
    if not isinstance(hits, list):
        raise SearchUnavailableError("the search index answered without a list of hits")
    return [hit for hit in hits if isinstance(hit, dict)]


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    doc_id: str


class OpenSearchDocuments:
    """The indexer's side: create the model's index behind the alias, add documents, delete them by id, and move
    the alias to a rebuilt index."""

    def __init__(self, http: SignedHttp, *, alias: str = ALIAS, timeout: float = WRITE_TIMEOUT_SECONDS) -> None:
        self._http = http
        self._alias = alias
        self._timeout = timeout

    def ensure_index(self, name: str, dimensions: int) -> bool:
        """Create index `name` unless it exists, check how it maps vectors, and point the alias at it when the alias
        points nowhere yet; True when created.

        Raises:
            SearchUnavailableError: the collection failed, or the index maps its vectors otherwise than pinned.
        """
        status, _ = self._http.request("HEAD", f"/{quote(name)}", timeout=self._timeout, allow=(404,))
        if status == 404:
            self._http.request("PUT", f"/{quote(name)}", index_settings(dimensions), timeout=self._timeout)
        self._check_vectors(name, dimensions)
        if not self.alias_targets():
            self.point_alias(name)
        return status == 404

    def _check_vectors(self, name: str, dimensions: int) -> None:
        _, payload = self._http.request("GET", f"/{quote(name)}/_mapping", timeout=self._timeout)
        mapped: Any = payload.get(name) or next(iter(payload.values()), {})  # keyed by the index's own name
        field = mapped.get("mappings", {}).get("properties", {}).get("embedding", {})
        method = field.get("method") or {}
        found = {
            "type": field.get("type"), "dimension": field.get("dimension"), "name": method.get("name"),
            "engine": method.get("engine"), "space_type": method.get("space_type", field.get("space_type")),
        }  # fmt: skip
        wanted = {"type": "knn_vector", "dimension": dimensions, **VECTOR_METHOD}
        if found != wanted:
            logger.error("search index %s maps its vectors as %s, not %s", name, found, wanted)
            raise SearchUnavailableError(
                f"the search index {name} maps its vectors as {found}, not {wanted}: its vector queries would fail "
                "or score wrongly; delete it and run notewell reindex --stack"
            )

    def alias_targets(self) -> list[str]:
        """The indexes the alias points at (none before the first index exists)."""
        status, aliases = self._http.request(
            "GET", f"/_alias/{quote(self._alias)}", timeout=self._timeout, allow=(404,)
        )
        return [] if status == 404 else sorted(aliases)

    def point_alias(self, name: str, *, previous: Sequence[str] = ()) -> None:
        """Point the alias at `name` instead of `previous`, in one atomic request."""
        self._http.request("POST", "/_aliases", alias_actions(self._alias, name, previous), timeout=self._timeout)

    def drop_index(self, name: str) -> None:
        """Delete an index no alias serves any more; one already gone is fine."""
        self._http.request("DELETE", f"/{quote(name)}", timeout=self._timeout, allow=(404,))

    def missing_vectors(self, index: str, limit: int, after: Sequence[str] | None) -> list[tuple[str, str]]:
        """(workspace, note id) of up to `limit` documents without a vector, in that order, after `after`."""
        body = missing_vectors_query(limit, after)
        _, payload = self._http.request("POST", f"/{quote(index)}/_search", body, timeout=self._timeout)
        return [
            (str(source.get("workspace", "")), str(source.get("noteId", "")))
            for source in (hit.get("_source", {}) for hit in _hits(payload))
        ]

    def add(self, index: str, doc: Mapping[str, Any]) -> str:
        """Add a document; the collection picks its id (vector collections refuse ours). Returns the id."""
        _, payload = self._http.request("POST", f"/{quote(index)}/_doc", doc, timeout=self._timeout)
        doc_id = payload.get("_id")
        if not isinstance(doc_id, str) or not doc_id:
            raise SearchUnavailableError("the search index added a document without answering its id")
        return doc_id

    def delete(self, index: str, doc_id: str) -> None:
        """Delete a document by id; one that is already gone is fine."""
        self._http.request("DELETE", f"/{quote(index)}/_doc/{quote(doc_id)}", timeout=self._timeout, allow=(404,))

    def documents_of(self, index: str, workspace_id: str, project_id: str, limit: int) -> list[tuple[str, str]]:
        body = {
            "size": limit,
            "_source": ["noteId"],
            "query": {"bool": {"filter": tenant_filter(workspace_id, project_id)}},
        }
        _, payload = self._http.request("POST", f"/{quote(index)}/_search", body, timeout=self._timeout)
        return [
            (str(hit["_id"]), str(hit.get("_source", {}).get("noteId", ""))) for hit in _hits(payload) if "_id" in hit
        ]
