"""Hybrid search_notes on the SQLite store with the packaged local model: what each leg proposes, what the fusion
keeps, and what a search costs at 1k and 10k notes.

    python -m tests.bench.retrieval [--sizes 1000,10000] [--searches 200] [--show 12] [--out .bench/retrieval.json]

For each size, an export file of that many generated notes (English words, tests/bench/corpus.py) is imported into
a fresh data dir with the model on, as `notewell import` does (vectors computed as the import lands; the notes left
without a vector are counted). Then search_notes runs through the core, half of the queries a few words, half a
sentence:
  * per query (the first --show of them, and percentiles over all): how many notes the keyword leg matched and
    proposed, how many the vector leg proposed, the candidate pool (the distinct notes of both, which the fusion
    scores), how many of the fused top 10 each leg had in its own top 10, and the best hit's keyword share and
    cosine;
  * timings, p50/p95 by rounds alternating keywords-only and hybrid searches, and the hybrid search's parts (the
    query's vector, the vector leg, the keyword leg) timed alone on the same queries;
  * search p50 at the largest size against the smallest, with the hybrid on.
Figures only: nothing here fails on speed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import Plan, SearchFilters
from notewell.services.search import search_pool
from tests.bench.common import PROJECT, log, table, timed_rounds
from tests.bench.corpus import Corpus, english_words
from tests.bench.portability import export_file

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from notewell.bootstrap import Services
    from notewell.domain.model import Principal

LIMIT = 10
WARM_UP = 20
ROUNDS = 5
TARGET_P50_MS = 20.0  # the bar at 10k notes, with the hybrid on
TARGET_RATIO = 1.5  # and from 1k to 10k


def queries(corpus: Corpus, count: int) -> list[str]:
    """`count` queries, alternately a few words and a sentence an agent might type."""
    words = corpus.queries(count, stream=7)
    sentences = [s.text.split(".")[0] for s in corpus.statements(count, stream=11)]
    return [words[i] if i % 2 == 0 else sentences[i] for i in range(count)]


def legs_of(services: Services, principal: Principal, project_id: str, query: str) -> dict[str, Any]:
    """One query's legs and fusion, each part timed alone."""
    meaning, index = services.meaning, services.search._fulltext
    assert meaning is not None and isinstance(index, SqliteFullTextIndex)
    pool = search_pool(LIMIT)
    ws = principal.workspace_id
    started = time.perf_counter()
    vector = meaning.embed_one(query)
    embedded = time.perf_counter()
    nearest = meaning.nearest(ws, project_id, vector, pool)
    searched = time.perf_counter()
    ranked, ceiling = index.ranked_with_ceiling(ws, project_id, query, SearchFilters(), pool)
    ranked_at = time.perf_counter()
    matched = len(index.ranked_ids(ws, project_id, query, SearchFilters(), 1_000_000))
    outcome = services.search.run(principal, PROJECT, query, semantic=True, limit=LIMIT)
    fused = [h.note.id for h in outcome.hits]
    keyword_top = {i for i, _ in ranked[:LIMIT]}
    vector_top = {i for i, _ in nearest[:LIMIT]}
    best = fused[0] if fused else None
    return {
        "query": query,
        "keyword_matched": matched,
        "keyword": len(ranked),
        "vector": len(nearest),
        "pool": outcome.pool,
        "both_legs": len({i for i, _ in ranked} & {i for i, _ in nearest}),
        "top_from_keyword": len(keyword_top & set(fused)),
        "top_from_vector": len(vector_top & set(fused)),
        "best_keyword_share": round(dict(ranked).get(best, 0.0) / ceiling, 3) if best and ceiling else 0.0,
        "best_cosine": round(dict(nearest).get(best, 0.0), 3) if best else 0.0,
        "embed_ms": round(1000 * (embedded - started), 2),
        "vector_ms": round(1000 * (searched - embedded), 2),
        "keyword_ms": round(1000 * (ranked_at - searched), 2),
    }


