"""What meaning-aware memory costs on the SQLite store with the packaged local model (all-MiniLM-L6 int8).

    python -m tests.bench.meaning [--sizes 1000,10000] [--calls 150] [--searches 200] [--vocabulary english]
                                  [--out .bench/meaning.json]

Notes are drawn from English words by default (tests/bench/corpus.py english_words: about 1.2 model tokens a word,
as English sentences take); `--vocabulary generated` uses the pseudo-words of the other benches, which split into
about 3.5 tokens a word and so cost the model about three times as much per note.

For each size:
  1. import: an export file of that many generated notes imported into a fresh data dir, once without a model and
     once with it (vectors computed in batches as the import lands): notes/s, and the embedding throughput the
     difference implies;
  2. search_notes through the core on the imported notes: semantic (hybrid) against keywords only, p50/p95;
  3. remember through the core with the model on (tests/bench/remember.py: new content, exact repeats, longer
     restatements) on a data dir seeded note by note, and the same without a model for comparison. Every size is
     seeded first and the calls are timed in rounds alternating between the sizes, so the 10k/1k ratio compares
     calls made in the same minutes.
Then once, on the largest imported data dir: `notewell serve` started on it (an existing data dir, as `make serve`
runs it): seconds until it accepts connections and until its first semantic search_notes is answered over MCP,
its memory (VmHWM, VmRSS) after searches with every vector loaded, and the same server without a model; and the
disk the `embed` extra adds to the virtualenv (its packages and what only they pull in).
Figures only: nothing here fails on speed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from packaging.requirements import Requirement

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.model import Plan
from tests.bench.common import PROJECT, log, table, timed_rounds
from tests.bench.corpus import Corpus, english_words
from tests.bench.local_server import HOST, Served, free_port, wait_for_port
from tests.bench.portability import export_file
from tests.bench.remember import KINDS, STATEMENTS_TIMED, bench_remember_sizes
from tests.bench.run import mcp_client, tool_caller

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from notewell.domain.model import Principal

START_TIMEOUT_S = 120.0
REMEMBER_WARMUP = 20  # remember calls of each kind before the timed ones, on each seeded store
EMBED_EXTRA = "embed"


# ----- 1 + 2: import and search -----------------------------------------------------------------------------


def import_and_search(
    size: int, workdir: Path, corpus: Corpus, embedder: EmbedderChoice, searches: int
) -> dict[str, Any]:
    """Import `size` notes into a fresh data dir (the serve workspace, so `notewell serve` can use it afterwards),
    then time search_notes on them. Returns the figures and the key that reads them."""
    data_dir = workdir / f"import-{embedder}-{size}"
    lines = export_file(corpus, size)
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir, embedder=embedder), store=store)
        workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)
        secret = services.auth.create_key(workspace.id, name="bench").secret
        principal = services.auth.authenticate(secret)
        assert principal is not None
        if services.meaning is not None:
            services.meaning.prepare()  # loads the model before the clock starts, as serve does at start
        log(f"import {size:,} notes, embedder {embedder}")
        started = time.perf_counter()
        report = services.portability.import_file(principal, PROJECT, lines)
        seconds = time.perf_counter() - started
        result: dict[str, Any] = {
            "embedder": embedder, "notes": size, "imported": report.notes_written, "seconds": round(seconds, 2),
            "notes_per_s": round(size / seconds, 1), "data_dir": str(data_dir), "key": secret,
        }  # fmt: skip
        if services.meaning is not None:
            result["without_vectors_after"] = services.meaning.backlog()
        result["search"] = time_searches(services, principal, corpus, searches, semantic=services.meaning is not None)
    finally:
        store.close()
    return result


def time_searches(services: Any, principal: Principal, corpus: Corpus, count: int, *, semantic: bool) -> dict[str, Any]:
    queries = corpus.queries(count + 20, stream=7)
    modes: dict[str, list[str]] = {}

    def call(semantic_on: bool) -> Any:
        def search(query: str) -> None:
            outcome = services.search.run(principal, PROJECT, query, semantic=semantic_on, limit=10)
            modes.setdefault("semantic" if semantic_on else "keywords", []).append(outcome.mode.value)

        return search

    ops: dict[str, tuple[Callable[[Any], object], Sequence[Any]]] = {"keywords": (call(False), queries[20:])}
    if semantic:
        ops["semantic"] = (call(True), queries[20:])
    for query in queries[:20]:  # warm-up: the first semantic search loads the project's vectors
        for fn, _ in ops.values():
            fn(query)
    modes.clear()
    timed = timed_rounds(ops, 5)
    for name in timed:
        timed[name]["answered_by"] = sorted(set(modes.get(name, [])))
    return timed


# ----- 4: notewell serve on an existing data dir --------------------------------------------------------------


@contextlib.contextmanager
def started_server(data_dir: Path, embedder: EmbedderChoice, home: Path) -> Iterator[tuple[Served, float]]:
    """`notewell serve` on an existing data dir; yields once it accepts connections, with the seconds that took."""
    port = free_port()
    env = {**os.environ, "NOTEWELL_HOME": str(home), "NOTEWELL_EMBEDDER": embedder}
    command = [str(Path(sys.executable).parent / "notewell"), "serve", "--host", HOST, "--port", str(port),
               "--data-dir", str(data_dir)]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        wait_for_port(port, time.monotonic() + START_TIMEOUT_S, process, interval=0.01)
        accepting = time.perf_counter() - started
        yield Served(process, f"http://{HOST}:{port}/mcp", ""), accepting
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def serve_figures(data_dir: Path, key: str, embedder: EmbedderChoice, corpus: Corpus, home: Path) -> dict[str, Any]:
    queries = corpus.queries(50, stream=9)
    with started_server(data_dir, embedder, home) as (served, accepting):
        served.key = key
        started = time.perf_counter() - accepting

        async def searches() -> dict[str, Any]:
            async with mcp_client(served, "2026-07-28") as client:
                first = await client.call_tool(
                    "search_notes", {"project": PROJECT, "query": queries[0], "semantic": embedder != "none"}
                )
                first_answered = time.perf_counter() - started
                call = tool_caller(client)
                for query in queries[1:]:
                    error = await call("search_notes", {"project": PROJECT, "query": query, "semantic": True})
                    if error is not None:
                        raise RuntimeError(error)
                structured = first.structured_content or {}
                return {"first_search_s": round(first_answered, 2), "first_mode": structured.get("searchMode")}

        out = anyio.run(searches)
        memory = served.memory_kb()
    return {
        "embedder": embedder, "accepting_s": round(accepting, 2), **out,
        "vm_hwm_mb": round(memory["VmHWM"] / 1024, 1), "vm_rss_mb": round(memory["VmRSS"] / 1024, 1),
        "rss_anon_mb": round(memory.get("RssAnon", 0) / 1024, 1),
    }  # fmt: skip


# ----- 5: install size ------------------------------------------------------------------------------------


def _closure(requirements: Sequence[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """Distribution names a set of requirements pulls in, transitively, as installed here."""
    seen: set[str] = set()
    pending = [Requirement(r) for r in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": next(iter(extras), "")}):
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        if name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for child in dist.requires or []:
            parsed = Requirement(child)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                pending.append(parsed)
    return seen


def install_size() -> dict[str, Any]:
    """Bytes on disk of the distributions only the embed extra brings (its packages and their own dependencies,
    less everything the base install needs)."""
    notewell = importlib.metadata.distribution("notewell")
    base, extra = [], []
    for requirement in notewell.requires or []:
        parsed = Requirement(requirement)
        if parsed.marker is None:
            base.append(requirement)
        elif parsed.marker.evaluate({"extra": EMBED_EXTRA}):
            extra.append(str(Requirement(requirement)).split(";")[0])
    added = _closure(extra) - _closure(base)
    sizes: dict[str, float] = {}
    for name in sorted(added):
        dist = importlib.metadata.distribution(name)
        total = 0
        for file in dist.files or []:
            with contextlib.suppress(OSError):
                total += Path(str(dist.locate_file(file))).stat().st_size
        sizes[name] = round(total / 1e6, 1)
    venv_mb = sum(p.stat().st_size for p in Path(sys.prefix).rglob("*") if p.is_file() and not p.is_symlink()) / 1e6
    return {"packages_mb": sizes, "added_mb": round(sum(sizes.values()), 1), "venv_mb": round(venv_mb, 1)}


# ----- report ----------------------------------------------------------------------------------------------


def tokens_per_word(corpus: Corpus) -> float | None:
    """Model tokens per word of the statements remember is timed with (None without the embed extra)."""
    from notewell.adapters.onnx_embedder import packaged_tokenizer

    path = packaged_tokenizer()
    if path is None:
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()  # the file pads to a fixed length; the model is given each text's own length
    tokenizer.no_truncation()
    texts = [s.restated for s in corpus.statements(200, stream=STATEMENTS_TIMED)]
    tokens = sum(len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts)
    return round(tokens / sum(len(t.split()) for t in texts), 2)


def report(document: dict[str, Any]) -> str:
    vocabulary = document["vocabulary"]
    lines: list[str] = [
        f"Notes of {vocabulary['words']} words ({vocabulary['tokens_per_word']} model tokens a word)",
        "",
    ]
    sizes = document["sizes"]
    rows = []
    for size, r in sizes.items():
        none, local = r["import"]["none"], r["import"]["local"]
        embed_s = local["seconds"] - none["seconds"]
        rows.append([f"{int(size):,}", f"{none['notes_per_s']:,.0f}", f"{local['notes_per_s']:,.0f}",
                     f"{int(size) / embed_s:,.0f}" if embed_s > 0 else "-"])  # fmt: skip
    lines += ["Import of an export file (notes/s)", table(["notes", "no model", "local model", "embeddings/s"], rows)]
    rows = []
    for size, r in sizes.items():
        search = r["import"]["local"]["search"]
        for mode in ("keywords", "semantic"):
            s = search[mode]
            rows.append([f"{int(size):,}", mode, ",".join(s["answered_by"]), s["p50_ms"], s["p95_ms"]])
    header = ["notes", "asked", "searchMode", "p50 ms", "p95 ms"]
    lines += ["", "search_notes through the core (limit 10)", table(header, rows)]
    rows = []
    for size, r in sizes.items():
        for embedder in ("none", "local"):
            remember = r["remember"][embedder]["remember"]
            for kind in KINDS:
                s = remember[kind]
                statuses = ", ".join(f"{k} {v}" for k, v in s["statuses"].items() if v)
                rows.append([f"{int(size):,}", embedder, kind, s["p50_ms"], s["p95_ms"], statuses])
    lines += ["", "remember through the core", table(["notes", "model", "call", "p50 ms", "p95 ms", "outcomes"], rows)]
    if len(sizes) >= 2:
        small, large = list(sizes)[0], list(sizes)[-1]
        rows = []
        for embedder in ("none", "local"):
            for kind in KINDS:
                a = sizes[small]["remember"][embedder]["remember"][kind]["p50_ms"]
                b = sizes[large]["remember"][embedder]["remember"][kind]["p50_ms"]
                rows.append([embedder, kind, f"{b / a:.2f}"])
        title = f"remember p50 ratio {int(large):,} / {int(small):,} notes"
        lines += ["", title, table(["model", "call", "ratio"], rows)]
    serve = document.get("serve")
    if serve:
        rows = [[s["embedder"], s["accepting_s"], s["first_search_s"], s["first_mode"], s["vm_hwm_mb"], s["vm_rss_mb"]]
                for s in serve["runs"]]  # fmt: skip
        header = ["model", "accepting s", "1st search s", "searchMode", "VmHWM MB", "VmRSS MB"]
        lines += ["", f"notewell serve on an existing data dir of {serve['notes']:,} notes", table(header, rows)]
    install = document.get("install")
    if install:
        rows = [[name, mb] for name, mb in install["packages_mb"].items()]
        lines += ["", f"Disk the embed extra adds: {install['added_mb']} MB (whole .venv {install['venv_mb']} MB)",
                  table(["distribution", "MB"], rows)]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=150, help="remember calls of each kind")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10, help="rounds the remember calls are split into")
    parser.add_argument("--vocabulary", choices=("english", "generated"), default="english")
    parser.add_argument("--out", type=Path, default=Path(".bench/meaning.json"))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    corpus = Corpus(vocabulary=english_words()) if args.vocabulary == "english" else Corpus()
    document: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "vocabulary": {"words": args.vocabulary, "tokens_per_word": tokens_per_word(corpus)},
        "sizes": {},
    }
    with tempfile.TemporaryDirectory(prefix="notewell-bench-meaning-") as tmp:
        workdir = Path(tmp)
        largest: dict[str, Any] = {}
        embedders: tuple[EmbedderChoice, ...] = ("none", "local")
        for size in sizes:
            row: dict[str, Any] = {"import": {}, "remember": {}}
            for embedder in embedders:
                row["import"][embedder] = import_and_search(size, workdir, corpus, embedder, args.searches)
            document["sizes"][str(size)] = row
            largest = row["import"]
        for embedder in embedders:
            remembered = bench_remember_sizes(
                sizes, workdir / f"remember-{embedder}", corpus, args.calls, REMEMBER_WARMUP, args.rounds,
                embedder=embedder,
            )  # fmt: skip
            for size, result in remembered.items():
                document["sizes"][str(size)]["remember"][embedder] = result
        if largest:
            home = workdir / "home"
            home.mkdir()
            runs = []
            serve_embedders: tuple[EmbedderChoice, ...] = ("local", "none")
            for embedder in serve_embedders:
                imported = largest[embedder]
                log(f"notewell serve on {imported['notes']:,} notes, embedder {embedder}")
                runs.append(serve_figures(Path(imported["data_dir"]), imported["key"], embedder, corpus, home))
            document["serve"] = {"notes": largest["local"]["notes"], "runs": runs}
    document["install"] = install_size()
    for row in document["sizes"].values():
        for imported in row["import"].values():
            imported.pop("key", None)
            imported.pop("data_dir", None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(report(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
