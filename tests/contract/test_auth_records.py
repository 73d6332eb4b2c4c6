"""OAuth state on every store: records by key and partition, writes conditioned on absence or status, all or
nothing, and one winner when several writers race for the same transition."""

from __future__ import annotations

import threading

import pytest

from notewell.ports import ABSENT, ANY, AuthRecord, AuthRecords, RecordWrite, Store


def records(store: Store) -> AuthRecords:
    assert isinstance(store, AuthRecords)
    return store


def record(pk: str, sk: str, status: str = "active", **fields: object) -> AuthRecord:
    return AuthRecord(pk, sk, status, fields, expires_at="2026-12-04T07:00:00.000Z")


def test_a_record_reads_back_by_key_and_by_partition_in_key_order(store: Store) -> None:
    auth = records(store)
    assert (
        auth.write_records([RecordWrite(record("FAM#1", "RT#b", uses=1)), RecordWrite(record("FAM#1", "META"))]) is None
    )
    assert auth.write_records([RecordWrite(record("FAM#2", "META", client="x"))]) is None
    assert auth.get_record("FAM#1", "RT#b") == record("FAM#1", "RT#b", uses=1)
    assert auth.get_record("FAM#1", "RT#zz") is None
    assert [r.sk for r in auth.records_under("FAM#1")] == ["META", "RT#b"]
    assert auth.records_under("FAM#3") == []


def test_a_write_conditioned_on_absence_or_status_applies_only_when_it_holds(store: Store) -> None:
    auth = records(store)
    code = record("CODE#h", "CODE", "unused", client="c1")
    assert auth.write_records([RecordWrite(code)]) is None
    assert auth.write_records([RecordWrite(code)]) == 0  # absent no longer holds
    used = record("CODE#h", "CODE", "used", client="c1")
    assert auth.write_records([RecordWrite(used, condition="unused")]) is None
    assert auth.write_records([RecordWrite(used, condition="unused")]) == 0  # single use
    assert auth.get_record("CODE#h", "CODE") == used
    assert auth.write_records([RecordWrite(record("CODE#h", "CODE", "x"), condition=ANY)]) is None
    assert auth.write_records([RecordWrite(used, condition="x", delete=True)]) is None
    assert auth.get_record("CODE#h", "CODE") is None


def test_writes_apply_all_or_none_and_name_the_failed_condition(store: Store) -> None:
    auth = records(store)
    assert auth.write_records([RecordWrite(record("RT#old", "RT", "active"))]) is None
    failed = auth.write_records(
        [
            RecordWrite(record("RT#old", "RT", "rotated"), condition="active"),
            RecordWrite(record("RT#new", "RT", "active")),
            RecordWrite(record("FAM#9", "META", "active"), condition="active"),  # there is no META: fails
        ]
    )
    assert failed == 2
    assert auth.get_record("RT#old", "RT") == record("RT#old", "RT", "active")  # untouched
    assert auth.get_record("RT#new", "RT") is None


def test_of_eight_racing_transitions_of_one_record_exactly_one_wins(store: Store) -> None:
    auth = records(store)
    assert auth.write_records([RecordWrite(record("CODE#race", "CODE", "unused"))]) is None
    start = threading.Barrier(8, timeout=10)
    outcomes: list[int | None] = []
    lock = threading.Lock()

    def redeem(n: int) -> None:
        start.wait()
        outcome = auth.write_records(
            [
                RecordWrite(record("CODE#race", "CODE", "used", by=n), condition="unused"),
                RecordWrite(record(f"FAM#{n}", "META", "active"), condition=ABSENT),
            ]  # fmt: skip
        )
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=redeem, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes, key=lambda o: -1 if o is None else o) == [None] + [0] * 7
    winner = auth.get_record("CODE#race", "CODE")
    assert winner is not None and winner.status == "used"
    assert [n for n in range(8) if auth.get_record(f"FAM#{n}", "META") is not None] == [winner.fields["by"]]


@pytest.mark.parametrize("text", ["naïve ☃ \u202e", '{"json": "inside"}'])
def test_fields_keep_any_json_text(store: Store, text: str) -> None:
    auth = records(store)
    assert auth.write_records([RecordWrite(record("CLIENT#u", "CLIENT", name=text, uris=[text, "x"]))]) is None
    kept = auth.get_record("CLIENT#u", "CLIENT")
    assert kept is not None and kept.fields == {"name": text, "uris": [text, "x"]}
