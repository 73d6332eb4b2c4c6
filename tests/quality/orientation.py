"""get_context at session start: does a new agent see the note that answers its orientation question, with its text?

    python -m tests.quality.orientation [--split tune|report] [--embedder local|none] [--show]

The project is tests/quality/orientation_project.jsonl: one coding project of 300 notes written by hand (Polar
Freight's dispatch platform, nine months of memory), in Notewell's export format. The questions are
tests/quality/orientation_questions.jsonl: each is answered by one current constraint, decision, failed approach or
newest handoff (`answer`, its note id), and counts as shown only when its `evidence`, a phrase of that note's body,
is in the text the agent receives; a title or a pointer alone is not the answer. A question is `tune` or `report` by
a hash of its id (coding.py's split_of).

The project is imported once into a fresh store through the import service, its timestamps moved so its newest note
is a day old whatever day the run is (recency is weighed against the clock). Then get_context is called as the MCP
tool calls it, at lean, balanced and deep: once without a query (the same answer for every question: one call per
level) and once per question with the question as the query. Each level reports the share shown, the tokens the
answer says it spent, and its budget. `--show` lists the misses and how the answer appeared instead; it refuses the
report split, which is read once per stop and never to choose a rule. `--room` prints what showing every current
standing note would cost instead: the tokens of all their lines at a few excerpt lengths (handoffs read at
HANDOFF_READ times), of which their refs, and how many of the split's answers have their evidence within.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from notewell.adapters.jsonl import dump_line
from notewell.domain import rules
from notewell.domain.packing import HANDOFF_READ, STANDING_TYPES, Detail, Section, entry_line, line_cost
from notewell.domain.refs import name_of
from notewell.entrypoints.wire import ContextOut
from tests.quality.coding import split_of
from tests.quality.harness import fresh_services, percent

if TYPE_CHECKING:
    from notewell.bootstrap import Services
    from notewell.config import EmbedderChoice
    from notewell.domain.model import Principal

PROJECT = Path(__file__).with_name("orientation_project.jsonl")
QUESTIONS = Path(__file__).with_name("orientation_questions.jsonl")
ANSWER_TYPES = ("constraint", "decision", "failed_approach", "handoff")
# The bars: (level, with a query, share of answers shown, budget it must hold).
TARGETS = (
    (Detail.BALANCED, False, 0.80, 3_000),
    (Detail.LEAN, False, 0.50, 1_000),
    (Detail.LEAN, True, 0.90, 1_000),
)
_SPACES = re.compile(r"\s+")
_STAMPS = ("createdAt", "updatedAt", "deletedAt", "exportedAt")


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    answer: str  # the answering note's id in the project file
    evidence: str  # a phrase of its body: shown only when this is in the text


@dataclass(frozen=True, slots=True)
class Answer:
    """One get_context answer, as the agent gets it: its text, and where each note ended up."""

    text: str
    spent: int
    budget: int
    full: frozenset[str]  # notes with a line of their own (title and excerpt)
    pointers: frozenset[str]  # notes degraded to id and title
    omitted: frozenset[str]  # ids listed under "Omitted"

    def shows(self, question: Question) -> bool:
        return normalised(question.evidence) in normalised(self.text)

    def form_of(self, note_id: str) -> str:
        """How a note appears when its evidence does not: why it was missed."""
        if note_id in self.full:
            return "excerpt cut before the evidence"
        if note_id in self.pointers:
            return "pointer only"
        if note_id in self.omitted:
            return "listed under Omitted"
        return "absent"


@dataclass(slots=True)
class Tally:
    """One level, with or without a query: questions shown, per answer type, and the tokens each answer spent."""

    shown: Counter[str] = field(default_factory=Counter)  # by answer type
    lined: Counter[str] = field(default_factory=Counter)  # answers with a line of their own, evidence or not
    asked: Counter[str] = field(default_factory=Counter)
    tokens: list[int] = field(default_factory=list)
    budget: int = 0  # as the answers report it

    def lined_share(self) -> str:
        lined, asked = self.lined.total(), self.asked.total()
        return f"{lined}/{asked} {percent(lined, asked)}"

    def share(self) -> str:
        shown, asked = self.shown.total(), self.asked.total()
        return f"{shown}/{asked} {percent(shown, asked)}"


def normalised(text: str) -> str:
    """Excerpts are one line: compare with runs of spaces and line breaks as one space, case aside."""
    return _SPACES.sub(" ", text).strip().casefold()


def read_questions(path: Path = QUESTIONS, split: str = "tune") -> list[Question]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Question(**record) for record in records if split_of(record["id"]) == split]


def read_project(path: Path = PROJECT) -> tuple[str, dict[str, str]]:
    """The project's slug and the type of each of its notes, by id."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    slug = next(str(r["slug"]) for r in records if r.get("kind") == "project")
    return slug, {r["id"]: r["type"] for r in records if r.get("kind") == "note"}


