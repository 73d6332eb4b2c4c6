"""get_context's ranking and packing: score candidates, fill fixed sections within a token budget.

Pure: the service hands in notes already loaded through bounded, indexed queries, and the current time.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain.admission.vocabulary import vocabulary
from notewell.domain.freshness import stale_mark
from notewell.domain.lines import said_once
from notewell.domain.model import Note, NoteStatus, NoteType
from notewell.domain.refs import name_of, names
from notewell.domain.rules import (
    LEAN_BODY_CHARS,
    TOKENIZER_MARGIN,
    estimate_tokens,
    estimate_tokens_whole,
    excerpt,
    flat_reach,
    flat_start,
    lean_text,
    one_line,
    parse_ts,
    shorten,
    words,
)
from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from notewell.domain.freshness import NoteVerdict


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

# What a new session must read first: rules always in force, choices in force (with what was turned down), what
# failed, and where each thread of work stopped (a thread's older handoffs are superseded or historical, so the
# live ones are the newest). Without a query these are paid for before anything else; the rest shares what is left.
STANDING_TYPES = frozenset({NoteType.CONSTRAINT, NoteType.DECISION, NoteType.FAILED_APPROACH, NoteType.HANDOFF})
HANDOFF_READ = 4  # without a query, a handoff's entry shows this many times the level's excerpt
MATCH_READ = 3  # with a query, a match's entry shows this many times the level's excerpt

LIVE_STATUSES = (NoteStatus.CURRENT, NoteStatus.PENDING, NoteStatus.DISPUTED)
HISTORY_STATUSES = (*LIVE_STATUSES, NoteStatus.HISTORICAL, NoteStatus.SUPERSEDED)


def section_statuses(section: Section, *, include_historical: bool = False) -> tuple[NoteStatus, ...]:
    """The statuses a section takes its notes in: open items are pending or current tasks; the rest, live notes
    (and historical and superseded ones when asked for)."""
    if section is Section.OPEN_ITEMS:
        return (NoteStatus.PENDING, NoteStatus.CURRENT)
    return HISTORY_STATUSES if include_historical else LIVE_STATUSES


def context_section(note: Note) -> Section | None:
    """The typed section a note is a default candidate of (live statuses), if any: the key of the lean index."""
    if note.is_deleted:
        return None
    for section, types in SECTION_TYPES.items():
        if note.type in types and note.status in section_statuses(section):
            return section
    return None


def in_live_feed(note: Note) -> bool:
    """Whether the note is a default candidate of recent changes (and of relevance without a search index)."""
    return not note.is_deleted and note.status in LIVE_STATUSES


def needs_attention(note: Note) -> bool:
    """Live and disputed, or superseded by another note without being marked superseded (a supersession left
    unfinished): what get_context lists as conflicts."""
    if note.is_deleted:
        return False
    return note.status == NoteStatus.DISPUTED or (bool(note.superseded_by) and note.status != NoteStatus.SUPERSEDED)


def _newest(notes: Iterable[Note], limit: int) -> list[Note]:
    unique = {n.id: n for n in notes}.values()
    return sorted(unique, key=lambda n: (n.updated_at, n.id), reverse=True)[:limit]


def newest_of_each_type(notes: Iterable[Note], limit: int) -> list[Note]:
    """Up to `limit` of the newest notes of each type, newest first. A section's types are weighed each on its own:
    a run of new preferences never pushes an old constraint out of its section, nor new status notes the handoff
    where work resumes (rules stay in force however old they are)."""
    every = list(notes)
    seen: Counter[NoteType] = Counter()
    chosen: list[Note] = []
    for note in _newest(every, len(every)):
        seen[note.type] += 1
        if seen[note.type] <= limit:
            chosen.append(note)
    return chosen


def more_of_a_type_than(notes: Iterable[Note], limit: int) -> bool:
    """Whether some type has more than `limit` notes among `notes`."""
    return any(count > limit for count in Counter(n.type for n in notes).values())


def with_attention(
    settled: Mapping[Section, Sequence[Note]],
    recent: Sequence[Note],
    attention: Sequence[Note],
    *,
    per_section: int,
    recent_limit: int,
) -> tuple[dict[Section, list[Note]], list[Note]]:
    """get_context's default candidates: the newest settled notes of each type of each section, and of the project
    (those that need no attention), joined by the notes needing attention it lists as conflicts (`attention`, the
    newest few), each where it belongs. A note needing attention beyond those is weighed by neither: it waits its
    turn among the conflicts, where it must be settled first. Both stores (and the old read path) apply this one
    rule."""
    sections = {
        section: newest_of_each_type(
            [*settled.get(section, ()), *(a for a in attention if context_section(a) is section)], per_section
        )
        for section in SECTION_TYPES
    }  # fmt: skip
    newest = _newest([*recent, *(a for a in attention if in_live_feed(a))], recent_limit)
    return sections, newest


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
# The answer is packed for the text a model reads (`PackedContext.text`), and charged by that text: the budget holds
# for the answer as sent. Each candidate ends in one of four forms, best first: a full entry (its line carries the
# title and an excerpt), a pointer (id and title), its id listed under "Omitted", or only counted there.


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
    spent: int = 0  # estimated tokens of `text`
    selected: int = 0
    omitted_ids: list[tuple[str, str]] = field(default_factory=list)
    unlisted: int = 0  # omitted candidates whose ids did not fit either: counted, not listed
    beyond: list[Section] = field(default_factory=list)  # sections with more notes than were considered
    text: str = ""

    @property
    def omitted(self) -> int:
        return len(self.omitted_ids) + self.unlisted

    @property
    def truncated(self) -> bool:
        return self.unlisted > 0


def cost(value: object) -> int:
    """Tokens a JSON value adds to a response, estimated like everything else."""
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) + 1


def full_entry(
    note: Note, excerpt_chars: int, focus: frozenset[str] = frozenset(), verdict: NoteVerdict | None = None
) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": note.id, "title": note.title, "type": note.type.value, "status": note.status.value,
        "updatedAt": note.updated_at, "excerpt": note_excerpt(note, excerpt_chars, focus), "bodySize": note.body_size,
    }  # fmt: skip
    if note.importance != 3:
        entry["importance"] = note.importance
    if note.canonical:
        entry["canonical"] = True
    return _with_freshness(entry, verdict)


def _with_freshness(entry: dict[str, object], verdict: NoteVerdict | None) -> dict[str, object]:
    """An entry with its note's freshness, when the caller's file hashes judged it."""
    if verdict is not None:
        entry["freshness"] = verdict.freshness.value
    return entry


def note_excerpt(note: Note, limit: int, focus: frozenset[str] = frozenset()) -> str:
    """The excerpt of a note, whole or lean (a lean note's body is `rules.lean_text` of the whole: the same excerpt
    up to LEAN_BODY_CHARS; callers read whole notes for longer ones). With `focus` (a query's stems, focus_terms),
    it shows the sentence that holds most of them, the part of the note the agent asked about, after the note's lead
    sentence: a constraint or decision says what it is in its first sentence, and the answer is read against it."""
    start = focused_start(note.body, focus) if focus else 0
    if start:
        end = lead_end(note.body)
        lead = excerpt(note.body[:end], limit // LEAD_SHARE)
        joint = " …" if note.body[end:start].strip() and not lead.endswith("…") else " "
        return lead + joint + excerpt(note.body[start:], limit)
    return without_asides(note.body, limit)


# An aside: words in parentheses after a space, outside code ("(reading outside the setpoint for 10 minutes)", not
# "`f(x)`", "`f (x)`" or "(`column`)").
_ASIDE = re.compile(r"\s+\([^()`\n]{1,200}\)")


def without_asides(body: str, limit: int) -> str:
    """The start of `body` in `limit` characters with its asides left out: an excerpt says what a note is, and a
    parenthesis qualifies it; cut, the words after it (the rule's second half, the reason a choice was made) fit.
    Up to LEAN_BODY_CHARS it reads only the start a lean read keeps (rules.lean_text), so a note read whole and one
    read lean give the same excerpt; past that the caller reads notes whole."""
    lean = limit <= LEAN_BODY_CHARS
    read = lean_text(body) if lean else flat_start(body, limit)
    goes_on = len(read) > LEAN_BODY_CHARS if lean else len(body) > flat_reach(limit)
    parts = read.split("`")  # odd parts are code spans: "`f (x)`" stays whole
    brief = one_line("`".join(p if i % 2 else _ASIDE.sub("", p) for i, p in enumerate(parts)))
    if not brief:
        return shorten(read, limit)
    if len(brief) > limit or not goes_on:
        return shorten(brief, limit)
    return brief.rstrip(" ,;:.-") + "…"


def reading_chars(note: Note, section: Section, excerpt_chars: int, *, has_query: bool) -> int:
    """How much of a note its entry shows: what the agent asked about (a query's matches) and, when it brings no
    question, where each thread of work resumes (a handoff) are read at length; the rest at the level's excerpt."""
    if has_query and section is Section.RELEVANT:
        return excerpt_chars * MATCH_READ
    if not has_query and note.type is NoteType.HANDOFF:
        return excerpt_chars * HANDOFF_READ
    return excerpt_chars


def focus_terms(query: str) -> frozenset[str]:
    """The stems of a query's words of substance: what an excerpt is focused on."""
    function = vocabulary().function_words
    return frozenset(stem(w) for w in words(query) if w not in function and len(w) > 1)


def mentions(note: Note, focus: frozenset[str]) -> bool:
    """Whether the note says any of a query's words (focus_terms) in its title, tags or body: the floor under
    what get_context calls relevant, so a tiny project's nearest notes are not passed off as matches."""
    said = words(" ".join((note.title, *note.tags, note.body[:FOCUS_CHARS])))
    return not focus or not focus.isdisjoint(stem(w) for w in said)


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")  # "2.5 kg" and "v4.2" stay whole
FOCUS_CHARS = 20_000  # how far into a body an excerpt may be focused: a long note's start is what is ranked


LEAD_SHARE = 3  # a focused excerpt puts its note's lead sentence, cut to 1/LEAD_SHARE of the limit, before it


def lead_end(body: str) -> int:
    """Where the first sentence of `body` ends."""
    found = _SENTENCE_BREAK.search(body[:FOCUS_CHARS])
    return found.start() if found else len(body)


def focused_start(body: str, focus: frozenset[str]) -> int:
    """Where the sentence of `body` holding the most of `focus` starts (0: the first, or none holds any; the
    earliest of equals)."""
    text = body[:FOCUS_CHARS]
    bounds = [0, *(m.end() for m in _SENTENCE_BREAK.finditer(text))]
    best, start = 0, 0
    for begin, end in zip(bounds, [*bounds[1:], len(text)], strict=True):
        held = len(focus.intersection(stem(w) for w in words(text[begin:end])))
        if held > best:
            best, start = held, begin
    return start


def lean_view(note: Note) -> Note:
    """The note as a lean read gives it: the start of its body (rules.lean_text) and its whole size."""
    if note.full_size is not None:
        return note
    return replace(note, body=lean_text(note.body), full_size=len(note.body))


def pointer_entry(note: Note, verdict: NoteVerdict | None = None) -> dict[str, object]:
    """The one-line form of an entry that did not fit: enough to fetch it deliberately (and whether to trust it)."""
    return _with_freshness({"id": note.id, "title": excerpt(note.title, POINTER_TITLE_CHARS)}, verdict)


def resolve_budget(max_tokens: int | None, project_default: int | None, detail: Detail) -> int:
    """Explicit maxTokens > the project's defaultMaxTokens > the detail level's budget."""
    chosen = max_tokens or project_default or DETAIL_LEVELS[detail].budget
    return max(MIN_BUDGET, min(MAX_BUDGET, chosen))


POINTER_TITLE_CHARS = 60
# At most this share of what is left after the header and conflicts is held back for listing omitted notes. A ref
# costs a quarter of an id, so a tenth lists about as many as 0.4 did by id: a bare name gives an agent nothing to
# choose by, and the rest of the budget goes to what notes say (the full list is in meta.omittedIds).
OMITTED_SHARE = 0.1
MIXED_SECTIONS = (Section.RELEVANT, Section.RECENT_CHANGES)  # sections whose entries show their type


# ----- the text a model reads ----------------------------------------------------------------------------------


def entry_line(
    note: Note, section: Section, excerpt_chars: int, focus: frozenset[str] = frozenset(), mark: str | None = None,
    name: str | None = None,
) -> str:  # fmt: skip
    """`- ref [mark] [flags] title: excerpt`, saying each thing once: no excerpt that repeats the title, no status
    unless it is not current, the type only where a section mixes types, the date only for recent changes. `mark`:
    freshness.stale_mark, first after the ref, so a note whose code changed is never read as settled. `name`: how the
    note is named, when not by its ref (refs.name_of): see names_in."""
    flags: list[str] = []
    if section in MIXED_SECTIONS:
        flags.append(note.type.value)
    if note.status.value != "current":
        flags.append(note.status.value)
    if note.canonical:
        flags.append("canonical")
    if note.importance != 3:
        flags.append(f"importance {note.importance}")
    date = f" {note.updated_at[:10]}" if section is Section.RECENT_CHANGES else ""
    marks = f" [{', '.join(flags)}]" if flags else ""
    shown = note_excerpt(note, excerpt_chars, focus)
    text = said_once(note.title, shown)
    return f"- {name or name_of(note.id)}{date}{_stale(mark)}{marks} {text}"


def _stale(mark: str | None) -> str:
    return f" {mark}" if mark else ""


def pointer_line(note: Note, mark: str | None = None, name: str | None = None) -> str:
    return f"- {name or name_of(note.id)}{_stale(mark)} {excerpt(note.title, POINTER_TITLE_CHARS)}"


def conflict_line(entry: ConflictEntry, *, full: bool, mark: str | None = None, name: str | None = None) -> str:
    named = name or name_of(entry.note.id)
    if not full:
        return f"- {named}{_stale(mark)} [{entry.kind}]"
    return f"- {named}{_stale(mark)} [{entry.kind}] {entry.note.title}: {entry.message}"


def names_in(notes: Iterable[Note], *, by_ref: bool = True) -> dict[str, str]:
    """How one answer names each of `notes` (refs.names): by ref, by id where two of them share a ref, every note by
    id when `by_ref` is False (a store that cannot resolve the project's refs yet)."""
    return names((note.id for note in notes), by_ref=by_ref)


SECTION_HEADINGS = {
    Section.CONSTRAINTS: "## Constraints", Section.DECISIONS: "## Decisions",
    Section.FAILED_APPROACHES: "## Failed approaches", Section.STATUS: "## Status", Section.RELEVANT: "## Relevant",
    Section.OPEN_ITEMS: "## Open items", Section.RECENT_CHANGES: "## Recent changes",
}  # fmt: skip
CONFLICTS_HEADING = "## Conflicts: settle these first"
OMITTED_HEADING = "## Omitted for the budget: read with get_notes"


def unlisted_line(count: int) -> str:
    return f"{count} more not listed: raise maxTokens, pass a query, or use search_notes."


def beyond_line(sections: Sequence[Section]) -> str:
    """Sections whose notes outnumber what get_context weighs: the rest is reachable by query or search."""
    types = sorted({t.value for section in sections for t in SECTION_TYPES.get(section, ())})
    names = ", ".join(section.value for section in sections)
    return f"More {names} exist than were weighed: pass a query, or search_notes with types {types}."


@functools.lru_cache(maxsize=8_192)
def line_cost(line: str) -> int:
    """A line's tokens and its line break. Lines are counted whole (never sampled), and the count of a text is at
    most the sum of its lines' counts: pieces never join across a line break. Cached: pack weighs the same lines
    at each excerpt length it tries, and every get_context the same headings and ids."""
    return estimate_tokens_whole(line) + 1


@dataclass(slots=True)
class _Slot:
    """One candidate's place in the answer while packing."""

    section: Section
    note: Note
    label: str  # the name it is listed under when omitted: its section, or "conflicts"
    form: str = "counted"  # full | pointer | listed | counted
    line: str = ""
    id_cost: int = 0  # what listing its id under "Omitted" costs
    mark: str | None = None  # freshness.stale_mark of its note, when its code changed or went
    name: str = ""  # how the answer names it (names_in)

    def __post_init__(self) -> None:
        self.name = self.name or name_of(self.note.id)
        self.id_cost = line_cost(" " + self.name)


def _render(
    project: str, detail: Detail, header: dict[str, str], notice: str | None, conflict_lines: list[str],
    slots: list[_Slot], omitted: list[_Slot], beyond: Sequence[Section] = (),
) -> str:  # fmt: skip
    lines = [f"# {project}: {detail.value} context"]
    lines += [f"{key.capitalize()}: {value}" for key, value in header.items()]
    if notice:
        lines.append(notice)
    if conflict_lines:
        lines += [CONFLICTS_HEADING, *conflict_lines]
    for section in SECTION_ORDER:
        shown = [slot.line for slot in slots if slot.section is section and slot.form in ("full", "pointer")]
        if shown:
            lines += [SECTION_HEADINGS[section], *shown]
    listed: dict[str, list[str]] = {}
    for slot in omitted:
        if slot.form == "listed":
            listed.setdefault(slot.label, []).append(slot.name)
    unlisted = sum(1 for slot in omitted if slot.form == "counted")
    if listed or unlisted or beyond:
        lines.append(OMITTED_HEADING)
        lines += [f"{label}: {' '.join(ids)}" for label, ids in listed.items()]
        if unlisted:
            lines.append(unlisted_line(unlisted))
        if beyond:
            lines.append(beyond_line(beyond))
    return "\n".join(lines)


def priority(
    sections: list[tuple[Section, list[Candidate]]],
    *,
    has_query: bool,
    shown_apart: set[str] | None = None,
    relevant_first: bool = False,
) -> list[tuple[Section, Candidate]]:
    """The order candidates are paid for (display order stays fixed). With a query (or `relevant_first`: notes
    anchored to the files in hand lead the relevant section), relevant notes first: they are what the agent works on
    now. Then every section's best, so no section is left out; then standing knowledge (STANDING_TYPES), then the
    rest, each in rounds (every section's next best, then the next), so a section's long tail degrades before
    another section gets less."""
    names = [section for section, _ in sections]
    leads = has_query or relevant_first
    if leads and Section.RELEVANT in names:
        names.remove(Section.RELEVANT)
        names.insert(0, Section.RELEVANT)
    by_section = dict(sections)
    seen: set[str] = set(shown_apart or ())  # the conflicts' notes are shown with the conflicts
    ranked: dict[Section, list[Candidate]] = {}
    for section in names:  # each note once, in the first section that claims it
        ranked[section] = [c for c in by_section[section] if c.note.id not in seen]
        seen.update(c.note.id for c in ranked[section])

    order: list[tuple[Section, Candidate]] = []
    if leads and Section.RELEVANT in ranked:  # what the agent works on comes before anything else
        order += [(Section.RELEVANT, c) for c in ranked.pop(Section.RELEVANT)]
        names.remove(Section.RELEVANT)
    order += [(s, ranked[s].pop(0)) for s in names if ranked[s]]  # every section shows its best
    for standing in (True, False):
        part = {s: [c for c in ranked[s] if (c.note.type in STANDING_TYPES) is standing] for s in names}
        rounds = max((len(c) for c in part.values()), default=0)
        order += [(s, part[s][r]) for r in range(rounds) for s in names if r < len(part[s])]
    return order


# Without a query, breadth before depth: excerpts are shortened, down to half the level's, while that gives more
# standing notes (STANDING_TYPES) a line of their own; a pointer says nothing of what a rule is. Shorter than half
# (120 characters at balanced), an excerpt seldom holds the sentence that says what the rule or choice is.
BREADTH_STEPS = (1.0, 0.75, 0.5)
MIN_EXCERPT_CHARS = 50


def pack(
    *,
    budget: int,
    detail: Detail,
    summary: str,
    instructions: str,
    conflicts: list[ConflictEntry],
    sections: list[tuple[Section, list[Candidate]]],
    has_query: bool = False,
    project: str = "",
    notice: str | None = None,
    beyond: Sequence[Section] = (),
    focus: frozenset[str] = frozenset(),
    verdicts: Mapping[str, NoteVerdict] | None = None,
    relevant_first: bool = False,
    by_ref: bool = True,
) -> PackedContext:
    """Fill the answer within `budget` (see _pack_at). With a query, at the level's excerpt length; without one, at
    the longest of BREADTH_STEPS that shows the most standing notes with their text. `verdicts`: the freshness of
    judged notes by id (stale ones are marked); `relevant_first`: the relevant section leads even without a query
    (see priority); `by_ref`: name notes by ref (names_in)."""
    level = DETAIL_LEVELS[detail].excerpt_chars
    steps = (
        [level] if has_query else sorted({max(MIN_EXCERPT_CHARS, int(level * f)) for f in BREADTH_STEPS}, reverse=True)
    )
    best: tuple[int, PackedContext] | None = None
    for excerpt_chars in steps:
        packed = _pack_at(
            excerpt_chars, budget=budget, detail=detail, summary=summary, instructions=instructions,
            conflicts=conflicts, sections=sections, has_query=has_query, project=project, notice=notice,
            beyond=beyond, focus=focus, verdicts=verdicts or {}, relevant_first=relevant_first, by_ref=by_ref,
        )  # fmt: skip
        standing = sum(
            1 for _, entries in packed.sections for e in entries if "excerpt" in e and e["type"] in _STANDING_VALUES
        )
        if best is None or standing > best[0]:
            best = (standing, packed)
        if standing == sum(1 for _, cs in sections for c in cs if c.note.type in STANDING_TYPES):
            break  # every standing note has its line: no shorter excerpt can show more
    assert best is not None
    return best[1]


_STANDING_VALUES = frozenset(t.value for t in STANDING_TYPES)


def _pack_at(
    excerpt_chars: int,
    *,
    budget: int,
    detail: Detail,
    summary: str,
    instructions: str,
    conflicts: list[ConflictEntry],
    sections: list[tuple[Section, list[Candidate]]],
    has_query: bool = False,
    project: str = "",
    notice: str | None = None,
    beyond: Sequence[Section] = (),
    focus: frozenset[str] = frozenset(),
    verdicts: Mapping[str, NoteVerdict],
    relevant_first: bool = False,
    by_ref: bool = True,
) -> PackedContext:
    """Fill the answer within `budget`, charged on its rendered text (`PackedContext.text`), excerpts of
    `excerpt_chars`.

    Conflicts and the header are charged first, so a long constraint can never push out the warning it conflicts
    with. Then candidates are paid for in `priority` order: a full entry if it fits, else a pointer, else its id
    under "Omitted". Ids of the candidates not yet placed are held back (up to OMITTED_SHARE of the budget), so
    the list stays complete as far as it can; past that, candidates are counted (`unlisted`) and the answer says
    how many. Every candidate is accounted for: shown, listed or counted.
    """
    packed = PackedContext(budget=budget, detail=detail, header={})
    names = names_in(
        [c.note for c in conflicts] + [c.note for _, candidates in sections for c in candidates], by_ref=by_ref
    )
    marks = {note_id: mark for note_id, verdict in verdicts.items() if (mark := stale_mark(verdict))}
    limit = int(budget * (1 - TOKENIZER_MARGIN))
    # The fixed parts: the title line, the notice, the headings and the "N more" line that may be needed.
    remaining = limit - line_cost(f"# {project}: {detail.value} context") - line_cost(OMITTED_HEADING)
    remaining -= line_cost(unlisted_line(10_000))
    if notice:
        remaining -= line_cost(notice)
    if beyond:
        remaining -= line_cost(beyond_line(beyond))
    packed.beyond = list(beyond)

    # Conflicts first: in full if they fit, as pointers if not, listed past that.
    conflict_lines: list[str] = []
    conflict_slots: list[_Slot] = []
    if conflicts:
        remaining -= line_cost(CONFLICTS_HEADING)
    for conflict in conflicts:
        name = names.get(conflict.note.id)
        for full in (True, False):
            line = conflict_line(conflict, full=full, mark=marks.get(conflict.note.id), name=name)
            if line_cost(line) <= remaining:
                conflict_lines.append(line)
                remaining -= line_cost(line)
                packed.conflicts.append(_with_freshness(
                    {"id": conflict.note.id, "title": conflict.note.title, "kind": conflict.kind,
                     "message": conflict.message} if full else {"id": conflict.note.id, "kind": conflict.kind},
                    verdicts.get(conflict.note.id),
                ))  # fmt: skip
                packed.selected += 1
                break
        else:  # listed with the omitted ahead of every section's notes
            slot = _Slot(Section.CONSTRAINTS, conflict.note, "conflicts", name=names.get(conflict.note.id, ""))
            label = 0 if conflict_slots else line_cost("conflicts:")
            if slot.id_cost + label <= remaining:
                slot.form = "listed"
                remaining -= slot.id_cost + label
            conflict_slots.append(slot)

    # The header: cut to what is left, never at the conflicts' expense.
    for key, text in (("summary", summary), ("instructions", instructions)):
        value = text
        while value and line_cost(f"{key.capitalize()}: {value}") > remaining:
            value = excerpt(value, max(0, len(value) // 2))
            if len(value) < 20:
                value = ""
        if value:
            packed.header[key] = value
            remaining -= line_cost(f"{key.capitalize()}: {value}")

    slots = [
        _Slot(section, c.note, section.value, mark=marks.get(c.note.id), name=names.get(c.note.id, ""))
        for section, c in priority(
            sections, has_query=has_query, shown_apart={c.note.id for c in conflicts}, relevant_first=relevant_first
        )
    ]
    listing = {section: line_cost(f"{section.value}:") for section in SECTION_ORDER}
    heading_cost = {section: line_cost(SECTION_HEADINGS[section]) for section in SECTION_ORDER}
    reserve, allowance, held = 0, max(0, int(remaining * OMITTED_SHARE)), 0
    for slot in slots:  # hold back the ids of as many candidates as the allowance covers, best first
        if reserve + slot.id_cost > allowance:
            break
        reserve += slot.id_cost
        held += 1
    headed: set[Section] = set()
    labelled: set[Section] = set()
    for index, slot in enumerate(slots):
        if index < held:
            reserve -= slot.id_cost  # this note's own id no longer needs holding: it is placed now
        free = remaining - reserve
        heading = 0 if slot.section in headed else heading_cost[slot.section]
        if free > heading + slot.id_cost:  # else not even a pointer fits: skip building lines
            chars = reading_chars(slot.note, slot.section, excerpt_chars, has_query=has_query)
            form, line = "full", entry_line(slot.note, slot.section, chars, focus, slot.mark, slot.name)
            cost = line_cost(line)
            if cost + heading > free:
                form, line = "pointer", pointer_line(slot.note, slot.mark, slot.name)
                cost = line_cost(line)
            if cost + heading <= free:
                slot.form, slot.line = form, line
                remaining -= cost + heading
                headed.add(slot.section)
        if slot.form == "counted":
            label = 0 if slot.section in labelled else listing[slot.section]
            if slot.id_cost + label <= free:  # a held id always fits: its reserve was just freed
                slot.form = "listed"
                remaining -= slot.id_cost + label
                labelled.add(slot.section)

    everything = conflict_slots + slots
    # Charged line by line, the text cannot exceed the limit; the whole text is still the judge (degrade the
    # last-placed until it fits), and its count is what `spent` reports.
    text, spent = "", 0
    while True:
        text = _render(project, detail, packed.header, notice, conflict_lines, slots, everything, beyond)
        spent = estimate_tokens_whole(text)
        if spent <= limit:
            break
        placed = [slot for slot in slots if slot.form != "counted"]
        if not placed:
            break
        last = placed[-1]
        last.form = {"full": "pointer", "pointer": "listed", "listed": "counted"}[last.form]
        last.line = pointer_line(last.note, last.mark, last.name) if last.form == "pointer" else last.line

    entries_by_section: dict[Section, list[dict[str, object]]] = {}
    for slot in slots:
        if slot.form == "full":
            chars = reading_chars(slot.note, slot.section, excerpt_chars, has_query=has_query)
            entry = full_entry(slot.note, chars, focus, verdicts.get(slot.note.id))
            entries_by_section.setdefault(slot.section, []).append(entry)
        elif slot.form == "pointer":
            entries_by_section.setdefault(slot.section, []).append(pointer_entry(slot.note, verdicts.get(slot.note.id)))
    packed.selected += sum(1 for slot in slots if slot.form in ("full", "pointer"))
    packed.sections = [(s, entries_by_section[s]) for s in SECTION_ORDER if entries_by_section.get(s)]
    for slot in everything:
        if slot.form == "listed":
            packed.omitted_ids.append((slot.note.id, slot.label))
    packed.unlisted = sum(1 for slot in everything if slot.form == "counted")
    packed.text = text
    packed.spent = spent
    return packed
