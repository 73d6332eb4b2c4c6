"""remember through the core (MemoryService, in-process) on the SQLite store, in a project seeded with N notes.

Three kinds of call, timed in interleaved rounds (new, repeat, restatement, new, repeat, ...):
  * new content: a short statement nobody wrote before                          -> mostly 'created';
  * an exact repeat of a seeded note's body (a note remember compares against)  -> 'duplicate';
  * a longer restatement: statement i of the 'new' calls plus one sentence      -> 'updated' (statement i's note).
A restatement always follows, in a later position of the same round, the 'new' call that created its note.
Every outcome's status is counted, so the report shows which paths actually ran. No server is started: remember
runs in this process, on a fresh data dir, against the same seeded notes as the other sections.
"""

from __future__ import annotations

import collections
import contextlib
import cProfile
import dataclasses
import io
import pstats
import random
import sqlite3
import statistics
from typing import TYPE_CHECKING, Any

from notewell.adapters.sqlite import CANDIDATE_ROWS, SqliteStore, match_expression, split_terms
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.ranking import CANDIDATE_TERMS, candidate_query
from notewell.services.memory import CANDIDATE_STATUSES, CANDIDATES, RememberRequest
from tests.bench.common import PROJECT, CpuWatch, cpu_note, log, new_principal, seed, table, timed_rounds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from notewell.domain.model import Principal
    from tests.bench.corpus import Corpus, Statement

KINDS = ("new", "repeat", "restatement")
EXPECTED = {"new": "created", "repeat": "duplicate", "restatement": "updated"}
STATUSES = ("created", "updated", "duplicate", "conflict")
LABELS = {
    "new": "new content",
    "repeat": "exact repeat of a note",
    "restatement": "restatement, +1 sentence",
}
# Corpus streams: distinct from each other and from the streams other sections use.
STATEMENTS_TIMED, STATEMENTS_WARMUP, STATEMENTS_PROFILE = 20, 21, 22
MATCH_SAMPLE = 20  # contents per kind whose candidate query's full-text matches are counted


def remember_call(
    services: Services, principal: Principal, statuses: collections.Counter[str]
) -> Callable[[str], object]:
    def call(content: str) -> object:
        outcome = services.memory.remember(principal, RememberRequest(PROJECT, content))
        statuses[outcome.status.value] += 1
        return outcome

    return call


def repeat_bodies(
    services: Services, principal: Principal, ids: Sequence[str], count: int, rng: random.Random
) -> list[str]:
    """Bodies of `count` distinct seeded notes, as stored, among those remember compares against (live, not
    historical or superseded); bounded by the number of seeded notes."""
    bodies: list[str] = []
    for note_id in rng.sample(list(ids), len(ids)):
        if len(bodies) >= count:
            break
        note = services.notes.get(principal, note_id).note
        if note.status in CANDIDATE_STATUSES:
            bodies.append(note.body)
    return bodies


def candidate_matches(store: SqliteStore, contents: Sequence[str], notes: int) -> dict[str, Any] | None:
    """How many notes remember's full-text candidate lookup matches, and how many of them bm25 ranks once the
    index has cut the query down (adapters/sqlite.py split_terms: past CANDIDATE_ROWS matching rows, only the
    rarest words' matches are ranked). None if the store's FTS table is not where this expects it."""
    whole: list[int] = []
    ranked: list[int] = []
    try:
        connection = store.connection()
        (total_rows,) = connection.execute("SELECT coalesce(max(seq), 0) FROM notes").fetchone()
        for content in contents:
            query = candidate_query(content)
            match = match_expression(query)
            if match is None:
                continue
            count = "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?"
            whole.append(int(connection.execute(count, (match,)).fetchone()[0]))
            if total_rows <= CANDIDATE_ROWS:
                ranked.append(whole[-1])
                continue
            rows = {word: int(connection.execute(count, (match_expression(word),)).fetchone()[0])
                    for word in query.split()}  # fmt: skip
            essential, _ = split_terms(rows, total_rows, CANDIDATE_ROWS)
            ranked.append(int(connection.execute(count, (" OR ".join(map(match_expression, essential)),)).fetchone()[0])
                          if essential else 0)  # fmt: skip
    except sqlite3.Error:
        return None
    if not whole:
        return None
    return {
        "queries": len(whole),
        "median_rows": statistics.median(whole),
        "median_share": round(statistics.median(whole) / max(notes, 1), 3),
        "median_ranked_rows": statistics.median(ranked),
    }


