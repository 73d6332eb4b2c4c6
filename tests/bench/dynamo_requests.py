"""DynamoDB store (moto, in this process): API requests per remember, checkpoint, get_context and change-feed page
as the project grows.

For each size N: a fresh moto table built from template.yaml (tests/support/dynamo.py), a workspace and a key,
N generated notes created through NoteService, then one remember of each outcome (created, duplicate, updated,
conflict), one checkpoint with 3 items and one get_context (balanced, with a query), all through the services;
last, the whole change feed drained from the start with get_changes_since, FEED_LIMIT changes a page (the
services run with feed_horizon_seconds=0, so every seeded change is served at once). botocore's event hooks
count every API call by operation name (one per call, retries excluded) and record each Query page: index, Limit
asked, items returned, whether another page follows, and the reply's size on the wire.

No DynamoDB index serves word search, so remember compares new content against the project's most recent notes:
SearchService.related reads at most RELATED_SCAN_LIMIT notes from GSI1 (the project feed, newest first), in Query
pages of at most 1 MB each (DynamoDB's page size limit, which moto enforces too). That scan is the only request
count that may depend on N: ceil(bytes of the min(N, RELATED_SCAN_LIMIT) newest notes / 1 MB) pages. get_context
reads fixed sources (one lean GSI4 Query per type of a section, one for notes of no section, one for the notes needing
attention, listed as conflicts) and ranks its query among those candidates; a feed page is one Query of at most
limit + 1 items. Every other request is a key read or write whose count depends on the call, never on the
project's size.

Request counts only: moto's latency says nothing about DynamoDB's, so nothing here is timed.
"""

from __future__ import annotations

import collections
import functools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.adapters.dynamodb import GSI1, MAX_ITEM_BYTES, item_size, note_to_item
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import rules
from notewell.domain.model import Note
from notewell.domain.packing import Detail
from notewell.services.memory import CANDIDATE_STATUSES, RememberRequest
from notewell.services.search import RELATED_SCAN_LIMIT
from tests.bench.common import PROJECT, log, new_principal, seed, table
from tests.support.dynamo import count_operations, dynamodb_store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tests.bench.corpus import Corpus

DEFAULT_SIZES = (50, 400, 650)  # 650: past RELATED_SCAN_LIMIT, where the scan stops growing
PAGE_BYTES = 1_000_000  # DynamoDB returns at most 1 MB of items per Query page (moto: RESULT_SIZE_LIMIT)
PROBES = ("remember created", "remember duplicate", "remember updated", "remember conflict", "checkpoint, 3 items",
          "get_context balanced+query")  # fmt: skip
EXPECTED = ("created", "duplicate", "updated", "conflict", "handoff + created x3", "context")
STATEMENT_STREAM, CHECKPOINT_STREAM, CONTEXT_STREAM = 30, 31, 32
FEED_LIMIT = 50


class RequestLog:
    """Every API call of one client by operation, and each Query page in order."""

    def __init__(self, client: Any) -> None:
        self.calls = count_operations(client)
        self.pages: list[dict[str, Any]] = []
        self.item_bytes = 0  # DynamoDB's size of every item read (what read capacity is charged on), all operations
        client.meta.events.register("provide-client-params.dynamodb.Query", self._asked)
        client.meta.events.register("after-call.dynamodb.Query", self._answered)
        client.meta.events.register("after-call.dynamodb", self._items_read)

    def _items_read(self, parsed: dict[str, Any], **kwargs: Any) -> None:
        items = list(parsed.get("Items", []))
        if "Item" in parsed:
            items.append(parsed["Item"])
        for found in parsed.get("Responses", {}).values():
            if isinstance(found, list):
                items.extend(found)
        self.item_bytes += sum(item_size(item) for item in items)

    def _asked(self, params: dict[str, Any], **kwargs: Any) -> None:
        self.pages.append({"index": params.get("IndexName", "table"), "limit": params.get("Limit")})

    def _answered(self, http_response: Any, parsed: dict[str, Any], **kwargs: Any) -> None:
        page = self.pages[-1]
        page["item_bytes"] = sum(item_size(item) for item in parsed.get("Items", []))
        page["items"] = int(parsed.get("Count", 0))
        page["more"] = "LastEvaluatedKey" in parsed
        page["bytes"] = len(getattr(http_response, "content", b"") or b"")

    def measure(self, action: Callable[[], Any]) -> tuple[Any, dict[str, int], list[dict[str, Any]]]:
        """Run `action`; return its result, the API calls it made by operation, and its Query pages."""
        before, first_page = collections.Counter(self.calls), len(self.pages)
        self.item_bytes = 0
        result = action()
        self.last_item_bytes = self.item_bytes
        return result, dict(sorted((self.calls - before).items())), self.pages[first_page:]


