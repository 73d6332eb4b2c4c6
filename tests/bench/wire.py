"""What an agent pays to use Notewell, in cl100k tokens of what it receives, and what it finds for the price.

    python -m tests.bench.wire [--entities 200] [--out .bench/wire.json]

1. The wire on a fixed corpus: the 200 generated entities of tests/bench/tokens.py, each a one-line note (its name
   and first observation; type from its entity type; title derived as remember derives it). Through the real MCP
   client against the real app (in process, over ASGI): tools/list, get_context at each detail level, with and
   without a query, search_notes and get_changes_since's first page. Each is counted as sent: the text block (what
   most clients hand the model) and, next to it, the JSON of structuredContent. BEFORE holds the same figures
   measured by this file on the commit before issue 11 (84d8383), where the text block was the compact JSON.
   The MCP reference memory server is modelled on the same entities: read_graph returns the whole graph and
   search_nodes the entities that contain the query, both as JSON.stringify(graph, null, 2).
2. Orientation at equal recall (tests/bench/orientation.py): labelled questions whose answer is one note, in
   projects full of distractors; the share whose note get_context shows, against the tokens it spent, and the
   same for the reference server's read_graph and search_nodes.
Figures only: nothing here fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import bpe_openai

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import titles
from tests.bench.common import log, table
from tests.bench.orientation import bench_orientation, report_orientation
from tests.bench.tokens import ENTITY_TYPES, entities
from tests.support.mcp_harness import connect, make_app, make_keys, running

PROJECT = "graph"
QUERY = "PostgreSQL"  # a word in many observations: a search an agent would make
CONTEXT_QUERY = "Which services store their data in PostgreSQL?"
# Measured with this file on 84d8383 (before issue 11): text block = compact JSON of structuredContent.
BEFORE: dict[str, dict[str, int]] = {
    "tools/list": {"text": 11948, "entries": 20},
    "get_context lean": {"text": 919, "entries": 8},
    "get_context lean +query": {"text": 915, "entries": 12},
    "get_context balanced": {"text": 2716, "entries": 29},
    "get_context balanced +query": {"text": 2676, "entries": 27},
    "get_context deep": {"text": 7208, "entries": 80},
    "get_context deep +query": {"text": 7165, "entries": 76},
    "search_notes 'PostgreSQL'": {"text": 604, "entries": 6},
    "get_changes_since page 1": {"text": 5076, "entries": 50},
}


def cl100k() -> Any:
    return bpe_openai.get_encoding("cl100k_base")


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def reference_graph(notes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """The reference server's graph of the same notes: one entity a note (name = title, type, one observation)."""
    return {
        "entities": [{"name": t, "entityType": kind, "observations": [body]} for t, kind, body in notes],
        "relations": [],
    }


def search_nodes(graph: dict[str, Any], query: str) -> dict[str, Any]:
    """The reference server's search_nodes: entities whose name, type or an observation contains the query."""
    needle = query.lower()
    found = [
        e for e in graph["entities"]
        if needle in e["name"].lower() or needle in e["entityType"].lower()
        or any(needle in o.lower() for o in e["observations"])
    ]  # fmt: skip
    return {"entities": found, "relations": []}


