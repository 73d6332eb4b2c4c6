"""The web console's server time per page, for a project of 1k and of 10k notes on the embedded store (SQLite).

Each page is requested through the app `notewell serve` runs (in process, over ASGI: no network, no browser), signed
in, and timed from request to complete response: what the server spends. The project is the bench corpus (seeded,
not tuned for this), with 20 disputed notes among its notes and one note edited 30 times (its page shows 20
revisions as diffs). Target (issue 15): every page <= 100 ms at 10k notes.

Then the same pages on the DynamoDB store (moto, in this process) at a small and a larger project: the DynamoDB
requests each page makes, which must not grow with the project (moto's latency says nothing of DynamoDB's, so
nothing there is timed).

    python -m tests.bench.console [--sizes 1000,10000] [--rounds 30] [--dynamo-sizes 50,650]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

from notewell.adapters.dynamodb import DynamoDBStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteStatus, NoteType
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.services.notes import NoteChanges
from tests.bench.common import PROJECT, log, new_principal, seed, table
from tests.bench.corpus import Corpus
from tests.bench.stats import summarize
from tests.support.dynamo import count_operations, dynamodb_store
from tests.support.mcp_harness import running

if TYPE_CHECKING:
    from notewell.ports import Store

SIZES = (1_000, 10_000)
DYNAMO_SIZES = (50, 650)
ROUNDS = 30
TARGET_MS = 100.0


def pages(note_id: str, edited_id: str, query: str) -> dict[str, str]:
    project = f"/console/p/{PROJECT}"
    return {
        "projects": "/",
        "project (get_context)": project,
        "project, with a query": f"{project}?q={query}",
        "timeline (7 days)": f"{project}/changes",
        "timeline, type filter": f"{project}/changes?since=all&type=decision",
        "conflicts": f"{project}/conflicts",
        "search": f"{project}/search?q={query}",
        "note": f"/console/n/{note_id}",
        "note, 30 versions": f"/console/n/{edited_id}",
        "edit form": f"/console/n/{note_id}/edit",
        "usage": "/console/usage",
    }


async def measure(size: int, rounds: int, store: Store | None = None) -> dict[str, Any]:
    """Server time per page (`rounds` requests each), or with `store` (DynamoDB) its requests per page."""
    with tempfile.TemporaryDirectory(prefix="notewell-console-bench-") as tmp:
        services = bootstrap(Settings(data_dir=Path(tmp), embedder="none", feed_horizon_seconds=0), store=store)
        calls = count_operations(store.client) if isinstance(store, DynamoDBStore) else None
        principal = new_principal(services)
        issued = services.auth.create_key(principal.workspace_id, name="person")
        corpus = Corpus()
        ids, seeding = seed(services, principal, corpus.notes(size))
        log(f"console: seeded {size:,} notes in {seeding['seconds']} s")
        for note_id in ids[:: max(1, size // 20)][:20]:  # conflicts to show
            services.notes.update(principal, note_id, NoteChanges(status=NoteStatus.DISPUTED))
        edited = services.notes.create(principal, PROJECT, title="Edited often", body="v1", type=NoteType.DECISION)
        for version in range(2, 31):
            body = "\n".join(f"line {i} of version {version if i % 7 == 0 else 1}" for i in range(40))
            services.notes.update(principal, edited.note.id, NoteChanges(body=body))
        query = corpus.queries(1)[0].split()[0]
        app = build_app(build_server(services), services, allowed_hosts=["testserver"], console=True)
        results: dict[str, Any] = {"notes": size, "seeding": seeding}
        async with (
            running(app),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://testserver") as http,
        ):
            form = (await http.get("/")).text
            csrf = re.search(r'name="csrf" value="([^"]+)"', form)
            assert csrf is not None
            signed = await http.post("/console/sign-in", data={"csrf": csrf.group(1), "api_key": issued.secret})
            assert signed.status_code == 303, signed.text
            for name, path in pages(ids[size // 2], edited.note.id, query).items():
                if calls is not None:
                    await http.get(path)  # warm: the meter's and the key's first reads are not the page's
                    calls.clear()
                    response = await http.get(path)
                    assert response.status_code == 200, (path, response.status_code, response.text[:500])
                    results[name] = {"requests": sum(calls.values()), "by_operation": dict(calls)}
                    continue
                samples = []
                for _ in range(rounds + 2):
                    started = time.perf_counter()
                    response = await http.get(path)
                    samples.append(time.perf_counter() - started)  # seconds: summarize reports ms
                    assert response.status_code == 200, (path, response.status_code, response.text[:500])
                stats = summarize(samples[2:])  # the first two warm caches
                results[name] = {"p50_ms": stats["p50_ms"], "p95_ms": stats["p95_ms"], "bytes": len(response.text)}
        services.meter.flush()
        return results


def report_dynamo(runs: list[dict[str, Any]]) -> str:
    names = [k for k in runs[0] if k not in ("notes", "seeding")]
    header = ["page", *(f"{r['notes']:,} notes" for r in runs)]
    rows = [[name, *(r[name]["requests"] for r in runs)] for name in names]
    return "=== Console on DynamoDB (moto): requests per page, signed in ===\n" + table(header, rows)


def report(runs: list[dict[str, Any]]) -> str:
    names = [k for k in runs[0] if k not in ("notes", "seeding")]
    header = ["page", *(f"{r['notes']:,} notes p50/p95 ms" for r in runs), "KB"]
    if len(runs) > 1:
        header.append(f"p50 {runs[-1]['notes'] // 1000}k/{runs[0]['notes'] // 1000}k")
    rows = []
    for name in names:
        row: list[object] = [name, *(f"{r[name]['p50_ms']:.1f} / {r[name]['p95_ms']:.1f}" for r in runs)]
        row.append(f"{runs[-1][name]['bytes'] / 1000:.1f}")
        if len(runs) > 1:
            row.append(f"{runs[-1][name]['p50_ms'] / max(runs[0][name]['p50_ms'], 1e-9):.2f}")
        rows.append(row)
    worst = max(runs[-1][name]["p95_ms"] for name in names)
    verdict = "met" if worst <= TARGET_MS else "missed"
    summary = (
        f"slowest page at {runs[-1]['notes']:,} notes: p95 {worst:.1f} ms (target <= {TARGET_MS:.0f} ms: {verdict})"
    )
    return (
        "=== Console: server time per page (SQLite, in process, signed in) ===\n"
        + table(header, rows)
        + "\n  "
        + summary
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--dynamo-sizes", default=",".join(str(s) for s in DYNAMO_SIZES))
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures as JSON here.")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    runs = [asyncio.run(measure(size, args.rounds)) for size in sizes]
    print(report(runs))
    dynamo = []
    for size in (int(s) for s in args.dynamo_sizes.split(",") if s.strip()):
        with dynamodb_store(table_name=f"notewell-console-{size}") as store:
            dynamo.append(asyncio.run(measure(size, 1, store)))
    if dynamo:
        print(report_dynamo(dynamo))
    if args.out is not None:
        args.out.write_text(json.dumps({"sqlite": runs, "dynamodb": dynamo}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
