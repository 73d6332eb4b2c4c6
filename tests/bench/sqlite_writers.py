"""Write latency of one SQLite store under concurrent writers of one process (what `serve`'s worker threads are).

    python -m tests.bench.sqlite_writers [--threads 12] [--writes 150]

Each thread runs write transactions that hold the lock 2 ms (a real write's work, the GIL released). Printed: p50,
p99 and the slowest wait, with writers queued on the store's in-process lock (as shipped) and with that lock
bypassed, so SQLite's busy handler alone arbitrates: it retries the file lock after sleeps of up to 100 ms, so
some writers lose every round for seconds. Figures only: nothing here fails.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from notewell.adapters.sqlite import SqliteStore
from tests.bench.stats import percentile


class _NoQueue:
    """Stands in for the store's writer lock: every writer goes straight to SQLite's own locking."""

    def acquire(self, timeout: float = -1) -> bool:
        return True

    def release(self) -> None:
        return None


def run(threads: int, writes: int, *, queued: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as directory:
        store = SqliteStore(Path(directory) / "writers.db")
        if not queued:
            store._writer = _NoQueue()  # type: ignore[assignment]
        waits: list[float] = []

        def writer() -> None:
            for _ in range(writes):
                started = time.perf_counter()
                with store._transaction() as connection:
                    connection.execute("PRAGMA user_version")
                    time.sleep(0.002)
                waits.append(time.perf_counter() - started)

        workers = [threading.Thread(target=writer) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        store.close()
        return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--writes", type=int, default=150)
    args = parser.parse_args()
    for label, queued in (("queued (shipped)", True), ("busy handler only", False)):
        waits = sorted(w * 1000 for w in run(args.threads, args.writes, queued=queued))
        print(
            f"{label:<18} {args.threads} writers x {args.writes}: p50 {percentile(waits, 0.5):.1f} ms, "
            f"p99 {percentile(waits, 0.99):.1f} ms, slowest {max(waits):.1f} ms"
        )


if __name__ == "__main__":
    main()