def shifted_lines(path: Path, now: datetime) -> list[str]:
    """The export's lines with every timestamp moved by one amount, so that the newest note was written a day before
    `now`: the notes' ages, and so their recency, are the same on every run."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    newest = max(rules.parse_ts(r["updatedAt"]) for r in records if r.get("kind") == "note")
    delta = now - timedelta(days=1) - newest
    for record in records:
        for key in _STAMPS:
            if record.get(key) is not None:
                record[key] = rules.format_ts(rules.parse_ts(record[key]) + delta)
    return [dump_line(record) for record in records]


def context(services: Services, principal: Principal, slug: str, detail: Detail, query: str | None) -> Answer:
    """get_context through the service and the wire model the MCP tool returns; `text` is the tool's text block."""
    out = ContextOut.of(services.context.get_context(principal, slug, query=query, detail=detail))
    entries = [entry for section in out.sections for entry in section.entries]
    return Answer(
        text=out.as_text() or "",
        spent=out.meta.spent,
        budget=out.meta.budget,
        full=frozenset(e.id for e in entries if e.excerpt is not None),
        pointers=frozenset(e.id for e in entries if e.excerpt is None),
        omitted=frozenset(ref.id for ref in out.meta.omitted_ids),
    )


def run(split: str, embedder: EmbedderChoice, show: bool) -> dict[tuple[Detail, bool], Tally]:
    questions = read_questions(QUESTIONS, split)
    slug, types = read_project(PROJECT)
    tallies = {(detail, with_query): Tally() for detail in Detail for with_query in (False, True)}
    with fresh_services(embedder) as (services, principal):
        services.portability.import_file(principal, slug, shifted_lines(PROJECT, services.deps.clock.now()))
        for detail in Detail:
            bare = context(services, principal, slug, detail, None)  # no query: one answer for every question
            tallies[detail, False].tokens.append(bare.spent)
            tallies[detail, False].budget = tallies[detail, True].budget = bare.budget
            for question in questions:
                asked = context(services, principal, slug, detail, question.question)
                tallies[detail, True].tokens.append(asked.spent)
                for with_query, answer in ((False, bare), (True, asked)):
                    kind = types[question.answer]
                    tallies[detail, with_query].asked[kind] += 1
                    if question.answer in answer.full:
                        tallies[detail, with_query].lined[kind] += 1
                    if answer.shows(question):
                        tallies[detail, with_query].shown[kind] += 1
                    elif show:
                        mode = "with query" if with_query else "no query"
                        print(f"[{question.id}] {detail.value}, {mode}: {answer.form_of(question.answer)}\n"
                              f"  q: {question.question}\n  answer: {question.answer} ({kind})\n"
                              f"  evidence: {question.evidence}", file=sys.stderr)  # fmt: skip
    return tallies


ROOM_EXCERPTS = (100, 130, 180, 240)


