"""Freshness verdicts on DynamoDB (moto, the table from template.yaml): a read records every verdict that changed in
one request however many notes it judged, as items of the project's VERDICT partition that no index, feed or stream
consumer takes for a note; a record another recorder changed first is dropped while the rest are stored; and a
throttled or conflicting write leaves the read's answer whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from notewell.adapters.dynamodb import DynamoDBStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import UnavailableError
from notewell.domain.freshness import FileVerdict, Freshness, RecordedVerdict
from notewell.domain.model import Anchor, NoteStatus, NoteType, Principal
from notewell.ports import VerdictWrite
from tests.support.dynamo import count_operations, dynamodb_store, inject_faults, throttled, transaction_conflict

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
REPO = "github.com/acme/api"


def digest(n: int) -> str:
    return f"{n:064x}"


@pytest.fixture
def store() -> Iterator[DynamoDBStore]:
    with dynamodb_store() as opened:
        yield opened


@pytest.fixture
def services(store: DynamoDBStore, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())


@pytest.fixture
def me(services: Services) -> Principal:
    workspace = services.auth.create_workspace("acme")
    principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert principal is not None
    return principal


def anchored(services: Services, me: Principal, count: int) -> dict[str, str | None]:
    """`count` anchored decisions, and hashes that find every one of them changed."""
    for n in range(count):
        anchor = Anchor(REPO, f"src/m{n}.py", COMMIT, digest(n + 1000), digest(n))
        kind = (NoteType.DECISION, NoteType.CONSTRAINT)[n % 2]  # two sections: more notes shown than one holds
        services.notes.create(me, "api", title=f"Rule {n}", body=f"Rule {n}.", type=kind, anchors=[anchor])
    return {f"src/m{n}.py": digest(n + 500) for n in range(count)}


def test_a_read_records_its_verdicts_in_one_request_as_items_no_index_or_feed_holds(
    services: Services, me: Principal, store: DynamoDBStore
) -> None:
    hashes = anchored(services, me, 40)
    calls = count_operations(store.client)
    result = services.context.get_context(me, "api", max_tokens=20_000, check_freshness=hashes)
    judged = len({e["id"] for _, entries in result.packed.sections for e in entries if e.get("freshness") == "changed"})
    assert judged > 25  # more than a BatchWriteItem takes: still one request
    assert calls["TransactWriteItems"] == 1 and "PutItem" not in calls and "BatchWriteItem" not in calls
    project = store.get_project(me.workspace_id, "api")
    assert project is not None
    items = store.client.query(
        TableName=store.table_name, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"WS#{me.workspace_id}#P#{project.id}#VERDICT"}},
    )["Items"]  # fmt: skip
    assert len(items) == judged
    assert {item["entity"]["S"] for item in items} == {"verdict"}  # the stream's filter passes notes only
    assert not [name for item in items for name in item if name.startswith("gsi")]  # in no index, nor the feed

    calls.clear()
    services.context.get_context(me, "api", max_tokens=20_000, check_freshness=hashes)  # the same: nothing written
    assert "TransactWriteItems" not in calls and calls["BatchGetItem"] <= 3


def test_a_record_another_recorder_changed_first_is_dropped_and_the_others_stored(
    services: Services, me: Principal, store: DynamoDBStore
) -> None:
    anchored(services, me, 3)
    notes = store.anchored_in_project(me.workspace_id, store_project(store, me), statuses=[NoteStatus.CURRENT], limit=3)
    ws = me.workspace_id

    def record(index: int, value: Freshness, at: str) -> RecordedVerdict:
        note = notes[index]
        return RecordedVerdict(note.id, note.project_id, 1, (FileVerdict(REPO, "src/x.py", value),), at)

    won = record(1, Freshness.GONE, "2026-03-01T10:00:00.000Z")
    assert store.save_verdicts(ws, [VerdictWrite(won, None)]) == 1  # the other recorder, first
    late = [VerdictWrite(record(i, Freshness.CHANGED, "2026-03-01T10:00:01.000Z"), None) for i in range(3)]
    calls = count_operations(store.client)
    assert store.save_verdicts(ws, late) == 2
    assert calls["TransactWriteItems"] == 2  # cancelled once, then sent without the lost record
    stored = store.recorded_verdicts(ws, notes[0].project_id, [n.id for n in notes])
    assert {i: r.freshness.value for i, r in stored.items()} == {
        notes[0].id: "changed", notes[1].id: "gone", notes[2].id: "changed",
    }  # fmt: skip


@pytest.mark.parametrize("fault", [throttled, transaction_conflict], ids=["throttled", "conflict"])
def test_a_write_the_table_refuses_is_busy_for_the_store_and_leaves_the_read_whole(
    services: Services, me: Principal, store: DynamoDBStore, fault: object
) -> None:
    hashes = anchored(services, me, 2)
    reply = fault()  # type: ignore[operator]
    inject_faults(store.client, lambda operation, attempt: reply if operation == "TransactWriteItems" else None)
    project = store_project(store, me)
    write = VerdictWrite(RecordedVerdict("n_0", project, 1, (FileVerdict(REPO, "a.py", Freshness.GONE),), "t"), None)
    with pytest.raises(UnavailableError):
        store.save_verdicts(me.workspace_id, [write])
    result = services.context.get_context(me, "api", check_freshness=hashes)
    assert result.packed.text.count("[changed: ") == 2
    assert services.console.freshness(me, "api").unchecked == 2  # nothing kept: the next read tries again


def store_project(store: DynamoDBStore, me: Principal) -> str:
    project = store.get_project(me.workspace_id, "api")
    assert project is not None
    return project.id
