"""get_context: a project's current state in one call, from bounded indexed reads, within a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import admission, packing, ranking
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Note, NoteStatus, Principal
from notewell.domain.packing import Candidate, ConflictEntry, Detail, PackedContext, Section
from notewell.services.access import Deps, visible_project

if TYPE_CHECKING:
    from notewell.services.memory import MemoryService
    from notewell.services.search import SearchService

# How many candidates each source may load: fixed, so the store work never grows with the project.
PER_SECTION = 25
RELEVANT = 12
RECENT = 40
RELEVANT_SCAN = 200  # without a full-text index, the recent notes the query is ranked against
MAX_QUERY_CHARS = 500

LIVE = (NoteStatus.CURRENT, NoteStatus.PENDING, NoteStatus.DISPUTED)
WITH_HISTORY = (*LIVE, NoteStatus.HISTORICAL, NoteStatus.SUPERSEDED)


@dataclass(frozen=True, slots=True)
class ContextResult:
    project: str
    exists: bool
    packed: PackedContext
    notice: str | None


class ContextService:
    def __init__(self, deps: Deps, search: SearchService, memory: MemoryService) -> None:
        self._deps = deps
        self._search = search
        self._memory = memory

    def get_context(
        self,
        principal: Principal,
        project: str,
        *,
        query: str | None = None,
        detail: Detail = Detail.BALANCED,
        max_tokens: int | None = None,
        include_historical: bool = False,
    ) -> ContextResult:
        if max_tokens is not None and not packing.MIN_BUDGET <= max_tokens <= packing.MAX_BUDGET:
            raise InvalidArgumentError(
                f"maxTokens {max_tokens} is out of range; use {packing.MIN_BUDGET} to {packing.MAX_BUDGET}."
            )
        text = (query or "").strip()
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidArgumentError(f"query has {len(text)} characters; keep it under {MAX_QUERY_CHARS}.")
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
        store = self._deps.store
        by_section: dict[Section, list[Note]] = {}
        beyond: list[Section] = []
        for section, types in packing.SECTION_TYPES.items():
            wanted = statuses if section is not Section.OPEN_ITEMS else (NoteStatus.PENDING, NoteStatus.CURRENT)
            # One more than is considered: whether the project holds more of these than the answer could weigh.
            typed = store.notes_by_type(ws, target.id, list(types), list(wanted), limit=PER_SECTION + 1)
            if len(typed) > PER_SECTION:
                beyond.append(section)
            by_section[section] = typed[:PER_SECTION]
        recent = [
            n for n in store.project_notes(ws, target.id, limit=RECENT)
            if not n.is_deleted and n.status in statuses
        ]  # fmt: skip
        relevant: list[Note] = []
        found: dict[str, float] = {}  # the search's own scores: a hybrid match may share no word with the query
        if text:
            for n, score in self._search.related_scored(ws, target.id, text, RELEVANT, scan_limit=RELEVANT_SCAN):
                if n.status in statuses:
                    relevant.append(n)
                    found[n.id] = score

        conflicts = [
            ConflictEntry(c.note, c.kind.value, c.message) for c in self._memory.conflicts_in(principal, target)
        ]
        loaded = [n for notes in by_section.values() for n in notes] + recent + relevant
        inbound = packing.inbound_links(loaded)
        relevance = self._relevance(loaded, text)
        best_found = max(found.values(), default=0.0)
        if best_found > 0:
            for note_id, score in found.items():
                relevance[note_id] = max(relevance.get(note_id, 0.0), score / best_found)

        def ranked(notes: list[Note], *, canonical_first: bool = False) -> list[Candidate]:
            candidates = [
                Candidate(
                    n, packing.score(n, now=now, relevance=relevance.get(n.id, 0.0), inbound=inbound.get(n.id, 0))
                )
                for n in notes
            ]
            candidates.sort(key=lambda c: (not c.note.canonical if canonical_first else False, -c.score, c.note.id))
            return candidates

        sections: list[tuple[Section, list[Candidate]]] = []
        for section in packing.SECTION_ORDER:
            if section is Section.RELEVANT:
                sections.append((section, ranked(relevant)))
            elif section is Section.RECENT_CHANGES:
                # Newest first: this section answers "what moved lately", not "what matters most".
                sections.append((section, [Candidate(n, 0.0) for n in recent]))
            else:
                notes = by_section[section]
                sections.append((section, ranked(notes, canonical_first=section is Section.DECISIONS)))

        budget = packing.resolve_budget(max_tokens, target.default_max_tokens, detail)
        notice = None
        if not conflicts and not any(candidates for _, candidates in sections):
            notice = (
                f"Project {project!r} has no current notes. Record decisions and constraints with remember; "
                "end sessions with checkpoint."
            )
        packed = packing.pack(
            budget=budget, detail=detail, summary=target.summary, instructions=target.instructions,
            conflicts=conflicts, sections=sections, has_query=bool(text), project=target.slug, notice=notice,
            beyond=beyond,
        )  # fmt: skip
        if packed.truncated:  # the text says so in its omitted list; the structured answer says it here
            notice = packing.unlisted_line(packed.unlisted)
        return ContextResult(target.slug, True, packed, notice)

    @staticmethod
    def _relevance(notes: list[Note], query: str) -> dict[str, float]:
        """BM25 of the query over the loaded candidates, scaled to [0, 1] by the best match."""
        if not query:
            return {}
        unique = list({n.id: n for n in notes}.values())
        hits = ranking.bm25(unique, admission.candidate_query(query) or query, len(unique))
        best = hits[0].score if hits else 0.0
        return {h.note.id: h.score / best for h in hits} if best > 0 else {}
