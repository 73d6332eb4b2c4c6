"""search_notes on retrieval sets kept apart from the code: recall@10 of each leg alone, of FTS5's own order, and fused.

    python -m tests.quality.retrieval [--sets coding,madial-en,sts] [--split report|tune] [--limit 100]
                                      [--data /work/data/quality] [--embedder local|hash|bedrock]
                                      [--weights table|0.5,rank] [--entity-weights 0.2] [--json out.json]

Sets (tests/quality/README.md says where each comes from):
  coding     tests/quality/coding_retrieval.jsonl: 560 queries an agent types into search_notes (keywords, questions,
             and what it is doing when it searches) over the 300-note project of orientation_project.jsonl, each
             with the notes that answer it; the project is loaded with the import service, as `notewell import`
             loads an export (and the run says how many notes were left without a vector).
  madial-en  MADial-Bench's memory archive (160 dated life events) as one project; each query is a dialogue up to
             the turn where the assistant should bring memories up (its last 500 characters), its relevant notes
             the memories annotators linked to that turn.
  sts        the SemEval STS files of a split, one project of about 10k sentences; each query is the second
             sentence of a pair scored >= 4 of 5, its relevant note the first (its own note is left out).
Each set is loaded into a store of its own, so FTS5's statistics are the set's alone. Each query is asked of:
  keyword    search_notes by keywords (the project-scoped BM25 of the full-text index)
  fts5       FTS5's own order for the same words: bm25() with the index's column weights, over the project's notes
  vector     the vector leg alone: the project's nearest notes to the query's vector
  hybrid     search_notes with semantic: true, with the model's weights from the table (domain/calibration.py);
             `--weights 0.5,rank` tries others instead (`hybrid@V/E`: vector weight V, entity weight E; `rank`:
             fused by rank, as a model without weights is)
recall@10 is the share of a query's relevant notes in its top 10, averaged; `pool` is the median number of
distinct notes the two legs proposed to the fusion. Choose on `tune` (a hash of the query id for coding and MADial,
2012-2014 for STS); `report` is read once, at the end, one command per set, and never to choose.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from notewell.adapters.sqlite import BM25_WEIGHTS, SqliteStore, match_expression
from notewell.bootstrap import Services
from notewell.config import EmbedderChoice
from notewell.domain import calibration
from notewell.domain.calibration import HybridWeights
from notewell.domain.model import NoteType, Principal
from tests.quality.harness import DEFAULT_DATA, EMBEDDERS, fresh_services, read_jsonl

K = 10
TITLE_WORDS = 8
REWORDED_OVERLAP = 0.5
QUERY_CHARS = 500  # a dialogue as a query: its last this many characters (search_notes takes 500 at most)
CODING_PROJECT = Path(__file__).with_name("orientation_project.jsonl")
CODING_QUERIES = Path(__file__).with_name("coding_retrieval.jsonl")
SETS = ("coding", "madial-en", "sts")
LEGS = ("keyword", "fts5", "vector")
_FTS5_ORDER = f"""SELECT n.id FROM notes_fts JOIN notes AS n ON n.seq = notes_fts.rowid
    WHERE notes_fts MATCH :match AND n.workspace_id = :workspace AND n.project_id = :project AND n.deleted_at IS NULL
    ORDER BY bm25(notes_fts, {BM25_WEIGHTS}), n.id LIMIT :limit"""


def title_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + (" …" if len(words) > TITLE_WORDS else "")


@contextmanager
def weighing(model_id: str, weights: HybridWeights | None) -> Iterator[None]:
    """Search with `weights` for the model (None: by rank) while inside, through its entry of the table."""
    table = calibration.CALIBRATIONS
    entry = table.get(model_id)
    if entry is None and weights is not None:
        raise SystemExit(f"{model_id} has no entry yet: calibrate it first (python -m tests.quality.calibrate).")
    calibration.CALIBRATIONS = {**table, model_id: replace(entry, hybrid=weights)} if entry is not None else table
    try:
        yield
    finally:
        calibration.CALIBRATIONS = table


def mode_weights(mode: str) -> HybridWeights | None:
    """`hybrid@V/E` -> its weights; `rank` -> None."""
    if mode == "rank":
        return None
    vector, entity = mode.split("@")[1].split("/")
    return HybridWeights(vector=float(vector), entity=float(entity))


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    relevant: frozenset[str]  # note ids
    groups: tuple[str, ...]  # the rows of the report it counts in
    excluded: frozenset[str] = frozenset()


@dataclass
class Loaded:
    """One set in its own store: the project, its queries, and how many notes were left without a vector."""

    project: str
    queries: list[Query]
    notes: int
    without_vectors: int


@dataclass
class Tally:
    queries: int = 0
    recall: dict[str, float] = field(default_factory=dict)
    pools: list[int] = field(default_factory=list)


def load_coding(services: Services, principal: Principal, split: str, limit: int | None) -> Loaded:
    lines = CODING_PROJECT.read_text(encoding="utf-8").splitlines()
    report = services.portability.import_file(principal, "polar-dispatch", lines)
    rows = [json.loads(line) for line in CODING_QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [r for r in rows if r["split"] == split][:limit]
    queries = [
        Query(r["id"], r["query"], frozenset(r["relevant"]), ("all coding", f"coding {r['kind']}")) for r in chosen
    ]
    backlog = services.meaning.backlog() if services.meaning is not None else report.notes_written
    return Loaded("polar-dispatch", queries, report.notes_written, backlog)


def load_converted(
    services: Services, principal: Principal, data: Path, split: str, name: str, limit: int | None
) -> Loaded:
    records = read_jsonl(data / "retrieval.jsonl", split=split, sets=None, limit=None)
    records = [r for r in records if r["set"] == name or (name == "sts" and r["set"].startswith("sts-"))]
    if not records:
        raise SystemExit(f"no {name} records of the {split} split in {data / 'retrieval.jsonl'}")
    project = records[0]["project"]
    queries: list[Query] = []
    notes = 0
    for record in records:
        note_of: dict[str, str] = {}
        for doc in record["docs"]:
            view = services.notes.create(
                principal, project, title=title_of(doc["text"]), body=doc["text"], type=NoteType.NOTE
            )
            note_of[doc["id"]] = view.note.id
        notes += len(note_of)
        for query in record["queries"][:limit]:
            overlap = query.get("overlap")
            groups = (f"all {project}", record["set"]) + (
                ("reworded sts",) if overlap is not None and overlap < REWORDED_OVERLAP else ()
            )
            queries.append(Query(
                f"{record['set']}/{query['id']}", query["question"][-QUERY_CHARS:],
                frozenset(note_of[d] for d in query["relevant"]), groups,
                frozenset(note_of[d] for d in query["exclude"]),
            ))  # fmt: skip
    backlog = services.meaning.backlog() if services.meaning is not None else notes
    return Loaded(project, queries, notes, backlog)


def legs_ranked(services: Services, principal: Principal, project: str, query: Query) -> dict[str, list[str]]:
    """The note ids each leg alone ranks first for `query` (K beyond its excluded notes)."""
    limit = K + len(query.excluded)
    store, meaning = services.deps.store, services.meaning
    assert isinstance(store, SqliteStore) and meaning is not None
    target = store.get_project(principal.workspace_id, project)
    assert target is not None
    keyword = services.search.run(principal, project, query.text, limit=limit)
    match = match_expression(query.text)
    params = {"match": match, "workspace": principal.workspace_id, "project": target.id, "limit": limit}
    fts5 = [row[0] for row in store.connection().execute(_FTS5_ORDER, params)] if match else []
    nearest = meaning.nearest(principal.workspace_id, target.id, meaning.embed_one(query.text), limit)
    return {"keyword": [h.note.id for h in keyword.hits], "fts5": fts5, "vector": [i for i, _ in nearest]}


def run_set(
    name: str, data: Path, split: str, limit: int | None, hybrid_modes: list[str], embedder: EmbedderChoice
) -> dict[str, Any]:
    started = time.perf_counter()
    tallies: dict[str, Tally] = {}
    with fresh_services(embedder) as (services, principal):
        assert services.meaning is not None, "a retrieval run needs an embedding model"
        if name == "coding":
            loaded = load_coding(services, principal, split, limit)
        else:
            loaded = load_converted(services, principal, data, split, name, limit)
        print(f"  {name}: {loaded.notes} notes loaded ({loaded.without_vectors} without a vector), "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip
        model_id = services.meaning.model_id
        for query in loaded.queries:
            ranked = legs_ranked(services, principal, loaded.project, query)
            pool = None
            for mode in hybrid_modes:
                weights = calibration.hybrid_weights_of(model_id) if mode == "hybrid" else mode_weights(mode)
                with weighing(model_id, weights):
                    outcome = services.search.run(
                        principal, loaded.project, query.text, semantic=True, limit=K + len(query.excluded)
                    )
                ranked[mode] = [h.note.id for h in outcome.hits]
                pool = outcome.pool if pool is None else pool
            for group in query.groups:
                tally = tallies.setdefault(group, Tally())
                tally.queries += 1
                tally.pools.append(pool or 0)
                for mode, ids in ranked.items():
                    top = [i for i in ids if i not in query.excluded][:K]
                    tally.recall[mode] = tally.recall.get(mode, 0.0) + len(query.relevant & set(top)) / len(
                        query.relevant
                    )
    print(f"  {name}: {len(loaded.queries)} queries, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return {
        "notes": loaded.notes, "without_vectors": loaded.without_vectors,
        "groups": {
            group: {
                "queries": t.queries, "pool_p50": statistics.median(t.pools),
                **{mode: round(total / t.queries, 4) for mode, total in t.recall.items()},
            }
            for group, t in tallies.items()
        },
    }  # fmt: skip


def run(
    data: Path, split: str, limit: int | None, sets: list[str], hybrid_modes: list[str], embedder: EmbedderChoice
) -> dict[str, Any]:
    return {
        "split": split, "modes": [*LEGS, *hybrid_modes],
        "sets": {name: run_set(name, data, split, limit, hybrid_modes, embedder) for name in sets},
    }  # fmt: skip


def report(result: dict[str, Any]) -> str:
    modes: list[str] = result["modes"]
    fused = [m for m in modes if m not in LEGS]
    lines = [f"search_notes recall@{K}, split {result['split']}"]
    header = f"  {'queries':26} {'n':>5} " + " ".join(f"{m:>12}" for m in modes) + f" {'pool':>6}   gain over keyword"
    for name, one in result["sets"].items():
        lines += ["", f"{name}: {one['notes']} notes, {one['without_vectors']} without a vector", header]
        for group, row in sorted(one["groups"].items(), key=lambda item: (not item[0].startswith("all"), item[0])):
            gain = max(row[m] for m in fused) - row["keyword"] if fused else 0.0
            cells = " ".join(f"{row[m]:>12.3f}" for m in modes)
            lines.append(f"  {group:26} {row['queries']:>5} {cells} {row['pool_p50']:>6.0f}   {100 * gain:+.1f} pts")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", default="coding,madial-en", help=f"Comma-separated, of {', '.join(SETS)}.")
    parser.add_argument("--split", choices=["tune", "report"], default="report")
    parser.add_argument("--limit", type=int, default=None, help="At most this many queries per set (per STS file).")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="local")
    parser.add_argument(
        "--weights", default="table", help="'table' (the model's entry), or vector weights to try, comma-separated; "
        "'rank' fuses by rank."
    )  # fmt: skip
    parser.add_argument("--entity-weights", default="0.2", help="Entity weights to try with --weights.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    if unknown := set(sets) - set(SETS):
        parser.error(f"unknown sets: {', '.join(sorted(unknown))}")
    weights = [w.strip() for w in args.weights.split(",") if w.strip()]
    entity = [float(e) for e in args.entity_weights.split(",")]
    hybrid_modes = (
        ["hybrid"]
        if weights == ["table"]
        else [*(f"hybrid@{w}/{e}" for w in weights if w != "rank" for e in entity), *(["rank"] * ("rank" in weights))]
    )
    result = run(args.data, args.split, args.limit, sets, hybrid_modes, args.embedder)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