def bench_size(size: int, workdir: Path, corpus: Corpus, count: int) -> dict[str, Any]:
    data_dir = workdir / f"retrieval-{size}"
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir, embedder="local"), store=store)
        workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)
        principal = services.auth.authenticate(services.auth.create_key(workspace.id, name="bench").secret)
        assert principal is not None and services.meaning is not None
        services.meaning.prepare()  # the model loaded before the clock starts, as serve does at start
        log(f"import {size:,} notes with the local model")
        started = time.perf_counter()
        report = services.portability.import_file(principal, PROJECT, export_file(corpus, size))
        seconds = time.perf_counter() - started
        project = store.get_project(principal.workspace_id, PROJECT)
        assert project is not None
        asked = queries(corpus, count + WARM_UP)
        for query in asked[:WARM_UP]:  # the first hybrid search loads the project's vectors
            services.search.run(principal, PROJECT, query, semantic=True, limit=LIMIT)
            services.search.run(principal, PROJECT, query, limit=LIMIT)
        timed_queries = asked[WARM_UP:]

        def search(semantic: bool) -> Callable[[str], object]:
            return lambda query: services.search.run(principal, PROJECT, query, semantic=semantic, limit=LIMIT)

        ops: dict[str, tuple[Callable[[Any], object], Sequence[Any]]] = {
            "keywords": (search(False), timed_queries),
            "hybrid": (search(True), timed_queries),
        }
        timed = timed_rounds(ops, ROUNDS)
        per_query = [legs_of(services, principal, project.id, q) for q in timed_queries]
        without_vectors = services.meaning.backlog()
    finally:
        store.close()
    return {
        "notes": size, "imported": report.notes_written, "import_s": round(seconds, 1),
        "without_vectors": without_vectors, "search": timed, "queries": per_query,
    }  # fmt: skip


def median_of(rows: Sequence[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def p95_of(rows: Sequence[dict[str, Any]], key: str) -> float:
    values = sorted(r[key] for r in rows)
    return float(values[min(len(values) - 1, int(0.95 * len(values)))])


def report(document: dict[str, Any], show: int) -> str:
    sizes = document["sizes"]
    lines = ["Hybrid search_notes through the core (SQLite, local model, limit 10)", ""]
    rows = [[f"{int(s):,}", r["imported"], r["import_s"], r["without_vectors"]] for s, r in sizes.items()]
    lines += ["Import with the model", table(["notes", "imported", "seconds", "without a vector"], rows), ""]
    for size, r in sizes.items():
        header = ["query", "matched", "kw leg", "vec leg", "pool", "both", "top10 kw", "top10 vec", "share", "cos"]
        rows = [
            [q["query"][:40], q["keyword_matched"], q["keyword"], q["vector"], q["pool"], q["both_legs"],
             q["top_from_keyword"], q["top_from_vector"], q["best_keyword_share"], q["best_cosine"]]
            for q in r["queries"][:show]
        ]  # fmt: skip
        lines += [f"{int(size):,} notes: both legs, the pool and the fusion, per query (first {show})"]
        lines += [table(header, rows), ""]
        keys = ["keyword_matched", "keyword", "vector", "pool", "both_legs", "top_from_keyword", "top_from_vector"]
        rows = [[k, median_of(r["queries"], k), p95_of(r["queries"], k)] for k in keys]
        lines += [f"{int(size):,} notes, over all {len(r['queries'])} queries", table(["", "p50", "p95"], rows), ""]
    rows = []
    for size, r in sizes.items():
        for mode in ("keywords", "hybrid"):
            s = r["search"][mode]
            rows.append([f"{int(size):,}", mode, s["p50_ms"], s["p95_ms"], s["best_round_p50_ms"]])
        for part in ("embed_ms", "vector_ms", "keyword_ms"):
            rows.append([f"{int(size):,}", f"  hybrid part: {part[:-3]}", median_of(r["queries"], part),
                         p95_of(r["queries"], part), None])  # fmt: skip
    lines += ["search_notes timings (ms)", table(["notes", "search", "p50", "p95", "best round p50"], rows)]
    if len(sizes) >= 2:
        small, large = list(sizes)[0], list(sizes)[-1]
        a, b = sizes[small]["search"]["hybrid"]["p50_ms"], sizes[large]["search"]["hybrid"]["p50_ms"]
        lines += [
            "",
            f"hybrid p50 at {int(large):,} notes: {b:.1f} ms (target <= {TARGET_P50_MS:g}); "
            f"{int(small):,} -> {int(large):,}: {b / a:.2f}x (target <= {TARGET_RATIO:g}x)",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--show", type=int, default=12, help="queries listed one by one per size")
    parser.add_argument("--out", type=Path, default=Path(".bench/retrieval.json"))
    args = parser.parse_args(argv)
    corpus = Corpus(vocabulary=english_words())
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="notewell-bench-retrieval-") as workdir:
        document = {"sizes": {str(n): bench_size(n, Path(workdir), corpus, args.searches) for n in sizes}}
    print(report(document, args.show))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
