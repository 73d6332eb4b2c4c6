"""Composition root: the only module that picks adapters. Everything else is handed what it needs."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from notewell.config import ConfigError, Settings
from notewell.ports import AuthRecords, RecentWrites, SequencedFeed
from notewell.services.access import Deps
from notewell.services.auth import AuthService
from notewell.services.changes import ChangesService
from notewell.services.context import ContextService
from notewell.services.freshness import FreshnessService
from notewell.services.meaning import Meaning
from notewell.services.memory import MemoryService
from notewell.services.metering import Meter
from notewell.services.notes import NoteService
from notewell.services.oauth import Grants, OAuthService
from notewell.services.projects import ProjectService, TagService
from notewell.services.search import SearchService
from notewell.services.workspace import WorkspaceService

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from notewell.adapters.opensearch import SignedHttp
    from notewell.ports import (
        CallMetrics,
        ClientDocuments,
        Clock,
        Embedder,
        IdSource,
        Judge,
        SearchIndex,
        Store,
        VectorSearch,
    )
    from notewell.services.console import ConsoleService
    from notewell.services.indexing import NoteIndexer, StackReindexReport, UpgradeReport
    from notewell.services.portability import PortabilityService


@dataclass(frozen=True)
class Services:
    deps: Deps
    meaning: Meaning | None  # None: no embedding model configured (keyword search only)
    notes: NoteService
    projects: ProjectService
    search: SearchService
    auth: AuthService
    memory: MemoryService
    context: ContextService
    changes: ChangesService
    freshness: FreshnessService  # the last freshness verdict on each anchored note, for the console
    meter: Meter
    tags: TagService
    workspaces: WorkspaceService
    # Built on first use: most calls need neither, and a cold Lambda start would import and build both for nothing.
    build_portability: Callable[[], PortabilityService]
    build_console: Callable[[], ConsoleService]
    oauth: OAuthService | None = None  # None: no issuer configured, /mcp takes API keys only
    grants: Grants | None = None  # None: a store without OAuth state
    metrics: CallMetrics | None = None  # None: no operational metrics (local runs)

    @functools.cached_property
    def portability(self) -> PortabilityService:
        return self.build_portability()

    @functools.cached_property
    def console(self) -> ConsoleService:
        return self.build_console()


def bootstrap(
    settings: Settings,
    *,
    store: Store | None = None,
    search: SearchIndex | None = None,
    clock: Clock | None = None,
    ids: IdSource | None = None,
    embedder: Embedder | None = None,
    client_documents: ClientDocuments | None = None,
    judge: Judge | None = None,
) -> Services:
    from notewell.adapters.system import SystemClock, UlidIdSource

    if store is None:
        store, search = _store_for(settings)
    elif search is None:
        search = _fulltext_for(store)
    deps = Deps(store=store, clock=clock or SystemClock(), ids=ids or UlidIdSource())
    if embedder is None:
        embedder = _embedder_for(settings)
    meaning = Meaning(embedder, _vectors_for(store, search, embedder), deps.clock) if embedder is not None else None
    meter = Meter(store, deps.clock)
    notes = NoteService(deps, meter, meaning)
    search_service = SearchService(deps, search, meaning, fresh=_fresh_for(store, search))
    memory = MemoryService(deps, notes, search_service, judge if judge is not None else _judge_for(settings))
    auth = AuthService(deps)  # one for the MCP side and the authorization server alike
    secret = _cursor_key(settings, store)
    oauth = (
        OAuthService(deps, store, settings.issuer, auth, client_documents or _client_documents())
        if settings.issuer is not None and isinstance(store, AuthRecords)
        else None
    )
    verdicts = FreshnessService(deps)
    changes = ChangesService(
        deps,
        cursor_key=secret,
        horizon=_feed_horizon(settings, store),
        sequenced=store if isinstance(store, SequencedFeed) else None,
    )
    return Services(
        deps=deps,
        meaning=meaning,
        notes=notes,
        projects=ProjectService(deps),
        search=search_service,
        auth=auth,
        memory=memory,
        context=ContextService(deps, search_service, verdicts),
        changes=changes,
        freshness=verdicts,
        meter=meter,
        tags=TagService(deps, notes),
        workspaces=WorkspaceService(deps, meter),
        build_portability=lambda: _portability(deps, notes, meter),
        build_console=lambda: _console(
            deps, auth, notes, changes, meter, secret, oauth, store if isinstance(store, AuthRecords) else None
        ),
        oauth=oauth,
        grants=Grants(deps, store) if isinstance(store, AuthRecords) else None,
        metrics=_metrics_for(settings),
    )


def _portability(deps: Deps, notes: NoteService, meter: Meter) -> PortabilityService:
    from notewell.adapters.jsonl import JsonlCodec
    from notewell.services.portability import PortabilityService

    return PortabilityService(deps, JsonlCodec(), notes, meter)


def _console(
    deps: Deps, auth: AuthService, notes: NoteService, changes: ChangesService, meter: Meter, secret: bytes,
    oauth: OAuthService | None, records: AuthRecords | None,
) -> ConsoleService:  # fmt: skip
    from notewell.services.console import ConsoleService

    return ConsoleService(deps, auth, notes, changes, meter, secret, oauth, records)


def _metrics_for(settings: Settings) -> CallMetrics | None:
    if settings.metrics == "none":
        return None
    from notewell.adapters.emf_metrics import EmfCallMetrics  # Powertools metrics: only where they are emitted

    return EmfCallMetrics(settings.metrics_namespace)


def _client_documents() -> ClientDocuments:
    from notewell.adapters.client_documents import HttpClientDocuments

    return HttpClientDocuments()


def _store_for(settings: Settings) -> tuple[Store, SearchIndex | None]:
    if settings.backend == "dynamodb":
        from notewell.adapters.dynamodb import DynamoDBStore, make_client

        if not settings.table_name:
            raise ConfigError("NOTEWELL_TABLE is missing; set it to the DynamoDB table name of the stack.")
        client = make_client(region=settings.aws_region, endpoint_url=settings.dynamodb_endpoint)
        dynamo = DynamoDBStore(client, settings.table_name)
        return dynamo, _collection_for(settings, dynamo)
    from notewell.adapters.sqlite import SqliteStore
    from notewell.adapters.system import private_directory

    private_directory(settings.data_dir)
    store = SqliteStore(settings.data_dir / "notewell.db")
    return store, _fulltext_for(store)


def _fresh_for(store: Store, search: SearchIndex | None) -> RecentWrites | None:
    """A stream-fed index lags the table: remember then also reads the last moments' writes from the store."""
    from notewell.adapters.opensearch import OpenSearchIndex

    return store if isinstance(search, OpenSearchIndex) and isinstance(store, RecentWrites) else None


