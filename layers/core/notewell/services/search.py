"""search_notes: the best available mode, falling back step by step, always reporting which one answered."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from notewell.domain import ranking
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Note, Principal, SearchFilters, SearchHit
from notewell.ports import SearchIndex, SearchUnavailableError
from notewell.services.access import Deps, visible_project

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500
MAX_LIMIT = 50
# The in-process scan reads at most this many of the project's most recently updated notes.
SCAN_LIMIT = 2_000
# remember compares against fewer notes when there is no index: the most recent ones are the likeliest matches.
RELATED_SCAN_LIMIT = 500


class SearchMode(StrEnum):
    VECTOR = "vector"
    RANKED_SCAN = "ranked_scan"
    FULLTEXT = "fulltext"
    SUBSTRING = "substring"


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    mode: SearchMode
    project_exists: bool


class SearchService:
    def __init__(self, deps: Deps, fulltext: SearchIndex | None) -> None:
        self._deps = deps
        self._fulltext = fulltext

    def run(
        self,
        principal: Principal,
        project: str,
        query: str,
        *,
        semantic: bool = False,
        filters: SearchFilters | None = None,
        limit: int = 10,
    ) -> SearchOutcome:
        filters = filters or SearchFilters()
        text = query.strip()
        if not text:
            raise InvalidArgumentError("query is empty; give a few words to look for.")
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidArgumentError(f"query has {len(text)} characters; keep it under {MAX_QUERY_CHARS}.")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit {limit} is out of range; use 1 to {MAX_LIMIT}.")
        target = visible_project(self._deps, principal, project)
        if target is None:
            return SearchOutcome([], SearchMode.FULLTEXT if self._fulltext else SearchMode.RANKED_SCAN, False)
        ws = principal.workspace_id
        # No vector index is configured yet, so `semantic` goes straight to the best keyword mode. A full-text
        # index ranks the whole project; the in-process scan only the most recent SCAN_LIMIT notes.
        if self._fulltext is not None:
            try:
                return SearchOutcome(
                    self._fulltext.search(ws, target.id, text, filters, limit), SearchMode.FULLTEXT, True
                )
            except SearchUnavailableError:
                logger.warning("full-text index unavailable; falling back to substring search")
                return self._substring(ws, target.id, text, filters, limit)
        try:
            notes = [n for n in self._deps.store.project_notes(ws, target.id, limit=SCAN_LIMIT) if filters.admits(n)]
            return SearchOutcome(ranking.bm25(notes, text, limit), SearchMode.RANKED_SCAN, True)
        except (ArithmeticError, ValueError):  # a ranking bug must not cost the caller the answer
            logger.exception("ranked scan failed; falling back to substring search")
            return self._substring(ws, target.id, text, filters, limit)

    def _substring(self, ws: str, project_id: str, text: str, filters: SearchFilters, limit: int) -> SearchOutcome:
        notes = [n for n in self._deps.store.project_notes(ws, project_id, limit=SCAN_LIMIT) if filters.admits(n)]
        return SearchOutcome(ranking.substring(notes, text, limit), SearchMode.SUBSTRING, True)

    def related(
        self,
        workspace_id: str,
        project_id: str,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        *,
        scan_limit: int = RELATED_SCAN_LIMIT,
    ) -> list[Note]:
        """The notes of a project that best match `query` (live ones only), for comparison with new content.

        Always an index query or the bounded recent-notes scan, never a read of the whole project.
        """
        filters = filters or SearchFilters()
        if not query.strip():
            return []
        if self._fulltext is not None:
            try:
                return [h.note for h in self._fulltext.search(workspace_id, project_id, query, filters, limit)]
            except SearchUnavailableError:
                logger.warning("full-text index unavailable; comparing against recent notes instead")
        notes = [
            n for n in self._deps.store.project_notes(workspace_id, project_id, limit=scan_limit) if filters.admits(n)
        ]
        return [h.note for h in ranking.bm25(notes, query, limit)]
