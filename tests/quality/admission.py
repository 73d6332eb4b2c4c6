"""remember's admission on public human-labelled pairs: what happens to the second sentence of each pair.

    python -m tests.quality.admission [--data /work/data/quality] [--split report|tune] [--embedder local|none]
                                      [--sets snli,qqp] [--limit 1000] [--json out.json]

Each pair gets its own project: remember(a), then remember(b), and b's status is counted by the pair's label:
  * contradiction (NLI) and related (same words, other meaning): absorbed = duplicate or updated. Target <= 5%.
  * paraphrase: flagged = conflict. Target <= 10%; recognised = duplicate or updated (the rest are stored anew).
Tune on `tune`, report on `report` (the converter splits by a hash of the pair id: tests/quality/data.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from notewell.config import EmbedderChoice
from notewell.services.memory import RememberRequest
from tests.quality.harness import DEFAULT_DATA, EMBEDDERS, fresh_services, percent, read_jsonl

STATUSES = ("created", "duplicate", "updated", "conflict")


def run(
    data: Path, split: str, embedder: EmbedderChoice, sets: set[str] | None, limit: int | None
) -> dict[str, Counter[str]]:
    pairs = read_jsonl(data / "pairs.jsonl", split=split, sets=sets, limit=limit)
    counts: dict[str, Counter[str]] = {}
    started = time.perf_counter()
    with fresh_services(embedder) as (services, principal):
        for number, pair in enumerate(pairs):
            project = f"pair-{number}"
            first = services.memory.remember(principal, RememberRequest(project, pair["a"]))
            if first.status.value != "created":  # cannot happen in an empty project; counted if it ever does
                counts.setdefault(f"{pair['set']}/{pair['label']}", Counter())["first-not-created"] += 1
                continue
            second = services.memory.remember(principal, RememberRequest(project, pair["b"]))
            counts.setdefault(f"{pair['set']}/{pair['label']}", Counter())[second.status.value] += 1
            if number % 500 == 499:
                print(f"  {number + 1}/{len(pairs)} pairs, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return counts


def report(counts: dict[str, Counter[str]], split: str, embedder: str) -> str:
    lines = [
        f"remember on public pairs, split {split}, embedder {embedder}",
        f"{'set/class':28} {'pairs':>6} " + " ".join(f"{s:>9}" for s in STATUSES) + f" {'absorbed':>9} {'flagged':>8}",
    ]
    for name in sorted(counts):
        c = counts[name]
        total = sum(c[s] for s in STATUSES)
        absorbed = percent(c["duplicate"] + c["updated"], total)
        flagged = percent(c["conflict"], total)
        lines.append(
            f"{name:28} {total:>6} " + " ".join(f"{c[s]:>9}" for s in STATUSES) + f" {absorbed:>9} {flagged:>8}"
        )
    lines.append("absorbed = duplicate + updated (target <= 5% for contradiction/related); flagged = conflict "
                 "(target <= 10% for paraphrase)")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=["tune", "report"], default="report")
    parser.add_argument("--embedder", choices=[*EMBEDDERS, "none"], default="local")
    parser.add_argument("--sets", default="", help="Comma-separated set names (default: all).")
    parser.add_argument("--limit", type=int, default=None, help="At most this many pairs per set.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the counts as JSON here.")
    args = parser.parse_args(argv)
    sets = {s for s in args.sets.split(",") if s} or None
    counts = run(args.data, args.split, args.embedder, sets, args.limit)
    print(report(counts, args.split, args.embedder))
    if args.json:
        args.json.write_text(json.dumps({k: dict(v) for k, v in counts.items()}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
