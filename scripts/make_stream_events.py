"""Write the DynamoDB stream events of events/stream_*.json: what the indexer function receives.

Each event is one Lambda batch, shaped as Lambda delivers it, with note items exactly as the store writes them
(notewell.adapters.dynamodb.note_to_item). Run again after a change to the item layout:
    .venv/bin/python scripts/make_stream_events.py
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from notewell.adapters.dynamodb import note_to_item
from notewell.domain.model import Note, NoteType

EVENTS = Path(__file__).resolve().parent.parent / "events"
WS, PROJECT = "ws_events", "prj_events"
ARN = "arn:aws:dynamodb:eu-west-1:123456789012:table/notewell-notes/stream/2026-12-04T08:00:00.000"

V1 = Note(
    id="n_01JEVENTS00000000000000001", workspace_id=WS, project_id=PROJECT, title="Orders database",
    body="We use PostgreSQL 16 as the primary database for orders.", version=1,
    created_at="2026-12-04T08:00:00.000Z", updated_at="2026-12-04T08:00:00.000Z", author="key_events",
    write_id="w_1", type=NoteType.DECISION, tags=("database",),
)  # fmt: skip
V2 = replace(V1, body="We use PostgreSQL 17 as the primary database for orders.", version=2,
             updated_at="2026-12-04T08:05:00.000Z", write_id="w_2")  # fmt: skip
DELETED = replace(V2, version=3, updated_at="2026-12-04T08:10:00.000Z", write_id="w_3",
                  deleted_at="2026-12-04T08:10:00.000Z")  # fmt: skip
OTHER = replace(V1, id="n_01JEVENTS00000000000000002", title="Cache", body="Redis caches the catalogue.",
                write_id="w_4", tags=())  # fmt: skip


def record(seq: int, name: str, new: Note | None, old: Note | None) -> dict[str, Any]:
    note = new or old
    assert note is not None
    item = note_to_item(note)
    change: dict[str, Any] = {
        "ApproximateCreationDateTime": 1796371200 + seq,
        "Keys": {"pk": item["pk"], "sk": item["sk"]},
        "SequenceNumber": f"{1000000000000000000000 + seq}",
        "SizeBytes": 512,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        change["NewImage"] = note_to_item(new)
    if old is not None:
        change["OldImage"] = note_to_item(old)
    return {
        "eventID": f"event-{seq}", "eventName": name, "eventVersion": "1.1", "eventSource": "aws:dynamodb",
        "awsRegion": "eu-west-1", "dynamodb": change, "eventSourceARN": ARN,
    }  # fmt: skip


def batch(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


def main() -> None:
    poison = record(13, "INSERT", OTHER, None)
    poison["dynamodb"]["NewImage"]["type"] = {"S": "recipe"}  # no such note type: no code can index this record
    events = {
        "stream_insert": batch(record(1, "INSERT", V1, None), record(2, "INSERT", OTHER, None)),
        "stream_modify": batch(record(3, "MODIFY", V2, V1)),
        "stream_soft_delete": batch(record(4, "MODIFY", DELETED, V2)),
        "stream_remove": batch(record(5, "REMOVE", None, V2)),
        # Version 2 arrives after version 1 was already replaced by 2 (a retried, bisected batch): must not regress.
        "stream_out_of_order": batch(record(6, "MODIFY", V2, V1), record(7, "INSERT", V1, None)),
        # The same change delivered again (a replayed batch): acknowledged, nothing written twice.
        "stream_duplicate": batch(record(3, "MODIFY", V2, V1)),
        "stream_poison": batch(record(12, "INSERT", V1, None), poison, record(14, "MODIFY", V2, V1)),
    }
    for name, event in events.items():
        (EVENTS / f"{name}.json").write_text(json.dumps(event, indent=2) + "\n")


if __name__ == "__main__":
    main()
