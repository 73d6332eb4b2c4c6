"""The stream indexer: keeps the search index one document per live note, never behind a state it has seen.

Table changes arrive from DynamoDB Streams in order per note, but retries, bisected batches, replays and a
`notewell reindex` running beside the stream deliver them again, late or twice. Every write is therefore guarded by
the note's pointer (ports.IndexPointer: the document that holds the note and its version), written conditionally
on being ahead of what is stored:

1. read the pointer; a state at or behind it is acknowledged and dropped (stale or replayed);
2. add the new document (the collection picks its id) or, for a deleted note, none;
3. write the pointer, conditioned on still being ahead; a newer state that won meanwhile deletes our document;
4. delete the document the pointer held before.

A crash between 2 and 3 leaves an orphan document; search counts each note once and hydrates it from the table, and
`notewell reindex` deletes orphans. A deleted note keeps its pointer (no document), so an older event replayed later
cannot bring it back; a note removed from the table gets a pointer no version can pass.

A note the model could not embed is indexed by its words alone (its pointer says so) and counted
(`Indexed.WITHOUT_VECTOR`, a metric of the stream indexer); `reembed_missing` later finds those documents and indexes
them again with their vector, and a full `reindex_stack` does too. Pointers are per index: a new index (a new model,
size or vector method) is filled from the table by `reindex_stack`, which then moves the search alias onto it in one
request and deletes the index it leaves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from notewell.domain.hybrid import embedding_text
from notewell.domain.model import CONTEXT_INDEX_LAYOUT
from notewell.ports import REMOVED_VERSION, EmbeddingUnavailableError, IndexPointer, SearchUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from notewell.domain.model import Note
    from notewell.ports import ContextIndexUpgrade, Embedder, IndexPointers, Store, Vector

logger = logging.getLogger(__name__)

EMBED_TIMEOUT_SECONDS = 10.0
REINDEX_PAGE = 100
SWEEP_LIMIT = 10_000  # documents examined per project for orphans (a search page's most)


class NoteDocuments(Protocol):
    def ensure_index(self, name: str, dimensions: int) -> bool:
        """Create index `name` (and point the search alias at it if it points nowhere); True when created."""
        ...

    def add(self, index: str, doc: Mapping[str, Any]) -> str:
        """Add a document; returns the id the index gave it. Raises SearchUnavailableError."""
        ...

    def delete(self, index: str, doc_id: str) -> None:
        """Delete a document by id (already gone is fine). Raises SearchUnavailableError."""
        ...

    def documents_of(self, index: str, workspace_id: str, project_id: str, limit: int) -> list[tuple[str, str]]:
        """(document id, note id) of up to `limit` documents of one project, for the orphan sweep."""
        ...

    def missing_vectors(self, index: str, limit: int, after: Sequence[str] | None) -> list[tuple[str, str]]:
        """(workspace id, note id) of up to `limit` documents without a vector, in that order, after `after`."""
        ...

    def alias_targets(self) -> list[str]:
        """The indexes the search alias points at."""
        ...

    def point_alias(self, name: str, *, previous: Sequence[str] = ()) -> None:
        """Move the search alias from `previous` to `name` in one atomic request."""
        ...

    def drop_index(self, name: str) -> None:
        """Delete an index (already gone is fine). Raises SearchUnavailableError."""
        ...


class DocumentShape(Protocol):
    def __call__(self, note: Note, vector: Vector | None, model_id: str) -> dict[str, Any]: ...


class Indexed(StrEnum):
    INDEXED = "indexed"  # a document now holds this version
    WITHOUT_VECTOR = "indexed_without_vector"  # by words only: the model failed (reindex adds the vector)
    REMOVED = "removed"  # the note is deleted or gone: no document holds it
    STALE = "stale"  # the index already holds this state or a newer one
    OVERTAKEN = "overtaken"  # a newer state was indexed while this one was being written


@dataclass(frozen=True, slots=True)
class IndexTarget:
    index: str
    model_id: str
    dimensions: int


class NoteIndexer:
    def __init__(
        self, pointers: IndexPointers, documents: NoteDocuments, shape: DocumentShape, target: IndexTarget,
        embedder: Embedder | None,
    ) -> None:  # fmt: skip
        self._pointers = pointers
        self._documents = documents
        self._shape = shape
        self._target = target
        self._embedder = embedder
        self._ready = False

    @property
    def target(self) -> IndexTarget:
        return self._target

    def ensure_ready(self) -> None:
        """Create the model's index on first use (once per process). Raises SearchUnavailableError."""
        if not self._ready:
            if self._documents.ensure_index(self._target.index, self._target.dimensions):
                logger.info("created search index %s for %s", self._target.index, self._target.model_id)
            self._ready = True

    def upsert(self, note: Note) -> Indexed:
        """Bring the index to `note` (its state in the table at some moment), unless it is already past it.

        Raises:
            SearchUnavailableError: the index could not be written; nothing is acknowledged, the event comes again.
            UnavailableError: the table could not be read or written; likewise.
        """
        self.ensure_ready()
        index = self._target.index
        stored = self._pointers.get_pointer(note.workspace_id, note.id, index)
        if note.is_deleted:
            return self._remove(note.workspace_id, note.id, note.version, stored)
        best = IndexPointer(note.workspace_id, note.id, index, note.version, "", self._embedder is not None)
        if stored is not None and stored.rank >= best.rank:
            return Indexed.STALE  # checked before embedding: a replayed batch costs no model calls
        vector = self._vector(note)
        proposed = IndexPointer(note.workspace_id, note.id, index, note.version, "", vector is not None)
        if stored is not None and stored.rank >= proposed.rank:
            return Indexed.STALE
        doc_id = self._documents.add(index, self._shape(note, vector, self._target.model_id))
        if not self._pointers.put_pointer(
            IndexPointer(note.workspace_id, note.id, index, note.version, doc_id, vector is not None)
        ):
            self._documents.delete(index, doc_id)
            return Indexed.OVERTAKEN
        self._drop(stored)
        return Indexed.INDEXED if vector is not None else Indexed.WITHOUT_VECTOR

    def remove(self, workspace_id: str, note_id: str) -> Indexed:
        """The note left the table: its document goes, and no later-arriving event of it may index it again."""
        self.ensure_ready()
        stored = self._pointers.get_pointer(workspace_id, note_id, self._target.index)
        return self._remove(workspace_id, note_id, REMOVED_VERSION, stored)

    def _remove(self, workspace_id: str, note_id: str, version: int, stored: IndexPointer | None) -> Indexed:
        tombstone = IndexPointer(workspace_id, note_id, self._target.index, version, None, False)
        if stored is not None and stored.rank >= tombstone.rank:
            return Indexed.STALE
        if not self._pointers.put_pointer(tombstone):
            return Indexed.OVERTAKEN
        self._drop(stored)
        return Indexed.REMOVED

    def _drop(self, stored: IndexPointer | None) -> None:
        if stored is None or not stored.doc_id:
            return
        try:
            self._documents.delete(self._target.index, stored.doc_id)
        except SearchUnavailableError as exc:  # the pointer moved on: search ignores the old document's note twice
            logger.warning("could not delete replaced document %s (%s); reindex sweeps it", stored.doc_id, exc)

    def _vector(self, note: Note) -> Vector | None:
        if self._embedder is None:
            return None
        try:
            return self._embedder.embed([embedding_text(note.title, note.body)], timeout=EMBED_TIMEOUT_SECONDS)[0]
        except EmbeddingUnavailableError as exc:
            logger.warning("indexing note %s without its vector (%s)", note.id, exc)
            return None


