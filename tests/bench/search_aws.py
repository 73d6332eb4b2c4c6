"""Search on AWS, measured in this process: the DynamoDB store on moto (with its stream), the collection stood in for
by osmem-server behind the Serverless guard (tests/support/aoss.py), the deterministic hash embedder for vectors.

1. Indexer throughput: stream batches of 25 note INSERTs (the template's BatchSize) through the indexer's handler,
   then the same batches replayed (acknowledged by the pointers, nothing written): ms per batch, notes per second.
   Bedrock's own latency is not here (no Bedrock in this process): add one embedding call per new note.
2. DynamoDB requests per tool with the index, at 50, 1k and 10k notes: get_context (balanced, with a query),
   search_notes (semantic), remember (a new fact), by operation; the Query/Scan split shows that nothing scans.
3. What each fall-through step costs a semantic search_notes at 1k notes before the in-process scan answers: the
   time spent in the collection's adapter on the first call and (p50) on the calls after it, with the collection
   healthy (hybrid), refusing connections, and never answering (the 1 s timeout, once; then it rests).

moto's latency says nothing about DynamoDB's and osmem's nothing about Serverless's: compare rows with each other.
Run: .venv/bin/python -m tests.bench.search_aws [--sizes 50,1000,10000]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from notewell.adapters.dynamodb import note_to_item
from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.opensearch import OpenSearchIndex, SignedHttp
from notewell.adapters.system import FixedClock
from notewell.bootstrap import bootstrap, indexer
from notewell.config import Settings
from notewell.domain.model import Note, NoteType
from notewell.domain.packing import Detail
from notewell.entrypoints.stream import handle_records
from notewell.services.memory import RememberRequest
from tests.bench.common import PROJECT, log, new_principal
from tests.bench.corpus import Corpus
from tests.bench.stats import summarize
from tests.support.aoss import CREDENTIALS, REGION, osmem_engine, stand_in_collection
from tests.support.dynamo import count_operations, dynamodb_store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

TABLE = "notewell-bench"
BATCH = 25
ROUNDS = 20


def _notes(count: int, workspace_id: str = "ws_bench", project_id: str = "prj_bench") -> list[Note]:
    stamp = "2026-12-04T08:00:00.000Z"
    return [
        Note(
            id=f"n_{n:026d}", workspace_id=workspace_id, project_id=project_id, title=spec.title, body=spec.body,
            version=1, created_at=stamp, updated_at=stamp, author="bench", write_id=f"w{n}", type=spec.type,
            status=spec.status, tags=spec.tags,
        )
        for n, spec in enumerate(Corpus().notes(count))
    ]  # fmt: skip


def _records(notes: list[Note]) -> list[dict[str, Any]]:
    return [
        {"eventName": "INSERT", "dynamodb": {"NewImage": note_to_item(note), "SequenceNumber": str(10**20 + i)}}
        for i, note in enumerate(notes)
    ]


def indexer_throughput(total: int = 500) -> dict[str, Any]:
    with osmem_engine() as engine, stand_in_collection(engine) as (http, _), dynamodb_store(TABLE) as store:
        settings = Settings(backend="dynamodb", table_name=TABLE, aws_region=REGION)
        feeder = indexer(settings, store=store, embedder=HashEmbedder(), http=http)
        feeder.ensure_ready()
        records = _records(_notes(total))
        batches = [{"Records": records[i : i + BATCH]} for i in range(0, total, BATCH)]
        result: dict[str, Any] = {}
        for phase in ("new notes", "replayed"):
            samples = []
            for batch in batches:
                started = time.perf_counter()
                failures = handle_records(batch, feeder)["batchItemFailures"]
                samples.append(time.perf_counter() - started)
                assert not failures, failures
            summary = summarize(samples)
            result[phase] = {
                "ms_per_batch_p50": summary["p50_ms"], "ms_per_batch_p95": summary["p95_ms"],
                "notes_per_s": round(total / sum(samples), 1),
            }  # fmt: skip
        return result


@contextlib.contextmanager
def _silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (a hung collection)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def _seeded(size: int, store: Any, http: SignedHttp) -> tuple[Any, Any, list[str]]:
    """Services with the collection at `size` notes, all indexed (through the same indexer as the stream)."""
    services = bootstrap(Settings(), store=store, search=OpenSearchIndex(http, store.get_notes), clock=FixedClock(),
                         embedder=HashEmbedder())  # fmt: skip
    me = new_principal(services)
    services.notes.create(me, PROJECT, title="Start", body="The project starts.")
    project = store.get_project(me.workspace_id, PROJECT)
    assert project is not None
    notes = _notes(size, me.workspace_id, project.id)
    _put_items(store, notes)
    settings = Settings(backend="dynamodb", table_name=TABLE, aws_region=REGION)
    feeder = indexer(settings, store=store, embedder=HashEmbedder(), http=http)
    records = _records(notes)
    for i in range(0, len(records), BATCH):
        handle_records({"Records": records[i : i + BATCH]}, feeder)
    queries = Corpus().queries(ROUNDS, stream=7)
    return services, me, queries


def _probes(services: Any, me: Any, queries: list[str]) -> dict[str, Callable[[], Any]]:
    return {
        "get_context balanced+query": lambda: services.context.get_context(
            me, PROJECT, query=queries[0], detail=Detail.BALANCED
        ),
        "search_notes semantic": lambda: services.search.run(me, PROJECT, queries[1], semantic=True),
        "remember (new fact)": lambda: services.memory.remember(
            me, RememberRequest(PROJECT, f"The {queries[2]} service owns the billing exports.", type=NoteType.DECISION)
        ),
    }


def _put_items(store: Any, notes: list[Note]) -> None:
    """The note items exactly as a commit writes them, by BatchWriteItem. Not import_notes: moto deep-copies the
    whole table for every item of a transaction, so 10k notes imported through commits take hours and tens of GB
    (measured: 1,500 notes, 237 s and 13 GB). No revisions or feed records: nothing measured here reads them."""
    for start in range(0, len(notes), 25):
        requests = [{"PutRequest": {"Item": note_to_item(n)}} for n in notes[start : start + 25]]
        store.client.batch_write_item(RequestItems={store.table_name: requests})


def request_counts(sizes: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with osmem_engine() as engine:
        for size in sizes:
            log(f"search_aws: requests at {size} notes")
            with stand_in_collection(engine) as (http, _), dynamodb_store(TABLE) as store:
                services, me, queries = _seeded(size, store, http)
                calls = count_operations(store.client)
                row: dict[str, Any] = {}
                probes = _probes(services, me, queries)
                for name, probe in probes.items():
                    calls.clear()
                    probe()
                    row[name] = {"total": sum(calls.values()), **dict(sorted(calls.items()))}
                out[str(size)] = row
    return out


class _TimedIndex(OpenSearchIndex):
    """The adapter, timing the requests it sends (and the ones it skips while resting)."""

    spent: float = 0.0

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return super()._search(body)
        finally:
            self.spent += time.perf_counter() - started


def fall_through_latency(size: int = 1000) -> dict[str, Any]:
    """Per semantic search_notes: the time spent in the collection's adapter before the answer (its cost, whether it
    answers or fails), and the whole call. The whole call is dominated by moto when the ranked scan answers."""
    out: dict[str, Any] = {}
    with osmem_engine() as engine, stand_in_collection(engine) as (http, _), dynamodb_store(TABLE) as store:
        services, me, queries = _seeded(size, store, http)
        embedder = HashEmbedder()

        def timed(http_client: SignedHttp | None, label: str) -> None:
            index = _TimedIndex(http_client, store.get_notes) if http_client is not None else None
            search = bootstrap(Settings(), store=store, search=index, clock=FixedClock(), embedder=embedder).search
            spent, samples, modes = [], [], collections.Counter[str]()
            for query in queries:
                before = index.spent if index is not None else 0.0
                started = time.perf_counter()
                outcome = search.run(me, PROJECT, query, semantic=True)
                samples.append(time.perf_counter() - started)
                spent.append((index.spent if index is not None else 0.0) - before)
                modes[outcome.mode.value] += 1
            out[label] = {
                "index_ms_first": round(spent[0] * 1000, 2),
                "index_ms_p50_after": summarize(spent[1:])["p50_ms"],
                "call_ms_p50": summarize(samples)["p50_ms"],
                "modes": dict(modes),
            }

        timed(None, "no collection (ranked scan)")
        timed(http, "collection healthy (hybrid)")
        refused = SignedHttp("http://127.0.0.1:9", REGION, CREDENTIALS)
        timed(refused, "collection refusing connections")
        refused.close()
        with _silent_port() as port:
            hung = SignedHttp(f"http://127.0.0.1:{port}", REGION, CREDENTIALS)
            timed(hung, "collection never answering (1 s timeout)")
            hung.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,1000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    report = {
        "indexer": indexer_throughput(),
        "requests": request_counts(sizes),
        "fall_through_1k": fall_through_latency(),
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
