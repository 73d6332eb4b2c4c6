"""Import and export throughput, and what metering costs per tool call, on SQLite and on DynamoDB (moto).

    python -m tests.bench.portability [--notes 10000] [--rounds 3] [--dynamo-sizes 1000,3000] [--dynamo-budget 60]
                                      [--meter-calls 20000] [--wrapper-calls 20000] [--out .bench/portability.json]

Portability. Two generated files (deterministic, tests/bench/corpus.py): a Notewell export of N notes (every 10th
note edited once, so it carries one revision; every 100th also deleted; every 7th linking to the note before it),
and a memory.jsonl of N entities (observations = the sentences of a note body; a relation on every other entity).
Then, on one fresh store and through PortabilityService, five phases: import the export into a new project;
export that project; import the export again (every note skipped); import the memory.jsonl into another project;
import it again (nothing to add). SQLite runs `--rounds` times, each on a fresh database, and reports the median
seconds per phase. DynamoDB (moto, in this process) runs once per size, a larger size only when the smaller one's
time, scaled up, fits the budget; it reports the API calls of each phase by operation, per 1,000 notes. moto's
latency is not DynamoDB's: the DynamoDB seconds only say the import finishes, the request counts are the result.

Metering. Meter.admit_call + Meter.record_call, as the MCP tool wrapper calls them, in a loop on a workspace of the
team plan (a plan with a call quota, so admit_call takes its full path): per-call latency, split into calls served
from memory, calls that flushed (every FLUSH_CALLS calls: one add_usage) and calls that re-read the stored usage
(after each flush, and the plan every FLUSH_SECONDS); on DynamoDB the API requests per 1,000 calls. Then the
overhead through the tool wrapper: the `list_projects` tool, unwrapped from build_server(services), wrapped again
by tool_result with the meter and without (alternating rounds), and called through the in-process MCP server
(server.call_tool) built with the meter and without it.

Nothing is asserted: targets are reported, met or not. Times are wall clock on this machine, medians unless
stated; loops are bounded; no network beyond this process (moto answers in-process).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import functools
import inspect
import json
import os
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.adapters.jsonl import JsonlCodec
from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import rules
from notewell.domain.model import Link, Note, Plan, Project
from notewell.entrypoints.mcp_tools import CURRENT_PRINCIPAL, build_server, tool_result
from notewell.services.metering import FLUSH_CALLS, FLUSH_SECONDS
from tests.bench.common import PROJECT, log, new_principal, seed, table
from tests.bench.corpus import SEED, Corpus
from tests.bench.stats import percentile
from tests.support.dynamo import count_operations, dynamodb_store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mcp.server import MCPServer

    from notewell.bootstrap import Services
    from notewell.domain.model import Principal
    from notewell.services.metering import Meter
    from notewell.services.portability import ImportReport

DEFAULT_OUT = Path(".bench/portability.json")
DEFAULT_NOTES = 10_000
DEFAULT_ROUNDS = 3
DEFAULT_DYNAMO_SIZES = (1_000, 3_000)
DEFAULT_DYNAMO_BUDGET = 60.0  # seconds a DynamoDB size may be expected to take before it is skipped
DEFAULT_METER_CALLS = 20_000
DEFAULT_DYNAMO_METER_CALLS = 10_000
DEFAULT_WRAPPER_CALLS = 20_000  # per variant, over WRAPPER_ROUNDS alternating rounds
DEFAULT_DYNAMO_WRAPPER_CALLS = 2_000
WRAPPER_ROUNDS = 10
METER_WARMUP = 1_000
WRAPPER_SEED_NOTES = 300
ESTIMATE_SIZES = (1_000, 4_000, 16_000, 64_000)
TARGET_OVERHEAD_US = 1_000.0

EXPORT_PROJECT = "ported"
MEMORY_PROJECT = "memory"
FILE_STREAM = 40  # corpus stream of the generated notes (another stream than the other benchmarks')
BASE_TIME = datetime(2025, 11, 3, 8, 0, 0, tzinfo=UTC)
PHASES = ("import export", "export", "re-import export", "import memory.jsonl", "re-import memory.jsonl")
PHASE_NOTES = {
    "import export": "into a new project",
    "export": "export_lines, whole project",
    "re-import export": "same project: all skipped",
    "import memory.jsonl": "entities -> new notes",
    "re-import memory.jsonl": "same file: nothing to add",
}
TOOLS = ("get_context", "search_notes", "get_note", "remember", "create_note", "list_projects")
STORE_READS = ("usage", "get_workspace")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_SENTENCE_END = re.compile(r"(?<=\.)\s+")


# ----- generated files -----------------------------------------------------------------------------------------


def _base32(value: int, length: int) -> str:
    return "".join(_CROCKFORD[(value >> (5 * (length - 1 - i))) & 31] for i in range(length))


def export_file(corpus: Corpus, count: int) -> list[str]:
    """A Notewell export (version 1) of `count` notes, as `notewell export` writes it: header, project, then the
    notes oldest first by updatedAt, each followed by its revisions."""
    codec = JsonlCodec()
    rng = random.Random(f"{SEED}/portability/ids")
    author = "key:key_" + "0" * 26
    stamp = rules.format_ts(BASE_TIME)
    project = Project(
        id="prj_bench", workspace_id="", slug=EXPORT_PROJECT, created_at=stamp, updated_at=stamp,
        summary="Generated for the portability benchmark.", instructions="", default_max_tokens=None,
    )  # fmt: skip
    lines = [codec.encode_header(rules.format_ts(BASE_TIME + timedelta(days=30))), codec.encode_project(project)]
    previous_id = ""
    for index, spec in enumerate(corpus.notes(count, stream=FILE_STREAM)):
        created = BASE_TIME + timedelta(seconds=index)
        note_id = "n_" + _base32(int(created.timestamp() * 1000), 10) + _base32(rng.getrandbits(80), 16)
        links = (Link(previous_id, "related"),) if previous_id and index % 7 == 0 else ()
        first = Note(
            id=note_id, workspace_id="", project_id="", title=spec.title, body=spec.body, version=1,
            created_at=rules.format_ts(created), updated_at=rules.format_ts(created), author=author,
            write_id=f"w_{index:026d}", type=spec.type, status=spec.status, tags=spec.tags, links=links,
            importance=spec.importance,
        )  # fmt: skip
        previous_id = note_id
        if index % 10:
            lines.append(codec.encode_note(first))
            continue
        # Edited once (the first version becomes a revision), and every 100th deleted by that edit.
        edited_at = rules.format_ts(created + timedelta(milliseconds=500))
        edited = dataclasses.replace(
            first,
            body=spec.body.split("\n\n", 1)[0],
            version=2,
            updated_at=edited_at,
            write_id=f"w_{index:025d}e",
            deleted_at=edited_at if index % 100 == 0 else None,
        )
        lines += [codec.encode_note(edited), codec.encode_revision(first)]
    return lines


def memory_file(corpus: Corpus, count: int) -> list[str]:
    """A memory.jsonl of `count` entities (the MCP reference memory server's format) and count // 2 relations."""
    lines: list[str] = []
    names: list[str] = []
    for index, spec in enumerate(corpus.notes(count, stream=FILE_STREAM + 1)):
        name = f"{spec.title[:80]} {index}"
        observations = [s for paragraph in spec.body.split("\n") for s in _SENTENCE_END.split(paragraph) if s]
        entity = {"type": "entity", "name": name, "entityType": spec.type.value, "observations": observations}
        lines.append(json.dumps(entity, ensure_ascii=False))
        names.append(name)
    for index in range(1, count, 2):
        relation = {"type": "relation", "from": names[index], "to": names[index - 1], "relationType": "depends_on"}
        lines.append(json.dumps(relation, ensure_ascii=False))
    return lines


def megabytes(lines: Sequence[str]) -> float:
    return round(sum(len(line.encode()) + 1 for line in lines) / 1e6, 2)


# ----- portability phases --------------------------------------------------------------------------------------


def _import_fields(report: ImportReport) -> dict[str, Any]:
    return {
        "written": report.notes_written,
        "skipped": report.notes_skipped,
        "updated": report.notes_updated,
        "revisions": report.revisions_written,
        "links": report.links,
        "reassigned": report.ids_reassigned,
    }


def _export_fields(lines: list[str]) -> dict[str, Any]:
    notes = sum(1 for line in lines if '"kind":"note"' in line)
    revisions = sum(1 for line in lines if '"kind":"revision"' in line)
    return {"lines": len(lines), "notes": notes, "revisions": revisions, "mb": megabytes(lines)}


def run_phases(
    services: Services,
    principal: Principal,
    files: dict[str, list[str]],
    count: int,
    calls: collections.Counter[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The five phases on one store, in order; seconds, notes/s and outcome of each (and API calls, if counted)."""
    portability = services.portability
    results: dict[str, dict[str, Any]] = {}

    def phase(name: str, action: Callable[[], Any], fields: Callable[[Any], dict[str, Any]]) -> Any:
        before = collections.Counter(calls) if calls is not None else None
        started = time.perf_counter()
        outcome = action()
        seconds = time.perf_counter() - started
        row: dict[str, Any] = {"seconds": round(seconds, 3), "notes_per_s": round(count / max(seconds, 1e-9), 1)}
        row.update(fields(outcome))
        if calls is not None and before is not None:
            row["calls"] = dict(sorted((calls - before).items()))
        results[name] = row
        log(f"  {name}: {seconds:.2f} s ({row['notes_per_s']:,.0f} notes/s)")
        return outcome

    exported: list[str] = []

    def export() -> list[str]:
        exported.extend(portability.export_lines(principal, EXPORT_PROJECT))
        return exported

    phase("import export", lambda: portability.import_file(principal, EXPORT_PROJECT, files["export"]), _import_fields)
    phase("export", export, _export_fields)
    phase("re-import export", lambda: portability.import_file(principal, EXPORT_PROJECT, exported), _import_fields)
    phase(
        "import memory.jsonl",
        lambda: portability.import_file(principal, MEMORY_PROJECT, files["memory"]),
        _import_fields,
    )
    phase(
        "re-import memory.jsonl",
        lambda: portability.import_file(principal, MEMORY_PROJECT, files["memory"]),
        _import_fields,
    )
    services.meter.flush()
    return results


def bench_sqlite_portability(files: dict[str, list[str]], count: int, rounds: int, workdir: Path) -> dict[str, Any]:
    runs: list[dict[str, dict[str, Any]]] = []
    for number in range(rounds):
        data_dir = workdir / f"sqlite-portability-{number}"
        store = SqliteStore(data_dir / "notewell.db")
        try:
            services = bootstrap(Settings(data_dir=data_dir), store=store)
            principal = new_principal(services)
            log(f"SQLite, {count:,} notes, round {number + 1} of {rounds}")
            runs.append(run_phases(services, principal, files, count))
        finally:
            store.close()
        db_mb = sum(p.stat().st_size for p in data_dir.glob("notewell.db*")) / 1e6
        runs[-1]["database"] = {"mb": round(db_mb, 1)}
    phases: dict[str, dict[str, Any]] = {}
    for name in PHASES:
        seconds = [run[name]["seconds"] for run in runs]
        median = statistics.median(seconds)
        phases[name] = {
            **{k: v for k, v in runs[0][name].items() if k not in ("seconds", "notes_per_s")},
            "seconds_median": round(median, 3),
            "notes_per_s_median": round(count / max(median, 1e-9), 1),
            "seconds_by_round": seconds,
        }
    return {"notes": count, "rounds": rounds, "phases": phases, "database_mb": runs[-1]["database"]["mb"]}


def bench_dynamo_portability(
    corpus: Corpus, sizes: Sequence[int], budget: float, workdir: Path
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    last: tuple[int, float] | None = None
    for size in sizes:
        if last is not None:
            expected = last[1] * size / last[0]
            if expected > budget:
                log(f"DynamoDB (moto), {size:,} notes: skipped, expected {expected:.0f} s > budget {budget:.0f} s")
                results[str(size)] = {"notes": size, "skipped": f"expected {expected:.0f} s > {budget:.0f} s"}
                continue
        files = {"export": export_file(corpus, size), "memory": memory_file(corpus, size)}
        started = time.perf_counter()
        with dynamodb_store(table_name=f"notewell-bench-portability-{size}") as store:
            calls = count_operations(store.client)
            services = bootstrap(Settings(data_dir=workdir / f"dynamo-{size}"), store=store)
            principal = new_principal(services)
            log(f"DynamoDB (moto), {size:,} notes")
            phases = run_phases(services, principal, files, size, calls)
        elapsed = time.perf_counter() - started
        last = (size, elapsed)
        for row in phases.values():
            row["calls_per_1k"] = {op: round(n * 1000 / size, 1) for op, n in row["calls"].items()}
        results[str(size)] = {
            "notes": size,
            "phases": phases,
            "scan_calls": sum(row["calls"].get("Scan", 0) for row in phases.values()),
            "wall_seconds": round(elapsed, 1),
        }
    return results


# ----- metering ------------------------------------------------------------------------------------------------


class StoreProbe:
    """Counts and times the store methods the meter calls, by shadowing them on the store instance."""

    def __init__(self, store: Any, methods: Sequence[str] = ("add_usage", *STORE_READS)) -> None:
        self._store = store
        self._methods = tuple(methods)
        self.calls: collections.Counter[str] = collections.Counter()
        self.seconds: dict[str, list[float]] = {name: [] for name in self._methods}
        for name in self._methods:
            setattr(store, name, self._timed(name, getattr(store, name)))

    def _timed(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name].append(time.perf_counter() - started)
                self.calls[name] += 1

        return timed

    def reads(self) -> int:
        return sum(self.calls[name] for name in STORE_READS)

    def remove(self) -> None:
        for name in self._methods:
            delattr(self._store, name)


def _us(samples: Sequence[float], fraction: float) -> float | None:
    return round(percentile(sorted(samples), fraction) * 1e6, 1) if samples else None


def latency_us(samples: Sequence[float]) -> dict[str, Any]:
    return {"n": len(samples), "p50_us": _us(samples, 0.5), "p99_us": _us(samples, 0.99)}


def meter_loop(
    meter: Meter, workspace_id: str, calls: int, probe: StoreProbe, operations: collections.Counter[str] | None = None
) -> dict[str, Any]:
    """admit_call + record_call `calls` times (after a warm-up), as the tool wrapper makes them."""
    rng = random.Random(f"{SEED}/meter")
    for number in range(METER_WARMUP):
        meter.admit_call(workspace_id)
        meter.record_call(workspace_id, TOOLS[number % len(TOOLS)], 100)
    meter.flush()
    tokens = [rng.randint(50, 2_000) for _ in range(calls)]
    probe.calls.clear()
    for seconds in probe.seconds.values():
        seconds.clear()
    before_ops = collections.Counter(operations) if operations is not None else None
    all_calls: list[float] = []
    in_memory: list[float] = []
    flushing: list[float] = []
    reading: list[float] = []
    clock = time.perf_counter
    started_loop = clock()
    for number in range(calls):
        flushes, reads = probe.calls["add_usage"], probe.reads()
        started = clock()
        meter.admit_call(workspace_id)
        meter.record_call(workspace_id, TOOLS[number % len(TOOLS)], tokens[number])
        took = clock() - started
        all_calls.append(took)
        if probe.calls["add_usage"] != flushes:
            flushing.append(took)
        elif probe.reads() != reads:
            reading.append(took)
        else:
            in_memory.append(took)
    loop_seconds = clock() - started_loop
    result: dict[str, Any] = {
        "calls": calls,
        "loop_seconds": round(loop_seconds, 3),
        "mean_us": round(loop_seconds / calls * 1e6, 1),
        "all": latency_us(all_calls),
        "in_memory": latency_us(in_memory),
        "with_flush": latency_us(flushing),
        "with_usage_read": latency_us(reading),
        "store_calls": dict(sorted(probe.calls.items())),
        "store_p50_us": {name: _us(s, 0.5) for name, s in probe.seconds.items()},
        "flushes_per_1k": round(probe.calls["add_usage"] * 1000 / calls, 2),
        "usage_reads_per_1k": round(probe.reads() * 1000 / calls, 2),
    }
    if operations is not None and before_ops is not None:
        spent = operations - before_ops
        result["api_calls"] = dict(sorted(spent.items()))
        result["api_calls_per_1k"] = {op: round(n * 1000 / calls, 2) for op, n in sorted(spent.items())}
        writes = ("UpdateItem", "PutItem", "BatchWriteItem", "TransactWriteItems", "DeleteItem")
        result["writes_per_1k"] = round(sum(spent[op] for op in writes) * 1000 / calls, 2)
    return result


def metering_principal(services: Services) -> Principal:
    """A fresh workspace on the team plan: a call quota, so admit_call reads the usage (the path paying plans take)."""
    principal = new_principal(services)
    services.workspaces.set_plan(principal.workspace_id, Plan.TEAM)
    return principal


def tool_fn(server: MCPServer, name: str) -> Callable[..., Any]:
    """A tool's function as build_server defines it, without the tool_result wrapper build_server added."""
    tool = server._tool_manager.get_tool(name)
    if tool is None:
        raise RuntimeError(f"build_server registers no {name} tool")
    fn: Callable[..., Any] = inspect.unwrap(tool.fn)
    return fn


def alternating(variants: dict[str, Callable[[], Any]], calls: int, rounds: int) -> dict[str, list[list[float]]]:
    """Each variant `calls` times in total, over `rounds` rounds; the order of the variants flips every round."""
    per_round = max(1, calls // rounds)
    samples: dict[str, list[list[float]]] = {name: [] for name in variants}
    clock = time.perf_counter
    names = list(variants)
    for number in range(rounds):
        for name in names if number % 2 == 0 else reversed(names):
            call = variants[name]
            these: list[float] = []
            for _ in range(per_round):
                started = clock()
                call()
                these.append(clock() - started)
            samples[name].append(these)
    return samples


def overhead(samples: dict[str, list[list[float]]], with_meter: str, without: str) -> dict[str, Any]:
    flat = {name: [s for r in rounds for s in r] for name, rounds in samples.items()}
    result: dict[str, Any] = {name: latency_us(values) for name, values in flat.items()}
    a, b = result[with_meter]["p50_us"], result[without]["p50_us"]
    result["p50_difference_us"] = round(a - b, 1)
    round_differences = [
        percentile(sorted(x), 0.5) - percentile(sorted(y), 0.5)
        for x, y in zip(samples[with_meter], samples[without], strict=True)
    ]
    result["round_p50_difference_us"] = [round(d * 1e6, 1) for d in round_differences]
    result["median_round_difference_us"] = round(statistics.median(round_differences) * 1e6, 1)
    return result


def median_us(call: Callable[[], Any], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples) * 1e6, 1)


def wrapper_overhead(services: Services, principal: Principal, corpus: Corpus, calls: int) -> dict[str, Any]:
    """Tools through tool_result with the meter and without (alternating rounds): list_projects (a small result),
    get_notes of 20 notes and get_context (large results); then list_projects through the in-process MCP server
    built with the meter and without. Also what estimate_tokens (the wrapper's token count of the result text, a
    part of metering) costs on each result and on texts of growing size."""
    for slug in ("alpha", "beta", "gamma"):
        services.projects.update(principal, slug, summary=f"Project {slug} of the metering benchmark.")
    ids, _ = seed(services, principal, corpus.notes(WRAPPER_SEED_NOTES, stream=FILE_STREAM + 2))
    query = corpus.queries(1, stream=FILE_STREAM)[0]
    metered_server = build_server(services)
    bare_server = build_server(dataclasses.replace(services, meter=None))  # tool_result(fn, None): no metering
    # get_notes and get_context cost milliseconds a call: fewer calls, bounded.
    calls_of = {
        "list_projects": calls,
        "get_notes": max(WRAPPER_ROUNDS, min(calls // 10, 1_000)),
        "get_context": max(WRAPPER_ROUNDS, min(calls // 50, 200)),
    }
    arguments: dict[str, dict[str, Any]] = {
        "list_projects": {},
        "get_notes": {"ids": ids[:20]},
        "get_context": {"project": PROJECT, "query": query},
    }
    result: dict[str, Any] = {"tools": {}, "estimate_tokens_by_chars": {}}
    token = CURRENT_PRINCIPAL.set(principal)
    try:
        for name, kwargs in arguments.items():
            fn = tool_fn(metered_server, name)
            metered, bare = tool_result(fn, services.meter), tool_result(fn, None)
            check = metered(**kwargs)
            if check.is_error:
                raise RuntimeError(f"{name} failed: {check.content}")
            text = check.content[0].text
            log(f"  {name}: {calls_of[name]:,} calls per variant, result text {len(text):,} chars")
            variants = {
                "with meter": functools.partial(metered, **kwargs),
                "without": functools.partial(bare, **kwargs),
            }
            row = overhead(alternating(variants, calls_of[name], WRAPPER_ROUNDS), "with meter", "without")
            row["result_chars"] = len(text)
            row["estimate_tokens_us"] = median_us(lambda text=text: rules.estimate_tokens(text), 200)
            result["tools"][name] = row
        for chars in ESTIMATE_SIZES:
            sample = (text * (chars // max(len(text), 1) + 1))[:chars]
            result["estimate_tokens_by_chars"][str(chars)] = median_us(lambda s=sample: rules.estimate_tokens(s), 50)

        loop = asyncio.new_event_loop()
        try:

            def through(server: MCPServer) -> Callable[[], Any]:
                return lambda: loop.run_until_complete(server.call_tool("list_projects", {}))

            served = alternating(
                {"with meter": through(metered_server), "without": through(bare_server)},
                max(WRAPPER_ROUNDS, calls // 4),
                WRAPPER_ROUNDS,
            )
            result["server_call_tool"] = overhead(served, "with meter", "without")
        finally:
            loop.close()
    finally:
        CURRENT_PRINCIPAL.reset(token)
    return result


def dynamo_wrapper_requests(services: Services, principal: Principal, calls: collections.Counter[str], n: int) -> Any:
    """API requests per 1,000 list_projects calls through tool_result, with the meter and without."""
    services.projects.update(principal, "alpha", summary="Project alpha of the metering benchmark.")
    fn = tool_fn(build_server(services), "list_projects")
    result: dict[str, Any] = {"calls": n}
    token = CURRENT_PRINCIPAL.set(principal)
    try:
        for name, wrapped in (("without", tool_result(fn, None)), ("with meter", tool_result(fn, services.meter))):
            services.meter.flush()
            before = collections.Counter(calls)
            for _ in range(n):
                wrapped()
            spent = calls - before
            result[name] = {op: round(count * 1000 / n, 2) for op, count in sorted(spent.items())}
    finally:
        CURRENT_PRINCIPAL.reset(token)
    ops = sorted(set(result["with meter"]) | set(result["without"]))
    result["added_by_meter_per_1k"] = {
        op: round(result["with meter"].get(op, 0) - result["without"].get(op, 0), 2) for op in ops
    }
    return result


def bench_metering(
    workdir: Path, corpus: Corpus, calls: int, dynamo_calls: int, wrapper_calls: int, dynamo_wrapper: int
) -> Any:
    result: dict[str, Any] = {"flush_calls": FLUSH_CALLS, "flush_seconds": FLUSH_SECONDS, "plan": Plan.TEAM.value}
    data_dir = workdir / "sqlite-metering"
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir), store=store)
        principal = metering_principal(services)
        log(f"metering on SQLite: {calls:,} admit_call + record_call")
        probe = StoreProbe(store)
        try:
            result["sqlite"] = meter_loop(services.meter, principal.workspace_id, calls, probe)
        finally:
            probe.remove()
        log(f"tool wrapper overhead on SQLite: list_projects, {wrapper_calls:,} calls per variant")
        result["wrapper_sqlite"] = wrapper_overhead(services, principal, corpus, wrapper_calls)
    finally:
        store.close()
    with dynamodb_store(table_name="notewell-bench-metering") as dynamo:
        operations = count_operations(dynamo.client)
        services = bootstrap(Settings(data_dir=workdir / "dynamo-metering"), store=dynamo)
        principal = metering_principal(services)
        log(f"metering on DynamoDB (moto): {dynamo_calls:,} admit_call + record_call")
        probe = StoreProbe(dynamo)
        try:
            result["dynamodb"] = meter_loop(services.meter, principal.workspace_id, dynamo_calls, probe, operations)
        finally:
            probe.remove()
        log(f"tool wrapper on DynamoDB (moto): API requests over {dynamo_wrapper:,} list_projects calls per variant")
        result["wrapper_dynamodb"] = dynamo_wrapper_requests(services, principal, operations, dynamo_wrapper)
    return result


# ----- report --------------------------------------------------------------------------------------------------


def report_portability(document: dict[str, Any]) -> str:
    sqlite = document["sqlite"]
    files = document["files"]
    out = [
        f"\n=== Import / export, SQLite, {sqlite['notes']:,} notes (median over {sqlite['rounds']} round(s), each on a "
        "fresh database) ===",
        f"  files: Notewell export {files['export_mb']} MB ({files['export_lines']:,} lines), memory.jsonl "
        f"{files['memory_mb']} MB ({files['memory_lines']:,} lines); database after the run "
        f"{sqlite['database_mb']} MB",
    ]
    rows: list[list[object]] = []
    for name in PHASES:
        p = sqlite["phases"][name]
        rounds = " / ".join(f"{s:.2f}" for s in p["seconds_by_round"])
        rows.append([name, PHASE_NOTES[name], p["seconds_median"], p["notes_per_s_median"], _outcome(p), rounds])
    out.append(table(["phase", "what", "s", "notes/s", "outcome", "s by round"], rows))

    dynamo = document["dynamodb"]
    ran = {size: d for size, d in dynamo.items() if "phases" in d}
    operations = sorted({op for d in ran.values() for p in d["phases"].values() for op in p["calls"]} | {"Scan"})
    out.append(
        "\n=== Import / export, DynamoDB (moto, in-process: seconds are moto's, not AWS's), API calls per 1k notes ==="
    )
    rows = []
    for size, d in dynamo.items():
        if "phases" not in d:
            rows.append([f"{int(size):,}", "skipped: " + d["skipped"], *[""] * (3 + len(operations))])
            continue
        for name in PHASES:
            p = d["phases"][name]
            per_1k = [_count(p["calls_per_1k"].get(op, 0.0)) for op in operations]
            rows.append([f"{int(size):,}", name, p["seconds"], p["notes_per_s"], _outcome(p), *per_1k])
    out.append(table(["notes", "phase", "s", "notes/s", "outcome", *operations], rows))
    for size, d in ran.items():
        out.append(f"  {int(size):,} notes: Scan requests {d['scan_calls']}, whole run {d['wall_seconds']} s")
    return "\n".join(out)


def _count(value: float) -> str:
    return "-" if not value else f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def _outcome(p: dict[str, Any]) -> str:
    if "lines" in p:
        return f"{p['notes']:,} notes + {p['revisions']:,} revisions"
    parts = [f"{p['written']:,} written", f"{p['skipped']:,} skipped"]
    if p["updated"]:
        parts.append(f"{p['updated']:,} updated")
    return ", ".join(parts)


def report_metering(m: dict[str, Any]) -> str:
    out = [
        f"\n=== Metering: admit_call + record_call per tool call (plan {m['plan']}; flush every {m['flush_calls']} "
        f"calls or {m['flush_seconds']:.0f} s) ==="
    ]
    rows: list[list[object]] = []
    for label, key in (("SQLite", "sqlite"), ("DynamoDB (moto)", "dynamodb")):
        r = m[key]
        for kind, name in (("all", "every call"), ("in_memory", "no store access"), ("with_flush", "flushing"),
                           ("with_usage_read", "re-reading usage")):  # fmt: skip
            s = r[kind]
            rows.append([label if kind == "all" else "", name, s["n"], s["p50_us"], s["p99_us"]])
    out.append(table(["store", "calls", "n", "p50 us", "p99 us"], rows))
    for label, key in (("SQLite", "sqlite"), ("DynamoDB (moto)", "dynamodb")):
        r = m[key]
        store_p50 = ", ".join(f"{k} {v} us" for k, v in r["store_p50_us"].items() if v is not None)
        out.append(
            f"  {label}: mean {r['mean_us']} us a call over {r['calls']:,} calls; {r['flushes_per_1k']} flushes and "
            f"{r['usage_reads_per_1k']} usage/plan reads per 1,000 calls; store call p50: {store_p50}"
        )
    d = m["dynamodb"]
    requests = ", ".join(f"{op} {n}" for op, n in d["api_calls_per_1k"].items()) or "none"
    out.append(f"  DynamoDB API requests per 1,000 calls: {requests} (writes: {d['writes_per_1k']})")

    w = m["wrapper_sqlite"]
    out.append("\n=== Metering through the MCP tool wrapper, SQLite: the same tool with the meter and without ===")
    rows = []
    paths = [(f"tool_result: {name}", row) for name, row in w["tools"].items()]
    paths.append(("server.call_tool: list_projects", w["server_call_tool"]))
    for label, row in paths:
        rows.append(
            [label, row["with meter"]["n"], row.get("result_chars"), row["with meter"]["p50_us"],
             row["without"]["p50_us"], row["p50_difference_us"], row["median_round_difference_us"],
             row.get("estimate_tokens_us"), row["with meter"]["p99_us"], row["without"]["p99_us"]]
        )  # fmt: skip
    header = ["path: tool", "calls each", "result chars", "p50 with us", "p50 without us", "p50 diff us"]
    header += ["median round diff us", "estimate_tokens us", "p99 with us", "p99 without us"]
    out.append(table(header, rows))
    sweep = ", ".join(f"{int(chars):,} chars {us:,.0f} us" for chars, us in w["estimate_tokens_by_chars"].items())
    out += [
        "  (diff = what metering adds: admit_call + estimate_tokens(result text) + record_call; estimate_tokens = its",
        f"   part, timed alone on the same text.) estimate_tokens on get_context's JSON text cut to: {sweep}",
    ]
    wd = m["wrapper_dynamodb"]
    added = ", ".join(f"{op} {n:+}" for op, n in wd["added_by_meter_per_1k"].items() if n) or "none"
    without = ", ".join(f"{op} {n}" for op, n in wd["without"].items())
    out.append(
        f"  DynamoDB (moto), {wd['calls']:,} list_projects calls per variant: requests per 1,000 calls without the "
        f"meter: {without}; added by the meter: {added}"
    )
    return "\n".join(out)


def targets(document: dict[str, Any]) -> list[dict[str, Any]]:
    m = document["metering"]
    checks: list[dict[str, Any]] = []
    w = m["wrapper_sqlite"]
    paths = [(f"tool_result, {name}, {row['result_chars']:,}-char result", row) for name, row in w["tools"].items()]
    paths.append(("server.call_tool, list_projects", w["server_call_tool"]))
    for what, row in paths:
        diff = row["p50_difference_us"]
        checks.append(
            {
                "target": f"metering overhead < 1 ms per call ({what}; p50 diff)",
                "value": f"{diff} us",
                "met": diff < TARGET_OVERHEAD_US,
            }
        )
    loop_p50 = m["sqlite"]["all"]["p50_us"]
    checks.append(
        {
            "target": "admit_call + record_call < 1 ms (SQLite, p50 of every call)",
            "value": f"{loop_p50} us",
            "met": loop_p50 < TARGET_OVERHEAD_US,
        }
    )
    d = m["dynamodb"]
    expected = 1000 / FLUSH_CALLS
    checks.append(
        {
            "target": f"no synchronous DynamoDB write per call (~{expected:.0f} UpdateItem per 1,000 calls)",
            "value": f"{d['writes_per_1k']} writes / 1,000 calls",
            "met": d["writes_per_1k"] <= 2 * expected,
        }
    )
    added = m["wrapper_dynamodb"]["added_by_meter_per_1k"]
    added_total = round(sum(added.values()), 2)
    checks.append(
        {
            "target": "tool wrapper on DynamoDB: requests added by the meter per 1,000 calls << 1,000",
            "value": f"{added_total}",
            "met": added_total <= 4 * expected,
        }
    )
    ran = [d for d in document["dynamodb"].values() if "phases" in d]
    scans = sum(d["scan_calls"] for d in ran)
    checks.append({"target": "DynamoDB import/export: no Scan", "value": str(scans), "met": scans == 0 and bool(ran)})
    count = document["sqlite"]["notes"]
    for store, phases in [("SQLite", document["sqlite"]["phases"])] + [
        (f"DynamoDB {int(size):,}", d["phases"]) for size, d in document["dynamodb"].items() if "phases" in d
    ]:
        n = count if store == "SQLite" else int(store.split()[-1].replace(",", ""))
        skipped = [phases[name]["skipped"] for name in ("re-import export", "re-import memory.jsonl")]
        written = [phases[name]["written"] for name in ("re-import export", "re-import memory.jsonl")]
        checks.append(
            {
                "target": f"{store}: both re-imports skip every note and write none",
                "value": f"skipped {skipped[0]:,} / {skipped[1]:,} of {n:,}",
                "met": skipped == [n, n] and written == [0, 0],
            }
        )
    return checks


def report_targets(checks: Sequence[dict[str, Any]]) -> str:
    rows = [[c["target"], c["value"], "yes" if c["met"] else "NO"] for c in checks]
    return "\n=== Targets (reported, never enforced) ===\n" + table(["target", "value", "met"], rows)


# ----- main ----------------------------------------------------------------------------------------------------


def meta(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "notes": args.notes,
        "rounds": args.rounds,
        "dynamo_sizes": list(args.dynamo_sizes),
        "dynamo_budget_s": args.dynamo_budget,
        "units": "seconds wall clock; notes/s = notes in the file / seconds; latencies in microseconds (us); "
        "API calls counted per botocore call (retries excluded)",
    }


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated note counts, not {text!r}") from None
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("at least one positive note count")
    return sizes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.portability", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=DEFAULT_NOTES, help="Notes per file on SQLite (%(default)s).")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="SQLite rounds (%(default)s).")
    parser.add_argument(
        "--dynamo-sizes",
        type=_sizes,
        default=list(DEFAULT_DYNAMO_SIZES),
        help="Note counts on DynamoDB (moto), comma-separated (default 1000,3000).",
    )
    parser.add_argument(
        "--dynamo-budget",
        type=float,
        default=DEFAULT_DYNAMO_BUDGET,
        help="Skip a DynamoDB size expected (from the previous one) to take longer, in s (%(default)s).",
    )
    parser.add_argument("--meter-calls", type=int, default=DEFAULT_METER_CALLS, help="On SQLite (%(default)s).")
    parser.add_argument(
        "--dynamo-meter-calls", type=int, default=DEFAULT_DYNAMO_METER_CALLS, help="On moto (%(default)s)."
    )
    parser.add_argument(
        "--wrapper-calls", type=int, default=DEFAULT_WRAPPER_CALLS, help="Per variant, SQLite (%(default)s)."
    )
    parser.add_argument(
        "--dynamo-wrapper-calls", type=int, default=DEFAULT_DYNAMO_WRAPPER_CALLS, help="Per variant (%(default)s)."
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON results (default {DEFAULT_OUT}).")
    args = parser.parse_args(argv)
    for name in ("notes", "rounds", "meter_calls", "dynamo_meter_calls", "wrapper_calls", "dynamo_wrapper_calls"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = Corpus()
    document: dict[str, Any] = {"meta": meta(args)}
    log(f"generating a Notewell export and a memory.jsonl of {args.notes:,} notes each")
    files = {"export": export_file(corpus, args.notes), "memory": memory_file(corpus, args.notes)}
    document["files"] = {
        "export_lines": len(files["export"]),
        "export_mb": megabytes(files["export"]),
        "memory_lines": len(files["memory"]),
        "memory_mb": megabytes(files["memory"]),
    }
    with tempfile.TemporaryDirectory(prefix="notewell-bench-portability-") as tmp:
        workdir = Path(tmp)
        document["sqlite"] = bench_sqlite_portability(files, args.notes, args.rounds, workdir)
        document["dynamodb"] = bench_dynamo_portability(corpus, args.dynamo_sizes, args.dynamo_budget, workdir)
        print(report_portability(document), flush=True)
        document["metering"] = bench_metering(
            workdir, corpus, args.meter_calls, args.dynamo_meter_calls, args.wrapper_calls, args.dynamo_wrapper_calls
        )
        print(report_metering(document["metering"]), flush=True)
    document["targets"] = targets(document)
    print(report_targets(document["targets"]), flush=True)
    document["meta"]["loadavg_at_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
