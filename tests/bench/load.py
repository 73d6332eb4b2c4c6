"""A bounded loopback load run: N clients for T seconds of mixed reads and writes against `notewell serve`.

    python -m tests.bench.load [--clients 8] [--seconds 20] [--max-calls 20000] [--seed 1] [--out FILE]

Starts `notewell serve` as a subprocess on a free 127.0.0.1 port with a fresh data dir, and runs N asyncio
clients, each on its own HTTP connection, posting MCP tools/call JSON-RPC (mode 2026-07-28) with the server's key:
create_note, update_note with expectedVersion (clients share the notes, so some updates lose a race: 409, expected
and counted apart), remember, search_notes, get_context and get_changes_since. It stops by itself after T seconds
or --max-calls calls, whichever comes first, and stops the server.

Then it checks that nothing acknowledged was lost: every (id, version, body) a create, update or remember answered
with success must be in the project's export (`notewell export`, run on the data dir after the server stopped), as
the note or one of its revisions. It reports calls/s, p50/p99 per tool, errors by status, and acknowledged versus
stored writes; it exits 1 when an acknowledged write is missing or any call failed other than by a 409 race.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import ipaddress
import json
import os
import random
import subprocess
import sys
import tempfile
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
    from collections.abc import Iterable, Sequence

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
    def __init__(self, number: int, served: Served, tally: Tally, rng: random.Random) -> None:
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


def load(clients: int, seconds: float, max_calls: int, seed: int, workdir: Path) -> dict[str, Any]:
    tally = Tally()
    data_dir, home = workdir / "data", workdir / "home"
    with serve(data_dir, home) as served:
        require_loopback(served.url)
        cpu_before = served.cpu_seconds()

        async def main() -> float:
            started = time.monotonic()
            deadline = started + seconds
            runners = [Client(n, served, tally, random.Random(seed * 1000 + n)) for n in range(clients)]
            await asyncio.gather(*(runner.run(deadline, max_calls) for runner in runners))
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
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
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
    args = parser.parse_args(argv)
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600 or args.max_calls < 1:
        parser.error("use 1-256 clients, 0-600 seconds and a positive --max-calls")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="notewell-load-") as tmp:
        result = load(args.clients, args.seconds, args.max_calls, args.seed, Path(tmp))
    print(report(result), flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    writes = result["writes"]
    lost = writes["stored"] != writes["acknowledged"]
    return 1 if lost or result["unexpected_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