@dataclass(frozen=True, slots=True)
class StackReindexReport:
    index: str
    model_id: str
    notes: int  # notes examined (deleted ones included)
    written: int  # documents added (new, changed, or given their vector)
    removed: int  # documents of deleted notes taken out
    unchanged: int  # already indexed at their current state
    orphans: int  # documents no pointer claims, deleted
    projects_not_swept: int  # projects with SWEEP_LIMIT documents or more: orphans beyond may remain
    without_vector: int = 0  # of `written`, those the model failed to embed (reembed_missing gives them theirs)
    moved_from: tuple[str, ...] = ()  # indexes the search alias left for `index`
    kept: tuple[str, ...] = ()  # of those, the ones that could not be deleted (delete them by hand)


def reindex_stack(
    store: Store, pointers: IndexPointers, documents: NoteDocuments, indexer: NoteIndexer, *, horizon: str,
    progress: Callable[[int], None] | None = None,
) -> StackReindexReport:  # fmt: skip
    """Bring the deployed index to the table: every note of every project through the same guarded `upsert` as the
    stream (safe beside it), then delete documents no pointer claims. Reads by Query only: workspaces, their
    projects, each project's feed (GSI1, deleted notes included) up to `horizon`.

    Raises:
        SearchUnavailableError: the index failed; what was done stays done, run it again.
    """
    indexer.ensure_ready()
    index = indexer.target.index
    counts = {outcome: 0 for outcome in Indexed}
    notes = orphans = not_swept = 0
    for workspace in store.list_workspaces():
        for project in store.list_projects(workspace.id):
            claimed: dict[str, str | None] = {}
            position = None
            while True:
                scan = store.changes_after(
                    workspace.id, project.id, position, horizon=horizon, types=[], statuses=[], limit=REINDEX_PAGE
                )
                for note in scan.notes:
                    counts[indexer.upsert(note)] += 1
                    pointer = pointers.get_pointer(workspace.id, note.id, index)
                    claimed[note.id] = pointer.doc_id if pointer is not None else None
                notes += len(scan.notes)
                if progress is not None and scan.notes:
                    progress(notes)
                if scan.position is None or not scan.more:
                    break
                position = scan.position
            listed = documents.documents_of(index, workspace.id, project.id, SWEEP_LIMIT)
            if len(listed) >= SWEEP_LIMIT:  # a search answers 10,000 hits at most: others may lie beyond
                not_swept += 1
            for doc_id, note_id in listed:
                if note_id in claimed and claimed[note_id] != doc_id:
                    documents.delete(index, doc_id)
                    orphans += 1
    moved_from, kept = _move_alias(documents, index)
    return StackReindexReport(
        index, indexer.target.model_id, notes,
        written=counts[Indexed.INDEXED] + counts[Indexed.WITHOUT_VECTOR],
        removed=counts[Indexed.REMOVED], unchanged=counts[Indexed.STALE] + counts[Indexed.OVERTAKEN],
        orphans=orphans, projects_not_swept=not_swept, without_vector=counts[Indexed.WITHOUT_VECTOR],
        moved_from=moved_from, kept=kept,
    )  # fmt: skip


