"""OpenSearch Serverless: the notes' full-text and vector index on AWS (one VECTORSEARCH collection).

One index per embedding model (`index_name`), reached through the alias `notes`, holds one document per live note:
its text fields, keyword filters (workspace, project, type, status, tags) and its vector. Serverless vector
collections take no custom document ids and no refresh, so a document's id is the one the collection hands out and
the stream indexer keeps it, with the note's version, in a pointer item of the table (services/indexing.py).

The index only proposes: every hit is hydrated from the table (`hydrate`, one BatchGetItem), and a note that is gone,
moved, changed since or filtered out is dropped there; two documents of one note (a crash between indexing and the
pointer write) count once. Every query carries the workspace and the project in its filter (`tenant_filter`); the
vector query filters inside the `knn` clause (efficient filtering), so `k` hits come from the caller's project.

Requests are signed with SigV4 for the `aoss` service and sent with one short timeout and no retry: a failure raises
SearchUnavailableError, the caller falls through to the next mode, and the index rests `REST_SECONDS` so the next
calls fall through at once instead of each paying the timeout again.
"""

from __future__ import annotations

import hashlib
import json
import logging
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


def index_name(model_id: str, dimensions: int) -> str:
    """The index of one embedding model: a new model or size means a new index, filled, then the alias moved."""
    digest = hashlib.sha256(f"{model_id}|{dimensions}".encode()).hexdigest()[:10]
    return f"notes-{digest}"


def index_settings(dimensions: int) -> dict[str, Any]:
    """The index definition. `knn_vector` gives only type, dimension and space: what Classic and NextGen both take."""
    text = {"type": "text", "analyzer": "english"}
    keyword = {"type": "keyword"}
    return {
        "settings": {"index.knn": True},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "noteId": keyword, "workspace": keyword, "projectId": keyword, "type": keyword, "status": keyword,
                "tags": keyword, "model": keyword, "version": {"type": "long"}, "updatedAt": {"type": "date"},
                "title": text, "body": text,
                "embedding": {"type": "knn_vector", "dimension": dimensions, "space_type": "cosinesimil"},
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
        doc["embedding"] = list(vector)
    return doc


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
                    "vector": list(vector),
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


def cosine_of(score: float) -> float:
    """OpenSearch scores a `cosinesimil` hit (1 + cos) / 2; the fusion takes the cosine."""
    return 2.0 * score - 1.0


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
            raise SearchUnavailableError(f"the search index answered HTTP {status}: {_reason(response.text)}")
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
        except SearchUnavailableError:
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
    """The indexer's side: create the model's index behind the alias, add documents, delete them by id."""

    def __init__(self, http: SignedHttp, *, alias: str = ALIAS, timeout: float = WRITE_TIMEOUT_SECONDS) -> None:
        self._http = http
        self._alias = alias
        self._timeout = timeout

    def ensure_index(self, name: str, dimensions: int) -> bool:
        """Create index `name` and point the alias at it when the alias points nowhere yet; True when created."""
        status, _ = self._http.request("HEAD", f"/{quote(name)}", timeout=self._timeout, allow=(404,))
        if status == 404:
            self._http.request("PUT", f"/{quote(name)}", index_settings(dimensions), timeout=self._timeout)
        status, aliases = self._http.request(
            "GET", f"/_alias/{quote(self._alias)}", timeout=self._timeout, allow=(404,)
        )
        if status == 404 or not aliases:
            self.point_alias(name)
        return status == 404

    def point_alias(self, name: str, *, previous: str | None = None) -> None:
        actions: list[dict[str, Any]] = [{"add": {"index": name, "alias": self._alias}}]
        if previous is not None:
            actions.insert(0, {"remove": {"index": previous, "alias": self._alias}})
        self._http.request("POST", "/_aliases", {"actions": actions}, timeout=self._timeout)

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
