"""search_notes: the best available mode, falling back step by step, always reporting which one answered.

With an embedder and a vector index, `semantic` searches are hybrid: the keyword leg (full-text index, else the
ranked scan) and the vector leg fused by domain/hybrid.py, with the embedding model's own weights where they were
measured (domain/calibration.py), else by rank. remember's candidates and get_context's relevant notes
always use both legs when they can: finding a note that says the same thing in other words is their whole job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from notewell.domain import freshness, hybrid, ranking, rules
from notewell.domain.branches import BranchScope
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Note, NoteStatus, Principal, SearchFilters, SearchHit
from notewell.ports import CandidateIndex, RankedIds, SearchIndex, SearchUnavailableError
from notewell.services.access import Deps, visible_project

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.calibration import HybridWeights
    from notewell.ports import RecentWrites, Vector
    from notewell.services.meaning import Meaning

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500
MAX_LIMIT = 50
# The in-process scan reads at most this many of the project's most recently updated notes.
SCAN_LIMIT = 2_000
# remember compares against fewer notes when there is no index: the most recent ones are the likeliest matches.
RELATED_SCAN_LIMIT = 500
# Each leg of remember's and get_context's hybrid lookups proposes this many times the notes asked for (at least
# HYBRID_POOL): a note ranked low by one leg and high by the other must be in both lists to be fused fairly.
HYBRID_POOL = 30
HYBRID_POOL_FACTOR = 3
# search_notes asks each leg for more: the vector leg ranks a dialogue's relevant notes deep (on the MADial tune
# split 81% of them are in its best 30, 99% in its best 100), and a note either leg leaves out scores only that
# leg's floor. Both legs score every note anyway (numpy over the project's vectors, BM25 over every match): a
# longer list costs a sort, not a scan.
SEARCH_POOL = 100
SEARCH_POOL_FACTOR = 10
# Without a vector leg remember's candidates are ranked by at least this many of their words: a restatement's
# rarest words are often the ones it adds, which the note it restates lacks (words-only restatements found at 10k
# notes: 33 of 60 ranked by the rarest words alone, 51 with four).
WORDS_ONLY_CANDIDATE_TERMS = 4
# A stream-fed index (OpenSearch on AWS) holds a note some seconds after its commit: stream, embedding, indexing and
# the collection's refresh. remember reads the notes written this long ago or less from the table itself.
FRESH_SECONDS = 120
FRESH_NOTES = 20
# search_notes with `files`: the anchored notes weighed (to lead the hits, or, with no query, to be them).
ANCHORED_POOL = 100
# A hit found by `files` alone: anchored to a named file, or to a file under a named directory.
_ANCHOR_SCORES: dict[int | None, float] = {freshness.NAMED_FILE: 1.0, freshness.UNDER_DIRECTORY: 0.5, None: 0.0}


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    RANKED_SCAN = "ranked_scan"
    FULLTEXT = "fulltext"
    SUBSTRING = "substring"
    ANCHORS = "anchors"  # `files` without a query: the notes anchored there, no ranking by words


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    mode: SearchMode
    project_exists: bool
    fallback: str | None = None  # why a semantic search answered by keywords alone
    scanned: int | None = None  # set when only this many most recent notes were searched (more exist)
    pool: int | None = None  # hybrid: how many distinct notes the two legs proposed (the candidates fused)
    other_branches: int = 0  # matches of other unmerged branches left out (domain/branches.py)
    by_ref: bool = False  # text may name hits by ref (refs.names): the tools resolve the project's refs


@dataclass(frozen=True, slots=True)
class _Keyword:
    hits: list[SearchHit]
    mode: SearchMode
    scanned: int | None = None


class SearchService:
    def __init__(
        self, deps: Deps, fulltext: SearchIndex | None, meaning: Meaning | None = None, *,
        fresh: RecentWrites | None = None,
    ) -> None:  # fmt: skip
        """`fresh`: where to read the notes written in the last FRESH_SECONDS, when `fulltext` is fed by a stream
        and lags the table: remember must see a note written a moment ago, indexed or not."""
        self._deps = deps
        self._fulltext = fulltext
        self._meaning = meaning
        self._fresh = fresh

    @property
    def meaning(self) -> Meaning | None:
        return self._meaning

    @property
    def indexed(self) -> bool:
        """Whether a search index (full text or vectors) serves related notes, rather than a bounded recent scan."""
        return self._fulltext is not None or (self._meaning is not None and self._meaning.searchable)

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
        by_ref = target.named_by_ref
        fallback = None
        if semantic:
            try:
                return replace(self._hybrid(ws, target.id, text, filters, limit), by_ref=by_ref)
            except SearchUnavailableError as exc:
                fallback = str(exc)
                logger.warning("vector search unavailable (%s); answering by keywords", exc)
        keyword = self._keyword(ws, target.id, text, filters, limit)
        return SearchOutcome(keyword.hits, keyword.mode, True, fallback, keyword.scanned, by_ref=by_ref)

    def find(
        self,
        principal: Principal,
        project: str,
        query: str | None,
        *,
        files: Sequence[str] = (),
        branch: str | None = None,
        all_branches: bool = False,
        semantic: bool = False,
        filters: SearchFilters | None = None,
        limit: int = 10,
    ) -> SearchOutcome:
        """search_notes: `run`, with the notes anchored to `files` ahead of the other hits (with no query, those
        notes alone, mode ANCHORS), and on a `branch` the hits of other unmerged branches left out and counted.

        With both, an anchored note that says the query's words is a hit even where the engine ranked it past
        `limit`: the notes on the code in hand are what the caller asked about first."""
        filters = filters or SearchFilters()
        paths = freshness.check_files(files)
        text = (query or "").strip()
        if not text and not paths:
            raise InvalidArgumentError(
                "Give query (words or a question) or files (paths whose anchored notes you want), or both."
            )
        if branch is not None:
            rules.check_branch(branch)
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit {limit} is out of range; use 1 to {MAX_LIMIT}.")
        if not paths and branch is None:
            return self.run(principal, project, text, semantic=semantic, filters=filters, limit=limit)
        target = visible_project(self._deps, principal, project)
        if target is None:
            if not text:
                return SearchOutcome([], SearchMode.ANCHORS, False)
            return self.run(principal, project, text, semantic=semantic, filters=filters, limit=limit)
        scope = BranchScope.of(target, branch, all_branches=all_branches)
        # Other branches' notes are left out after ranking: spare hits keep the answer full.
        wanted = min(MAX_LIMIT, limit * 2) if scope.branch is not None else limit
        anchored: list[Note] = []
        if paths:
            statuses = sorted(filters.statuses or set(NoteStatus))
            found = self._deps.store.anchored_notes(
                principal.workspace_id, target.id, paths, statuses=statuses, limit=ANCHORED_POOL
            )
            anchored = [note for note in found if filters.admits(note)]
        if text:
            outcome = self.run(principal, project, text, semantic=semantic, filters=filters, limit=wanted)
            ids = {note.id for note in anchored}
            listed = {hit.note.id for hit in outcome.hits}
            more = ranking.bm25([note for note in anchored if note.id not in listed], text, len(anchored))
            hits = (
                [h for h in outcome.hits if h.note.id in ids] + more + [h for h in outcome.hits if h.note.id not in ids]
            )
        else:
            outcome = SearchOutcome([], SearchMode.ANCHORS, True)
            hits = [SearchHit(note, _ANCHOR_SCORES[freshness.file_match(note.anchors, paths)],
                              ranking.snippet_around(note.body, [])) for note in anchored]  # fmt: skip
        shown = [hit for hit in hits if scope.admits(hit.note)]
        by_ref = target.named_by_ref
        return replace(outcome, hits=shown[:limit], other_branches=len(hits) - len(shown), by_ref=by_ref)

    def _keyword(
        self, ws: str, project_id: str, text: str, filters: SearchFilters, limit: int, *, candidates: bool = False
    ) -> _Keyword:
        # A full-text index ranks the whole project; the in-process scan only the most recent SCAN_LIMIT notes.
        # `candidates`: notes to compare with new content, where the index's cheaper ranking will do.
        if self._fulltext is not None:
            try:
                if candidates and isinstance(self._fulltext, CandidateIndex):
                    found = self._fulltext.candidates(ws, project_id, text, filters, limit)
                    return _Keyword(found, SearchMode.FULLTEXT)
                return _Keyword(self._fulltext.search(ws, project_id, text, filters, limit), SearchMode.FULLTEXT)
            except SearchUnavailableError as exc:
                logger.warning("full-text index unavailable (%s); ranking recent notes instead", exc)
        try:
            read = self._deps.store.project_notes(ws, project_id, limit=SCAN_LIMIT)
            notes = [n for n in read if filters.admits(n)]
            scanned = SCAN_LIMIT if len(read) >= SCAN_LIMIT else None
            return _Keyword(ranking.bm25(notes, text, limit), SearchMode.RANKED_SCAN, scanned)
        except (ArithmeticError, ValueError):  # a ranking bug must not cost the caller the answer
            logger.exception("ranked scan failed; falling back to substring search")
            return self._substring(ws, project_id, text, filters, limit)

    def _hybrid(
        self, ws: str, project_id: str, text: str, filters: SearchFilters, limit: int, vector: Vector | None = None,
        *, candidates: bool = False, keyword_hits: Sequence[SearchHit] | None = None,
    ) -> SearchOutcome:  # fmt: skip
        """Both legs fused; the vector leg alone when the keyword leg fails. Raises SearchUnavailableError when
        there is no vector leg (no embedder, no vector index, or either failed). `keyword_hits`: the keyword leg,
        when the caller already ran it (at least the pool's size)."""
        meaning = self._meaning
        if meaning is None:
            raise SearchUnavailableError("No embedding model is configured, so there is no vector search.")
        if not meaning.searchable:
            raise SearchUnavailableError("This store keeps no note vectors, so there is no vector search.")
        pool = related_pool(limit) if candidates else search_pool(limit)
        vector = vector if vector is not None else meaning.embed_one(text)
        nearest = meaning.nearest(ws, project_id, vector, pool)
        # Candidates (remember's, get_context's): an index in step with the store ranks them itself, more cheaply than
        # a search (SQLite: FTS5's own bm25, in C); a stream-fed one (OpenSearch) ranks them as a search, by ids.
        ids_first = not candidates or self._fresh is not None
        if keyword_hits is None and ids_first and isinstance(self._fulltext, RankedIds):
            try:
                ranked, ceiling = self._ranked_ids(self._fulltext, ws, project_id, text, filters, pool)
            except SearchUnavailableError as exc:
                logger.warning("keyword index unavailable (%s); fusing the vector leg with the ranked scan", exc)
            else:
                legs = _Legs(ranked, nearest, ceiling, pool)
                return self._fused_ids(ws, project_id, text, filters, limit, legs, meaning.hybrid_weights)
        keyword: _Keyword | None = (
            _Keyword(list(keyword_hits), SearchMode.FULLTEXT)
            if keyword_hits is not None
            else self._keyword(ws, project_id, text, filters, pool, candidates=candidates)
        )
        if keyword is not None and keyword.mode is SearchMode.SUBSTRING:
            keyword = None  # the keyword index is down: substring matches carry no ranking worth fusing
        keyword_hits = keyword.hits if keyword is not None else []
        by_id = {h.note.id: h for h in keyword_hits}
        names = hybrid.query_names(text)
        # With names in the query every proposed note is read before fusing (to see which names it mentions); else
        # only the vector leg's notes that make the cut.
        proposed = [note_id for note_id, _ in nearest if note_id not in by_id] if names else []
        fetched = self._deps.store.get_notes(ws, proposed) if proposed else {}
        named = hybrid.named_shares(names, {
            note.id: f"{note.title} {note.body}" for note in [*(h.note for h in keyword_hits), *fetched.values()]
        }) if names else None  # fmt: skip
        keyword_leg = [(h.note.id, h.score) for h in keyword_hits]
        fused = hybrid.fuse(keyword_leg, nearest, pool, weights=meaning.hybrid_weights, named=named, pool=pool)
        vector_only = [f.note_id for f in fused if f.note_id not in by_id and f.note_id not in fetched]
        if vector_only:
            fetched.update(self._deps.store.get_notes(ws, vector_only))
        terms = ranking.tokens(text)
        hits: list[SearchHit] = []
        for item in fused:
            hit = by_id.get(item.note_id)
            if hit is None:
                note = fetched.get(item.note_id)
                if note is None or note.project_id != project_id or not filters.admits(note):
                    continue
                hit = SearchHit(note, 0.0, ranking.snippet_around(note.body, terms))
            hits.append(SearchHit(hit.note, round(item.score, 4), hit.snippet))
            if len(hits) == limit:
                break
        mode = SearchMode.HYBRID if keyword is not None else SearchMode.VECTOR
        scanned = keyword.scanned if keyword is not None else None
        return SearchOutcome(hits, mode, True, scanned=scanned, pool=len(set(by_id) | {i for i, _ in nearest}))

    @staticmethod
    def _ranked_ids(
        index: RankedIds, ws: str, project_id: str, text: str, filters: SearchFilters, pool: int
    ) -> tuple[list[tuple[str, float]], float | None]:
        """The keyword leg as ids, with the query's ceiling where the index can tell it (else None)."""
        if isinstance(index, CeilingRanking):
            return index.ranked_with_ceiling(ws, project_id, text, filters, pool)
        return index.ranked_ids(ws, project_id, text, filters, pool), None

    def _fused_ids(
        self, ws: str, project_id: str, text: str, filters: SearchFilters, limit: int, legs: _Legs,
        weights: HybridWeights | None,
    ) -> SearchOutcome:  # fmt: skip
        """Both legs as ids, fused, then the notes read once: the best `2 * limit` (more only if too many of those
        are gone or filtered out). With names in the query every proposed note is read first, to see which it names."""
        store = self._deps.store
        names = hybrid.query_names(text)
        proposed = list(dict.fromkeys([i for i, _ in legs.keyword] + [i for i, _ in legs.vector]))
        fetched: dict[str, Note] = store.get_notes(ws, proposed) if names else {}
        named = hybrid.named_shares(names, {i: f"{n.title} {n.body}" for i, n in fetched.items()}) if names else None
        fused = hybrid.fuse(
            legs.keyword, legs.vector, legs.pool, weights=weights, named=named, keyword_ceiling=legs.ceiling,
            pool=legs.pool,
        )  # fmt: skip
        order = [f.note_id for f in fused]
        terms = ranking.tokens(text)
        hits: list[SearchHit] = []
        start = 0
        while len(hits) < limit and start < len(order):
            chunk = order[start : start + (2 * limit if start == 0 else len(order))]
            missing = [i for i in chunk if i not in fetched]
            if missing:
                fetched.update(store.get_notes(ws, missing))
            for item in fused[start : start + len(chunk)]:
                note = fetched.get(item.note_id)
                if note is None or note.project_id != project_id or not filters.admits(note):
                    continue
                hits.append(SearchHit(note, round(item.score, 4), ranking.snippet_around(note.body, terms)))
                if len(hits) == limit:
                    break
            start += len(chunk)
        return SearchOutcome(hits, SearchMode.HYBRID, True, pool=len(proposed))

    def _substring(self, ws: str, project_id: str, text: str, filters: SearchFilters, limit: int) -> _Keyword:
        read = self._deps.store.project_notes(ws, project_id, limit=SCAN_LIMIT)
        notes = [n for n in read if filters.admits(n)]
        scanned = SCAN_LIMIT if len(read) >= SCAN_LIMIT else None
        return _Keyword(ranking.substring(notes, text, limit), SearchMode.SUBSTRING, scanned)

    def related(
        self,
        workspace_id: str,
        project_id: str,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        *,
        scan_limit: int = RELATED_SCAN_LIMIT,
        vector: Vector | None = None,
        keyword_hits: Sequence[SearchHit] | None = None,
    ) -> list[Note]:
        """The notes of a project that best match `query` (live ones only), for comparison with new content."""
        return [note for note, _ in self.related_scored(
            workspace_id, project_id, query, limit, filters, scan_limit=scan_limit, vector=vector,
            keyword_hits=keyword_hits,
        )]  # fmt: skip

    def related_scored(
        self,
        workspace_id: str,
        project_id: str,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        *,
        scan_limit: int = RELATED_SCAN_LIMIT,
        vector: Vector | None = None,
        keyword_hits: Sequence[SearchHit] | None = None,
    ) -> list[tuple[Note, float]]:
        """`related` with each note's score, best first (fused when hybrid, else keyword scores).

        Both legs when a vector leg exists (`vector`: the caller's vector of the content, else `query` is
        embedded); always an index query or the bounded recent-notes scan, never a read of the whole project.
        `keyword_hits`: related_keyword's answer for the same query with at least `related_pool(limit)` hits, when
        the caller has it already.
        """
        filters = filters or SearchFilters()
        if not query.strip() and vector is None:
            return []
        if self._meaning is not None and self._meaning.searchable:
            try:
                outcome = self._hybrid(
                    workspace_id, project_id, query, filters, limit, vector, candidates=True, keyword_hits=keyword_hits
                )
                return [(h.note, h.score) for h in outcome.hits]
            except SearchUnavailableError as exc:
                logger.warning("vector leg unavailable (%s); comparing by keywords", exc)
        hits = (
            keyword_hits
            if keyword_hits is not None
            else self.related_keyword(workspace_id, project_id, query, limit, filters, scan_limit=scan_limit)
        )
        return [(h.note, h.score) for h in hits[:limit]]

    def related_keyword(
        self,
        workspace_id: str,
        project_id: str,
        query: str,
        limit: int,
        filters: SearchFilters | None = None,
        *,
        scan_limit: int = RELATED_SCAN_LIMIT,
    ) -> list[SearchHit]:
        """The keyword leg of `related` alone: the index's cheap candidate ranking, else the recent-notes scan."""
        filters = filters or SearchFilters()
        if not query.strip():
            return []
        if self._fulltext is not None:
            try:
                index = self._fulltext
                if isinstance(index, CandidateIndex):
                    vector_leg = self._meaning is not None and self._meaning.searchable
                    spread = 1 if vector_leg else WORDS_ONLY_CANDIDATE_TERMS
                    found = index.candidates(workspace_id, project_id, query, filters, limit, min_terms=spread)
                else:
                    found = index.search(workspace_id, project_id, query, filters, limit)
                return self._with_fresh(workspace_id, project_id, query, filters, found)
            except SearchUnavailableError:
                logger.warning("full-text index unavailable; comparing against recent notes instead")
        read = self._deps.store.project_notes(workspace_id, project_id, limit=scan_limit)
        hits = RelatedHits(ranking.bm25([n for n in read if filters.admits(n)], query, limit))
        hits.scanned = scan_limit if len(read) >= scan_limit else None
        return hits

    def _with_fresh(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, found: list[SearchHit]
    ) -> list[SearchHit]:
        """`found` (from a stream-fed index), then the notes written too recently to be indexed that match `query`:
        two quick remembers of one fact must meet. Newer states of found notes replace the indexed ones."""
        if self._fresh is None:
            return found
        since = rules.format_ts(self._deps.clock.now() - timedelta(seconds=FRESH_SECONDS))
        recent = self._fresh.recently_written(workspace_id, project_id, since, FRESH_NOTES)
        if not recent:
            return found
        newer = {n.id: n for n in recent}
        kept = [
            SearchHit(newer.get(h.note.id, h.note), h.score, h.snippet)
            for h in found
            if filters.admits(newer.get(h.note.id, h.note))
        ]
        listed = {h.note.id for h in found}
        admitted = [n for n in recent if filters.admits(n) and n.id not in listed]
        return kept + ranking.bm25(admitted, query, len(admitted))


class RelatedHits(list[SearchHit]):
    """related_keyword's hits; `scanned` is set when they come from a window of the newest notes that did not hold
    the whole project (no search index answered): a match may lie beyond it."""

    scanned: int | None = None


def related_pool(limit: int) -> int:
    """How many keyword hits a hybrid `related` of `limit` notes fuses (each leg proposes this many)."""
    return max(HYBRID_POOL, HYBRID_POOL_FACTOR * limit)


def search_pool(limit: int) -> int:
    """How many notes each leg of a hybrid search_notes of `limit` hits proposes."""
    return max(SEARCH_POOL, SEARCH_POOL_FACTOR * limit)


@dataclass(frozen=True, slots=True)
class _Legs:
    """A hybrid search's two legs as (note id, score) lists, best first: keyword (with the query's ceiling where
    the index told it) and vector, each asked for `pool` notes."""

    keyword: list[tuple[str, float]]
    vector: list[tuple[str, float]]
    ceiling: float | None
    pool: int


@runtime_checkable
class CeilingRanking(Protocol):
    """A keyword index that also tells a query's ceiling (SQLite's): the score a note holding every query word the
    project holds would reach at saturation, which puts its scores on an absolute scale (domain/hybrid.py)."""

    def ranked_with_ceiling(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> tuple[list[tuple[str, float]], float]: ...
