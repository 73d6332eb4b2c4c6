"""get_context's ranking and packing: score candidates, fill fixed sections within a token budget.

Pure: the service hands in notes already loaded through bounded, indexed queries, and the current time.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain.model import Note, NoteType
from notewell.domain.rules import estimate_tokens, excerpt, parse_ts

if TYPE_CHECKING:
    from datetime import datetime


class Detail(StrEnum):
    LEAN = "lean"
    BALANCED = "balanced"
    DEEP = "deep"


@dataclass(frozen=True, slots=True)
class DetailLevel:
    budget: int  # tokens, when neither maxTokens nor the project's default is set
    excerpt_chars: int


DETAIL_LEVELS = {
    Detail.LEAN: DetailLevel(budget=1_000, excerpt_chars=100),
    Detail.BALANCED: DetailLevel(budget=3_000, excerpt_chars=240),
    Detail.DEEP: DetailLevel(budget=8_000, excerpt_chars=800),
}

MIN_BUDGET = 200
MAX_BUDGET = 32_000


class Section(StrEnum):
    CONSTRAINTS = "constraints"
    DECISIONS = "decisions"
    FAILED_APPROACHES = "failed_approaches"
    STATUS = "status"
    RELEVANT = "relevant"
    OPEN_ITEMS = "open_items"
    RECENT_CHANGES = "recent_changes"


SECTION_ORDER = list(Section)  # the contract's fixed order

SECTION_TYPES: dict[Section, tuple[NoteType, ...]] = {
    Section.CONSTRAINTS: (NoteType.CONSTRAINT, NoteType.PREFERENCE),
    Section.DECISIONS: (NoteType.DECISION, NoteType.ARCHITECTURE),
    Section.FAILED_APPROACHES: (NoteType.FAILED_APPROACH,),
    Section.STATUS: (NoteType.STATUS, NoteType.HANDOFF),
    Section.OPEN_ITEMS: (NoteType.TASK,),
}


# ----- scoring -------------------------------------------------------------------------------------------------
# All weights live here. A candidate's score is a weighted sum of signals that each lie in [0, 1].
WEIGHT_RELEVANCE = 3.0  # an explicit query is the strongest statement of what the agent needs now
WEIGHT_RECENCY = 1.5  # newer knowledge tends to be the true one, but age alone never evicts a rule
WEIGHT_IMPORTANCE = 1.5  # the writer's own 1-5 rating: a critical constraint must beat last week's trivia
WEIGHT_CANONICAL = 1.0  # the authoritative note on a topic outranks commentary about it
WEIGHT_INBOUND = 1.0  # notes other notes point at are load-bearing
WEIGHT_TYPE = 0.5  # a tie-breaker across types (only mixed sections: relevant, recent_changes)
# Hyperbolic decay 1 / (1 + age / H): after H days a note keeps half its recency, after a year about 8 %, after two
# years about 4 % — less than last week's, but not nothing (an exponential curve would reach zero).
RECENCY_HALF_LIFE_DAYS = 30.0
INBOUND_SATURATION = 5  # links beyond this many add nothing more

TYPE_WEIGHT: dict[NoteType, float] = {
    NoteType.CONSTRAINT: 1.0, NoteType.DECISION: 0.9, NoteType.ARCHITECTURE: 0.9, NoteType.FAILED_APPROACH: 0.8,
    NoteType.STATUS: 0.7, NoteType.HANDOFF: 0.7, NoteType.TASK: 0.6, NoteType.INCIDENT: 0.6,
    NoteType.PROCEDURE: 0.5, NoteType.PREFERENCE: 0.5, NoteType.FACT: 0.4, NoteType.REFERENCE: 0.3,
    NoteType.NOTE: 0.2,
}  # fmt: skip


def recency(updated_at: str, now: datetime) -> float:
    age_days = max(0.0, (now - parse_ts(updated_at)).total_seconds() / 86_400)
    return 1.0 / (1.0 + age_days / RECENCY_HALF_LIFE_DAYS)


def score(note: Note, *, now: datetime, relevance: float = 0.0, inbound: int = 0) -> float:
    return (
        WEIGHT_RELEVANCE * relevance
        + WEIGHT_RECENCY * recency(note.updated_at, now)
        + WEIGHT_IMPORTANCE * (note.importance - 1) / 4
        + WEIGHT_CANONICAL * (1.0 if note.canonical else 0.0)
        + WEIGHT_INBOUND * math.log1p(min(inbound, INBOUND_SATURATION)) / math.log1p(INBOUND_SATURATION)
        + WEIGHT_TYPE * TYPE_WEIGHT[note.type]
    )


def inbound_links(notes: list[Note]) -> dict[str, int]:
    """How many of the loaded notes link to each note (a bounded stand-in for the project-wide count)."""
    counts: dict[str, int] = {}
    for note in notes:
        for target in {link.target for link in note.links} | set(note.supersedes):
            if target != note.id:
                counts[target] = counts.get(target, 0) + 1
    return counts


# ----- packing -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    note: Note
    score: float


@dataclass(frozen=True, slots=True)
class ConflictEntry:
    note: Note
    kind: str
    message: str


@dataclass(slots=True)
class PackedContext:
    budget: int
    detail: Detail
    header: dict[str, str]
    conflicts: list[dict[str, object]] = field(default_factory=list)
    sections: list[tuple[Section, list[dict[str, object]]]] = field(default_factory=list)
    spent: int = 0
    selected: int = 0
    omitted_ids: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False  # the budget could not even list every candidate: more exists than was considered


def cost(value: object) -> int:
    """Tokens an entry adds to the response: its compact JSON, estimated like everything else."""
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) + 1


def full_entry(note: Note, excerpt_chars: int) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": note.id, "title": note.title, "type": note.type.value, "status": note.status.value,
        "updatedAt": note.updated_at, "excerpt": excerpt(note.body, excerpt_chars), "bodySize": note.body_size,
    }  # fmt: skip
    if note.importance != 3:
        entry["importance"] = note.importance
    if note.canonical:
        entry["canonical"] = True
    return entry


def pointer_entry(note: Note) -> dict[str, object]:
    """The one-line form of an entry that did not fit: enough to fetch it deliberately."""
    return {"id": note.id, "title": excerpt(note.title, 60)}


def resolve_budget(max_tokens: int | None, project_default: int | None, detail: Detail) -> int:
    """Explicit maxTokens > the project's defaultMaxTokens > the detail level's budget."""
    chosen = max_tokens or project_default or DETAIL_LEVELS[detail].budget
    return max(MIN_BUDGET, min(MAX_BUDGET, chosen))


def ref_cost(note_id: str, section: str) -> int:
    """What listing an omitted note in meta.omittedIds costs."""
    return cost({"id": note_id, "section": section})


# The meta block's own keys and numbers (omittedIds are charged one by one).
META_OVERHEAD = 40
# Kept free for the estimate's error: measured within a few percent of cl100k/o200k on get_context's JSON.
TOKENIZER_MARGIN = 0.03
# At most this share of what is left after the header and conflicts goes to listing omitted notes.
OMITTED_SHARE = 0.4


def charge_order(sections: list[tuple[Section, list[Candidate]]], *, has_query: bool) -> list[Section]:
    """The order sections are paid for (display order stays fixed): with a query, its matches come first —
    they are what the agent asked about now."""
    names = [section for section, _ in sections]
    if has_query and Section.RELEVANT in names:
        names.remove(Section.RELEVANT)
        names.insert(0, Section.RELEVANT)
    return names


def pack(
    *,
    budget: int,
    detail: Detail,
    summary: str,
    instructions: str,
    conflicts: list[ConflictEntry],
    sections: list[tuple[Section, list[Candidate]]],
    has_query: bool = False,
) -> PackedContext:
    """Fill the context within `budget`, the whole answer included (entries, header, conflicts, meta).

    Conflicts and the header are charged first, so a long constraint can never push out the warning it conflicts
    with. Then sections are paid for in `charge_order`: an entry that does not fit becomes a one-line pointer, and
    is dropped only when even that does not fit, always listed in omitted_ids. Every candidate's omittedIds line is
    reserved before any entry is placed, so the list is complete for the candidates considered; when a small
    budget cannot even list them all, the lowest-priority candidates are not considered and `truncated` says so.
    """
    excerpt_chars = DETAIL_LEVELS[detail].excerpt_chars
    packed = PackedContext(budget=budget, detail=detail, header={})
    remaining = int(budget * (1 - TOKENIZER_MARGIN)) - META_OVERHEAD

    # Conflicts first: in full if they fit, as pointers if not, omitted only past that.
    for conflict in conflicts:
        entry: dict[str, object] = {
            "id": conflict.note.id, "title": conflict.note.title, "kind": conflict.kind, "message": conflict.message,
        }  # fmt: skip
        pointer: dict[str, object] = {"id": conflict.note.id, "kind": conflict.kind}
        for candidate_entry in (entry, pointer):
            if cost(candidate_entry) <= remaining:
                packed.conflicts.append(candidate_entry)
                remaining -= cost(candidate_entry)
                packed.selected += 1
                break
        else:
            if ref_cost(conflict.note.id, "conflicts") <= remaining:
                packed.omitted_ids.append((conflict.note.id, "conflicts"))
                remaining -= ref_cost(conflict.note.id, "conflicts")
            else:
                packed.truncated = True

    # The header: cut to what is left, never at the conflicts' expense.
    for key, text in (("summary", summary), ("instructions", instructions)):
        if not text:
            continue
        value = text
        while value and cost({key: value}) > remaining:
            value = excerpt(value, max(0, len(value) // 2))
            if len(value) < 20:
                value = ""
        if value:
            packed.header[key] = value
            remaining -= cost({key: value})

    # The candidate pool in charge order, each note once (with a query, in `relevant` if it matches it).
    by_section = dict(sections)
    placed: set[str] = {c.note.id for c in conflicts}
    pool: list[tuple[Section, Candidate, int]] = []
    for section in charge_order(sections, has_query=has_query):
        for candidate in by_section[section]:
            if candidate.note.id not in placed:
                placed.add(candidate.note.id)
                pool.append((section, candidate, ref_cost(candidate.note.id, section.value)))
    allowance = max(0, int(remaining * OMITTED_SHARE))
    reserve = 0
    for index, (_, _, ref) in enumerate(pool):
        if reserve + ref > allowance:
            pool = pool[:index]
            packed.truncated = True
            break
        reserve += ref

    entries_by_section: dict[Section, list[dict[str, object]]] = {}
    smallest = cost({"id": "n_" + "0" * 26, "title": ""})  # no entry, not even a pointer, is cheaper than this
    for section, candidate, ref in pool:
        note = candidate.note
        reserve -= ref  # this note's own line is no longer needed if it gets placed
        entries = entries_by_section.setdefault(section, [])
        overhead = 0 if entries else cost({section.value: []})
        free = remaining - reserve
        placed_entry: dict[str, object] | None = None
        if free >= smallest + overhead:
            full = full_entry(note, excerpt_chars)
            if cost(full) + overhead <= free:
                placed_entry = full
            else:
                short = pointer_entry(note)
                if cost(short) + overhead <= free:
                    placed_entry = short
        if placed_entry is not None:
            entries.append(placed_entry)
            remaining -= cost(placed_entry) + overhead
            packed.selected += 1
        else:
            packed.omitted_ids.append((note.id, section.value))
            remaining -= ref
    packed.sections = [(s, entries_by_section[s]) for s in SECTION_ORDER if entries_by_section.get(s)]
    packed.spent = budget - remaining
    return packed
