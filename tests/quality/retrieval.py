"""search_notes on public human-judged paraphrase retrieval: recall@10 of full-text against hybrid.

    python -m tests.quality.retrieval [--data /work/data/quality] [--split report|tune] [--limit 100]
                                      [--weights 0.55] [--json out.json]

The SemEval STS files of a split (forum posts, Q&A answers and questions, headlines, captions, news...) become one
project memory of about 10k notes, one per distinct sentence. Each query is the second sentence of a pair the
annotators scored >= 4 of 5; its relevant note is the first sentence, and the query's own note is left out of the
ranking. Asked with search_notes (limit 10), once by keywords (`fulltext`) and once with semantic: true (`hybrid`,
for each vector weight given). Reported for all queries and for the reworded ones (the two sentences share less
than half their words: the same thing said in other words, which is what keywords miss). Sentences of low-scored
pairs share many words with their partner and stay in as distractors.
Tune the weight on `tune` (2012-2014), report on `report` (2015-2016).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from notewell.domain import hybrid
from notewell.domain.model import NoteType
from tests.quality.harness import DEFAULT_DATA, fresh_services, read_jsonl

K = 10
TITLE_WORDS = 8
REWORDED_OVERLAP = 0.5
PROJECT = "memory"


def title_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + (" …" if len(words) > TITLE_WORDS else "")


def run(data: Path, split: str, limit: int | None, weights: list[float]) -> dict[str, Any]:
    sets = read_jsonl(data / "retrieval.jsonl", split=split, sets=None, limit=None)
    modes = ["fulltext", *(f"hybrid@{w}" for w in weights)]
    groups: dict[str, dict[str, int]] = {}
    answered_by: dict[str, set[str]] = {mode: set() for mode in modes}
    started = time.perf_counter()

    def count(group: str, mode: str, hit: bool) -> None:
        row = groups.setdefault(group, {"queries": 0, **dict.fromkeys(modes, 0)})
        row[mode] += int(hit)

    with fresh_services("local") as (services, principal):
        doc_of: dict[str, str] = {}
        for record in sets:
            for doc in record["docs"]:
                view = services.notes.create(
                    principal, PROJECT, title=title_of(doc["text"]), body=doc["text"], type=NoteType.NOTE
                )
                doc_of[view.note.id] = f"{record['set']}/{doc['id']}"
        print(f"  {len(doc_of)} notes written, {time.perf_counter() - started:.0f} s", file=sys.stderr)
        for record in sets:
            queries = record["queries"][:limit] if limit else record["queries"]
            for query in queries:
                relevant = {f"{record['set']}/{d}" for d in query["relevant"]}
                excluded = {f"{record['set']}/{d}" for d in query["exclude"]}
                in_groups = ["all", record["set"]] + (["reworded"] if query["overlap"] < REWORDED_OVERLAP else [])
                for group in in_groups:
                    groups.setdefault(group, {"queries": 0, **dict.fromkeys(modes, 0)})["queries"] += 1
                for mode in modes:
                    semantic = mode != "fulltext"
                    if semantic:
                        hybrid.VECTOR_WEIGHT = float(mode.split("@")[1])
                    outcome = services.search.run(principal, PROJECT, query["question"], semantic=semantic,
                                                  limit=K + len(excluded))  # fmt: skip
                    answered_by[mode].add(outcome.mode.value)
                    ranked = [doc_of[h.note.id] for h in outcome.hits if doc_of[h.note.id] not in excluded][:K]
                    for group in in_groups:
                        count(group, mode, bool(relevant & set(ranked)))
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
    parser.add_argument("--weights", default=str(hybrid.VECTOR_WEIGHT), help="Vector weights to try, comma-separated.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args.data, args.split, args.limit, [float(w) for w in args.weights.split(",")])
    recall = result["recall_at_10"]
    modes = [m for m in recall["all"] if m != "queries"]
    print(f"search_notes recall@{K}, split {result['split']}: one project of {result['notes']} notes")
    print(f"  {'queries':30} {'n':>6} " + " ".join(f"{m:>12}" for m in modes) + "   best gain")
    order = ["all", "reworded", *sorted(g for g in recall if g not in ("all", "reworded"))]
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
