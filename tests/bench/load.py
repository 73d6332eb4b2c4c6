"""A bounded loopback load run: N clients for T seconds of mixed reads and writes against `notewell serve`.

    python -m tests.bench.load [--clients 8] [--seconds 20] [--max-calls 20000] [--seed 1] [--out FILE]
                               [--slow-documents 40]

Starts `notewell serve` as a subprocess on a free 127.0.0.1 port with a fresh data dir, and runs N asyncio
clients, each on its own HTTP connection, posting MCP tools/call JSON-RPC (mode 2026-07-28) with the server's key:
create_note, update_note with expectedVersion (clients share the notes, so some updates lose a race: 409, expected
and counted apart), remember, search_notes, get_context and get_changes_since. It stops by itself after T seconds
or --max-calls calls, whichever comes first, and stops the server.

Then it checks that nothing acknowledged was lost: every (id, version, body) a create, update or remember answered
with success must be in the project's export (`notewell export`, run on the data dir after the server stopped), as
the note or one of its revisions. It reports calls/s, p50/p99 per tool, errors by status, and acknowledged versus
stored writes; it exits 1 when an acknowledged write is missing or any call failed other than by a 409 race.

With --slow-documents N, N browsers also ask for the consent page of a client whose metadata document (CIMD) is
hosted somewhere slow, during the whole run: GET /authorize?client_id=https://slowK.example/client.json, each
browser from its own connection and loopback address (127.0.0.K+2, so the per-address budget of /authorize
answers for each browser alone). A real `serve` cannot have its document fetcher faked and the fetch fence
refuses loopback addresses, so this mode builds the app as `serve` does (entrypoints/cli.py) in code, with an
HttpClientDocuments whose resolver answers a public-looking address (nothing is resolved or connected) and whose
transport sends one byte every 2.5 s for up to 40 s, and serves it with uvicorn on 127.0.0.1 in a background
thread of a process of its own (so the clients never share its interpreter lock). A failed document is
remembered for a minute, so after its first request a browser names a new document on the same host
(https://slowK.example/client-<n>.json) to keep its host slow. Besides the usual figures it reports the MCP p99
over all tools and the browsers' answers; it exits 1 also when that p99 is 1 s or more.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import ipaddress
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx2

from tests.bench.local_server import serve
from tests.bench.stats import percentile

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from multiprocessing.connection import Connection

    from tests.bench.local_server import Served

PROJECT = "load"
MODERN = "2026-07-28"
CALL_TIMEOUT_S = 30.0
EXPORT_TIMEOUT_S = 120.0
# Tool mix, in relative weights: half writes, half reads.
MIX = {
    "create_note": 20,
    "update_note": 20,
    "remember": 10,
    "search_notes": 20,
    "get_context": 15,
    "get_changes_since": 15,
}
SLOW_BYTE_EVERY_S = 2.5  # a slow document host: one byte this often ...
SLOW_FOR_S = 40.0  # ... for this long at most
PUBLIC_LOOKING = "93.184.215.14"  # what the fake resolver answers: passes the fetch fence, is never connected to
P99_BOUND_S = 1.0  # --slow-documents fails the run when the MCP p99 reaches this
HOT_NOTES = 6  # updates pick among the newest notes, so clients often race for the same version
WORDS = (
    "cache", "queue", "deploy", "schema", "index", "token", "session", "billing", "invoice", "webhook", "retry",
    "shard", "replica", "backup", "alert", "latency", "budget", "tenant", "export", "import", "cursor", "feed",
    "search", "ranking", "vector", "lambda", "table", "bucket", "metric", "trace",
)  # fmt: skip


def digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


# ----- what the clients saw ------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Everything the clients saw, in one event loop (no locks needed)."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, Counter[str]] = field(default_factory=dict)  # tool -> status -> count (409 included)
    first_error: dict[str, str] = field(default_factory=dict)
    acknowledged: dict[tuple[str, int], str] = field(default_factory=dict)  # (id, version) -> body digest
    known: dict[str, int] = field(default_factory=dict)  # note id -> newest version a client has seen
    calls: int = 0

    def sample(self, tool: str, seconds: float) -> None:
        self.latencies.setdefault(tool, []).append(seconds)

    def error(self, tool: str, status: str, detail: str) -> None:
        self.errors.setdefault(tool, Counter())[status] += 1
        self.first_error.setdefault(f"{tool} {status}", detail[:300])

    def acknowledge(self, note: dict[str, Any], body: str) -> None:
        self.acknowledged[(str(note["id"]), int(note["version"]))] = digest(body)
        self.known[str(note["id"])] = max(self.known.get(str(note["id"]), 0), int(note["version"]))

    def unexpected_errors(self) -> int:
        return sum(n for counts in self.errors.values() for status, n in counts.items() if status != "409")


def compare(acknowledged: dict[tuple[str, int], str], stored: dict[tuple[str, int], str]) -> dict[str, Any]:
    """Acknowledged writes against the stored ones: each acknowledged (id, version) with the same body."""
    missing = sorted(key for key in acknowledged if key not in stored)
    different = sorted(key for key in acknowledged if key in stored and stored[key] != acknowledged[key])
    return {
        "acknowledged": len(acknowledged),
        "stored": len(acknowledged) - len(missing) - len(different),
        "missing": [f"{note_id} v{version}" for note_id, version in missing[:20]],
        "different_body": [f"{note_id} v{version}" for note_id, version in different[:20]],
        "stored_not_acknowledged": len(set(stored) - set(acknowledged)),  # e.g. writes whose answer was lost
    }


def stored_versions(lines: Iterable[str]) -> dict[tuple[str, int], str]:
    """(id, version) -> body digest of every note and revision in a Notewell export."""
    stored: dict[tuple[str, int], str] = {}
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("kind") == "note":
            stored[(record["id"], record["version"])] = digest(record["body"])
        elif record.get("kind") == "revision":
            stored[(record["noteId"], record["version"])] = digest(record["body"])
    return stored


# ----- one client ----------------------------------------------------------------------------------------------


class Client:
    def __init__(self, number: int, served: Served | SlowServed, tally: Tally, rng: random.Random) -> None:
        self.number = number
        self.served = served
        self.tally = tally
        self.rng = rng
        self.cursor: str | None = None
        self.sequence = 0
        self.request_id = 0

    def text(self, words: int) -> str:
        self.sequence += 1
        picked = " ".join(self.rng.choice(WORDS) for _ in range(words))
        return f"Client {self.number} write {self.sequence}: {picked}."

    async def call(self, http: httpx2.AsyncClient, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The structured result of a successful call, else None (the failure is tallied by status)."""
        self.request_id += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "notewell-load", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        message = {
            "jsonrpc": "2.0", "id": self.request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta},
        }  # fmt: skip
        headers = {
            "accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool,
        }  # fmt: skip
        self.tally.calls += 1
        started = time.perf_counter()
        try:
            response = await http.post(self.served.url, content=json.dumps(message).encode(), headers=headers)
        except httpx2.HTTPError as exc:
            self.tally.sample(tool, time.perf_counter() - started)
            self.tally.error(tool, type(exc).__name__, str(exc))
            return None
        self.tally.sample(tool, time.perf_counter() - started)
        if response.status_code != 200:
            self.tally.error(tool, f"HTTP {response.status_code}", response.text)
            return None
        result = response.json().get("result")
        if not isinstance(result, dict):
            self.tally.error(tool, "no result", response.text)
            return None
        structured = result.get("structuredContent") or {}
        if result.get("isError"):
            error = structured.get("error", {})
            self.tally.error(tool, str(error.get("status", "?")), json.dumps(error))
            if error.get("code") == "version_conflict" and "currentVersion" in error:
                known = self.tally.known
                note_id = str(error.get("id", ""))
                known[note_id] = max(known.get(note_id, 0), int(error["currentVersion"]))
            return None
        return dict(structured)

    async def step(self, http: httpx2.AsyncClient) -> None:
        tool = self.rng.choices(list(MIX), weights=list(MIX.values()))[0]
        if tool == "update_note" and not self.tally.known:
            tool = "create_note"
        if tool == "create_note":
            body = self.text(12)
            arguments = {"project": PROJECT, "title": f"Load note {self.number}-{self.sequence}", "body": body}
            created = await self.call(http, tool, arguments)
            if created is not None:
                self.tally.acknowledge(created, body)
        elif tool == "update_note":
            hot = list(self.tally.known)[-HOT_NOTES:]
            note_id = self.rng.choice(hot)
            version = self.tally.known[note_id]
            body = self.text(12)
            updated = await self.call(http, tool, {"id": note_id, "body": body, "expectedVersion": version})
            if updated is not None:
                self.tally.acknowledge(updated, body)
        elif tool == "remember":
            content = self.text(16)
            answer = await self.call(http, tool, {"project": PROJECT, "content": content})
            if answer is not None and answer.get("status") in ("created", "updated"):
                self.tally.acknowledge(answer["note"], content)
        elif tool == "search_notes":
            await self.call(http, tool, {"project": PROJECT, "query": self.rng.choice(WORDS)})
        elif tool == "get_context":
            await self.call(http, tool, {"project": PROJECT, "query": self.rng.choice(WORDS), "maxTokens": 1200})
        else:
            arguments: dict[str, Any] = {"project": PROJECT, "limit": 20}
            if self.cursor is not None:
                arguments["cursor"] = self.cursor
            page = await self.call(http, tool, arguments)
            if page is not None:
                self.cursor = page.get("cursor", self.cursor)

    async def run(self, deadline: float, max_calls: int) -> None:
        # trust_env=False: the loopback traffic never goes through a proxy from the environment.
        async with httpx2.AsyncClient(
            headers={"authorization": f"Bearer {self.served.key}"}, trust_env=False, timeout=CALL_TIMEOUT_S
        ) as http:
            while time.monotonic() < deadline and self.tally.calls < max_calls:
                await self.step(http)


