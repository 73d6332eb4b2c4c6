"""get_context and get_changes_since through the core (services in-process) on the SQLite store, N seeded notes.

get_context: balanced with a query (the way an agent starts a task: the target), and balanced without one, timed
in interleaved rounds. Every source it reads is bounded (services/context.py), so its time should hardly move
with N; the query's full-text lookup is the part that may.

get_changes_since: the whole feed of N changes (every seeded note, oldest first) drained page by page from the
start, with limit 50 (the default, maxTokens 4000) and limit 200 (maxTokens 32000, the most a page may carry):
pages, seconds, changes/s. The services run with feed_horizon_seconds=0, so every seeded change is past the
horizon and served at once (a real feed serves changes once they are a few seconds old).

Each size runs on a fresh data dir of its own; no server is started.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from typing import TYPE_CHECKING, Any

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.packing import Detail
from notewell.services.changes import MAX_MAX_TOKENS
from tests.bench.common import PROJECT, CpuWatch, cpu_note, log, new_principal, seed, table, timed_rounds
from tests.bench.stats import summarize

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from notewell.domain.model import Principal
    from tests.bench.corpus import Corpus

CONTEXT_KINDS = ("balanced_query", "balanced")
CONTEXT_LABELS = {"balanced_query": "balanced, with a query", "balanced": "balanced, no query"}
# (limit, maxTokens) of each drain of the feed.
FEED_PAGES = ((50, 4_000), (200, MAX_MAX_TOKENS))
QUERY_STREAM = 50  # corpus stream of the get_context queries (distinct from other sections')


def context_call(services: Services, principal: Principal, spent: list[int]) -> Callable[[str], object]:
    def call(query: str) -> object:
        result = services.context.get_context(principal, PROJECT, query=query or None, detail=Detail.BALANCED)
        spent.append(result.packed.spent)
        return result

    return call


def bench_context(
    services: Services, principal: Principal, corpus: Corpus, calls: int, warmup: int, rounds: int
) -> dict[str, Any]:
    queries = corpus.queries(calls + warmup, stream=QUERY_STREAM)
    spent: dict[str, list[int]] = {kind: [] for kind in CONTEXT_KINDS}
    calls_of = {kind: context_call(services, principal, spent[kind]) for kind in CONTEXT_KINDS}
    for query in queries[:warmup]:
        calls_of["balanced_query"](query)
        calls_of["balanced"]("")
    for values in spent.values():
        values.clear()
    watch = CpuWatch()
    timed = timed_rounds(
        {
            "balanced_query": (calls_of["balanced_query"], queries[warmup:]),
            "balanced": (calls_of["balanced"], [""] * calls),
        },
        rounds,
    )
    for kind in CONTEXT_KINDS:
        timed[kind]["median_spent_tokens"] = sorted(spent[kind])[len(spent[kind]) // 2] if spent[kind] else None
    timed["cpu_share"] = watch.shares()
    return timed


def profile_context(services: Services, principal: Principal, corpus: Corpus, calls: int, size: int) -> str:
    queries = corpus.queries(calls, stream=QUERY_STREAM + 1)
    profiler = cProfile.Profile()
    profiler.runcall(
        lambda: [services.context.get_context(principal, PROJECT, query=q, detail=Detail.BALANCED) for q in queries]
    )
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text).strip_dirs()
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(20)
    print(
        f"\n--- cProfile: core get_context balanced with a query, {calls} calls, {size:,} notes ---\n{text.getvalue()}"
    )
    return text.getvalue()


def drain_feed(services: Services, principal: Principal, limit: int, max_tokens: int, max_pages: int) -> dict[str, Any]:
    """Every change of the project from the start, page by page (at most `max_pages` pages)."""
    page_seconds: list[float] = []
    changes = 0
    cursor: str | None = None
    more = True
    started = time.perf_counter()
    while more and len(page_seconds) < max_pages:
        before = time.perf_counter()
        page = services.changes.since(principal, PROJECT, cursor=cursor, limit=limit, max_tokens=max_tokens)
        page_seconds.append(time.perf_counter() - before)
        changes += len(page.changes)
        cursor, more = page.cursor, page.has_more
    elapsed = time.perf_counter() - started
    summary = summarize(page_seconds)
    return {
        "limit": limit,
        "max_tokens": max_tokens,
        "pages": len(page_seconds),
        "changes": changes,
        "complete": not more,
        "seconds": round(elapsed, 3),
        "changes_per_s": round(changes / max(elapsed, 1e-9), 1),
        "changes_per_page": round(changes / max(len(page_seconds), 1), 1),
        "page_p50_ms": summary.get("p50_ms"),
        "page_p95_ms": summary.get("p95_ms"),
    }


def bench_reads(size: int, workdir: Path, corpus: Corpus, sections: Sequence[str], *, calls: int, warmup: int,
                rounds: int, profile: bool, profile_calls: int) -> dict[str, Any]:  # fmt: skip
    """Seed `size` notes on a fresh SQLite store, then time get_context ('context') and drain the change feed
    ('changes'), whichever `sections` name."""
    data_dir = workdir / "data"
    data_dir.mkdir(parents=True)
    result: dict[str, Any] = {"size": size}
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir, feed_horizon_seconds=0), store=store)
        principal = new_principal(services)
        log(f"get_context / get_changes_since, {size:,} notes: seeding through NoteService.create")
        _, result["seeding"] = seed(services, principal, corpus.notes(size))
        if "context" in sections:
            log(f"  get_context: {calls} calls of each kind in {rounds} interleaved rounds")
            result["context"] = bench_context(services, principal, corpus, calls, warmup, rounds)
            if profile:
                result["context_profile"] = profile_context(services, principal, corpus, profile_calls, size)
        if "changes" in sections:
            result["feed"] = []
            for limit, max_tokens in FEED_PAGES:
                log(f"  get_changes_since: draining {size:,} changes, limit {limit}, maxTokens {max_tokens}")
                result["feed"].append(drain_feed(services, principal, limit, max_tokens, size // 10 + 10))
    finally:
        store.close()
    return result


def report_reads(r: dict[str, Any]) -> str:
    out = [f"\n=== get_context and get_changes_since through the core, SQLite, {r['size']:,} seeded notes ==="]
    if "context" in r:
        timed = r["context"]
        out += [
            "get_context (budget 3,000 tokens at balanced)",
            table(
                ["kind", "n", "p50 ms", "p95 ms", "best round p50", "ops/s", "median spent tokens"],
                [
                    [label, t["n"], t["p50_ms"], t["p95_ms"], t["best_round_p50_ms"], t["ops_per_s"]]
                    + [t["median_spent_tokens"]]
                    for kind, label in CONTEXT_LABELS.items()
                    for t in [timed[kind]]
                ],
            ),
            cpu_note(timed["cpu_share"], server=False) + " during the calls",
        ]
    if "feed" in r:
        out += [
            f"get_changes_since: the whole feed of {r['size']:,} changes drained from the start, page by page",
            table(
                ["limit", "maxTokens", "pages", "changes", "complete", "s", "changes/s", "per page"]
                + ["page p50 ms", "page p95 ms"],
                [
                    [f["limit"], f["max_tokens"], f["pages"], f["changes"], "yes" if f["complete"] else "NO"]
                    + [f["seconds"], f["changes_per_s"], f["changes_per_page"], f["page_p50_ms"], f["page_p95_ms"]]
                    for f in r["feed"]
                ],
            ),
            "  (a page ends at `limit` changes or when the next change would pass maxTokens, whichever comes first)",
        ]
    return "\n".join(out)
