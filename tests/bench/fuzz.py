"""The schema-driven fuzz run at length (`make fuzz`): many more generated calls than `make test` makes.

    python -m tests.bench.fuzz [--examples N] [--stores sqlite,dynamodb] [--seed 0]

Drives every tool that tools/list advertises, and resources/read of notewell:// URIs, through the real MCP client
against the real app on each store (DynamoDB under moto), with the generator and the checks of tests/support/fuzz.py.
Prints, per store, how many calls it made, per tool and per outcome, and what it found; exits 1 on a finding.
By default 5,000 generated calls on SQLite and 2,000 on DynamoDB (moto answers about 5x slower).
A fixed seed makes a run reproducible; pass another to explore further.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from tests.support import fuzz

if TYPE_CHECKING:
    from notewell.ports import Store

DEFAULT_EXAMPLES = {"sqlite": 5_000, "dynamodb": 2_000}


def run(store_kind: str, examples: int, run_seed: int) -> bool:
    """One fuzz run on a fresh store; True when it found nothing."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        store: Store
        if store_kind == "sqlite":
            store = SqliteStore(Path(tmp) / "notewell.db")
            stack.callback(store.close)
        else:
            from tests.support.dynamo import dynamodb_store

            store = stack.enter_context(dynamodb_store())
        services = bootstrap(Settings(data_dir=Path(tmp)), store=store)
        started = time.perf_counter()
        finding: BaseException | None = None
        with fuzz.session(services) as session:

            @seed(run_seed)
            @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
            @given(st.data())
            def one_call(data: st.DataObject) -> None:
                session.step(data)

            try:
                one_call()
            except AssertionError as exc:
                finding = exc
            tally = session.tally
        elapsed = time.perf_counter() - started
    made = f"{tally.calls:,} tool calls and {tally.reads:,} resource reads"
    print(f"\n[{store_kind}] seed {run_seed}: {made} in {elapsed:.0f} s")
    print("  per tool: " + ", ".join(f"{name} {count}" for name, count in sorted(tally.by_tool.items())))
    print("  outcomes: " + ", ".join(f"{label} {count}" for label, count in tally.outcomes.most_common()))
    if finding is None:
        print("  found: nothing (no 5xx, no JSON-RPC error, no hang; every error a 4xx {status, code, message})")
        return True
    print(f"  FOUND: {finding}")
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=None, help="generated calls per store")
    parser.add_argument("--stores", default="sqlite,dynamodb", help="comma-separated: sqlite, dynamodb")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    stores = [kind.strip() for kind in args.stores.split(",") if kind.strip()]
    results = [run(kind, args.examples or DEFAULT_EXAMPLES.get(kind, 2_000), args.seed) for kind in stores]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