def profile_remember(
    services: Services, principal: Principal, statements: Sequence[Statement], repeats: Sequence[str], size: int
) -> dict[str, str]:
    """cProfile of each kind of remember (fresh statements, so each kind takes its usual path)."""
    statuses: collections.Counter[str] = collections.Counter()
    call = remember_call(services, principal, statuses)
    jobs: dict[str, Sequence[str]] = {
        "new": [s.text for s in statements],
        "repeat": repeats,
        "restatement": [s.restated for s in statements],
    }
    reports: dict[str, str] = {}
    for kind, contents in jobs.items():
        statuses.clear()
        profiler = cProfile.Profile()
        profiler.runcall(lambda contents=contents: [call(c) for c in contents])
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text).strip_dirs()
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(25)
        reports[kind] = text.getvalue()
        print(
            f"\n--- cProfile: core remember, {LABELS[kind]}, {len(contents)} calls, {size:,} notes "
            f"(statuses {dict(statuses)}) ---\n{text.getvalue()}"
        )
    return reports


@dataclasses.dataclass
class SeededRemember:
    """One size's seeded store after the warm-up: the timed calls of each kind, and what the result records."""

    size: int
    store: SqliteStore
    services: Services
    principal: Principal
    result: dict[str, Any]
    statuses: dict[str, collections.Counter[str]]
    ops: dict[str, tuple[Callable[[str], object], Sequence[str]]]
    profile_statements: Sequence[Statement]
    profile_repeats: Sequence[str]

    def finish(self, timed: dict[str, Any], cpu_share: dict[str, float], *, profile: bool) -> dict[str, Any]:
        result = self.result
        result["cpu_share"] = cpu_share
        for kind in KINDS:
            timed[kind]["statuses"] = {status: self.statuses[kind][status] for status in STATUSES}
            timed[kind]["expected_status"] = EXPECTED[kind]
        result["remember"] = timed
        result["notes_at_end"] = result["notes_at_start"] + sum(c["created"] for c in self.statuses.values())
        result["fts_matches"] = {
            kind: candidate_matches(self.store, list(self.ops[kind][1][:MATCH_SAMPLE]), result["notes_at_end"])
            for kind in ("new", "repeat")
        }
        if profile:
            result["profile"] = profile_remember(
                self.services, self.principal, self.profile_statements, self.profile_repeats, self.size
            )
        return result


@contextlib.contextmanager
def seeded_remember(size: int, workdir: Path, corpus: Corpus, calls: int, warmup: int, *, profile_calls: int = 0,
                    embedder: EmbedderChoice = "none") -> Iterator[SeededRemember]:  # fmt: skip
    """Seed `size` notes on a fresh SQLite store (with the embedding model named, or words only) and make the
    warm-up calls; the store stays open until the block ends."""
    data_dir = workdir / "data"
    data_dir.mkdir(parents=True)
    result: dict[str, Any] = {"size": size, "embedder": embedder}
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir, embedder=embedder), store=store)
        principal = new_principal(services)
        log(f"remember, {size:,} notes: seeding through NoteService.create (in-process, no server)")
        ids, result["seeding"] = seed(services, principal, corpus.notes(size))
        rng = random.Random(f"{corpus.seed}/remember/{size}")
        repeats = repeat_bodies(services, principal, ids, warmup + calls + profile_calls, rng)
        warm_statements = corpus.statements(warmup, stream=STATEMENTS_WARMUP)
        statements = corpus.statements(calls, stream=STATEMENTS_TIMED)

        statuses = {kind: collections.Counter[str]() for kind in KINDS}
        calls_of = {kind: remember_call(services, principal, statuses[kind]) for kind in KINDS}
        for statement, body in zip(warm_statements, repeats[:warmup], strict=False):
            calls_of["new"](statement.text)
            calls_of["repeat"](body)
            calls_of["restatement"](statement.restated)
        result["notes_at_start"] = size + sum(counter["created"] for counter in statuses.values())  # + warm-up's
        for counter in statuses.values():
            counter.clear()
        yield SeededRemember(
            size=size,
            store=store,
            services=services,
            principal=principal,
            result=result,
            statuses=statuses,
            ops={
                "new": (calls_of["new"], [s.text for s in statements]),
                "repeat": (calls_of["repeat"], repeats[warmup : warmup + calls]),
                "restatement": (calls_of["restatement"], [s.restated for s in statements]),
            },
            profile_statements=corpus.statements(profile_calls, stream=STATEMENTS_PROFILE) if profile_calls else [],
            profile_repeats=repeats[warmup + calls :],
        )
    finally:
        store.close()


