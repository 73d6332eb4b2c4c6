"""Token economy: what get_context costs an agent's context window, against reading the whole memory.

A knowledge-graph memory (entities with observations, as MCP's reference memory server keeps them) hands the
agent everything it holds: its read_graph answers with the whole graph as JSON. Here the same generated entities
(names, types and 3 observations each, deterministic) are loaded into Notewell, one note per entity (title: the
name; body: one line per observation; type from the entity type; tag: the entity type), and get_context answers
at lean and balanced, without a query and with one (a question about one entity). Each answer is measured as an
agent receives it: the compact JSON of the tool's structured result (ContextOut, as the MCP tool returns it),
counted with Notewell's own estimate (rules.estimate_tokens) and with the real tokenizers cl100k_base and
o200k_base (the bpe_openai package). Next to it: the tokens of the whole data set as compact JSON
({"entities": [{"name", "entityType", "observations"}]}), what reading the whole memory costs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import bpe_openai

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteType
from notewell.domain.packing import Detail
from notewell.domain.rules import estimate_tokens
from notewell.entrypoints.wire import ContextOut
from tests.bench.common import PROJECT, log, new_principal, table

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

DEFAULT_ENTITY_COUNTS = (200, 1_000, 5_000)
OBSERVATIONS = 3
SEED = "notewell-bench/entities"
ENCODINGS = ("cl100k_base", "o200k_base")
DETAILS = (Detail.LEAN, Detail.BALANCED)
CHUNK_CHARS = 200_000

_FIRST = ("Alice", "Bruno", "Chen", "Dana", "Elif", "Farah", "Gustavo", "Hana", "Ivan", "Jonas", "Keiko", "Lena",
          "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yusuf",
          "Zoe", "Amara", "Bilal", "Carmen", "Diego", "Esther", "Femi", "Greta", "Hugo", "Ines", "Jakob", "Kavya",
          "Luca", "Maya", "Nils", "Olga")  # fmt: skip
_LAST = ("Moreno", "Schmidt", "Okafor", "Tanaka", "Novak", "Haddad", "Lindqvist", "Costa", "Kowalski", "Singh",
         "Dubois", "Yilmaz", "Park", "Rossi", "Nguyen", "Fischer", "Andersen", "Mendes", "Ivanova", "Baker", "Khan",
         "Ortiz", "Weber", "Sato", "Petrov", "Hughes", "Silva", "Jensen", "Afolabi", "Romero")  # fmt: skip
_ROLES = ("platform engineer", "product manager", "data scientist", "site reliability engineer", "designer",
          "security lead", "backend developer", "engineering manager", "QA engineer", "architect")  # fmt: skip
_CITIES = ("Lisbon", "Berlin", "Lagos", "Osaka", "Toronto", "Nairobi", "Melbourne", "Warsaw", "Bogotá", "Pune",
           "Austin", "Dublin", "Seoul", "Stockholm", "Cape Town")  # fmt: skip
_ORG_A = ("Blue", "North", "Bright", "Iron", "Silver", "Quiet", "Rapid", "Green", "Summit", "Harbor", "Cedar",
          "Polar", "Amber", "Lumen", "Vector", "Nimbus", "Granite", "Maple", "Orbit", "Tidal")  # fmt: skip
_ORG_B = ("Fox", "Labs", "Works", "Analytics", "Logistics", "Health", "Systems", "Robotics", "Finance", "Media",
          "Foods", "Energy", "Networks", "Studio", "Capital")  # fmt: skip
_ORG_C = ("Inc", "GmbH", "Ltd", "SA", "Co")
_SERVICE_A = ("billing", "search", "auth", "checkout", "inventory", "notification", "reporting", "ingest",
              "pricing", "profile", "shipping", "catalog", "ledger", "export", "audit", "gateway", "scheduler",
              "media", "payments", "recommendation")  # fmt: skip
_SERVICE_B = ("api", "worker", "service", "pipeline", "gateway", "store", "cron", "proxy")
_TECH = ("PostgreSQL", "Redis", "Kafka", "Kubernetes", "Terraform", "DynamoDB", "React", "Go", "Rust", "Python",
         "TypeScript", "gRPC", "GraphQL", "Elasticsearch", "ClickHouse", "RabbitMQ", "Airflow", "Snowflake",
         "Prometheus", "Grafana", "Envoy", "Nginx", "SQLite", "Lambda", "S3")  # fmt: skip
_LANGUAGES = ("Go", "Rust", "Python", "TypeScript", "Java", "Kotlin", "Elixir", "C#")
_DATASTORES = ("PostgreSQL", "Redis", "DynamoDB", "ClickHouse", "Elasticsearch", "S3", "SQLite", "Cassandra")
_CODENAMES = ("Aurora", "Basalt", "Comet", "Delta", "Ember", "Falcon", "Glacier", "Helix", "Indigo", "Juniper",
              "Kestrel", "Lantern", "Mosaic", "Nova", "Onyx", "Prism", "Quartz", "Raven", "Sierra")  # fmt: skip
_PROJECT_KIND = ("migration", "redesign", "rollout", "launch", "cleanup", "audit", "integration", "pilot")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip
_TOPICS = ("code review", "deploys", "on-call", "meetings", "documentation", "testing", "logging", "dashboards")
_CHANNELS = ("Slack", "email", "the weekly sync", "pull request comments", "a short call")
# Entity types, their share of the graph, and the note type each becomes.
ENTITY_TYPES: dict[str, tuple[int, NoteType]] = {
    "person": (30, NoteType.FACT),
    "organization": (15, NoteType.FACT),
    "service": (15, NoteType.ARCHITECTURE),
    "project": (12, NoteType.STATUS),
    "technology": (10, NoteType.REFERENCE),
    "preference": (8, NoteType.PREFERENCE),
    "decision": (6, NoteType.DECISION),
    "incident": (4, NoteType.INCIDENT),
}


@dataclass(frozen=True, slots=True)
class Entity:
    name: str
    entity_type: str
    observations: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """The entity as the reference memory server's graph holds it."""
        return {"name": self.name, "entityType": self.entity_type, "observations": list(self.observations)}