def scan_summary(pages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The GSI1 (project feed) pages of one call: the candidate scan, plus the neighbours' when there is one."""
    feed = [p for p in pages if p["index"] == GSI1]
    return {
        "pages": len(feed),
        "items": sum(p["items"] for p in feed),
        "kb": round(sum(p["bytes"] for p in feed) / 1024, 1),
        "limits": [p["limit"] for p in feed],
        "more_after_last": bool(feed and feed[-1]["more"]),
        "other_indexes": dict(collections.Counter(p["index"] for p in pages if p["index"] != GSI1)),
    }


def probe_contents(corpus: Corpus) -> dict[str, str]:
    """A short statement carrying a number; a longer restatement of it; the restatement with the number changed."""
    statement = corpus.statements(1, stream=STATEMENT_STREAM)[0]
    created = f"{statement.text} Logs are kept for 30 days."
    updated = f"{created} {statement.addition}"
    return {"created": created, "updated": updated, "conflict": updated.replace("30 days", "45 days")}


def bench_dynamo_size(size: int, corpus: Corpus, workdir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"size": size}
    specs = list(corpus.notes(size))
    # The duplicate probe repeats the newest seeded note remember compares against (within the scanned window).
    repeat_index = max(i for i, spec in enumerate(specs) if spec.status in CANDIDATE_STATUSES)
    contents = probe_contents(corpus)
    checkpoint_items = corpus.statements(4, stream=CHECKPOINT_STREAM)
    context_query = corpus.queries(1, stream=CONTEXT_STREAM)[0]
    with dynamodb_store(table_name=f"notewell-bench-{size}") as store:
        requests = RequestLog(store.client)
        # Horizon 0: the feed serves every seeded change at once (request counts do not depend on it).
        services = bootstrap(Settings(data_dir=workdir, feed_horizon_seconds=0), store=store)
        principal = new_principal(services)
        log(f"DynamoDB (moto), {size} notes: seeding through NoteService.create")
        ids, result["seeding"] = seed(services, principal, specs)
        seeding_calls = dict(requests.calls)
        repeat_body = services.notes.get(principal, ids[repeat_index]).note.body

        def remember(content: str) -> Callable[[], Any]:
            return lambda: services.memory.remember(principal, RememberRequest(PROJECT, content))

        def checkpoint() -> Any:
            return services.memory.checkpoint(
                principal,
                PROJECT,
                summary=checkpoint_items[0].text,
                decisions=[checkpoint_items[1].text],
                open_items=[checkpoint_items[2].text],
                failed_approaches=[checkpoint_items[3].text],
            )

        def context() -> Any:
            return services.context.get_context(principal, PROJECT, query=context_query, detail=Detail.BALANCED)

        actions = [
            remember(contents["created"]),
            remember(repeat_body),
            remember(contents["updated"]),
            remember(contents["conflict"]),
            checkpoint,
            context,
        ]
        probes: list[dict[str, Any]] = []
        for name, action in zip(PROBES, actions, strict=True):
            outcome, calls, pages = requests.measure(action)
            probes.append(
                {"probe": name, "outcome": outcome_text(outcome), "calls": calls, "feed": scan_summary(pages),
                 "item_kb_read": round(requests.last_item_bytes / 1024, 1), "query_kb_by_index": {
                     index: round(sum(p["item_bytes"] for p in pages if p["index"] == index) / 1024, 1)
                     for index in sorted({p["index"] for p in pages})
                 }}
            )  # fmt: skip
        result["probes"] = probes
        result["feed"] = drain_feed(services, principal, requests, size)
        result["seeding_calls"] = seeding_calls
        result["all_calls"] = dict(sorted(requests.calls.items()))
    return result


def drain_feed(services: Any, principal: Any, requests: RequestLog, size: int) -> dict[str, Any]:
    """get_changes_since from the start, FEED_LIMIT changes a page, until the feed is drained (bounded by the
    project's size): API requests of each page by operation."""
    pages: list[dict[str, int]] = []
    changes: list[int] = []
    cursor: str | None = None
    more = True
    while more and len(pages) < size // FEED_LIMIT + 10:
        page, calls, _ = requests.measure(functools.partial(
            services.changes.since, principal, PROJECT, cursor=cursor, limit=FEED_LIMIT
        ))  # fmt: skip
        pages.append(calls)
        changes.append(len(page.changes))
        cursor, more = page.cursor, page.has_more
    totals = [sum(calls.values()) for calls in pages]
    operations = sorted({op for calls in pages for op in calls})
    return {
        "limit": FEED_LIMIT,
        "pages": len(pages),
        "changes": sum(changes),
        "complete": not more,
        "requests_per_page": {"min": min(totals), "max": max(totals)} if totals else {},
        "by_operation": {op: [calls.get(op, 0) for calls in pages] for op in operations},
    }


def outcome_text(outcome: Any) -> str:
    if hasattr(outcome, "packed"):  # get_context
        return f"{outcome.packed.selected} shown"
    if hasattr(outcome, "status"):
        return str(outcome.status.value)
    items = ",".join(item.outcome.status.value for item in outcome.items)
    return f"handoff + {items}"


def largest_note_item_bytes() -> int:
    """The stored size of a note at the limits the rules enforce: body of MAX_BODY_BYTES (4-byte characters, within
    MAX_BODY_CHARS), the longest title, the most and longest tags; no links."""
    body = "\N{GRINNING FACE}" * (rules.MAX_BODY_BYTES // 4)
    tags = tuple(f"{n:02d}" + "t" * (rules.MAX_TAG_CHARS - 2) for n in range(rules.MAX_TAGS))
    stamp = "2026-07-28T00:00:00.000Z"
    note = Note(
        id="n_" + "0" * 26, workspace_id="ws_" + "0" * 26, project_id="prj_" + "0" * 26,
        title="T" * rules.MAX_TITLE_CHARS, body=body, version=1, created_at=stamp, updated_at=stamp,
        author="key:key_" + "0" * 26, write_id="w_" + "0" * 26, tags=tags,
    )  # fmt: skip
    return item_size(note_to_item(note))


def bench_dynamo(sizes: Sequence[int], corpus: Corpus) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="notewell-bench-dynamo-") as tmp:
        by_size = {size: bench_dynamo_size(size, corpus, Path(tmp)) for size in sizes}
    return {
        "sizes": {str(size): r for size, r in by_size.items()},
        "scan_calls": sum(r["all_calls"].get("Scan", 0) for r in by_size.values()),
        "related_scan_limit": RELATED_SCAN_LIMIT,
        "page_bytes": PAGE_BYTES,
        "max_item_bytes": MAX_ITEM_BYTES,
        "largest_note_item_bytes": largest_note_item_bytes(),
    }


def report_dynamo(d: dict[str, Any]) -> str:
    sizes = {int(size): r for size, r in d["sizes"].items()}
    operations = sorted({op for r in sizes.values() for p in r["probes"] for op in p["calls"]} | {"Scan"})
    rows: list[list[object]] = []
    for number, probe in enumerate(PROBES):
        for size, r in sizes.items():
            p = r["probes"][number]
            feed = p["feed"]
            other = ", ".join(f"{index} x{n}" for index, n in feed["other_indexes"].items()) or "-"
            rows.append(
                [probe if size == min(sizes) else "", size, p["outcome"]]
                + [p["calls"].get(op, 0) for op in operations]
                + [sum(p["calls"].values()), feed["pages"], feed["items"], feed["kb"], other]
            )
    lines = [
        "\n=== DynamoDB store (moto): API requests per call, by operation, as the project grows ===",
        table(
            ["call", "N notes", "outcome", *operations, "total", "GSI1 pages", "GSI1 items", "GSI1 KB", "other Query"],
            rows,
        ),
        "  (one row per call and project size; GSI1 = the project feed, read newest first by the candidate scan, and",
        "   by the neighbour search of a decision; other Query = GSI2 (live notes by type and status), GSI3",
        "   (notes needing attention, whole) and GSI4 (get_context's lean partitions) reads)",
    ]
    # Growth: every operation but Query must cost the same at every N; Query = GSI1 pages + other-index queries.
    changed: list[str] = []
    unexplained: list[str] = []
    smallest = min(sizes)
    for number, probe in enumerate(PROBES):
        base = sizes[smallest]["probes"][number]["calls"]
        for size, r in sizes.items():
            p = r["probes"][number]
            if {k: v for k, v in p["calls"].items() if k != "Query"} != {k: v for k, v in base.items() if k != "Query"}:
                changed.append(f"{probe} at N={size}: {p['calls']} against {base} at N={smallest}")
            if p["calls"].get("Query", 0) != p["feed"]["pages"] + sum(p["feed"]["other_indexes"].values()):
                unexplained.append(f"{probe} at N={size}")
    lines += [
        "",
        f"Scan requests in the whole section (seeding included): {d['scan_calls']}",
        "Requests other than Query, per call: "
        + ("the same at every N" if not changed else "DIFFER: " + "; ".join(changed)),
        "Query requests = GSI1 pages + other-index queries, in every row: "
        + ("yes" if not unexplained else "NO: " + ", ".join(unexplained)),
    ]
    limit = d["related_scan_limit"]
    lines += [
        f"  Bound on the GSI1 pages: the candidate scan reads at most RELATED_SCAN_LIMIT = {limit} notes "
        "(services/search.py), asking Limit = what is",
        f"  still missing; each page stops at {d['page_bytes'] // 1_000_000} MB (DynamoDB's Query page limit). "
        f"So pages <= ceil(size of the min(N, {limit}) newest notes / 1 MB):",
    ]
    for size, r in sizes.items():
        feed = r["probes"][0]["feed"]
        per_note = feed["kb"] / feed["items"] if feed["items"] else 0.0
        lines.append(
            f"    N={size}: {feed['items']} notes read, {feed['kb']} KB on the wire ({per_note:.1f} KB a note), "
            f"{feed['pages']} page(s), Limits asked {feed['limits']}"
        )
    context_row = PROBES.index("get_context balanced+query")
    context_calls = {size: r["probes"][context_row]["calls"] for size, r in sizes.items()}
    totals = {size: sum(calls.values()) for size, calls in context_calls.items()}
    lines += [
        "",
        "get_context (balanced, with a query): requests per call "
        + ", ".join(f"N={size}: {total}" for size, total in totals.items())
        + (" - the same at every N" if len(set(totals.values())) == 1 else " - differs with N: see the table")
        + f"; Scan: {sum(calls.get('Scan', 0) for calls in context_calls.values())}",
        "Item bytes read per call (DynamoDB's item sizes, what read capacity is charged on; every operation): "
        + "; ".join(
            f"{probe}: "
            + ", ".join(
                f"N={size} {r['probes'][i]['item_kb_read']} KB (Query by index: {r['probes'][i]['query_kb_by_index']})"
                for size, r in sizes.items()
            )
            for i, probe in enumerate(PROBES)
            if i in (0, PROBES.index("get_context balanced+query"))
        ),
        "",
        f"get_changes_since, the whole feed drained from the start, limit {FEED_LIMIT}: API requests per page",
        table(
            ["N notes", "pages", "changes", "complete", "requests/page min", "max", "by operation (per page)"],
            [
                [size, f["pages"], f["changes"], "yes" if f["complete"] else "NO"]
                + [f["requests_per_page"].get("min"), f["requests_per_page"].get("max")]
                + [", ".join(f"{op} {min(v)}-{max(v)}" for op, v in f["by_operation"].items())]
                for size, r in sizes.items()
                for f in [r["feed"]]
            ],
        ),
    ]
    largest = d["largest_note_item_bytes"]
    per_page = max(1, d["page_bytes"] // largest)
    cap_per_page = max(1, d["page_bytes"] // d["max_item_bytes"])
    lines += [
        f"  Worst case: a note at the body, title and tag limits is stored as {largest / 1000:.0f} kB, {per_page} a "
        f"page: up to {-(-limit // per_page)} pages per scan (at the {d['max_item_bytes'] // 1024} KiB item cap, "
        f"{-(-limit // cap_per_page)}).",
        "  A checkpoint runs one scan per item and one more for each decision's neighbours; when a decision has",
        "  fewer than 5 word matches of its type, the neighbours are topped up from GSI2 (one Query per live status,",
        "  so at most 3): small projects only.",
    ]
    return "\n".join(lines)
