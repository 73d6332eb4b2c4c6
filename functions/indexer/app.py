"""Indexer function: DynamoDB Streams (note items) → the OpenSearch Serverless index, version-guarded."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from notewell.bootstrap import indexer
from notewell.config import Settings
from notewell.entrypoints.logs import configure_logging
from notewell.entrypoints.stream import handle_records

if TYPE_CHECKING:
    from notewell.entrypoints.stream import Counts
    from notewell.services.indexing import NoteIndexer


@functools.cache
def _indexer() -> NoteIndexer:
    # First invocation of a container: clients (DynamoDB, Bedrock, the collection) are built once and kept warm.
    configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    return indexer(Settings.from_env(os.environ))


@functools.cache
def _metrics() -> Counts | None:
    settings = Settings.from_env(os.environ)
    if settings.metrics != "emf":
        return None
    from notewell.adapters.emf_metrics import EmfCallMetrics

    # Dimension `service` = "indexer" alone: the alarm on NotesIndexedWithoutVector watches exactly that.
    return EmfCallMetrics(settings.metrics_namespace, service="indexer")


def handler(event: dict[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
    return handle_records(event, _indexer(), _metrics())