class _Names:
    """Draws names from `make` until one is new; after a few tries, numbers the last one drawn."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def unique(self, rng: random.Random, make: Callable[[random.Random], str]) -> str:
        name = make(rng)
        for _ in range(20):
            if name not in self.seen:
                break
            name = make(rng)
        base, number = name, 2
        while name in self.seen:
            name = f"{base} {number}"
            number += 1
        self.seen.add(name)
        return name


def _observations(rng: random.Random, kind: str, pick: Callable[[str], str]) -> list[str]:
    year = rng.randint(2014, 2026)
    month = rng.choice(_MONTHS)
    if kind == "person":
        return [
            f"Works at {pick('organization')} as a {rng.choice(_ROLES)}",
            f"Based in {rng.choice(_CITIES)}; prefers {rng.choice(_CHANNELS)} for questions about {pick('service')}",
            f"Owns the {pick('service')} on-call rotation since {month} {year}",
        ]
    if kind == "organization":
        return [
            f"Customer since {year}; contract renews every {month}",
            f"Headquartered in {rng.choice(_CITIES)}, about {rng.randint(2, 90) * 10} employees",
            f"Main contact is {pick('person')}; integrates through the {pick('service')}",
        ]
    if kind == "service":
        return [
            f"Written in {rng.choice(_LANGUAGES)}, stores its data in {rng.choice(_DATASTORES)}",
            f"p99 latency target {rng.choice((50, 100, 200, 250, 500))} ms; owned by {pick('person')}",
            f"Deployed {rng.choice(('hourly', 'daily', 'weekly'))} through the shared pipeline; depends on "
            f"{pick('service')}",
        ]
    if kind == "project":
        return [
            f"Led by {pick('person')}, due end of {month} {year}",
            f"Moves the {pick('service')} onto {rng.choice(_TECH)}",
            f"Status: {rng.choice(('on track', 'at risk', 'blocked on review', 'in testing', 'paused'))}",
        ]
    if kind == "technology":
        return [
            f"Used by the {pick('service')} and by {pick('project')}",
            f"Pinned to version {rng.randint(1, 17)}.{rng.randint(0, 12)} until the next upgrade window",
            f"{pick('person')} is the go-to expert",
        ]
    if kind == "preference":
        return [
            f"The team prefers {rng.choice(_LANGUAGES)} over {rng.choice(_LANGUAGES)} for a new "
            f"{rng.choice(_SERVICE_B)}",
            f"{rng.choice(_TOPICS).capitalize()} happen in {rng.choice(_CHANNELS)}",
            f"Raised by {pick('person')} in {month} {year}",
        ]
    if kind == "decision":
        return [
            f"Decided to move the {pick('service')} from {rng.choice(_DATASTORES)} to {rng.choice(_DATASTORES)}",
            f"Reason: {rng.choice(('lower cost', 'fewer incidents', 'simpler operations', 'team skills'))}",
            f"Agreed by {pick('person')} and {pick('person')} in {month} {year}",
        ]
    return [
        f"The {pick('service')} was down for {rng.randint(3, 180)} minutes on {rng.randint(1, 28)} {month} {year}",
        f"Root cause: {rng.choice(('an expired certificate', 'a full disk', 'a bad deploy', 'a DNS change'))}",
        f"Postmortem written by {pick('person')}",
    ]


def _name(rng: random.Random, kind: str) -> str:
    if kind == "person":
        return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    if kind == "organization":
        return f"{rng.choice(_ORG_A)}{rng.choice(_ORG_B).lower()} {rng.choice(_ORG_C)}"
    if kind == "service":
        return f"{rng.choice(_SERVICE_A)}-{rng.choice(_SERVICE_B)}"
    if kind == "project":
        return f"Project {rng.choice(_CODENAMES)} {rng.choice(_PROJECT_KIND)}"
    if kind == "technology":
        return f"{rng.choice(_TECH)} {rng.randint(1, 17)}"
    if kind == "preference":
        return f"Preference: {rng.choice(_TOPICS)} ({rng.choice(_CODENAMES)} team)"
    if kind == "decision":
        return f"Decision: {rng.choice(_SERVICE_A)} {rng.choice(_PROJECT_KIND)} ({rng.choice(_CODENAMES)})"
    return f"Incident: {rng.choice(_SERVICE_A)} outage ({rng.choice(_CODENAMES)} {rng.randint(1, 999)})"


def entities(count: int) -> list[Entity]:
    """`count` entities of mixed types with 3 observations each; the first n of a longer list are the same."""
    rng = random.Random(SEED)
    kinds = list(ENTITY_TYPES)
    weights = [ENTITY_TYPES[k][0] for k in kinds]
    names = _Names()
    made: list[Entity] = []
    by_type: dict[str, list[str]] = {k: [] for k in kinds}

    def pick(kind: str) -> str:
        """An existing entity of `kind` when there is one (observations refer to each other), else a new name."""
        known = by_type[kind]
        return rng.choice(known) if known and rng.random() < 0.8 else _name(rng, kind)

    for _ in range(count):
        kind = rng.choices(kinds, weights)[0]
        name = names.unique(rng, lambda r, kind=kind: _name(r, kind))
        observations = tuple(_observations(rng, kind, pick)[:OBSERVATIONS])
        made.append(Entity(name, kind, observations))
        by_type[kind].append(name)
    return made


def pieces(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """`text` in pieces of at most `size` characters, cut after a '},' (between two entities of the data set) where
    there is one, so that each piece tokenizes as it does inside the whole."""
    out: list[str] = []
    while len(text) > size:
        found = text.rfind("},", 0, size)
        cut = found + 2 if found > 0 else size
        out.append(text[:cut])
        text = text[cut:]
    return [*out, text]


def token_counts(text: str, encoders: dict[str, Any]) -> dict[str, int]:
    """Notewell's estimate and each encoding's real count (the tokenizer takes under 1M characters at a time: a
    longer text is counted piece by piece)."""
    counts = {"estimate": estimate_tokens(text)}
    for name, encoder in encoders.items():
        counts[name] = sum(len(encoder.encode(piece)) for piece in pieces(text))
    return counts


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def where(note_id: str, structured: dict[str, Any]) -> str:
    """Where a note is in a get_context answer: the section that shows it, 'omitted (section)', or 'absent'."""
    for section in structured["sections"]:
        if any(entry["id"] == note_id for entry in section["entries"]):
            return str(section["name"])
    for omitted in structured["meta"].get("omittedIds", []):
        if omitted["id"] == note_id:
            return f"omitted ({omitted['section']})"
    return "absent"


def bench_tokens_size(count: int, workdir: Path, encoders: dict[str, Any]) -> dict[str, Any]:
    graph = entities(count)
    data_dir = workdir / "data"
    data_dir.mkdir(parents=True)
    store = SqliteStore(data_dir / "notewell.db")
    try:
        services = bootstrap(Settings(data_dir=data_dir), store=store)
        principal = new_principal(services)
        log(f"tokens: loading {count:,} entities as notes")
        ids: list[str] = []
        for entity in graph:
            view = services.notes.create(
                principal, PROJECT, title=entity.name, body="\n".join(entity.observations),
                type=ENTITY_TYPES[entity.entity_type][1], tags=[entity.entity_type],
            )  # fmt: skip
            ids.append(view.note.id)
        subject, subject_id = graph[len(graph) // 2], ids[len(graph) // 2]
        queries = {"none": None, "about one entity": f"What do we know about {subject.name}?"}
        answers: list[dict[str, Any]] = []
        for detail in DETAILS:
            for label, query in queries.items():
                result = services.context.get_context(principal, PROJECT, query=query, detail=detail)
                structured = ContextOut.of(result).model_dump(mode="json", by_alias=True, exclude_none=True)
                meta = structured["meta"]
                answers.append(
                    {
                        "detail": detail.value,
                        "query": label,
                        "budget": meta["budget"],
                        "spent": meta["spent"],
                        "selected": meta["selected"],
                        "omitted": meta["omitted"],
                        "subject": where(subject_id, structured) if query else None,
                        "tokens": token_counts(compact(structured), encoders),
                        "omitted_ids_tokens": token_counts(compact(meta.get("omittedIds", [])), encoders),
                        "chars": len(compact(structured)),
                    }
                )
    finally:
        store.close()
    dataset = compact({"entities": [e.as_json() for e in graph]})
    return {
        "entities": count,
        "dataset": {"chars": len(dataset), "tokens": token_counts(dataset, encoders)},
        "get_context": answers,
    }


def bench_tokens(counts: Sequence[int], workdir: Path) -> dict[str, Any]:
    encoders = {name: bpe_openai.get_encoding(name) for name in ENCODINGS}
    by_count = [bench_tokens_size(count, workdir / f"tokens-{count}", encoders) for count in counts]
    return {"encodings": list(ENCODINGS), "observations_per_entity": OBSERVATIONS, "sizes": by_count}


def report_tokens(d: dict[str, Any]) -> str:
    rows: list[list[object]] = []
    for size in d["sizes"]:
        data = size["dataset"]["tokens"]
        rows.append([f"{size['entities']:,}", "whole data set (JSON)", "", "", "", "", "", data["estimate"]]
                    + [data[name] for name in ENCODINGS] + ["", "", "1.000", ""])  # fmt: skip
        for answer in size["get_context"]:
            tokens = answer["tokens"]
            real = max(tokens[name] for name in ENCODINGS)
            rows.append(
                ["", f"get_context {answer['detail']}", answer["query"], answer["budget"], answer["spent"]]
                + [answer["selected"], answer["omitted"], tokens["estimate"]]
                + [tokens[name] for name in ENCODINGS]
                + [answer["omitted_ids_tokens"]["cl100k_base"], "yes" if real <= answer["budget"] else "NO"]
                + [f"{tokens['cl100k_base'] / data['cl100k_base']:.3f}", answer["subject"] or ""]
            )
    return "\n".join(
        [
            "\n=== Token economy: get_context against the whole memory, "
            f"entities x {d['observations_per_entity']} observations ===",
            table(
                ["entities", "answer", "query", "budget", "spent", "entries", "omitted", "estimate"]
                + list(ENCODINGS)
                + ["omittedIds", "<= budget", "share", "asked-about entity"],
                rows,
            ),
            "  (tokens of the compact JSON of the tool's structured result; spent = get_context's own count of what",
            "   it packed; omittedIds = cl100k tokens of meta.omittedIds alone; <= budget: the larger real count is",
            "   within the budget; share = cl100k tokens over the whole data set's; asked-about entity: the section",
            "   showing the note of the entity the query names, or where it went)",
        ]
    )
