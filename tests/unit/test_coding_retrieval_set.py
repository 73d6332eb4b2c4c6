"""The coding retrieval set (tests/quality/coding_retrieval.jsonl) holds what tests/quality/retrieval.py counts on:
at least 150 queries of three kinds over the orientation project's notes, each answered by notes that project holds,
each `r…` query in the split a hash of its id gives it, each `t…` query (written later, to give tuning room once
the first tune half was found at 0.98) in `tune`."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tests.quality.coding import split_of
from tests.quality.retrieval import CODING_PROJECT, CODING_QUERIES


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CODING_QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_has_enough_queries_of_each_kind_with_unique_ids() -> None:
    queries = rows()
    assert len(queries) >= 150 and len({q["id"] for q in queries}) == len(queries)
    kinds = Counter(q["kind"] for q in queries)
    assert set(kinds) == {"keyword", "question", "task"} and min(kinds.values()) >= 40
    assert len({q["query"] for q in queries}) == len(queries)


def test_every_relevant_note_is_a_note_of_the_project_and_every_query_has_one() -> None:
    notes = {
        r["id"]
        for r in map(json.loads, CODING_PROJECT.read_text(encoding="utf-8").splitlines())
        if r.get("kind") == "note"
    }
    for query in rows():
        assert query["relevant"] and set(query["relevant"]) <= notes, query["id"]


def test_each_query_is_in_the_split_the_hash_of_its_id_gives_and_both_halves_hold_each_kind() -> None:
    queries = rows()
    assert all(q["id"][0] in "rt" for q in queries)
    assert all(q["split"] == (split_of(q["id"]) if q["id"].startswith("r") else "tune") for q in queries)
    halves = Counter((q["split"], q["kind"]) for q in queries)
    assert all(halves[(split, kind)] >= 30 for split in ("tune", "report") for kind in ("keyword", "question", "task"))
