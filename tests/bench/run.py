"""Notewell benchmarks on the SQLite store: the core, the MCP endpoint, throughput and memory.

    python -m tests.bench.run [--sizes 1000,10000] [--only serve,remember,context,changes,tokens,dynamodb]
                              [--dynamo-sizes 50,400,650] [--entities 200,1000,5000] [--quick]
                              [--out .bench/results.json] [--profile]

For each size: start `notewell serve` on a fresh data dir (its first key is read from its stdout), seed one
project with that many generated notes through the services, then measure
  1. the core (services called in-process): get_note, search_notes (and create_note, in the write phase);
  2. the MCP endpoint with the real MCP client over HTTP (mode 2026-07-28, a short legacy sample, and the same
     JSON-RPC posted without the MCP client, to split the added cost between server and client);
  3. calls/s the server sustains with N concurrent clients (get_note and search_notes alternately);
  4. the server's peak memory (VmHWM, with its parts) after that load;
  5. last, the writes (create_note through the core, the MCP client and its legacy mode), so that every read
     above sees exactly the seeded notes;
  6. remember through the core on a second fresh data dir seeded with the same notes (no server): new content,
     exact repeats and longer restatements, with the outcome statuses (tests/bench/remember.py); every size is
     seeded first and the calls timed in rounds alternating between the sizes (one size at a time with --profile);
  7. get_context (balanced, with and without a query) through the core, and 8. the whole change feed drained
     page by page with get_changes_since, on a third fresh data dir seeded with the same notes (tests/bench/reads.py).
Then, once: the token economy, get_context's answers against the whole memory for a generated knowledge graph of
200, 1,000 and 5,000 entities (tests/bench/tokens.py); and the DynamoDB store under moto, API requests per remember,
checkpoint, get_context and change-feed page as the project grows (tests/bench/dynamo_requests.py).
--only picks sections: serve (1-5), remember (6), context (7), changes (8), tokens, dynamodb.
Reads are timed in interleaved rounds; each phase also records how busy the rest of the machine was, since the
cores are shared. Figures only: nothing here fails on speed. Every loop is bounded; the server always stops.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import platform
import pstats
import random
import sqlite3
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from tests.bench.common import (
    PROJECT,
    CpuWatch,
    chunks,
    cpu_note,
    create_through_services,
    log,
    round_summary,
    seed,
    table,
    timed_rounds,
    unlimited,
)
from tests.bench.corpus import Corpus, NoteSpec
from tests.bench.dynamo_requests import DEFAULT_SIZES as DYNAMO_SIZES
from tests.bench.dynamo_requests import bench_dynamo, report_dynamo
from tests.bench.local_server import Served, serve
from tests.bench.reads import CONTEXT_KINDS, CONTEXT_LABELS, bench_reads, report_reads
from tests.bench.remember import KINDS as REMEMBER_KINDS
from tests.bench.remember import LABELS as REMEMBER_LABELS
from tests.bench.remember import bench_remember, bench_remember_sizes, remember_ratios, report_remember
from tests.bench.stats import summarize
from tests.bench.tokens import DEFAULT_ENTITY_COUNTS, bench_tokens, report_tokens

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from notewell.domain.model import Principal

MODERN = "2026-07-28"
LEGACY = "legacy"
RAW = "raw_http"
DEFAULT_OUT = Path(".bench/results.json")
TARGET_SEARCH_P50_MS = 20.0
TARGET_PEAK_MB = 150.0
TARGET_REMEMBER_P50_MS = 25.0
TARGET_CONTEXT_P50_MS = 25.0  # issue 11: get_context with a query, p50 at 10k notes
SECTIONS = ("serve", "remember", "context", "changes", "tokens", "dynamodb")
FLAT_RATIO = (0.8, 1.25)  # a 10k/1k ratio inside this band counts as flat
CLIENT_TIMEOUT_S = 60.0
LOAD_SETUP_TIMEOUT_S = 60.0
READ_OPS = ("get_note", "search_notes")
OPS = ("create_note", "get_note", "search_notes")


@dataclass(frozen=True)
class Plan:
    """How many calls of each kind; every loop in this module is bounded by these numbers."""

    rounds: int = 5  # reads are timed in this many interleaved rounds (get, search, get, search, ...)
    warmup: int = 20
    core_get: int = 2_000
    core_search: int = 500
    core_create: int = 500
    mcp_get: int = 300
    mcp_search: int = 300
    mcp_create: int = 150
    legacy_calls: int = 40
    raw_calls: int = 200
    load_clients: tuple[int, ...] = (4, 16)
    load_seconds: float = 10.0
    load_max_calls: int = 2_000
    profile_calls: int = 300
    remember_calls: int = 200  # per kind: new content, exact repeat, restatement
    context_calls: int = 300  # per kind: balanced with a query, balanced without

    @classmethod
    def quick(cls) -> Plan:
        return cls(
            rounds=3,
            warmup=5,
            core_get=300,
            core_search=90,
            core_create=90,
            mcp_get=60,
            mcp_search=60,
            mcp_create=30,
            legacy_calls=15,
            raw_calls=45,
            load_seconds=3.0,
            load_max_calls=400,
            profile_calls=100,
            remember_calls=45,
            context_calls=60,
        )


# ----- measuring -------------------------------------------------------------------------------------------


async def timed_rounds_async(
    call: Callable[[str, dict[str, Any]], Awaitable[str | None]],
    ops: dict[str, Sequence[dict[str, Any]]],
    rounds: int,
) -> dict[str, Any]:
    """timed_rounds for async calls, which answer None when fine, else a short error text."""
    clock = time.perf_counter
    samples: dict[str, list[list[float]]] = {name: [] for name in ops}
    elapsed = dict.fromkeys(ops, 0.0)
    errors = dict.fromkeys(ops, 0)
    first_error: dict[str, str] = {}
    split = {name: chunks(arguments, rounds) for name, arguments in ops.items()}
    for number in range(rounds):
        for name in ops:
            these: list[float] = []
            started = clock()
            for arguments in split[name][number]:
                before = clock()
                error = await call(name, arguments)
                these.append(clock() - before)
                if error is not None:
                    errors[name] += 1
                    first_error.setdefault(name, error[:300])
            elapsed[name] += clock() - started
            samples[name].append(these)
    out = {name: round_summary(samples[name], elapsed[name], errors[name]) for name in ops}
    for name, error in first_error.items():
        out[name]["first_error"] = error
    return out


# ----- core ------------------------------------------------------------------------------------------------


def core_reads(
    services: Services, principal: Principal, get_ids: Sequence[str], queries: Sequence[str], plan: Plan
) -> dict[str, Any]:
    hits: list[int] = []

    def get(note_id: str) -> object:
        return services.notes.get(principal, note_id)

    def search(query: str) -> None:
        hits.append(len(services.search.run(principal, PROJECT, query, limit=10).hits))

    for note_id in get_ids[: plan.warmup]:
        get(note_id)
    for query in queries[: plan.warmup]:
        search(query)
    hits.clear()
    out = timed_rounds(
        {"get_note": (get, get_ids[: plan.core_get]), "search_notes": (search, queries[: plan.core_search])},
        plan.rounds,
    )
    out["search_notes"]["mean_hits"] = round(sum(hits) / len(hits), 2)
    out["search_notes"]["no_hit_queries"] = sum(1 for h in hits if h == 0)
    return out


def core_creates(services: Services, principal: Principal, corpus: Corpus, plan: Plan) -> dict[str, Any]:
    def create(spec: NoteSpec) -> str:
        return create_through_services(services, principal, spec)

    for spec in corpus.notes(plan.warmup, stream=9):
        create(spec)
    specs = list(corpus.notes(plan.core_create, stream=1))
    return timed_rounds({"create_note": (create, specs)}, plan.rounds)["create_note"]


def profile_core(
    services: Services, principal: Principal, get_ids: Sequence[str], queries: Sequence[str], calls: int, size: int
) -> dict[str, str]:
    """cProfile of get_note and search_notes through the services; the top functions by own and total time."""

    def gets() -> None:
        for note_id in get_ids[:calls]:
            services.notes.get(principal, note_id)

    def searches() -> None:
        for query in queries[:calls]:
            services.search.run(principal, PROJECT, query)

    reports: dict[str, str] = {}
    jobs: dict[str, Callable[[], None]] = {"get_note": gets, "search_notes": searches}
    for name, job in jobs.items():
        profiler = cProfile.Profile()
        profiler.runcall(job)
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text).strip_dirs()
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(15)
        reports[name] = text.getvalue()
        print(f"\n--- cProfile: core {name}, {calls} calls, {size:,} notes ---\n{text.getvalue()}")
    return reports


# ----- MCP endpoint ----------------------------------------------------------------------------------------


def http_client(served: Served) -> httpx2.AsyncClient:
    # trust_env=False: never route the loopback traffic through a proxy from the environment.
    return httpx2.AsyncClient(
        headers={"authorization": f"Bearer {served.key}"}, trust_env=False, timeout=CLIENT_TIMEOUT_S
    )


@contextlib.asynccontextmanager
async def mcp_client(served: Served, mode: str) -> AsyncIterator[Client]:
    async with (
        http_client(served) as http,
        Client(streamable_http_client(served.url, http_client=http), mode=mode) as client,
    ):
        yield client


def tool_caller(client: Client) -> Callable[[str, dict[str, Any]], Awaitable[str | None]]:
    async def call(name: str, arguments: dict[str, Any]) -> str | None:
        result = await client.call_tool(name, arguments)
        return str(result.structured_content or result.content) if result.is_error else None

    return call


def read_arguments(get_ids: Sequence[str], queries: Sequence[str]) -> dict[str, Sequence[dict[str, Any]]]:
    return {
        "get_note": [{"id": i} for i in get_ids],
        "search_notes": [{"project": PROJECT, "query": q} for q in queries],
    }


async def client_reads(
    served: Served, mode: str, get_ids: Sequence[str], queries: Sequence[str], plan: Plan, warmup: int
) -> dict[str, Any]:
    async with mcp_client(served, mode) as client:
        call = tool_caller(client)
        # The first call of each tool also fetches tools/list (the client validates structured output).
        for name, arguments in read_arguments(get_ids[-warmup:], queries[-warmup:]).items():
            for args in arguments:
                await call(name, args)
        return await timed_rounds_async(call, read_arguments(get_ids, queries), plan.rounds)


async def client_creates(served: Served, mode: str, specs: Sequence[NoteSpec], plan: Plan) -> dict[str, Any]:
    async with mcp_client(served, mode) as client:
        call = tool_caller(client)
        await call("create_note", specs[0].arguments(PROJECT))  # warms the connection and fetches tools/list
        ops = {"create_note": [s.arguments(PROJECT) for s in specs[1:]]}
        return (await timed_rounds_async(call, ops, plan.rounds))["create_note"]


def rpc_body(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    """The JSON-RPC body the MCP client sends in mode 2026-07-28 (captured from it), built by hand."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "notewell-bench", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }
    return json.dumps(message, separators=(",", ":")).encode()