def bench_remember(size: int, workdir: Path, corpus: Corpus, calls: int, warmup: int, rounds: int, *, profile: bool,
                   profile_calls: int, embedder: EmbedderChoice = "none") -> dict[str, Any]:  # fmt: skip
    """Seed `size` notes on a fresh SQLite store, then time `calls` remember calls of each kind (with the embedding
    model named, or words only)."""
    with seeded_remember(size, workdir, corpus, calls, warmup, profile_calls=profile_calls if profile else 0,
                         embedder=embedder) as seeded:  # fmt: skip
        log(f"  remember: {calls} calls of each kind in {rounds} interleaved rounds")
        watch = CpuWatch()
        timed = timed_rounds(dict(seeded.ops), rounds)
        return seeded.finish(timed, watch.shares(), profile=profile)


def bench_remember_sizes(sizes: Sequence[int], workdir: Path, corpus: Corpus, calls: int, warmup: int, rounds: int,
                         *, embedder: EmbedderChoice = "none") -> dict[int, dict[str, Any]]:  # fmt: skip
    """bench_remember for several sizes at once: every size is seeded first, then the calls are timed in rounds that
    alternate between the sizes as well as the kinds (the sizes' order flipping each round), so a ratio between
    sizes compares calls made in the same minutes: a machine that slows down or speeds up mid-run moves both."""
    with contextlib.ExitStack() as stack:
        seeded = {
            size: stack.enter_context(
                seeded_remember(size, workdir / f"n{size}", corpus, calls, warmup, embedder=embedder)
            )  # fmt: skip
            for size in sizes
        }
        ops = {f"{size}/{kind}": op for size, one in seeded.items() for kind, op in one.ops.items()}
        # Kinds keep their order inside a size: a restatement must follow the call that created its note.
        ascending = [f"{size}/{kind}" for size in sizes for kind in KINDS]
        descending = [f"{size}/{kind}" for size in reversed(sizes) for kind in KINDS]
        log(f"  remember: {calls} calls of each kind and size in {rounds} rounds alternating {len(sizes)} sizes")
        watch = CpuWatch()
        timed = timed_rounds(ops, rounds, orders=(ascending, descending))
        shares = watch.shares()
        return {
            size: one.finish({kind: timed[f"{size}/{kind}"] for kind in KINDS}, shares, profile=False)
            for size, one in seeded.items()
        }


def report_remember(r: dict[str, Any]) -> str:
    timed = r["remember"]
    seeding = r["seeding"]
    return "\n".join(
        [
            f"\n=== remember through the core, SQLite, {r['size']:,} seeded notes (project holds "
            f"{r['notes_at_start']:,} notes at the start, {r['notes_at_end']:,} at the end) ===",
            f"Seeding: {seeding['notes']:,} creates through NoteService in {seeding['seconds']} s",
            table(
                ["kind", "n", "p50 ms", "p95 ms", "best round p50", "ops/s"]
                + ["created", "updated", "duplicate", "conflict"],
                [
                    [LABELS[kind], t["n"], t["p50_ms"], t["p95_ms"], t["best_round_p50_ms"], t["ops_per_s"]]
                    + [t["statuses"][status] for status in STATUSES]
                    for kind in KINDS
                    for t in [timed[kind]]
                ],
            ),
            "  (expected: new content -> created, repeat -> duplicate, restatement -> updated; type 'note', so no"
            " neighbour search)",
            cpu_note(r["cpu_share"], server=False) + " during the calls",
            *[
                f"  candidate lookup ({LABELS[kind]}): the OR of up to {CANDIDATE_TERMS} words matches a median "
                f"{m['median_rows']:,.0f} of {r['notes_at_end']:,} notes ({m['median_share']:.0%}); bm25 ranks a "
                f"median {m['median_ranked_rows']:,.0f} (the rarest words' matches once over {CANDIDATE_ROWS:,}) "
                f"and the best {CANDIDATES} are kept"
                for kind, m in r.get("fts_matches", {}).items()
                if m is not None
            ],
        ]
    )


def remember_ratios(results: dict[int, dict[str, Any]]) -> dict[str, Any]:
    sizes = sorted(results)
    if len(sizes) < 2:
        return {}
    small, big = results[sizes[0]]["remember"], results[sizes[-1]]["remember"]
    per_kind = {
        kind: {
            "p50": round(big[kind]["p50_ms"] / small[kind]["p50_ms"], 2),
            "p95": round(big[kind]["p95_ms"] / small[kind]["p95_ms"], 2),
            "best_round_p50": round(big[kind]["best_round_p50_ms"] / small[kind]["best_round_p50_ms"], 2),
        }
        for kind in KINDS
    }
    return {f"{sizes[-1]}/{sizes[0]}": per_kind}