def _collection_for(settings: Settings, store: Store) -> SearchIndex | None:
    """The OpenSearch Serverless index, when the stack has a collection: queries hydrate hits from `store`."""
    if settings.search_endpoint is None:
        return None
    from notewell.adapters.opensearch import OpenSearchIndex

    return OpenSearchIndex(_signed_http(settings), store.get_notes)


def _signed_http(settings: Settings) -> SignedHttp:
    from notewell.adapters.opensearch import SignedHttp

    if settings.search_endpoint is None or settings.aws_region is None:
        raise ConfigError("NOTEWELL_SEARCH_ENDPOINT and AWS_REGION are both needed to reach the search collection.")
    return SignedHttp.from_environment(settings.search_endpoint, settings.aws_region)


def indexer(
    settings: Settings, *, store: Store | None = None, embedder: Embedder | None = None, http: SignedHttp | None = None
) -> NoteIndexer:
    """The stream indexer of a deployed stack (functions/indexer), and `notewell reindex --stack`'s."""
    from notewell.adapters.opensearch import OpenSearchDocuments, document, index_name
    from notewell.ports import IndexPointers
    from notewell.services.indexing import IndexTarget, NoteIndexer

    if store is None:
        store, _ = _store_for(settings)
    if not isinstance(store, IndexPointers):
        raise ConfigError("The stream indexer needs the DynamoDB store (NOTEWELL_BACKEND=dynamodb).")
    if embedder is None:
        embedder = _embedder_for(settings, patient=True)
    model_id = embedder.model_id if embedder is not None else "none"
    dimensions = embedder.dimensions if embedder is not None else settings.embed_dimensions
    target = IndexTarget(index_name(model_id, dimensions), model_id, dimensions)
    return NoteIndexer(store, OpenSearchDocuments(http or _signed_http(settings)), document, target, embedder)


def stack_reindex(
    settings: Settings, *, store: Store | None = None, embedder: Embedder | None = None, http: SignedHttp | None = None,
    progress: Callable[[int], None] | None = None,
) -> StackReindexReport:  # fmt: skip
    """`notewell reindex --stack`: the deployed index rebuilt from the table, through the indexer's own guard."""
    from datetime import UTC, datetime

    from notewell.adapters.opensearch import OpenSearchDocuments
    from notewell.domain.rules import format_ts
    from notewell.ports import IndexPointers
    from notewell.services.indexing import reindex_stack

    if store is None:
        store, _ = _store_for(settings)
    http = http or _signed_http(settings)
    feeder = indexer(settings, store=store, embedder=embedder, http=http)
    if not isinstance(store, IndexPointers):
        raise ConfigError("notewell reindex --stack needs the DynamoDB store (NOTEWELL_BACKEND=dynamodb).")
    return reindex_stack(
        store, store, OpenSearchDocuments(http), feeder, horizon=format_ts(datetime.now(UTC)), progress=progress
    )


