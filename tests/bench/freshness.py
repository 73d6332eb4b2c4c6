"""Change-feed freshness: how long after a write is acknowledged a follower sees it in get_changes_since.

    python -m tests.bench.freshness [--writes 40] [--stores sqlite,dynamodb]

On each store (SQLite in a temp dir; DynamoDB under moto), through the services with the real clock: 3 writer
threads each create and edit notes of one project (`--writes` each, a few ms apart) while 1 follower thread reads
the feed page by page with its cursor, as fast as it can. For every (note, version) the follower is served, the
time from the writer's acknowledgement to the read that served it. A note is served once at its newest change, so
a version overwritten before the follower got to it is never served: those are counted apart. At the end the
follower must hold every note at its last acknowledged version ("holds every acknowledged version: yes").
Figures only: nothing fails on speed. Bounded: the follower gives up 40 s after the last write.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.ports import SequencedFeed
from notewell.services.notes import NoteChanges
from tests.support.stores import open_store

if TYPE_CHECKING:
    from collections.abc import Sequence

WRITERS = 3
GIVE_UP_SECONDS = 40.0


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(kind: str, writes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, open_store(kind, Path(tmp)) as store:
        services = bootstrap(Settings(data_dir=Path(tmp)), store=store)
        workspace = services.auth.create_workspace("bench")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        acked: dict[tuple[str, int], float] = {}
        last_version: dict[str, int] = {}
        lock = threading.Lock()
        start = threading.Barrier(WRITERS + 1)
        writing = threading.Event()
        writing.set()

        def writer(seed: int) -> None:
            rng = random.Random(seed)
            mine: list[str] = []
            start.wait()
            for n in range(writes):
                if mine and rng.random() < 0.4:
                    note = services.notes.update(me, rng.choice(mine), NoteChanges(body=f"w{seed} edit {n}")).note
                else:
                    note = services.notes.create(me, "bench", title=f"w{seed} n{n}", body="claimed").note
                    mine.append(note.id)
                now = time.perf_counter()
                with lock:
                    acked[(note.id, note.version)] = now
                    last_version[note.id] = max(last_version.get(note.id, 0), note.version)
                time.sleep(rng.uniform(0.001, 0.01))

        served: dict[tuple[str, int], float] = {}
        held: dict[str, int] = {}
        pages = 0

        def follower() -> None:
            nonlocal pages
            cursor = services.changes.since(me, "bench").cursor
            start.wait()
            deadline = None
            while True:
                page = services.changes.since(me, "bench", cursor=cursor, limit=50)
                pages += 1
                now = time.perf_counter()
                for change in page.changes:
                    served[(change.note.id, change.note.version)] = now
                    held[change.note.id] = change.note.version
                cursor = page.cursor
                if not writing.is_set():
                    with lock:
                        if held == last_version:
                            return
                    deadline = deadline or now + GIVE_UP_SECONDS
                    if now > deadline:
                        return
                if not page.changes:
                    time.sleep(0.002)

        threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(WRITERS)]
        reader = threading.Thread(target=follower)
        began = time.perf_counter()
        for thread in [reader, *threads]:
            thread.start()
        for thread in threads:
            thread.join()
        writing.clear()
        reader.join()
        elapsed = time.perf_counter() - began
        lags = [(served[key] - acked[key]) * 1000 for key in served if key in acked]
        return {
            "store": kind,
            "sequenced": isinstance(store, SequencedFeed),
            "writes": len(acked),
            "served": len(lags),
            "overwritten_before_read": len(acked) - len(lags),
            "p50_ms": round(statistics.median(lags), 1) if lags else None,
            "p99_ms": round(percentile(lags, 0.99), 1) if lags else None,
            "max_ms": round(max(lags), 1) if lags else None,
            "pages": pages,
            "seconds": round(elapsed, 1),
            "holds_every_acknowledged_version": held == last_version,
        }


def report(result: dict[str, Any]) -> str:
    order = "commit sequence" if result["sequenced"] else "updatedAt + horizon"
    return (
        f"{result['store']:<9} ({order}): {result['writes']} writes by {WRITERS} writers, {result['served']} served "
        f"({result['overwritten_before_read']} overwritten before a read); ack -> visible p50 {result['p50_ms']} ms, "
        f"p99 {result['p99_ms']} ms, max {result['max_ms']} ms; {result['pages']} pages in {result['seconds']} s; "
        f"follower holds every acknowledged version: {'yes' if result['holds_every_acknowledged_version'] else 'NO'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=40, help="writes per writer (default 40)")
    parser.add_argument("--stores", default="sqlite,dynamodb")
    args = parser.parse_args(argv)
    print("== change-feed freshness: 3 writers, 1 follower, real clock ==", flush=True)
    results = [run(kind, args.writes) for kind in args.stores.split(",")]
    for result in results:
        print(report(result), flush=True)
    return 0 if all(r["holds_every_acknowledged_version"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