# ----- --slow-documents: the app in this process, with slow client-document hosts --------------------------------


class _Trickle(httpx2.SyncByteStream):
    """A document body that arrives one byte every SLOW_BYTE_EVERY_S, for SLOW_FOR_S at most; ends when closed."""

    def __init__(self, hosts: SlowHosts) -> None:
        self._hosts = hosts
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(int(SLOW_FOR_S / SLOW_BYTE_EVERY_S)):
            if self._closed.wait(SLOW_BYTE_EVERY_S):
                return
            yield b" "

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._hosts.finished()


class SlowHosts(httpx2.BaseTransport):
    """Every client-document host, answering 200 at once and then the body at a trickle; counts the fetches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.fetches = 0
        self.open = 0
        self.most_open = 0

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.fetches += 1
            self.open += 1
            self.most_open = max(self.most_open, self.open)
        return httpx2.Response(200, headers={"content-type": "application/json"}, stream=_Trickle(self))

    def finished(self) -> None:
        with self._lock:
            self.open -= 1


@dataclass
class InProcess:
    """The app `serve` runs, served by uvicorn in a thread of the process that built it."""

    url: str
    key: str
    hosts: SlowHosts


@dataclass
class SlowServed:
    """That process seen from the bench: its URL and key, /proc readings, and the document fetches it made."""

    url: str
    key: str
    pid: int
    fetches: int = 0
    most_fetches_at_once: int = 0

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.pid}/stat") as stat:  # noqa: PTH123 - a /proc file, not a project path
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime, proc(5)

    def memory_kb(self) -> dict[str, int]:
        values: dict[str, int] = {}
        with open(f"/proc/{self.pid}/status") as status:  # noqa: PTH123 - a /proc file, not a project path
            for line in status:
                name, _, rest = line.partition(":")
                if name in ("VmHWM", "VmRSS", "Threads"):
                    values[name] = int(rest.split()[0])
        return values


@contextlib.contextmanager
def serve_in_process(data_dir: Path, home: Path) -> Iterator[InProcess]:
    """`notewell serve` as its own code builds it (entrypoints/cli.py _serve), but in this process, with slow
    client-document hosts; stopped and its usage counts flushed when the block ends."""
    import uvicorn

    from notewell.adapters.client_documents import HttpClientDocuments
    from notewell.bootstrap import bootstrap
    from notewell.config import Settings
    from notewell.domain.model import Plan
    from notewell.entrypoints.cli import serve_hosts
    from notewell.entrypoints.http import build_app
    from notewell.entrypoints.mcp_tools import build_server

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = int(listener.getsockname()[1])
    base = f"http://127.0.0.1:{port}"
    settings = Settings.from_env({**os.environ, "NOTEWELL_HOME": str(home)})
    settings = dataclasses.replace(settings, data_dir=data_dir, issuer=base)  # serve's own issuer on loopback
    hosts = SlowHosts()
    documents = HttpClientDocuments(resolver=lambda host: [PUBLIC_LOOKING], transport=hosts)
    services = bootstrap(settings, client_documents=documents)
    workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)
    key = services.auth.create_key(workspace.id, name="load").secret
    if services.meaning is not None:  # as serve does: the model loads and embeds in the background
        threading.Thread(target=services.meaning.prepare, name="notewell-embeddings", daemon=True).start()
    app = build_app(build_server(services), services, allowed_hosts=serve_hosts("127.0.0.1", ()), console=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="notewell-serve", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise SystemExit("the in-process server did not start")
            time.sleep(0.05)
        yield InProcess(f"{base}/mcp", key, hosts)
    finally:
        server.should_exit = True
        thread.join(SLOW_FOR_S + 10)  # a fetch in progress ends at the fetcher's own deadline
        services.meter.flush()
        listener.close()


def _serve_slow_documents(data_dir: str, home: str, bench: Connection) -> None:
    """The server process: serves until the bench says stop, then reports the document fetches it made."""
    with serve_in_process(Path(data_dir), Path(home)) as served:
        bench.send((served.url, served.key))
        bench.recv()
        bench.send((served.hosts.fetches, served.hosts.most_open))


@contextlib.contextmanager
def serve_slow_documents(data_dir: Path, home: Path) -> Iterator[SlowServed]:
    """serve_in_process in a process of its own: clients in the bench's process would otherwise share the server's
    interpreter lock, and their own work would show as server latency."""
    context = multiprocessing.get_context("spawn")
    bench, server = context.Pipe()
    process = context.Process(target=_serve_slow_documents, args=(str(data_dir), str(home), server), daemon=True)
    process.start()
    try:
        if not bench.poll(60):
            raise SystemExit("the server process did not start in 60 s")
        url, key = bench.recv()
        served = SlowServed(url, key, process.pid or 0)
        yield served
        bench.send("stop")
        if bench.poll(SLOW_FOR_S + 20):  # a fetch in progress ends at the fetcher's own deadline
            served.fetches, served.most_fetches_at_once = bench.recv()
    finally:
        process.join(30)
        if process.is_alive():
            process.terminate()
            process.join(10)


@dataclass
class Browsers:
    """What the people asking for slow clients' consent pages saw."""

    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


