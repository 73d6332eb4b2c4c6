"""Orientation at equal recall: does the next agent find the note that answers its question, and at what price?

A labelled set, generated (seeded, deterministic): projects holding decisions, constraints, failed approaches,
status and open items, each the one answer to a question, among many distractor notes that name the same
services (their dashboards, owners, deploys, incidents, superseded decisions). For each question, get_context
answers at lean, balanced and deep, once with the question as its query and once without a query; the question
counts as found when its note is shown (a full line or a pointer; an id under "Omitted" is not shown). The MCP
reference memory server holds the same notes as entities: read_graph shows everything at the price of the whole
graph; search_nodes is called with the service or project the question names, the one word an agent would type.

Two splits, "tune" (seed 1) and "report" (seed 2). Nothing was tuned on either: get_context's weights and
packing were set before this set existed; the report split is what the closing notes cite.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import bpe_openai

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain import titles
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.packing import Detail
from tests.bench.common import log, new_principal, table

if TYPE_CHECKING:
    from pathlib import Path

SPLITS = {"tune": 1, "report": 2}
PROJECTS = 4
DISTRACTORS = 90  # per project, besides 58 answers and 10 superseded predecessors

_SERVICES = ("billing-api", "search-worker", "auth-gateway", "ledger-service", "export-cron", "pricing-api",
             "shipping-worker", "catalog-store", "audit-pipeline", "profile-api", "inventory-sync",
             "media-proxy")  # fmt: skip
_STORES = ("PostgreSQL", "DynamoDB", "Redis", "ClickHouse", "SQLite", "Cassandra", "S3", "Elasticsearch")
_REASONS = ("its transactions", "lower cost", "fewer incidents", "the team's skills", "point-in-time restore")
_TECH = ("Redis", "Memcached", "a CDN", "an in-process LRU", "Varnish")
_WHY = ("entries went stale after writes", "hit rate stayed under 5%", "memory blew up under load",
        "invalidation raced with deploys")  # fmt: skip
_CODENAMES = ("Aurora", "Basalt", "Comet", "Delta", "Ember", "Falcon", "Glacier", "Helix")
_STATES = ("on track for the end of the month", "blocked on the security review", "paused until the audit",
           "in load testing on staging")  # fmt: skip
_PEOPLE = ("Alice Moreno", "Bruno Okafor", "Chen Tanaka", "Dana Novak", "Elif Haddad", "Farah Costa")
_TEAMS = ("Platform", "Payments", "Growth", "Core", "Data")


@dataclass(frozen=True, slots=True)
class Question:
    project: str
    text: str
    keyword: str  # what an agent would type into the reference server's search_nodes
    answer: str  # the answering note's body (ids differ per run; bodies are unique)


@dataclass(frozen=True, slots=True)
class SeedNote:
    body: str
    type: NoteType
    status: NoteStatus = NoteStatus.CURRENT
    supersedes: str | None = None  # the body of the note it replaces


def project_set(rng: random.Random, name: str) -> tuple[list[SeedNote], list[Question]]:
    services = rng.sample(_SERVICES, 10)
    notes: list[SeedNote] = []
    questions: list[Question] = []

    def answer(
        body: str, kind: NoteType, question: str, keyword: str, status: NoteStatus = NoteStatus.CURRENT,
        supersedes: str | None = None,
    ) -> None:  # fmt: skip
        notes.append(SeedNote(body, kind, status, supersedes))
        questions.append(Question(name, question, keyword, body))

    languages = ("Go", "Rust", "Python", "TypeScript", "Kotlin", "Elixir")
    queues = ("Kafka", "SQS", "RabbitMQ", "NATS", "EventBridge")
    for service in services:
        old, new = rng.sample(_STORES, 2)
        replaced = f"The {service} stores its data in {old}."
        notes.append(SeedNote(replaced, NoteType.DECISION))
        answer(f"The {service} stores its data in {new}; we chose it for {rng.choice(_REASONS)}.",
               NoteType.DECISION, f"Where does the {service} keep its data?", service, supersedes=replaced)  # fmt: skip
        answer(f"The {service} publishes its events to {rng.choice(queues)}, one topic per entity.",
               NoteType.DECISION, f"Where does the {service} publish its events?", service)  # fmt: skip
        answer(f"The {service} is written in {rng.choice(languages)}, like the rest of its team's code.",
               NoteType.DECISION, f"What language is the {service} written in?", service)  # fmt: skip
        answer(f"Every call to the {service} must set a timeout of at most {rng.choice((200, 500, 800))} ms.",
               NoteType.CONSTRAINT, f"What timeout do calls to the {service} need?", service)  # fmt: skip
    for service in services[:8]:
        answer(f"Caching {service} responses in {rng.choice(_TECH)} failed: {rng.choice(_WHY)}.",
               NoteType.FAILED_APPROACH, f"Has anyone tried caching the {service} responses?", service)  # fmt: skip
    for codename in rng.sample(_CODENAMES, 4):
        answer(f"Project {codename} is {rng.choice(_STATES)}; next step is the {rng.choice(services)} cut-over.",
               NoteType.STATUS, f"Where does project {codename} stand?", codename)  # fmt: skip
    for service in services[2:8]:
        answer(f"Write the failover runbook for the {service} before the next game day.", NoteType.TASK,
               f"What is left to do for the {service} failover?", service, NoteStatus.PENDING)  # fmt: skip
    distractors = (
        (NoteType.REFERENCE, "The {s} dashboard lives in Grafana under the {t} folder."),
        (NoteType.FACT, "{p} holds the {s} pager this week."),
        (NoteType.PROCEDURE, "The {s} deploys {f} through the shared pipeline; roll back with the deploy tool."),
        (NoteType.INCIDENT, "The {s} was down for {n} minutes on {d} March after a bad config push."),
        (NoteType.NOTE, "{p} asked whether the {s} could batch its writes; nobody has looked yet."),
        (NoteType.FACT, "The {s} serves about {n}0 requests a second at peak."),
    )
    for n in range(DISTRACTORS):
        kind, template = distractors[n % len(distractors)]
        body = template.format(s=rng.choice(services), t=rng.choice(_TEAMS), p=rng.choice(_PEOPLE),
                               f=rng.choice(("hourly", "daily", "weekly")), n=n + 7, d=1 + n % 28)  # fmt: skip
        notes.append(SeedNote(f"{body} (#{n})", kind))
    rng.shuffle(notes)  # answers are not all newest or oldest
    return notes, questions


def orientation_set(seed: int) -> list[tuple[str, list[SeedNote], list[Question]]]:
    rng = random.Random(f"notewell-orientation/{seed}")
    return [(f"o{seed}-{n}", *project_set(rng, f"o{seed}-{n}")) for n in range(PROJECTS)]


def pretty_tokens(encoding: Any, value: object) -> int:
    import json

    return len(encoding.encode(json.dumps(value, ensure_ascii=False, indent=2)))


def bench_split(seed: int, workdir: Path) -> dict[str, Any]:
    encoding = bpe_openai.get_encoding("cl100k_base")
    workdir.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(workdir / "notewell.db")
    services = bootstrap(Settings(data_dir=workdir), store=store)
    principal = new_principal(services)
    results: dict[str, dict[str, float]] = {}
    counts: dict[str, list[float]] = {}

    def tally(row: str, found: bool, tokens: int) -> None:
        found_sum, token_sum, n = counts.setdefault(row, [0.0, 0.0, 0.0])
        counts[row] = [found_sum + found, token_sum + tokens, n + 1]

    for project, notes, questions in orientation_set(seed):
        by_body: dict[str, str] = {}
        for note in sorted(notes, key=lambda n: n.supersedes is not None):  # a replaced note exists first
            made = services.notes.create(
                principal, project, title=titles.derive_title(note.body), body=note.body, type=note.type,
                status=note.status, supersedes=[by_body[note.supersedes]] if note.supersedes else [],
            )  # fmt: skip
            by_body[note.body] = made.note.id
        graph = {"entities": [{"name": n.body[:60], "entityType": n.type.value, "observations": [n.body]}
                              for n in notes], "relations": []}  # fmt: skip
        whole = pretty_tokens(encoding, graph)
        for question in questions:
            wanted = by_body[question.answer]
            for detail in Detail:
                for label, query in (("query", question.text), ("no query", None)):
                    packed = services.context.get_context(principal, project, query=query, detail=detail).packed
                    shown = any(e["id"] == wanted for _, entries in packed.sections for e in entries)
                    tally(f"get_context {detail.value}, {label}", shown, len(encoding.encode(packed.text)))
            tally("reference read_graph", True, whole)
            needle = question.keyword.lower()
            found = [e for e in graph["entities"] if any(needle in o.lower() for o in e["observations"])
                     or needle in e["name"].lower()]  # fmt: skip
            tally("reference search_nodes(keyword)", any(e["observations"][0] == question.answer for e in found),
                  pretty_tokens(encoding, {"entities": found, "relations": []}))  # fmt: skip
    store.close()
    for row, (found_sum, token_sum, n) in counts.items():
        results[row] = {"found": found_sum / n, "tokens": token_sum / n, "questions": n}
    return results


def bench_orientation(workdir: Path) -> dict[str, Any]:
    out = {}
    for split, seed in SPLITS.items():
        log(f"orientation: split {split}")
        out[split] = bench_split(seed, workdir / split)
    return out


def report_orientation(d: dict[str, Any]) -> str:
    lines = []
    for split, rows in d.items():
        body = [[row, f"{r['found'] * 100:.0f}%", f"{r['tokens']:,.0f}", int(r["questions"]),
                 f"{r['found'] * 1000 / r['tokens']:.2f}"] for row, r in rows.items()]  # fmt: skip
        lines += [
            f"\n=== Orientation, split {split}: the note that answers the question is shown ===",
            table(["answer", "found", "tokens (cl100k, mean)", "questions", "found per 1k tokens"], body),
        ]
    lines.append("  (found: the answering note is a line of the answer; an id under Omitted does not count)")
    return "\n".join(lines)
