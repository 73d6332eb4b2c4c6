"""get_context: a project's current state in one call, from bounded indexed reads, within a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import branches, freshness, packing, ranking, rules
from notewell.domain.branches import BranchScope
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import ATTENTION_LAYOUT, TYPE_PARTITION_LAYOUT
from notewell.domain.packing import Candidate, ConflictEntry, Detail, PackedContext, Section
from notewell.services.access import Deps, visible_project
from notewell.services.memory import CONFLICTS_SHOWN, conflicts_of

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from notewell.domain.freshness import NoteVerdict
    from notewell.domain.model import Anchor, Note, Principal, Project
    from notewell.services.freshness import FreshnessService
    from notewell.services.search import SearchService

# How many candidates each source may load: fixed, so the store work never grows with the project.
PER_SECTION = 25
RELEVANT = 12
# The newest live notes weighed for recent changes. 25, not 40: once this counted live notes among the newest 40 of
# any status (often ~25 in a project with history), and 40 live ones crowd typed sections out of a balanced answer.
# Orientation, tune split, balanced without a query: 40 -> 81 % found, 25 -> 91 % (tests/bench/orientation.py).
RECENT = 25
RELEVANT_SCAN = 200  # when the search index fails, the recent notes the query is ranked against instead
ANCHORED = 12  # notes anchored to the files in hand weighed: they lead the relevant section
# Packing again after judging the notes shown may show others (a mark costs tokens): judged in turn, a few times.
JUDGE_ROUNDS = 3
MAX_QUERY_CHARS = 500

LIVE = packing.LIVE_STATUSES
WITH_HISTORY = packing.HISTORY_STATUSES


@dataclass(frozen=True, slots=True)
class ContextResult:
    project: str
    exists: bool
    packed: PackedContext
    notice: str | None
    other_branches: int = 0  # notes of other unmerged branches left out (domain/branches.py)
    # With checkFreshness: the paths the notes shown are anchored to, so a client can send their hashes next time.
    anchored_paths: tuple[str, ...] | None = None


class ContextService:
    def __init__(self, deps: Deps, search: SearchService, verdicts: FreshnessService) -> None:
        self._deps = deps
        self._search = search
        self._verdicts = verdicts

    def get_context(
        self,
        principal: Principal,
        project: str,
        *,
        query: str | None = None,
        detail: Detail = Detail.BALANCED,
        max_tokens: int | None = None,
        include_historical: bool = False,
        branch: str | None = None,
        all_branches: bool = False,
        files: Sequence[str] = (),
        check_freshness: Mapping[str, str | None] | None = None,
    ) -> ContextResult:
        """`files`: paths the caller works on; notes anchored there lead the relevant section. `check_freshness`:
        `{path: fileHash or None}` of the caller's tree; each note shown with an anchor on one of those paths is
        judged (domain/freshness.py) and, when its code changed or went, marked."""
        if max_tokens is not None and not packing.MIN_BUDGET <= max_tokens <= packing.MAX_BUDGET:
            raise InvalidArgumentError(
                f"maxTokens {max_tokens} is out of range; use {packing.MIN_BUDGET} to {packing.MAX_BUDGET}."
            )
        text = (query or "").strip()
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidArgumentError(f"query has {len(text)} characters; keep it under {MAX_QUERY_CHARS}.")
        if branch is not None:
            rules.check_branch(branch)
        paths = freshness.check_files(files)
        hashes = freshness.check_file_hashes(check_freshness) if check_freshness is not None else None
        target = visible_project(self._deps, principal, project)
        if target is None:
            budget = packing.resolve_budget(max_tokens, None, detail)
            notice: str | None = (
                f"Project {project!r} has no notes yet. Start it with remember(project={project!r}, content=..., "
                "type='decision'|'constraint'|...) and end sessions with checkpoint."
            )
            empty = packing.pack(
                budget=budget, detail=detail, summary="", instructions="", conflicts=[], sections=[], project=project,
                notice=notice,
            )  # fmt: skip
            return ContextResult(project, False, empty, notice)

        ws, now = principal.workspace_id, self._deps.clock.now()
        statuses = WITH_HISTORY if include_historical else LIVE
        typed, recent, needing = self._candidates(principal, target, include_historical)
        # Candidates of other unmerged branches are left out after the bounded reads, so the store work stays
        # the same; a section may then weigh fewer than it read.
        scope = BranchScope.of(target, branch, all_branches=all_branches)
        hidden: set[str] = set()
        for section in list(typed):
            typed[section], left_out = scope.split(typed[section])
            hidden |= left_out
        (recent, left_recent), (needing, left_needing) = scope.split(recent), scope.split(needing)
        hidden |= left_recent | left_needing
        # Anchors are known of the notes read whole; a lean read (DynamoDB's GSI4) leaves them out.
        anchors_of: dict[str, tuple[Anchor, ...]] = {
            n.id: n.anchors
            for n in [*recent, *needing, *(n for ns in typed.values() for n in ns)]
            if n.full_size is None
        }
        anchored: list[Note] = []
        if paths:
            found_anchored = self._deps.store.anchored_notes(ws, target.id, paths, statuses=statuses, limit=ANCHORED)
            anchored, left_anchored = scope.split(found_anchored)
            hidden |= left_anchored
            anchors_of.update((n.id, n.anchors) for n in anchored)
        conflicts = [ConflictEntry(c.note, c.kind.value, c.message) for c in conflicts_of(needing)]
        # Every candidate is judged by the same lean view (title, the start of the body), however the store read it.
        by_section: dict[Section, list[Note]] = {}
        beyond: list[Section] = []
        for section in packing.SECTION_TYPES:
            # One more than is considered was read: whether the project holds more than the answer could weigh.
            if packing.more_of_a_type_than(typed[section], PER_SECTION):
                beyond.append(section)
            by_section[section] = [
                packing.lean_view(n) for n in packing.newest_of_each_type(typed[section], PER_SECTION)
            ]
        recent = [packing.lean_view(n) for n in recent]
        relevant: list[Note] = []
        whole: dict[str, Note] = {n.id: n for n in anchored}  # notes read whole: deep detail need not read them again
        found: dict[str, float] = {}  # the search's own scores: a hybrid match may share no word with the query
        bounded_relevance = 0
        if text and self._search.indexed:
            focus = packing.focus_terms(text)
            for n, score in self._search.related_scored(ws, target.id, text, RELEVANT, scan_limit=RELEVANT_SCAN):
                if not scope.admits(n):
                    hidden.add(n.id)
                elif n.status in statuses and packing.mentions(n, focus):
                    relevant.append(packing.lean_view(n))
                    whole[n.id] = n
                    anchors_of[n.id] = n.anchors
                    found[n.id] = score
        elif text:
            # No search index: rank the candidates already read (the newest of each section and of the rest),
            # never a further read of the project; the answer says so.
            pool = list({n.id: n for n in [*recent, *(n for ns in by_section.values() for n in ns)]}.values())
            bounded_relevance = len(pool)
            for hit in ranking.bm25(pool, ranking.candidate_query(text) or text, RELEVANT):
                relevant.append(hit.note)
                found[hit.note.id] = hit.score

        leading = [packing.lean_view(n) for n in anchored]
        loaded = [n for notes in by_section.values() for n in notes] + recent + relevant + leading
        inbound = packing.inbound_links(loaded)
        relevance = self._relevance(loaded, text)
        best_found = max(found.values(), default=0.0)
        if best_found > 0:
            for note_id, score in found.items():
                relevance[note_id] = max(relevance.get(note_id, 0.0), score / best_found)

        def ranked(notes: list[Note], section: Section | None = None) -> list[Candidate]:
            """Best first; in a typed section its own type leads (a constraint before a preference, a decision
            before an architecture note, a handoff before a status note), then canonical decisions."""
            types = packing.SECTION_TYPES.get(section, ()) if section is not None else ()
            candidates = [
                Candidate(
                    n, packing.score(n, now=now, relevance=relevance.get(n.id, 0.0), inbound=inbound.get(n.id, 0))
                )
                for n in notes
            ]
            candidates.sort(
                key=lambda c: (
                    types.index(c.note.type) if c.note.type in types else len(types),
                    not c.note.canonical if section is Section.DECISIONS else False,
                    -c.score,
                    c.note.id,
                )
            )
            return candidates

        sections: list[tuple[Section, list[Candidate]]] = []
        for section in packing.SECTION_ORDER:
            if section is Section.RELEVANT:
                # Notes anchored to the files in hand first (to a named file before one under a named directory),
                # then the query's matches.
                first = sorted(
                    ranked(leading),
                    key=lambda c: freshness.file_match(c.note.anchors, paths) != freshness.NAMED_FILE,
                )
                led = {c.note.id for c in first}
                sections.append((section, first + [c for c in ranked(relevant) if c.note.id not in led]))
            elif section is Section.RECENT_CHANGES:
                # Newest first: this section answers "what moved lately", not "what matters most".
                sections.append((section, [Candidate(n, 0.0) for n in recent]))
            else:
                sections.append((section, ranked(by_section[section], section)))

        budget = packing.resolve_budget(max_tokens, target.default_max_tokens, detail)
        notice = None
        # Notes hidden on other branches are not "no notes": the hidden line below says how to see them.
        if not conflicts and not hidden and not any(candidates for _, candidates in sections):
            notice = (
                f"Project {project!r} has no current notes. Record decisions and constraints with remember; "
                "end sessions with checkpoint."
            )
        excerpt_chars = packing.DETAIL_LEVELS[detail].excerpt_chars
        # Longer excerpts than a lean read holds (a detail level's, a handoff's): read those notes whole. The
        # search's matches are whole already, so their excerpts can start where the query is.
        sections = self._whole(
            ws,
            sections,
            whole,
            lambda n, s: packing.reading_chars(n, s, excerpt_chars, has_query=bool(text)) > rules.LEAN_BODY_CHARS,
        )
        if hidden and not notice:
            notice = branches.hidden_line(len(hidden))
        if bounded_relevance and not notice:
            notice = (
                f"Relevant notes were ranked among the {bounded_relevance} newest candidates only (no search index); "
                "search_notes looks further."
            )
        focus = packing.focus_terms(text) if text else frozenset()

        def packed_with(verdicts: Mapping[str, NoteVerdict]) -> PackedContext:
            return packing.pack(
                budget=budget, detail=detail, summary=target.summary, instructions=target.instructions,
                conflicts=conflicts, sections=sections, has_query=bool(text), project=target.slug, notice=notice,
                beyond=beyond, focus=focus, verdicts=verdicts, relevant_first=bool(leading),
                by_ref=target.named_by_ref,
            )  # fmt: skip

        packed = packed_with({})
        anchored_paths = None
        if hashes is not None:
            packed, verdicts = self._judged(ws, packed, packed_with, anchors_of, hashes)
            anchored_paths = tuple(sorted({a.path for i in _shown(packed) for a in anchors_of.get(i, ())}))
            # Kept for the console at the version each note was shown at (a later edit makes the verdict moot).
            shown_notes = {c.note.id: c.note for c in conflicts} | {c.note.id: c.note for _, cs in sections for c in cs}
            judged = [(shown_notes[i], v) for i, v in verdicts.items() if i in shown_notes]
            self._verdicts.record_in_passing(principal, judged)
        if packed.truncated:  # the text says so in its omitted list; the structured answer says it here
            notice = packing.unlisted_line(packed.unlisted)
        return ContextResult(target.slug, True, packed, notice, len(hidden), anchored_paths)

    def _judged(
        self,
        ws: str,
        packed: PackedContext,
        packed_with: Callable[[Mapping[str, NoteVerdict]], PackedContext],
        anchors_of: dict[str, tuple[Anchor, ...]],
        hashes: Mapping[str, str | None],
    ) -> tuple[PackedContext, dict[str, NoteVerdict]]:
        """The answer with each note it shows judged against the caller's file hashes (stale ones marked), their
        anchors read where the candidates came lean (`anchors_of` is filled in), and the verdicts. A mark costs
        tokens, so the notes shown may change when packed again: those are judged in turn, JUDGE_ROUNDS times at
        most."""
        verdicts: dict[str, NoteVerdict] = {}
        for _ in range(JUDGE_ROUNDS):
            shown = _shown(packed)
            unread = [i for i in shown if i not in anchors_of]
            if unread:
                read = self._deps.store.note_anchors(ws, unread)
                anchors_of.update((i, read.get(i, ())) for i in unread)
            judged = {
                i: verdict for i in shown
                if i not in verdicts and (verdict := freshness.judge_by_file_hashes(anchors_of[i], hashes))
            }  # fmt: skip
            if not judged:
                break
            verdicts.update(judged)
            packed = packed_with(verdicts)
        return packed, verdicts

    def _candidates(
        self, principal: Principal, target: Project, include_historical: bool
    ) -> tuple[dict[Section, list[Note]], list[Note], list[Note]]:
        """The newest notes of each type of each section (one more than PER_SECTION), the newest live notes and the
        newest needing attention, joined as packing.with_attention says: one lean read per type where the store
        keeps them (ports.ContextNotes), else one read per type and status."""
        store, ws = self._deps.store, principal.workspace_id
        if target.context_index >= 1 and not include_historical:
            read = store.context_notes(
                ws, target.id, per_section=PER_SECTION + 1, recent=RECENT, attention=CONFLICTS_SHOWN,
                by_section=target.context_index < TYPE_PARTITION_LAYOUT,
            )  # fmt: skip
            if target.context_index >= ATTENTION_LAYOUT:
                return dict(read.sections), read.recent, read.attention
            # Layout 1: old notes needing attention are still among the sections; GSI3 lists them.
            needing = store.conflicted_notes(ws, target.id, limit=CONFLICTS_SHOWN)
            return *_settled(read.sections, read.recent, needing), needing
        typed = {
            section: [
                note for kind in types for note in store.notes_by_type(
                    ws, target.id, [kind],
                    list(packing.section_statuses(section, include_historical=include_historical)),
                    limit=PER_SECTION + 1,
                )
            ]
            for section, types in packing.SECTION_TYPES.items()
        }  # fmt: skip
        statuses = WITH_HISTORY if include_historical else LIVE
        recent = [
            n for n in store.project_notes(ws, target.id, limit=RECENT) if not n.is_deleted and n.status in statuses
        ]
        needing = store.conflicted_notes(ws, target.id, limit=CONFLICTS_SHOWN)
        return *_settled(typed, recent, needing), needing

    def _whole(
        self,
        ws: str,
        sections: list[tuple[Section, list[Candidate]]],
        known: dict[str, Note],
        wanted: Callable[[Note, Section], bool],
    ) -> list[tuple[Section, list[Candidate]]]:
        """The candidates with their whole bodies where `wanted` says an entry shows more than a lean read holds;
        `known`: whole notes already read."""
        cut = list(
            dict.fromkeys(
                c.note.id
                for section, candidates in sections
                for c in candidates
                if c.note.body_cut and c.note.id not in known and wanted(c.note, section)
            )
        )
        whole = {**known, **(self._deps.store.get_notes(ws, cut) if cut else {})}
        return [
            (section, [Candidate(whole.get(c.note.id, c.note), c.score) for c in candidates])
            for section, candidates in sections
        ]

    @staticmethod
    def _relevance(notes: list[Note], query: str) -> dict[str, float]:
        """BM25 of the query over the loaded candidates, scaled to [0, 1] by the best match."""
        if not query:
            return {}
        unique = list({n.id: n for n in notes}.values())
        hits = ranking.bm25(unique, ranking.candidate_query(query) or query, len(unique))
        best = hits[0].score if hits else 0.0
        return {h.note.id: h.score / best for h in hits} if best > 0 else {}


def _shown(packed: PackedContext) -> list[str]:
    """The ids of the notes an answer shows: its conflicts and its sections' entries."""
    ids = [str(c["id"]) for c in packed.conflicts]
    return list(dict.fromkeys(ids + [str(e["id"]) for _, entries in packed.sections for e in entries]))


def _settled(
    sections: Mapping[Section, list[Note]], recent: list[Note], needing: list[Note]
) -> tuple[dict[Section, list[Note]], list[Note]]:
    """Candidates read with the notes needing attention among them, joined as packing.with_attention says."""
    return packing.with_attention(
        {s: [n for n in notes if not packing.needs_attention(n)] for s, notes in sections.items()},
        [n for n in recent if not packing.needs_attention(n)],
        needing,
        per_section=PER_SECTION + 1,
        recent_limit=RECENT,
    )