async def browse(number: int, base: str, deadline: float, seen: Browsers) -> None:
    """One person's browser, on its own connection and loopback address, asking for a slow client's consent page
    until the run ends; a quick answer (busy, refused) is retried a second later, as a person would."""
    transport = httpx2.AsyncHTTPTransport(local_address=f"127.0.0.{number + 2}")
    async with httpx2.AsyncClient(transport=transport, trust_env=False, timeout=SLOW_FOR_S + 20) as http:
        attempt = 0
        while time.monotonic() < deadline:
            document = "client.json" if attempt == 0 else f"client-{attempt}.json"
            query = {"response_type": "code", "client_id": f"https://slow{number}.example/{document}",
                     "redirect_uri": f"https://slow{number}.example/cb", "state": "s", "code_challenge": "c" * 43,
                     "code_challenge_method": "S256"}  # fmt: skip
            attempt += 1
            started = time.perf_counter()
            try:
                answer = await http.get(f"{base}/authorize", params=query)
                seen.statuses[str(answer.status_code)] += 1
            except httpx2.HTTPError as exc:
                seen.statuses[type(exc).__name__] += 1
            took = time.perf_counter() - started
            seen.latencies.append(took)
            if took < 1:
                await asyncio.sleep(1 - took)


# ----- the run -------------------------------------------------------------------------------------------------


