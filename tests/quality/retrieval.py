"""search_notes on public human-judged paraphrase retrieval: recall@10 of full-text against hybrid.

    python -m tests.quality.retrieval [--data /work/data/quality] [--split report|tune] [--limit 100]
                                      [--weights 0.55] [--json out.json]

Each set (one SemEval STS file: forum posts, Q&A answers, questions, headlines, captions...) becomes one project
whose notes are the set's distinct sentences. Each query is the second sentence of a pair the annotators scored
>= 4 of 5; its relevant note is the first sentence, and the query's own note is left out of the ranking. Asked
with search_notes (limit 10), once by keywords (`fulltext`) and once with semantic: true (`hybrid`, for each
vector weight given). Sentences of low-scored pairs share many words with their partner: the hard distractors.
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


def title_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + (" …" if len(words) > TITLE_WORDS else "")


def run(data: Path, split: str, limit: int | None, weights: list[float]) -> dict[str, Any]:
    sets = read_jsonl(data / "retrieval.jsonl", split=split, sets=None, limit=None)
    modes = ["fulltext", *(f"hybrid@{w}" for w in weights)]
    per_set: dict[str, dict[str, float]] = {}
    hits: dict[str, int] = {mode: 0 for mode in modes}
    answered_by: dict[str, set[str]] = {mode: set() for mode in modes}
    asked = notes_written = 0
    started = time.perf_counter()
    with fresh_services("local") as (services, principal):
        for record in sets:
            project = record["set"]
            note_of: dict[str, str] = {}
            for doc in record["docs"]:
                view = services.notes.create(
                    principal, project, title=title_of(doc["text"]), body=doc["text"], type=NoteType.NOTE
                )
                note_of[view.note.id] = doc["id"]
                notes_written += 1
            queries = record["queries"][:limit] if limit else record["queries"]
            set_hits = {mode: 0 for mode in modes}
            for query in queries:
                relevant, excluded = set(query["relevant"]), set(query["exclude"])
                for mode in modes:
                    semantic = mode != "fulltext"
                    if semantic:
                        hybrid.VECTOR_WEIGHT = float(mode.split("@")[1])
                    outcome = services.search.run(principal, project, query["question"], semantic=semantic,
                                                  limit=K + len(excluded))  # fmt: skip
                    answered_by[mode].add(outcome.mode.value)
                    ranked = [note_of[h.note.id] for h in outcome.hits if note_of[h.note.id] not in excluded][:K]
                    if relevant & set(ranked):
                        set_hits[mode] += 1
            asked += len(queries)
            for mode in modes:
                hits[mode] += set_hits[mode]
            per_set[project] = {"queries": len(queries), **{m: round(set_hits[m] / len(queries), 4) for m in modes}}
            print(f"  {project}: {len(record['docs'])} notes, {len(queries)} queries, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip
    return {
        "split": split, "queries": asked, "notes": notes_written, "sets": per_set,
        "recall_at_10": {mode: round(hits[mode] / asked, 4) if asked else None for mode in modes},
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
    print(f"search_notes recall@{K}, split {result['split']}: {result['queries']} queries over {result['notes']} notes")
    modes = list(result["recall_at_10"])
    print(f"  {'set':30} {'queries':>7} " + " ".join(f"{m:>12}" for m in modes))
    for name, row in result["sets"].items():
        print(f"  {name:30} {row['queries']:>7} " + " ".join(f"{row[m]:>12.3f}" for m in modes))
    base = result["recall_at_10"]["fulltext"]
    for mode, value in result["recall_at_10"].items():
        gain = "" if mode == "fulltext" or value is None else f"  ({100 * (value - base):+.1f} points)"
        print(f"  {mode:14} {value:.3f}  answered by {', '.join(result['answered_by'][mode])}{gain}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