def stack_upgrade(
    settings: Settings, *, store: Store | None = None, progress: Callable[[int], None] | None = None
) -> UpgradeReport:
    """The table half of `notewell reindex --stack`: projects made before the lean context index moved onto it."""
    from datetime import UTC, datetime

    from notewell.domain.rules import format_ts
    from notewell.ports import ContextIndexUpgrade
    from notewell.services.indexing import UpgradeReport, upgrade_context_index

    if store is None:
        store, _ = _store_for(settings)
    if not isinstance(store, ContextIndexUpgrade):
        return UpgradeReport(0, 0)  # nothing to upgrade: the store's context reads never needed it
    return upgrade_context_index(store, store, horizon=format_ts(datetime.now(UTC)), progress=progress)


def _judge_for(settings: Settings) -> Judge | None:
    if not settings.judge_model:
        return None
    from notewell.adapters import bedrock_judge

    return bedrock_judge.BedrockJudge(bedrock_judge.make_client(settings.aws_region), settings.judge_model)


def _embedder_for(settings: Settings, *, patient: bool = False) -> Embedder | None:
    if settings.embedder == "bedrock":
        from notewell.adapters import bedrock_embedder

        # Queries give Bedrock 1 s and no retry (the caller falls back to keywords); the indexer has time.
        client = (
            bedrock_embedder.make_client(settings.aws_region, read_timeout=10.0, attempts=5)
            if patient
            else bedrock_embedder.make_client(settings.aws_region)
        )
        return bedrock_embedder.TitanEmbedder(client, model=settings.embed_model, dimensions=settings.embed_dimensions)
    if settings.embedder == "hash":
        from notewell.adapters.hash_embedder import HashEmbedder

        return HashEmbedder()
    if settings.embedder == "local":
        return _local_embedder(settings.model_cache)
    return None


_local: list[Embedder | None] = []  # one model per process, however many times the app is composed


def _local_embedder(cache: Path | None) -> Embedder | None:
    if not _local:
        from notewell.adapters.onnx_embedder import load_local_embedder

        _local.append(load_local_embedder(cache))
    return _local[0]


def _vectors_for(store: Store, search: SearchIndex | None, embedder: Embedder) -> VectorSearch | None:
    """Where note vectors live: the SQLite file, or the search collection (written by the stream indexer)."""
    from notewell.adapters.opensearch import OpenSearchIndex
    from notewell.adapters.sqlite import SqliteStore, SqliteVectorIndex

    if isinstance(search, OpenSearchIndex):
        return search
    return SqliteVectorIndex(store, embedder.dimensions) if isinstance(store, SqliteStore) else None


def _fulltext_for(store: Store) -> SearchIndex | None:
    from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore

    return SqliteFullTextIndex(store) if isinstance(store, SqliteStore) else None


# How long the (updatedAt, id) change feed holds back the newest changes; it serves only DynamoDB projects written
# before the commit sequence existed (services/changes.py explains why). It must exceed the longest time between
# stamping updatedAt and the write becoming visible: SQLite's lock wait (5 s busy timeout); on DynamoDB, botocore's
# retry budget plus the feed index's replication lag.
SQLITE_FEED_HORIZON = timedelta(seconds=6)
DYNAMODB_FEED_HORIZON = timedelta(seconds=30)


def _feed_horizon(settings: Settings, store: Store) -> timedelta:
    if settings.feed_horizon_seconds is not None:
        return timedelta(seconds=settings.feed_horizon_seconds)
    from notewell.adapters.sqlite import SqliteStore

    return SQLITE_FEED_HORIZON if isinstance(store, SqliteStore) else DYNAMODB_FEED_HORIZON


def _cursor_key(settings: Settings, store: Store) -> bytes:
    """The per-deployment key that seals feed cursors: configured, else kept beside the local database."""
    if settings.cursor_secret:
        return settings.cursor_secret.encode()
    if settings.backend == "dynamodb":
        raise ConfigError(
            "NOTEWELL_CURSOR_SECRET is missing; pass --stack <stack name> to read it from the stack, or set it to "
            "the SecretString of the stack's CursorSecretArn output (Secrets Manager)."
        )
    from notewell.adapters.system import load_or_create_key, private_directory

    private_directory(settings.data_dir)
    return load_or_create_key(settings.data_dir / "cursor.key")