def _move_alias(documents: NoteDocuments, index: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Once `index` is full, readers move onto it in one request, then the indexes they left are deleted: (left,
    not deletable). A failed delete is reported, not raised: the move it follows is done and stays."""
    previous = tuple(name for name in documents.alias_targets() if name != index)
    if not previous:
        return (), ()
    documents.point_alias(index, previous=previous)
    kept: list[str] = []
    for name in previous:
        try:
            documents.drop_index(name)
        except SearchUnavailableError as exc:
            logger.warning("search alias moved to %s, but %s could not be deleted (%s)", index, name, exc)
            kept.append(name)
    return previous, tuple(kept)


@dataclass(frozen=True, slots=True)
class ReembedReport:
    index: str
    model_id: str
    found: int  # notes with a document that has no vector
    embedded: int  # indexed again, with their vector
    removed: int  # deleted or gone from the table: their document taken out
    unchanged: int  # the model failed again, or a newer document already holds the note: run it again later


def reembed_missing(
    store: Store, documents: NoteDocuments, indexer: NoteIndexer, *, progress: Callable[[int], None] | None = None
) -> ReembedReport:
    """Give their vector to the notes indexed without one (the model was failing): the documents that have none,
    page by page, each note read from the table and indexed again through the guarded `upsert`, safe beside the
    stream. Notes are found through the index, not by walking every project as `reindex_stack` does.

    Raises:
        SearchUnavailableError: the index failed; what was done stays done, run it again.
    """
    indexer.ensure_ready()
    index = indexer.target.index
    counts = {outcome: 0 for outcome in Indexed}
    found = 0
    after: tuple[str, str] | None = None
    while True:
        listed = documents.missing_vectors(index, REINDEX_PAGE, after)
        page = list(dict.fromkeys(listed))  # a note once, however many documents of it lack a vector
        by_workspace: dict[str, list[str]] = {}
        for workspace_id, note_id in page:
            by_workspace.setdefault(workspace_id, []).append(note_id)
        for workspace_id, note_ids in by_workspace.items():
            notes = store.get_notes(workspace_id, note_ids)
            for note_id in note_ids:
                note = notes.get(note_id)
                outcome = indexer.upsert(note) if note is not None else indexer.remove(workspace_id, note_id)
                counts[outcome] += 1
        found += len(page)
        if progress is not None and page:
            progress(found)
        if len(listed) < REINDEX_PAGE:
            break
        after = listed[-1]
    return ReembedReport(
        index, indexer.target.model_id, found, embedded=counts[Indexed.INDEXED], removed=counts[Indexed.REMOVED],
        unchanged=counts[Indexed.STALE] + counts[Indexed.OVERTAKEN] + counts[Indexed.WITHOUT_VECTOR],
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class UpgradeReport:
    projects: int  # projects moved onto the lean context index
    notes: int  # note items rewritten to earn its keys


def upgrade_context_index(
    store: Store, upgrade: ContextIndexUpgrade, *, horizon: str, progress: Callable[[int], None] | None = None
) -> UpgradeReport:
    """Rewrite the notes of every project made before the store's lean context index (as they are, conditioned on
    their version), then mark the project: get_context then reads it in one lean Query per section. Safe to run
    beside live traffic and to run again (marked projects are skipped)."""
    projects = rewritten = 0
    for workspace in store.list_workspaces():
        for project in store.list_projects(workspace.id):
            if project.context_index >= CONTEXT_INDEX_LAYOUT:
                continue
            position = None
            while True:
                scan = store.changes_after(
                    workspace.id, project.id, position, horizon=horizon, types=[], statuses=[], limit=REINDEX_PAGE
                )
                rewritten += upgrade.refresh_note_items(workspace.id, scan.notes)
                if progress is not None and scan.notes:
                    progress(rewritten)
                if scan.position is None or not scan.more:
                    break
                position = scan.position
            upgrade.mark_context_indexed(workspace.id, project.id, CONTEXT_INDEX_LAYOUT)
            projects += 1
    return UpgradeReport(projects, rewritten)
