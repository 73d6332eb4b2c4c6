"""DynamoDB Streams → the search index: parse each record, hand it to the indexer, report what failed.

Records of one shard arrive in order; Lambda retries a failed batch from the lowest sequence number reported in
`batchItemFailures`, so processing stops at the first failure (everything after it comes again anyway). A record
that fails every retry (a poison record) goes to the stack's on-failure queue after MaximumRetryAttempts and the
shard moves on; `notewell reindex` repairs what it missed. Only note items reach this function (the event source's
filter); anything else is acknowledged untouched.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from notewell.adapters.dynamodb import item_to_note

if TYPE_CHECKING:
    from collections.abc import Mapping

    from notewell.services.indexing import NoteIndexer

logger = logging.getLogger(__name__)


def handle_records(event: Mapping[str, Any], indexer: NoteIndexer) -> dict[str, list[dict[str, str]]]:
    for record in event.get("Records", []):
        change = record.get("dynamodb", {})
        sequence = str(change.get("SequenceNumber", ""))
        try:
            outcome = _apply(record, indexer)
        except Exception:
            # The message names the record, never its content: note text stays out of the logs.
            logger.exception("could not index stream record %s (%s)", sequence, record.get("eventName"))
            return {"batchItemFailures": [{"itemIdentifier": sequence}]}
        logger.debug("stream record %s: %s", sequence, outcome)
    return {"batchItemFailures": []}


def _apply(record: Mapping[str, Any], indexer: NoteIndexer) -> str:
    change = record["dynamodb"]
    name = record["eventName"]
    if name == "REMOVE":
        old = change["OldImage"]
        if old.get("entity", {}).get("S") != "note":
            return "skipped"
        return indexer.remove(old["workspaceId"]["S"], old["id"]["S"]).value
    if name not in ("INSERT", "MODIFY"):
        raise ValueError(f"unknown stream event {name!r}")
    image = change["NewImage"]
    if image.get("entity", {}).get("S") != "note":
        return "skipped"
    return indexer.upsert(item_to_note(image)).value
