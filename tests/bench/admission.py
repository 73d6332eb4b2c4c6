"""What remember's verdict costs as notes grow: admit() against 8 candidates of 2 KB, 20 KB and 100 KB.

    python -m tests.bench.admission [--rounds 7] [--json out.json]

The candidates are long handoff-like notes made of distinct coding sentences; the new content restates, changes or
elaborates one sentence buried in each. Two directions are timed: a short new note against 8 long notes, and a long
new note (the same sizes) against 8 short ones. Rounds alternate the sizes, so each size's p50 comes from the same
minutes. The figure that matters is the ratio of 100 KB to 2 KB: a window reads only the sentences that share words
with the other text, so the cost should not follow the length.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from notewell.domain.admission import admit
from notewell.domain.model import Note

SIZES = (2_000, 20_000, 100_000)
CANDIDATES = 8
SUBJECTS = ("billing worker", "search index", "upload service", "auth gateway", "ledger job", "export queue",
            "mobile API", "ingest cluster", "session store", "webhook relay")  # fmt: skip
VALUES = ("Redis", "Postgres 16", "30 seconds", "512 MiB", "us-east-1", "`max_connections`", "v2.3.1", "staging")


def sentence(rng: random.Random, number: int) -> str:
    subject = rng.choice(SUBJECTS)
    return f"The {subject} {number} uses {rng.choice(VALUES)} for step {number}, owned by team {number % 17}."


def long_note(rng: random.Random, size: int, buried: str) -> str:
    parts: list[str] = []
    number = 0
    while sum(len(p) + 1 for p in parts) < size:
        parts.append(sentence(rng, number))
        number += 1
    parts.insert(len(parts) // 2, buried)
    return " ".join(parts)[: size + len(buried)]


def note(index: int, body: str) -> Note:
    return Note(
        id=f"n_{index:026d}", workspace_id="w", project_id="p", title=body[:60], body=body, version=1,
        created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z", author="bench", write_id="w",
    )  # fmt: skip


def timings(rounds: int) -> dict[str, dict[int, list[float]]]:
    rng = random.Random(7)
    contents = [
        ("Retries of the payment client are capped at 3.", "Retries of the payment client are capped at 5."),
        ("The nightly export runs at 02:00 UTC.", "The nightly export runs at 02:00 UTC and writes to S3."),
        ("Webhooks are verified with the signing secret.", "Webhooks are verified with the signing secret."),
    ]
    found: dict[str, dict[int, list[float]]] = {"short new, long notes": {}, "long new, short notes": {}}
    for _ in range(rounds):
        for size in SIZES:
            for old, new in contents:
                longs = [note(i, long_note(rng, size, old)) for i in range(CANDIDATES)]
                started = time.perf_counter()
                admit(new, longs)
                found["short new, long notes"].setdefault(size, []).append(time.perf_counter() - started)
                shorts = [note(i, old if i == 0 else sentence(rng, i)) for i in range(CANDIDATES)]
                content = long_note(rng, size, new)
                started = time.perf_counter()
                admit(content, shorts)
                found["long new, short notes"].setdefault(size, []).append(time.perf_counter() - started)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    admit("warm up the vocabulary and the caches.", [note(0, "warm up the vocabulary.")])
    found = timings(args.rounds)
    document: dict[str, dict[str, float]] = {}
    print(f"admit() against {CANDIDATES} candidates, p50 ms of {args.rounds * 3} calls per size")
    for direction, by_size in found.items():
        p50 = {size: statistics.median(times) * 1000 for size, times in by_size.items()}
        document[direction] = {str(size): round(ms, 2) for size, ms in p50.items()}
        cells = "  ".join(f"{size // 1000:>4} KB {ms:7.2f}" for size, ms in p50.items())
        print(f"  {direction:24} {cells}   100 KB / 2 KB = {p50[SIZES[-1]] / p50[SIZES[0]]:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