async def raw_reads(
    served: Served, get_ids: Sequence[str], queries: Sequence[str], plan: Plan, warmup: int
) -> dict[str, Any]:
    """The same tools/call POSTs without the MCP client: server + HTTP cost, minus the client's own work."""
    request_ids = iter(range(1, 1_000_000))
    async with http_client(served) as http:

        async def call(name: str, arguments: dict[str, Any]) -> str | None:
            headers = {
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": name,
            }
            response = await http.post(
                served.url, content=rpc_body(next(request_ids), name, arguments), headers=headers
            )
            data = response.json()
            if response.status_code != 200 or "result" not in data or data["result"].get("isError"):
                return f"HTTP {response.status_code}: {str(data)[:200]}"
            return None

        for name, arguments in read_arguments(get_ids[-warmup:], queries[-warmup:]).items():
            for args in arguments:
                await call(name, args)
        return await timed_rounds_async(call, read_arguments(get_ids, queries), plan.rounds)


async def endpoint_reads(served: Served, get_ids: Sequence[str], queries: Sequence[str], plan: Plan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    log(f"  MCP endpoint reads, mode {MODERN}")
    out[MODERN] = await client_reads(
        served, MODERN, get_ids[: plan.mcp_get], queries[: plan.mcp_search], plan, plan.warmup
    )
    log("  MCP endpoint reads, legacy mode sample")
    out[LEGACY] = await client_reads(
        served, LEGACY, get_ids[: plan.legacy_calls], queries[: plan.legacy_calls], plan, 3
    )
    log("  raw JSON-RPC over HTTP (no MCP client)")
    out[RAW] = await raw_reads(served, get_ids[: plan.raw_calls], queries[: plan.raw_calls], plan, plan.warmup)
    return out


async def endpoint_creates(served: Served, corpus: Corpus, plan: Plan) -> dict[str, Any]:
    return {
        MODERN: await client_creates(served, MODERN, list(corpus.notes(plan.mcp_create + 1, stream=2)), plan),
        LEGACY: await client_creates(served, LEGACY, list(corpus.notes(plan.legacy_calls + 1, stream=3)), plan),
    }


@dataclass
class _LoadState:
    issued: int = 0
    ready: int = 0
    deadline: float = 0.0


async def load_bench(
    served: Served,
    get_ids: Sequence[str],
    queries: Sequence[str],
    clients: int,
    max_calls: int,
    max_seconds: float,
) -> dict[str, Any]:
    """`clients` concurrent MCP clients (each its own Client and HTTP connection pool) calling get_note and
    search_notes alternately until `max_calls` calls or `max_seconds` seconds, whichever comes first."""
    state = _LoadState()
    all_ready = anyio.Event()
    go = anyio.Event()
    latencies: dict[str, list[float]] = {"get_note": [], "search_notes": []}
    errors = 0
    finished_at: list[float] = []

    async def worker(index: int) -> None:
        nonlocal errors
        async with mcp_client(served, MODERN) as client:
            await client.call_tool("get_note", {"id": get_ids[index % len(get_ids)]})  # fetches tools/list
            await client.call_tool("search_notes", {"project": PROJECT, "query": queries[index % len(queries)]})
            state.ready += 1
            if state.ready == clients:
                all_ready.set()
            await go.wait()
            clock = time.perf_counter
            while state.issued < max_calls and clock() < state.deadline:
                k = state.issued
                state.issued += 1
                if k % 2 == 0:
                    name, args = "get_note", {"id": get_ids[k % len(get_ids)]}
                else:
                    name, args = "search_notes", {"project": PROJECT, "query": queries[k % len(queries)]}
                before = clock()
                result = await client.call_tool(name, args)
                latencies[name].append(clock() - before)
                errors += bool(result.is_error)
            finished_at.append(clock())

    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(worker, index)
        with anyio.fail_after(LOAD_SETUP_TIMEOUT_S):
            await all_ready.wait()
        watch = CpuWatch(served)
        started = time.perf_counter()
        state.deadline = started + max_seconds
        go.set()
    cpu = watch.shares()  # over the run, which ends when the last client is done
    elapsed = max(finished_at) - started
    calls = sum(len(v) for v in latencies.values())
    return {
        "clients": clients,
        "calls": calls,
        "errors": errors,
        "seconds": round(elapsed, 2),
        "calls_per_s": round(calls / elapsed, 1),
        "cpu_share": cpu,  # 1.0 = one core busy the whole run
        "get_note": summarize(latencies["get_note"]),
        "search_notes": summarize(latencies["search_notes"]),
    }


# ----- one size --------------------------------------------------------------------------------------------


def db_megabytes(data_dir: Path) -> float:
    total = sum(p.stat().st_size for p in data_dir.glob("notewell.db*"))
    return round(total / 1e6, 1)


def store_count(data_dir: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{data_dir / 'notewell.db'}?mode=ro", uri=True)) as connection:
        (count,) = connection.execute("SELECT count(*) FROM notes WHERE deleted_at IS NULL").fetchone()
    return int(count)


def bench_size(size: int, workdir: Path, corpus: Corpus, plan: Plan, *, profile: bool) -> dict[str, Any]:
    data_dir = workdir / "data"
    result: dict[str, Any] = {"size": size, "cpu_share": {}, "memory_kb": {}}
    get_rng = random.Random(f"{corpus.seed}/get/{size}")
    queries = corpus.queries(max(plan.core_search, plan.mcp_search, plan.raw_calls) + plan.warmup)
    log(f"{size:,} notes: starting notewell serve on a fresh data dir")
    with serve(data_dir, workdir / "home") as served:
        result["server"] = {"url": served.url, "pid": served.pid}
        result["memory_kb"]["at_start"] = served.memory_kb()
        store = SqliteStore(data_dir / "notewell.db")
        try:
            services = bootstrap(Settings(data_dir=data_dir), store=store)
            principal = services.auth.authenticate(served.key)
            if principal is None:
                raise RuntimeError("the key notewell serve printed does not authenticate against its data dir")
            unlimited(services, principal.workspace_id)  # before the server's first call reads the plan
            log(f"  seeding {size:,} notes through NoteService.create")
            ids, result["seeding"] = seed(services, principal, corpus.notes(size))
            result["db_mb_after_seeding"] = db_megabytes(data_dir)
            result["notes_during_reads"] = store_count(data_dir)
            get_ids = [get_rng.choice(ids) for _ in range(max(plan.core_get, plan.mcp_get, plan.raw_calls))]

            log("  core reads: get_note, search_notes")
            watch = CpuWatch(served)
            result["core"] = core_reads(services, principal, get_ids, queries, plan)
            result["cpu_share"]["core_reads"] = watch.shares()
            if profile:
                result["profile"] = profile_core(services, principal, get_ids, queries, plan.profile_calls, size)

            watch = CpuWatch(served)
            result["endpoint"] = anyio.run(endpoint_reads, served, get_ids, queries, plan)
            result["cpu_share"]["endpoint_reads"] = watch.shares()
            result["memory_kb"]["after_endpoint_reads"] = served.memory_kb()

            result["load"] = []
            for clients in plan.load_clients:
                log(f"  load: {clients} concurrent clients, <= {plan.load_seconds:g} s or {plan.load_max_calls} calls")
                result["load"].append(
                    anyio.run(load_bench, served, get_ids, queries, clients, plan.load_max_calls, plan.load_seconds)
                )
            result["memory_kb"]["after_load"] = served.memory_kb()

            log("  writes: create_note through the core, then the MCP endpoint")
            watch = CpuWatch(served)
            result["core"]["create_note"] = core_creates(services, principal, corpus, plan)
            result["cpu_share"]["core_creates"] = watch.shares()
            creates = anyio.run(endpoint_creates, served, corpus, plan)
            for mode, summary in creates.items():
                result["endpoint"][mode]["create_note"] = summary
            result["memory_kb"]["at_end"] = served.memory_kb()
        finally:
            store.close()
        result["notes_at_end"] = store_count(data_dir)

    for op in OPS:
        core_p50 = result["core"][op]["p50_ms"]
        for mode in (MODERN, RAW):
            if op in result["endpoint"][mode]:
                summary = result["endpoint"][mode][op]
                summary["core_p50_ms"] = core_p50
                summary["added_p50_ms"] = round(summary["p50_ms"] - core_p50, 3)
    return result


# ----- report ----------------------------------------------------------------------------------------------


def report_size(r: dict[str, Any]) -> str:
    size = r["size"]
    seeding = r["seeding"]
    core = r["core"]
    modern, legacy, raw = r["endpoint"][MODERN], r["endpoint"][LEGACY], r["endpoint"][RAW]
    search = core["search_notes"]
    out = [
        f"\n=== {size:,} notes in one project (SQLite, db {r['db_mb_after_seeding']} MB after seeding; reads see "
        f"{r['notes_during_reads']:,} notes, {r['notes_at_end']:,} after the writes) ===",
        f"Seeding: {seeding['notes']:,} creates through NoteService in {seeding['seconds']} s "
        f"= {seeding['notes_per_s']:,.0f} notes/s",
        "",
        "Core (services in-process, one thread)",
        table(
            ["op", "n", "p50 ms", "p95 ms", "best round p50", "ops/s"],
            [
                [op, c["n"], c["p50_ms"], c["p95_ms"], c["best_round_p50_ms"], c["ops_per_s"]]
                for op in OPS
                for c in [core[op]]
            ],
        ),
        f"  search: {search['mean_hits']} hits per query on average (limit 10), "
        f"{search['no_hit_queries']} queries without a hit",
        cpu_note(r["cpu_share"]["core_reads"]) + " during the reads",
        "",
        f"MCP endpoint, real MCP client over HTTP, mode {MODERN}",
        table(
            ["op", "n", "err", "p50 ms", "p95 ms", "core p50", "added p50"],
            [
                [op, m["n"], m["errors"], m["p50_ms"], m["p95_ms"], m["core_p50_ms"], m["added_p50_ms"]]
                for op in OPS
                for m in [modern[op]]
            ],
        ),
        cpu_note(r["cpu_share"]["endpoint_reads"]) + " during the reads",
        "",
        "Legacy mode sample (initialize handshake era)  |  same tools/call POSTed without the MCP client",
        table(
            ["op", "legacy n", "err", "p50 ms", "p95 ms", "|  raw n", "err", "p50 ms", "p95 ms", "added p50"],
            [
                [op, legacy[op]["n"], legacy[op]["errors"], legacy[op]["p50_ms"], legacy[op]["p95_ms"]]
                + (
                    [raw[op]["n"], raw[op]["errors"], raw[op]["p50_ms"], raw[op]["p95_ms"], raw[op]["added_p50_ms"]]
                    if op in raw
                    else [None] * 5
                )
                for op in OPS
            ],
        ),
        "",
        "Throughput: concurrent MCP clients (2026-07-28), get_note and search_notes alternately",
        table(
            ["clients", "calls", "err", "s", "calls/s", "get p50", "get p95", "search p50", "search p95"]
            + ["srv CPU", "cli CPU", "other CPU"],
            [
                [
                    load["clients"],
                    load["calls"],
                    load["errors"],
                    load["seconds"],
                    load["calls_per_s"],
                    load["get_note"].get("p50_ms"),
                    load["get_note"].get("p95_ms"),
                    load["search_notes"].get("p50_ms"),
                    load["search_notes"].get("p95_ms"),
                    load["cpu_share"]["server"],
                    load["cpu_share"]["bench_process"],
                    load["cpu_share"]["other_processes"],
                ]
                for load in r["load"]
            ],
        ),
        "  (CPU = cores kept busy during the run by the server / this process, i.e. the clients / every other",
        "   process on the machine; all share the same cores)",
        "",
        "Server memory, MB (/proc/<pid>/status, smaps_rollup)",
        table(
            ["when", "VmHWM", "VmRSS", "RssAnon", "RssFile", "Pss", "threads"],
            [
                [
                    label,
                    memory["VmHWM"] / 1024,
                    memory["VmRSS"] / 1024,
                    memory["RssAnon"] / 1024,
                    memory["RssFile"] / 1024,
                    memory["Pss"] / 1024 if "Pss" in memory else None,
                    memory["Threads"],
                ]
                for label, memory in (
                    ("at start (empty store)", r["memory_kb"]["at_start"]),
                    ("after the endpoint reads", r["memory_kb"]["after_endpoint_reads"]),
                    ("after the load", r["memory_kb"]["after_load"]),
                    ("at the end (after writes)", r["memory_kb"]["at_end"]),
                )
            ],
        ),
        "  (VmHWM/VmRSS count a file page once per mapping: when SQLite memory-maps the database (PRAGMA",
        "   mmap_size), each thread's connection adds the mapped file to RssFile, though it is the same page",
        "   cache; Pss counts it once)",
    ]
    return "\n".join(out)


def ratios(results: dict[int, dict[str, Any]]) -> dict[str, Any]:
    sizes = sorted(results)
    if len(sizes) < 2:
        return {}
    small, big = results[sizes[0]]["core"], results[sizes[-1]]["core"]
    per_op = {
        op: {
            "p50": round(big[op]["p50_ms"] / small[op]["p50_ms"], 2),
            "p95": round(big[op]["p95_ms"] / small[op]["p95_ms"], 2),
            "best_round_p50": round(big[op]["best_round_p50_ms"] / small[op]["best_round_p50_ms"], 2),
        }
        for op in OPS
    }
    return {f"{sizes[-1]}/{sizes[0]}": per_op}


def targets(
    results: dict[int, dict[str, Any]],
    ratio: dict[str, Any],
    remembered: dict[int, dict[str, Any]],
    remember_ratio: dict[str, Any],
    reads: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    if 10_000 in reads and "context" in reads[10_000]:
        p50 = reads[10_000]["context"]["balanced_query"]["p50_ms"]
        checks.append(
            {
                "target": f"core get_context, balanced with a query: p50 <= {TARGET_CONTEXT_P50_MS:g} ms at 10k",
                "value": p50,
                "met": p50 <= TARGET_CONTEXT_P50_MS,
            }
        )
    if 10_000 in results:
        r = results[10_000]
        p50 = r["core"]["search_notes"]["p50_ms"]
        checks.append(
            {
                "target": f"core search_notes p50 <= {TARGET_SEARCH_P50_MS:g} ms at 10k",
                "value": p50,
                "met": p50 <= TARGET_SEARCH_P50_MS,
            }
        )
        memory = r["memory_kb"]["after_load"]
        peak = memory["VmHWM"] / 1024
        checks.append(
            {
                "target": f"serve VmHWM <= {TARGET_PEAK_MB:g} MB at 10k after the load",
                "value": round(peak, 1),
                "met": peak <= TARGET_PEAK_MB,
            }
        )
        if "Pss" in memory:
            checks.append(
                {
                    "target": "  for comparison: serve Pss then (shared pages counted once), MB",
                    "value": round(memory["Pss"] / 1024, 1),
                    "met": None,
                }
            )
    for label, per_op in ratio.items():
        for key, what in (("p50", "p50"), ("best_round_p50", "best-round p50")):
            value = per_op["get_note"][key]
            checks.append(
                {
                    "target": f"core get_note flat: {what} ratio {label} in {FLAT_RATIO[0]}-{FLAT_RATIO[1]}",
                    "value": value,
                    "met": FLAT_RATIO[0] <= value <= FLAT_RATIO[1],
                }
            )
    if 10_000 in remembered:
        for kind in REMEMBER_KINDS:
            p50 = remembered[10_000]["remember"][kind]["p50_ms"]
            checks.append(
                {
                    "target": f"core remember, {REMEMBER_LABELS[kind]}: p50 <= {TARGET_REMEMBER_P50_MS:g} ms at 10k",
                    "value": p50,
                    "met": p50 <= TARGET_REMEMBER_P50_MS,
                }
            )
    for label, per_kind in remember_ratio.items():
        for kind in REMEMBER_KINDS:
            value = per_kind[kind]["p50"]
            checks.append(
                {
                    "target": f"core remember, {REMEMBER_LABELS[kind]}: flat, p50 ratio {label} in "
                    f"{FLAT_RATIO[0]}-{FLAT_RATIO[1]}",
                    "value": value,
                    "met": FLAT_RATIO[0] <= value <= FLAT_RATIO[1],
                }
            )
    return checks


def context_ratios(reads: dict[int, dict[str, Any]]) -> dict[str, Any]:
    sizes = sorted(size for size, r in reads.items() if "context" in r)
    if len(sizes) < 2:
        return {}
    small, big = reads[sizes[0]]["context"], reads[sizes[-1]]["context"]
    per_kind = {
        kind: {key: round(big[kind][f"{key}_ms"] / small[kind][f"{key}_ms"], 2) for key in ("p50", "p95")}
        | {"best_round_p50": round(big[kind]["best_round_p50_ms"] / small[kind]["best_round_p50_ms"], 2)}
        for kind in CONTEXT_KINDS
    }
    return {f"{sizes[-1]}/{sizes[0]}": per_kind}


def report_summary(
    ratio: dict[str, Any], remember_ratio: dict[str, Any], context_ratio: dict[str, Any], checks: list[dict[str, Any]]
) -> str:
    out = []
    labels = sorted(set(ratio) | set(remember_ratio) | set(context_ratio))
    for label in labels:
        rows = [[op, v["p50"], v["p95"], v["best_round_p50"]] for op, v in ratio.get(label, {}).items()]
        rows += [
            [f"remember: {REMEMBER_LABELS[kind]}", v["p50"], v["p95"], v["best_round_p50"]]
            for kind, v in remember_ratio.get(label, {}).items()
        ]
        rows += [
            [f"get_context: {CONTEXT_LABELS[kind]}", v["p50"], v["p95"], v["best_round_p50"]]
            for kind, v in context_ratio.get(label, {}).items()
        ]
        out += [
            f"\n=== Scaling, core latency ratio {label} (1.0 = flat) ===",
            table(["op", "p50 ratio", "p95 ratio", "best-round p50 ratio"], rows),
        ]
    if checks:
        out += [
            "\n=== Targets (reported, never enforced) ===",
            table(
                ["target", "value", "met"],
                [[c["target"], c["value"], {True: "yes", False: "NO", None: ""}[c["met"]]] for c in checks],
            ),
        ]
    return "\n".join(out)


def meta(
    plan: Plan, sizes: Sequence[int], quick: bool, only: Sequence[str], dynamo_sizes: Sequence[int],
    entities: Sequence[int],
) -> dict[str, Any]:  # fmt: skip
    return {
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "sizes": list(sizes),
        "sections": list(only),
        "dynamo_sizes": list(dynamo_sizes),
        "entities": list(entities),
        "quick": quick,
        "plan": asdict(plan),
        "project": PROJECT,
        "units": "latencies in ms, wall clock per call, one caller at a time except under 'load'; p50 = median; "
        "cpu_share in cores (1.0 = one core busy throughout); memory in kB",
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="Comma-separated note counts (default 1000,10000).")
    parser.add_argument("--quick", action="store_true", help="Fewer calls and a 3 s load: a smoke run.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON results file (default {DEFAULT_OUT}).")
    parser.add_argument(
        "--profile", action="store_true", help="Also cProfile core get_note, search_notes and each kind of remember."
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"Comma-separated sections to run, of {', '.join(SECTIONS)} (default: all).",
    )
    parser.add_argument(
        "--dynamo-sizes",
        default=",".join(str(n) for n in DYNAMO_SIZES),
        help="Comma-separated note counts for the DynamoDB (moto) section (default %(default)s).",
    )
    parser.add_argument(
        "--entities",
        default=",".join(str(n) for n in DEFAULT_ENTITY_COUNTS),
        help="Comma-separated entity counts for the token economy section (default %(default)s).",
    )
    args = parser.parse_args(argv)
    for name in ("sizes", "dynamo_sizes", "entities"):
        text = getattr(args, name)
        try:
            counts = sorted({int(s) for s in text.split(",") if s.strip()})
        except ValueError:
            parser.error(f"--{name.replace('_', '-')} takes comma-separated integers, not {text!r}")
        if not counts or min(counts) < 1:
            parser.error(f"--{name.replace('_', '-')} needs at least one positive note count")
        setattr(args, name, counts)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown or not only:
        parser.error(f"--only takes sections among {', '.join(SECTIONS)}, not {args.only!r}")
    args.only = [s for s in SECTIONS if s in only]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    plan = Plan.quick() if args.quick else Plan()
    corpus = Corpus()
    results: dict[int, dict[str, Any]] = {}
    remembered: dict[int, dict[str, Any]] = {}
    reads: dict[int, dict[str, Any]] = {}
    document: dict[str, Any] = {"meta": meta(plan, args.sizes, args.quick, args.only, args.dynamo_sizes, args.entities)}
    with tempfile.TemporaryDirectory(prefix="notewell-bench-") as tmp:
        for size in args.sizes:
            if "serve" in args.only:
                results[size] = bench_size(size, Path(tmp) / f"n{size}", corpus, plan, profile=args.profile)
                print(report_size(results[size]), flush=True)
            if "remember" in args.only and args.profile:  # profiled one size at a time
                remembered[size] = bench_remember(
                    size,
                    Path(tmp) / f"remember-n{size}",
                    corpus,
                    plan.remember_calls,
                    plan.warmup,
                    plan.rounds,
                    profile=args.profile,
                    profile_calls=plan.profile_calls // 3,
                )
                print(report_remember(remembered[size]), flush=True)
            read_sections = [s for s in ("context", "changes") if s in args.only]
            if read_sections:
                reads[size] = bench_reads(
                    size,
                    Path(tmp) / f"reads-n{size}",
                    corpus,
                    read_sections,
                    calls=plan.context_calls,
                    warmup=plan.warmup,
                    rounds=plan.rounds,
                    profile=args.profile,
                    profile_calls=plan.profile_calls // 3,
                )
                print(report_reads(reads[size]), flush=True)
        if "remember" in args.only and not args.profile:
            # every size seeded first, the calls timed in rounds alternating between them: the 10k/1k ratio then
            # compares calls made in the same minutes (timed apart, quiet runs read 0.93 to 1.38 on the same code)
            remembered = bench_remember_sizes(
                args.sizes, Path(tmp) / "remember", corpus, plan.remember_calls, plan.warmup, plan.rounds
            )
            for size in args.sizes:
                print(report_remember(remembered[size]), flush=True)
        if "tokens" in args.only:
            document["tokens"] = bench_tokens(args.entities, Path(tmp))
            print(report_tokens(document["tokens"]), flush=True)
    if "dynamodb" in args.only:
        document["dynamodb"] = bench_dynamo(args.dynamo_sizes, corpus)
        print(report_dynamo(document["dynamodb"]), flush=True)
    ratio = ratios(results)
    remember_ratio = remember_ratios(remembered)
    context_ratio = context_ratios(reads)
    checks = targets(results, ratio, remembered, remember_ratio, reads)
    print(report_summary(ratio, remember_ratio, context_ratio, checks), flush=True)
    document["meta"]["loadavg_at_end"] = os.getloadavg()
    document["sizes"] = {str(size): r for size, r in results.items()}
    document["remember"] = {str(size): r for size, r in remembered.items()}
    document["ratios"] = ratio
    document["remember_ratios"] = remember_ratio
    document["reads"] = {str(size): r for size, r in reads.items()}
    document["context_ratios"] = context_ratio
    document["targets"] = checks
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