def require_loopback(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if not ipaddress.ip_address(host).is_loopback:
        raise SystemExit(f"refusing to load {url}: only loopback addresses")


def export(data_dir: Path, home: Path) -> list[str]:
    """The project's export, read by `notewell export` from the data dir once the server has stopped."""
    env = {**os.environ, "NOTEWELL_HOME": str(home)}
    command = [sys.executable, "-m", "notewell.entrypoints.cli", "export", "--project", PROJECT]
    done = subprocess.run(  # noqa: S603 - our own CLI, fixed arguments
        [*command, "--data-dir", str(data_dir)], capture_output=True, text=True, env=env, timeout=EXPORT_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"notewell export failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.splitlines()


def load(
    clients: int, seconds: float, max_calls: int, seed: int, workdir: Path, slow_documents: int = 0
) -> dict[str, Any]:
    tally = Tally()
    browsers = Browsers()
    data_dir, home = workdir / "data", workdir / "home"
    server = serve_slow_documents(data_dir, home) if slow_documents else serve(data_dir, home)
    with server as served:
        require_loopback(served.url)
        cpu_before = served.cpu_seconds()
        base = served.url.removesuffix("/mcp")

        async def main() -> float:
            started = time.monotonic()
            deadline = started + seconds
            runners = [Client(n, served, tally, random.Random(seed * 1000 + n)) for n in range(clients)]
            people = [browse(n, base, deadline, browsers) for n in range(slow_documents)]
            await asyncio.gather(*(runner.run(deadline, max_calls) for runner in runners), *people)
            return time.monotonic() - started

        elapsed = asyncio.run(main())
        server_cpu = served.cpu_seconds() - cpu_before
        memory = served.memory_kb()
    accounting = compare(tally.acknowledged, stored_versions(export(data_dir, home)))
    tools: dict[str, Any] = {}
    for tool in MIX:
        samples = sorted(tally.latencies.get(tool, []))
        errors = tally.errors.get(tool, Counter())
        tools[tool] = {
            "calls": len(samples),
            "p50_ms": round(percentile(samples, 0.50) * 1000, 2) if samples else None,
            "p99_ms": round(percentile(samples, 0.99) * 1000, 2) if samples else None,
            "conflicts_409": errors.get("409", 0),
            "errors": {status: n for status, n in sorted(errors.items()) if status != "409"},
        }
    every_call = sorted(sample for samples in tally.latencies.values() for sample in samples)
    slow: dict[str, Any] | None = None
    if isinstance(served, SlowServed):
        slow = {
            "browsers": slow_documents,
            "answers": dict(sorted(browsers.statuses.items())),
            "p50_s": round(percentile(sorted(browsers.latencies), 0.50), 2) if browsers.latencies else None,
            "max_s": round(max(browsers.latencies), 2) if browsers.latencies else None,
            "document_fetches": served.fetches,
            "most_fetches_at_once": served.most_fetches_at_once,
        }
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "mcp_p99_ms": round(percentile(every_call, 0.99) * 1000, 2) if every_call else None,
        "slow_documents": slow,
        "calls": tally.calls,
        "calls_per_s": round(tally.calls / elapsed, 1) if elapsed > 0 else None,
        "server_cpu_cores": round(server_cpu / elapsed, 2) if elapsed > 0 else None,
        "server_peak_rss_kb": memory.get("VmHWM"),
        "tools": tools,
        "unexpected_errors": tally.unexpected_errors(),
        "first_errors": tally.first_error,
        "writes": accounting,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"Load: {result['clients']} clients, {result['seconds']} s, {result['calls']} calls, "
        f"{result['calls_per_s']} calls/s (server CPU {result['server_cpu_cores']} cores, "
        f"peak RSS {result['server_peak_rss_kb']} kB)",
        f"{'tool':<20}{'calls':>8}{'p50 ms':>10}{'p99 ms':>10}{'409':>7}  other errors",
    ]
    for tool, row in result["tools"].items():
        other = ", ".join(f"{status}: {n}" for status, n in row["errors"].items()) or "-"
        lines.append(
            f"{tool:<20}{row['calls']:>8}{row['p50_ms'] or '-':>10}{row['p99_ms'] or '-':>10}"
            f"{row['conflicts_409']:>7}  {other}"
        )
    lines.append(f"MCP p99 over every call: {result['mcp_p99_ms']} ms")
    slow = result["slow_documents"]
    if slow is not None:
        lines.append(
            f"Slow client documents: {slow['browsers']} browsers, answers {slow['answers']} (p50 {slow['p50_s']} s, "
            f"max {slow['max_s']} s); {slow['document_fetches']} document fetches, at most "
            f"{slow['most_fetches_at_once']} at once"
        )
    writes = result["writes"]
    lines.append(
        f"Writes: {writes['acknowledged']} acknowledged, {writes['stored']} of them stored "
        f"({writes['stored_not_acknowledged']} stored without an answer)"
    )
    if writes["missing"] or writes["different_body"]:
        lines.append(f"LOST: missing {writes['missing']}, different body {writes['different_body']}")
    for what, detail in result["first_errors"].items():
        if not what.endswith(" 409"):
            lines.append(f"first {what}: {detail}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="Concurrent clients (default 8).")
    parser.add_argument("--seconds", type=float, default=20.0, help="How long the load lasts (default 20).")
    parser.add_argument("--max-calls", type=int, default=20_000, help="Stop after this many calls (default 20000).")
    parser.add_argument("--seed", type=int, default=1, help="Seed of the clients' choices (default 1).")
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures to this JSON file.")
    slow = "Browsers asking for slow-hosted clients' consent pages meanwhile (0-200; default 0)."
    parser.add_argument("--slow-documents", type=int, default=0, help=slow)
    args = parser.parse_args(argv)
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600 or args.max_calls < 1:
        parser.error("use 1-256 clients, 0-600 seconds and a positive --max-calls")
    if not 0 <= args.slow_documents <= 200:  # one loopback address each, 127.0.0.2 onwards
        parser.error("use 0-200 --slow-documents")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="notewell-load-") as tmp:
        result = load(args.clients, args.seconds, args.max_calls, args.seed, Path(tmp), args.slow_documents)
    print(report(result), flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    writes = result["writes"]
    lost = writes["stored"] != writes["acknowledged"]
    slow_mcp = args.slow_documents > 0 and (result["mcp_p99_ms"] or 0) >= P99_BOUND_S * 1000
    return 1 if lost or slow_mcp or result["unexpected_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