def room(split: str) -> str:
    """What a line for every current standing note would cost, by excerpt length, and what it would show."""
    questions = read_questions(QUESTIONS, split)
    slug, _ = read_project(PROJECT)
    with fresh_services("none") as (services, principal):
        services.portability.import_file(principal, slug, shifted_lines(PROJECT, services.deps.clock.now()))
        project = next(p for p in services.projects.list(principal) if p.slug == slug)
        notes = services.deps.store.project_notes(principal.workspace_id, project.id, limit=10_000)
    standing = [n for n in notes if n.type in STANDING_TYPES and n.status.value == "current"]
    by_id = {n.id: n for n in notes}
    lines = [
        f"every current standing note of {slug} ({len(standing)}) with a line of its own, split {split}:",
        f"{'excerpt':>7} {'tokens':>7} {'of which refs':>13}  answers with their evidence in their line",
    ]
    for chars in ROOM_EXCERPTS:

        def line(note_id: str, chars: int = chars) -> str:
            note = by_id[note_id]
            read = chars * HANDOFF_READ if note.type.value == "handoff" else chars
            return entry_line(note, Section.STATUS, read)

        tokens = sum(line_cost(line(n.id)) for n in standing)
        ids = sum(line_cost(" " + name_of(n.id)) for n in standing)
        shown = sum(1 for q in questions if normalised(q.evidence) in normalised(line(q.answer)))
        lines.append(f"{chars:>7} {tokens:>7,} {ids:>13,}  {shown}/{len(questions)}")
    return "\n".join(lines)


def report(tallies: dict[tuple[Detail, bool], Tally], split: str, embedder: str) -> str:
    slug, _ = read_project(PROJECT)
    asked = tallies[Detail.LEAN, False].asked.total()
    lines = [
        f"get_context orientation on {slug}, split {split} ({asked} questions), embedder {embedder}",
        f"{'level':9} {'budget':>6}  {'no query: shown':>16} {'tokens':>6}  {'with query: shown':>18} "
        f"{'tokens (mean, max)':>18}",
    ]
    for detail in Detail:
        bare, queried = tallies[detail, False], tallies[detail, True]
        mean = sum(queried.tokens) / len(queried.tokens) if queried.tokens else 0
        lines.append(
            f"{detail.value:9} {bare.budget:>6}  {bare.share():>16} {max(bare.tokens, default=0):>6}  "
            f"{queried.share():>18} {f'{mean:,.0f}, {max(queried.tokens, default=0):,}':>18}"
        )
    lines.append("answers with a line of their own (title and excerpt, the evidence in it or not), no query | query:")
    for detail in Detail:
        bare, queried = tallies[detail, False], tallies[detail, True]
        lines.append(f"  {detail.value:9} {bare.lined_share()} | {queried.lined_share()}")
    lines.append("shown by answer type, no query | with query:")
    for detail in Detail:
        bare, queried = tallies[detail, False], tallies[detail, True]
        parts = [f"{kind} {bare.shown[kind]} | {queried.shown[kind]} of {bare.asked[kind]}" for kind in ANSWER_TYPES]
        lines.append(f"  {detail.value:9} " + ", ".join(parts))
    for detail, with_query, share, budget in TARGETS:
        tally = tallies[detail, with_query]
        spent = max(tally.tokens, default=0)
        met = tally.asked.total() > 0 and tally.shown.total() >= share * tally.asked.total() and spent <= budget
        mode = "with the question as query" if with_query else "without a query"
        lines.append(
            f"{detail.value} {mode}: {tally.share()} shown at <= {spent:,} tokens "
            f"(target >= {share:.0%} at <= {budget:,}): {'met' if met else 'NOT met'}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["tune", "report"], default="tune")
    parser.add_argument("--embedder", choices=["local", "none"], default="local")
    parser.add_argument("--show", action="store_true", help="Print each miss and how the answer appeared (tune only).")
    parser.add_argument("--room", action="store_true", help="What showing every standing note would cost (tune only).")
    args = parser.parse_args(argv)
    if args.room:
        if args.split == "report":
            parser.error("--room reads answers one by one: only on the tune split.")
        print(room(args.split))
        return 0
    if args.show and args.split == "report":
        parser.error("--show reads answers one by one: only on the tune split (the report split chooses no rule).")
    tallies = run(args.split, args.embedder, args.show)
    print(report(tallies, args.split, args.embedder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
