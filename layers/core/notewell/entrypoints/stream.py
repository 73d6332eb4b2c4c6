"""DynamoDB Streams → the search index: parse each record, hand it to the indexer, report what failed.

Records of one shard arrive in order; Lambda retries a failed batch from the lowest sequence number reported in
`batchItemFailures`, so processing stops at the first failure (everything after it comes again anyway). A record
that fails every retry (a poison record) goes to the stack's on-failure queue after MaximumRetryAttempts and the
shard moves on; `notewell reindex` repairs what it missed. Only note items reach this function (the event source's
filter); anything else is acknowledged untouched.

Each batch counts the notes it indexed without their vector (the model failed: they are found by words only until
`notewell reindex --stack --missing-vectors`) as the metric `NotesIndexedWithoutVector`, which an alarm watches.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from notewell.adapters.dynamodb import item_to_note
from notewell.services.indexing import Indexed

if TYPE_CHECKING:
    from collections.abc import Mapping

    from notewell.services.indexing import NoteIndexer

logger = logging.getLogger(__name__)

WITHOUT_VECTOR_METRIC = "NotesIndexedWithoutVector"  # the alarm on it names it: keep the name


class Counts(Protocol):
    def record_count(self, name: str, value: int) -> None: ...


def handle_records(
    event: Mapping[str, Any], indexer: NoteIndexer, metrics: Counts | None = None
) -> dict[str, list[dict[str, str]]]:
    failures: list[dict[str, str]] = []
    without_vector = 0
    for record in event.get("Records", []):
        change = record.get("dynamodb", {})
        sequence = str(change.get("SequenceNumber", ""))
        try:
            outcome = _apply(record, indexer)
        except Exception:
            # The message names the record, never its content: note text stays out of the logs.
            logger.exception("could not index stream record %s (%s)", sequence, record.get("eventName"))
            failures.append({"itemIdentifier": sequence})
            break
        if outcome == Indexed.WITHOUT_VECTOR:
            without_vector += 1
        logger.debug("stream record %s: %s", sequence, outcome)
    if metrics is not None:  # every batch, 0 included: the alarm sees data while all is well
        metrics.record_count(WITHOUT_VECTOR_METRIC, without_vector)
    return {"batchItemFailures": failures}


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