def pretty(value: object) -> str:
    """JSON.stringify(value, null, 2), as the reference server answers."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def one_line_notes(count: int) -> list[tuple[str, str, str]]:
    """(title, type, body) of `count` one-line notes drawn from the generated entities."""
    notes = []
    for entity in entities(count):
        body = f"{entity.name}: {entity.observations[0]}."
        notes.append((titles.derive_title(body), ENTITY_TYPES[entity.entity_type][1].value, body))
    return notes


async def measure_wire(count: int, workdir: Path) -> dict[str, Any]:
    encoding = cl100k()
    notes = one_line_notes(count)
    workdir.mkdir(parents=True, exist_ok=True)
    services = bootstrap(Settings(data_dir=workdir), store=SqliteStore(workdir / "notewell.db"))
    keys = make_keys(services)
    owner = services.auth.authenticate(keys.full)
    assert owner is not None
    from notewell.domain.model import NoteType

    for title, kind, body in notes:
        services.notes.create(owner, PROJECT, title=title, body=body, type=NoteType(kind))
    rows: dict[str, dict[str, int]] = {}

    def record(name: str, result: Any, entries: int) -> None:
        text = result.content[0].text
        rows[name] = {
            "text": len(encoding.encode(text)),
            "structured": len(encoding.encode(compact(result.structured_content))),
            "entries": entries,
        }

    async with running(make_app(services)) as app, connect(app, keys.full, "auto") as client:
        listed = await client.list_tools()
        tools = compact({"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]})
        rows["tools/list"] = {"text": len(encoding.encode(tools)), "structured": 0, "entries": len(listed.tools)}
        for detail in ("lean", "balanced", "deep"):
            for label, query in (("", None), (" +query", CONTEXT_QUERY)):
                arguments = {"project": PROJECT, "detail": detail, **({"query": query} if query else {})}
                result = await client.call_tool("get_context", arguments)
                shown = sum(len(s["entries"]) for s in result.structured_content["sections"])
                record(f"get_context {detail}{label}", result, shown)
        result = await client.call_tool("search_notes", {"project": PROJECT, "query": QUERY})
        record(f"search_notes {QUERY!r}", result, len(result.structured_content["results"]))
        result = await client.call_tool("get_changes_since", {"project": PROJECT})
        record("get_changes_since page 1", result, len(result.structured_content["changes"]))
    graph = reference_graph(notes)
    found = search_nodes(graph, QUERY)
    reference = {
        "read_graph": {"text": len(encoding.encode(pretty(graph))), "entries": len(graph["entities"])},
        f"search_nodes {QUERY!r}": {"text": len(encoding.encode(pretty(found))), "entries": len(found["entities"])},
    }
    services.deps.store.close()  # type: ignore[attr-defined]
    return {"entities": count, "rows": rows, "reference": reference}


def report_wire(d: dict[str, Any]) -> str:
    rows: list[list[object]] = []
    for name, now in d["rows"].items():
        before = BEFORE.get(name, {})
        per = f"{now['entries'] * 1000 / now['text']:.1f}" if now["entries"] and name != "tools/list" else ""
        each = f"{now['text'] / now['entries']:.0f}" if now["entries"] else ""
        was = f"{before['text']:,} ({before['entries']})" if before else None
        rows.append([name, was, now["text"], now["structured"] or "", now["entries"], per, each])
    for name, ref in d["reference"].items():
        per = f"{ref['entries'] * 1000 / ref['text']:.1f}" if ref["entries"] else ""
        each = f"{ref['text'] / ref['entries']:.0f}" if ref["entries"] else ""
        rows.append([f"reference {name}", "", ref["text"], "", ref["entries"], per, each])
    return "\n".join(
        [
            f"\n=== The wire: cl100k tokens an agent receives, {d['entities']} one-line notes ===",
            table(["answer", "before: text (entries)", "text", "structured", "entries", "per 1k", "tokens each"], rows),
            "  (text = the text block most clients hand the model; structured = the JSON of structuredContent;",
            "   before = the text block on 84d8383, the compact JSON of structuredContent; per 1k = entries shown",
            "   per 1,000 text tokens; reference = the MCP reference memory server on the same notes)",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path(".bench/wire.json"))
    parser.add_argument("--skip-orientation", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log(f"wire: {args.entities} one-line notes through the MCP client")
        wire = anyio.run(measure_wire, args.entities, Path(tmp) / "wire")
        orientation = None if args.skip_orientation else bench_orientation(Path(tmp) / "orientation")
    print(report_wire(wire))
    if orientation is not None:
        print(report_orientation(orientation))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"wire": wire, "orientation": orientation}, indent=1))
    log(f"wrote {args.out}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
