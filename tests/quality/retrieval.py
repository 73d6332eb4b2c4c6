"""search_notes on public human-judged retrieval sets: recall@10 of full-text against hybrid.

    python -m tests.quality.retrieval [--data /work/data/quality] [--split report|tune] [--limit 100]
                                      [--embedder local|hash|bedrock] [--weights 0.85,rank] [--entity-weights 0.2]
                                      [--json out.json]

Conversational memory: MADial-Bench's memory archive (160 dated events of several people's lives) is one project;
each query is a dialogue up to the turn where the assistant should bring memories up, and its relevant notes are
the memories annotators linked to that turn. Paraphrase retrieval: the SemEval STS files of a split (forum posts,
Q&A answers and questions, headlines, captions, news...) become one project of about 10k notes, one per distinct
sentence; each query is the second sentence of a pair the annotators scored >= 4 of 5, its relevant note the first
sentence (the query's own note is left out of the ranking; sentences of low-scored pairs stay in as distractors).
Reported also for the reworded STS queries (the two sentences share less than half their words).
Each query is asked with search_notes (limit 10), once by keywords (`fulltext`) and once with semantic: true
(`hybrid`, for each vector weight given); recall@10 is the share of its relevant notes in the top 10, averaged.
Tune the weights on `tune` (STS 2012-2014, half the dialogues), report on `report` (STS 2015-2016, the other half):
a mode `hybrid@V/E` has vector weight V and entity weight E, `rank` fuses the legs by rank, as for a model whose
weights were never tuned (domain/hybrid.py). The weights tried are put in the embedding model's entry of the table
(domain/calibration.py) for the run, so a model is tuned once its admission thresholds are there
(tests/quality/calibrate.py); the best pair on `tune` goes into its entry as `hybrid=HybridWeights(...)`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from notewell.config import EmbedderChoice
from notewell.domain import calibration
from notewell.domain.calibration import HybridWeights
from notewell.domain.model import NoteType
from tests.quality.harness import DEFAULT_DATA, EMBEDDERS, fresh_services, read_jsonl

K = 10
TITLE_WORDS = 8
REWORDED_OVERLAP = 0.5
QUERY_CHARS = 500  # a dialogue as a query: its last this many characters (search_notes takes 500 at most)


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


def run(
    data: Path, split: str, limit: int | None, weights: list[str], only: set[str] | None = None,
    entity_weights: tuple[float, ...] = (0.2,), embedder: EmbedderChoice = "local",
) -> dict[str, Any]:  # fmt: skip
    sets = read_jsonl(data / "retrieval.jsonl", split=split, sets=only, limit=None)
    tried = [w for w in weights if w != "rank"]
    modes = ["fulltext", *(f"hybrid@{w}/{e}" for w in tried for e in entity_weights), *(["rank"] * ("rank" in weights))]
    groups: dict[str, dict[str, float]] = {}
    answered_by: dict[str, set[str]] = {mode: set() for mode in modes}
    started = time.perf_counter()

    def count(group: str, mode: str, recall: float) -> None:
        row = groups.setdefault(group, {"queries": 0, **dict.fromkeys(modes, 0.0)})
        row[mode] += recall

    with fresh_services(embedder) as (services, principal):
        assert services.meaning is not None, "a retrieval run needs an embedding model"
        model_id = services.meaning.model_id
        doc_of: dict[str, str] = {}
        for record in sets:
            for doc in record["docs"]:
                view = services.notes.create(
                    principal, record["project"], title=title_of(doc["text"]), body=doc["text"], type=NoteType.NOTE
                )
                doc_of[view.note.id] = f"{record['set']}/{doc['id']}"
        print(f"  {len(doc_of)} notes written, {time.perf_counter() - started:.0f} s", file=sys.stderr)
        for record in sets:
            queries = record["queries"][:limit] if limit else record["queries"]
            for query in queries:
                relevant = {f"{record['set']}/{d}" for d in query["relevant"]}
                excluded = {f"{record['set']}/{d}" for d in query["exclude"]}
                overlap = query.get("overlap")
                reworded = overlap is not None and overlap < REWORDED_OVERLAP
                in_groups = [f"all {record['project']}", record["set"]] + (["reworded sts"] if reworded else [])
                for group in in_groups:
                    groups.setdefault(group, {"queries": 0, **dict.fromkeys(modes, 0.0)})["queries"] += 1
                for mode in modes:
                    semantic = mode != "fulltext"
                    with weighing(model_id, mode_weights(mode) if semantic else None):
                        outcome = services.search.run(principal, record["project"], query["question"][-QUERY_CHARS:],
                                                      semantic=semantic, limit=K + len(excluded))  # fmt: skip
                    answered_by[mode].add(outcome.mode.value)
                    ranked = [doc_of[h.note.id] for h in outcome.hits if doc_of[h.note.id] not in excluded][:K]
                    for group in in_groups:  # recall: the share of the query's relevant notes in its top 10
                        count(group, mode, len(relevant & set(ranked)) / len(relevant))
            print(f"  {record['set']}: {len(queries)} queries, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return {
        "split": split, "notes": len(doc_of),
        "recall_at_10": {
            group: {"queries": row["queries"], **{m: round(row[m] / row["queries"], 4) for m in modes}}
            for group, row in groups.items() if row["queries"]
        },
        "answered_by": {mode: sorted(v) for mode, v in answered_by.items()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=["tune", "report"], default="report")
    parser.add_argument("--limit", type=int, default=None, help="At most this many queries per set.")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="local")
    parser.add_argument(
        "--weights", default="0.85", help="Vector weights to try, comma-separated; 'rank' fuses by rank."
    )
    parser.add_argument("--entity-weights", default="0.2", help="Entity weights to try, comma-separated.")
    parser.add_argument("--sets", default="", help="Comma-separated set names (default: all).")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    only = {s for s in args.sets.split(",") if s} or None
    entity_weights = tuple(float(w) for w in args.entity_weights.split(","))
    weights = [w.strip() for w in args.weights.split(",") if w.strip()]
    result = run(args.data, args.split, args.limit, weights, only, entity_weights, args.embedder)
    recall = result["recall_at_10"]
    modes = [m for m in next(iter(recall.values())) if m != "queries"]
    print(f"search_notes recall@{K}, split {result['split']}: {result['notes']} notes")
    print(f"  {'queries':30} {'n':>6} " + " ".join(f"{m:>12}" for m in modes) + "   best gain")
    firsts = [g for g in ("all madial", "all sts", "reworded sts") if g in recall]
    order = [*firsts, *sorted(g for g in recall if g not in firsts)]
    for group in order:
        row = recall[group]
        gain = max(row[m] for m in modes[1:]) - row["fulltext"] if len(modes) > 1 else 0.0
        print(f"  {group:30} {row['queries']:>6} " + " ".join(f"{row[m]:>12.3f}" for m in modes)
              + f"   {100 * gain:+.1f} pts")  # fmt: skip
    print("  answered by: " + "; ".join(f"{m} {', '.join(v)}" for m, v in result["answered_by"].items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
