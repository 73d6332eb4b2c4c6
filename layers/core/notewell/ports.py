"""Ports: what the services need from the outside world. Adapters implement them, one per technology.

Every store method takes the workspace explicitly: tenancy is part of each signature, never ambient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from notewell.domain.freshness import RecordedVerdict
    from notewell.domain.model import (
        Anchor,
        ApiKey,
        ChangeScan,
        FeedPosition,
        IdempotencyRecord,
        Note,
        NoteStatus,
        NoteType,
        NoteWrite,
        Plan,
        Project,
        SearchFilters,
        SearchHit,
        SequencedScan,
        Workspace,
    )
    from notewell.domain.packing import Section
    from notewell.domain.portability import ImportRecord


Vector: TypeAlias = "tuple[float, ...]"


class IdempotencyKeyTakenError(Exception):
    """A commit carried an idempotency key that is already recorded; `record` is the stored one."""

    def __init__(self, record: IdempotencyRecord) -> None:
        super().__init__(f"idempotency key {record.key!r} already used")
        self.record = record


@dataclass(frozen=True, slots=True)
class TagRenameProgress:
    """Where an unfinished rename_tag stopped: the next call resumes after `position`, up to `horizon` (the time the
    rename began; notes renamed since sit after it, so they are not examined again)."""

    horizon: str
    position: FeedPosition


class SearchUnavailableError(Exception):
    """The search backend failed; callers fall back to a simpler mode."""


class EmbeddingUnavailableError(SearchUnavailableError):
    """The embedder failed, is not installed, or ran out of its time; the caller searches by keywords instead."""


class JudgeUnavailableError(Exception):
    """The judge did not answer in time or could not be reached: remember falls back to the agent's review."""


@dataclass(frozen=True, slots=True)
class Ruling:
    """A judge's answer for one pair of notes: `contradicts`, `restates` (the new one says the old one's claim,
    perhaps with more) or `independent`; for a contradiction, the slot and its old and new value."""

    verdict: str
    slot: str = ""
    old: str = ""
    new: str = ""


class Judge(Protocol):
    """A small text model asked one short structured question about two notes no detector could settle."""

    @property
    def model_id(self) -> str: ...

    def rule(self, old: str, new: str, *, timeout: float) -> Ruling:
        """How `new` stands to `old`.

        Raises:
            JudgeUnavailableError: no answer within `timeout` seconds, or none that could be read.
        """
        ...


class Embedder(Protocol):
    """Turns texts into vectors of one model: unit length, `dimensions` floats each, comparable by dot product.

    Vectors of different models are not interchangeable: every stored vector carries `model_id`.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        """One vector per text, in order, computed in batches. `timeout` (seconds) bounds the whole call.

        Raises:
            EmbeddingUnavailableError: the model failed or the call ran past `timeout`; nothing is returned.
        """
        ...


class CallMetrics(Protocol):
    """Operational metrics of each tool call (calls, error answers, internal faults, duration), for dashboards and
    alarms; the meter (services/metering.py) is what bills."""

    def record_call(self, tool: str, outcome: str, duration_ms: float) -> None:
        """One call of `tool` that ended with `outcome` ("ok", an error code, or "internal")."""
        ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...


class IdSource(Protocol):
    def note_id(self) -> str:
        """A new note id: 'n_' + 26 Crockford base32 characters, sortable by creation time."""
        ...

    def new_id(self, prefix: str) -> str:
        """A new opaque id for other records, e.g. 'ws_…', 'prj_…', 'key_…'."""
        ...

    def secret(self) -> str:
        """A new high-entropy secret (URL-safe text)."""
        ...


class WorkspaceStore(Protocol):
    def create_workspace(self, workspace: Workspace) -> None: ...

    def get_workspace(self, workspace_id: str) -> Workspace | None: ...

    def set_plan(self, workspace_id: str, plan: Plan, revision_cap: int) -> Workspace | None:
        """Change the workspace's plan and per-note revision cap; None when there is no such workspace."""
        ...

    def set_suspended(self, workspace_id: str, suspended_at: str | None) -> Workspace | None:
        """Suspend the workspace (at `suspended_at`) or, with None, resume it; None when there is no such
        workspace."""
        ...

    def add_usage(self, workspace_id: str, period: str, deltas: Mapping[str, int]) -> None:
        """Add each delta to the named counter of `period` (a day 'YYYY-MM-DD', or 'total'), atomically per counter
        (an increment, never read-then-write). Unknown counters start at 0."""
        ...

    def usage(self, workspace_id: str, periods: Sequence[str]) -> dict[str, dict[str, int]]:
        """The counters of each requested period that has any: {period: {counter: value}}."""
        ...

    def list_workspaces(self) -> list[Workspace]: ...


class ProjectStore(Protocol):
    def get_project(self, workspace_id: str, slug: str) -> Project | None: ...

    def get_project_by_id(self, workspace_id: str, project_id: str) -> Project | None: ...

    def create_project(self, project: Project) -> Project:
        """Insert `project` unless its slug is taken in the workspace; return whichever project holds the slug."""
        ...

    def save_project(self, project: Project, *, expected: Project | None = None) -> bool:
        """Overwrite the project's editable fields (summary, instructions, default_max_tokens, updated_at), only if
        the stored project still equals `expected` (the state the caller read and merged into), when given.

        Returns whether it was written: False when the project is gone or changed since `expected` was read.
        """
        ...

    def get_tag_rename(self, workspace_id: str, project_id: str, old: str, new: str) -> TagRenameProgress | None:
        """The saved progress of an unfinished rename of tag `old` to `new` in the project, if any."""
        ...

    def save_tag_rename(
        self, workspace_id: str, project_id: str, old: str, new: str, progress: TagRenameProgress | None
    ) -> None:
        """Record how far the rename got (None: forget it, the rename is done). A hint, never a condition: a lost or
        stale save only makes the next call re-examine notes, which it skips when they no longer carry `old`."""
        ...

    def list_projects(self, workspace_id: str) -> list[Project]: ...

    def rename_project(self, workspace_id: str, project_id: str, new_slug: str, updated_at: str) -> Project:
        """Give the project a new slug, atomically: the old slug stops resolving in the same write. Notes, revisions,
        keys and the feed refer to the immutable project id, so they follow without being touched. Renaming to the
        slug the project already has returns it unchanged (a retried rename succeeds).

        Raises:
            AlreadyExistsError: another project of the workspace holds `new_slug` (nothing written).
            NotFoundError: no such project.
        """
        ...


class NoteStore(Protocol):
    def get_note(self, workspace_id: str, note_id: str) -> Note | None:
        """Strongly consistent read of the note's current state (deleted notes included)."""
        ...

    def get_notes(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, Note]:
        """The notes found among `note_ids`, by id; unknown ids are simply absent."""
        ...

    def ids_with_ref(self, workspace_id: str, ref: str, *, limit: int) -> list[str]:
        """Ids of the workspace's notes whose ref (domain.refs.note_ref) is `ref`, deleted ones included, at most
        `limit`, in id order. May lag a write on an eventually consistent index."""
        ...

    def commit(
        self,
        workspace_id: str,
        writes: Sequence[NoteWrite],
        *,
        revision_cap: int,
        idempotency: IdempotencyRecord | None = None,
    ) -> None:
        """Apply every write, keep each `previous` as a revision (at most `revision_cap` per note, oldest
        pruned) and record `idempotency`, all or nothing.

        Raises:
            VersionConflictError: a note is not at its `expected_version` (or an inserted id exists).
            IdempotencyKeyTakenError: the idempotency key is already recorded (nothing written).
            TooLargeError: the write exceeds a storage limit.
            UnavailableError: the store is busy; nothing was written.
            OutcomeUnknownError: the write may or may not have been applied (reply lost, check failed).
        """
        ...

    def list_revisions(
        self, workspace_id: str, note_id: str, *, limit: int, before_version: int | None = None
    ) -> list[Note]:
        """Stored previous states of a note, newest first, with versions below `before_version`."""
        ...

    def get_revision(self, workspace_id: str, note_id: str, version: int) -> Note | None: ...

    def get_idempotency(self, workspace_id: str, key: str) -> IdempotencyRecord | None: ...

    def project_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        """Up to `limit` notes of a project (deleted included), most recently updated first."""
        ...

    def notes_by_type(
        self,
        workspace_id: str,
        project_id: str,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        *,
        limit: int,
    ) -> list[Note]:
        """Up to `limit` live (not deleted) notes whose type is in `types` and status in `statuses`, most recently
        updated first (ties: higher id first). Served by an index per (type, status): cost is bounded by the number of
        pairs and `limit`, never by the project's size."""
        ...

    def changes_after(
        self,
        workspace_id: str,
        project_id: str,
        after: FeedPosition | None,
        *,
        horizon: str,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
    ) -> ChangeScan:
        """Notes of the project (deleted ones included) whose (updated_at, id) is strictly after `after` (from the
        start when None) and whose updated_at is at or before `horizon`, oldest first, at most `limit` of them,
        keeping only the given types and statuses (empty: all). Served by an index ordered by (updated_at, id):
        bounded work per call, never a scan of the project.
        """
        ...

    def import_notes(self, workspace_id: str, items: Sequence[tuple[Note, Sequence[Note]]]) -> int:
        """Write imported notes exactly as given (ids, versions, timestamps, lifecycle) with their revisions.

        A note whose id already exists in the workspace is skipped with its revisions, so re-running an import that
        stopped midway completes it without duplicates. Returns how many notes were written. SQLite writes the whole
        batch in one transaction; DynamoDB in batches (callers validate everything before calling).
        """
        ...

    def context_notes(
        self,
        workspace_id: str,
        project_id: str,
        *,
        per_section: int,
        recent: int,
        attention: int,
        by_section: bool = False,
    ) -> ContextNotes:
        """Up to `attention` of the newest notes needing attention, and (packing.with_attention) for each type of
        each section up to `per_section` of its newest candidates, and up to `recent` of the project's newest live
        notes: one indexed read per type, one for the rest, one for attention. Notes may come lean (only the start
        of the body, rules.lean_text). `by_section`: the project's notes may still be kept by section (a layout
        before model.TYPE_PARTITION_LAYOUT): read those too."""
        ...

    def conflicted_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        """Up to `limit` live notes that need attention, most recently updated first: status `disputed`, or an
        unfinished supersession (`superseded_by` is not empty but the status is not `superseded`). Indexed, bounded."""
        ...

    def anchored_notes(
        self, workspace_id: str, project_id: str, paths: Sequence[str], *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """Up to `limit` notes of the project, not deleted and in `statuses`, anchored to one of `paths`
        (freshness.check_files'): to the file itself or, for a directory, to a file under it; in
        freshness.anchored_first's order. Indexed: the work is bounded by the paths and ANCHOR_LOOKUP anchors at
        most, never by the project's size."""
        ...

    def note_anchors(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, tuple[Anchor, ...]]:
        """The anchors of each note of `note_ids` that exists (empty for one without any): what a lean read of the
        notes (ContextNotes) may leave out. Unknown ids are absent."""
        ...

    def anchored_in_project(
        self, workspace_id: str, project_id: str, *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """Up to `limit` notes of the project, not deleted and in `statuses`, that have anchors, most recently updated
        first, for listing: they may come lean (no body, `full_size` set, no anchors). Which ones, when the project
        holds more, is the store's choice. Indexed: the work grows with `limit` (and, on DynamoDB, with the anchor
        pointers of deleted notes passed over), never with the project's other notes."""
        ...


@dataclass(frozen=True, slots=True)
class ContextNotes:
    """get_context's default candidates, read lean (ports: bodies may be only their start, `Note.full_size` set).

    `attention`: the newest notes needing attention (packing.needs_attention), whole enough to list as conflicts
    (`superseded_by` set). `sections` and `recent`: as packing.with_attention joins them, per typed section its
    newest settled live notes and for recent the project's, with `attention` where each belongs."""

    sections: Mapping[Section, list[Note]]
    recent: list[Note]
    attention: list[Note]


@runtime_checkable
class SequencedFeed(Protocol):
    """A change feed ordered by a per-project commit sequence: every commit that changes a note gives it the
    project's next sequence number in the same transaction, so numbers are handed out in commit order and a reader
    that has seen up to n has seen every change committed before n's. Changes are visible as soon as the write is
    acknowledged: no horizon. Stores that provide it serve get_changes_since with it."""

    def feed_after(
        self,
        workspace_id: str,
        project_id: str,
        after: int,
        *,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
    ) -> SequencedScan | None:
        """Notes of the project (deleted included) whose newest change is numbered above `after`, in that order, at
        most `limit`, keeping only the given types and statuses (empty: all). Indexed: bounded work per call.
        None when the project's sequence does not hold all its notes (written before the store had it): the caller
        serves `changes_after` instead."""
        ...

    def feed_start(self, workspace_id: str, project_id: str, after: FeedPosition) -> int:
        """A sequence number such that every note whose (updated_at, id) is after `after` is numbered above it: maps
        a `since` time, or the position of a cursor made before the sequence existed, onto the sequence. It may be
        lower than the tightest such number; the caller skips notes at or before `after` (the cursor's floor)."""
        ...


@runtime_checkable
class RecentWrites(Protocol):
    def recently_written(self, workspace_id: str, project_id: str, since: str, limit: int) -> list[Note]:
        """The project's notes changed at or after `since` (ISO-8601), newest first, at most `limit`, read with
        strong consistency: what a search index fed by a stream may not hold yet."""
        ...


class SearchIndex(Protocol):
    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        """Ranked full-text matches, best first.

        Raises:
            SearchUnavailableError: the index cannot answer; the caller falls back.
        """
        ...


@runtime_checkable
class RankedIds(Protocol):
    def ranked_ids(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        """`search`'s ranking as (note id, score) pairs, best first, without reading the notes: a hybrid search then
        reads the notes of both legs at once, and only those it keeps.

        Raises:
            SearchUnavailableError: the index cannot answer; the caller falls back.
        """
        ...


@runtime_checkable
class TextLookup(Protocol):
    def notes_starting_like(self, workspace_id: str, project_id: str, text: str, limit: int) -> list[Note]:
        """Live notes of the project whose body starts as `text` does (its first BODY_PREFIX_CHARS characters), by
        an index: remember finds a repeat word for word without ranking anything."""
        ...


BODY_PREFIX_CHARS = 64
# The most anchors an `anchored_notes` call weighs when a store cannot rank them in its index (DynamoDB), each path
# taking an equal share: a directory holding more anchored notes than its share is weighed by its first ones, in path
# order (a file rarely has that many).
ANCHOR_LOOKUP = 200


@runtime_checkable
class CandidateIndex(Protocol):
    def candidates(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int, *, min_terms: int = 1
    ) -> list[SearchHit]:
        """Notes worth comparing with new content, best first, ranked by the index's own statistics: a cheaper
        ranking than `search`'s, for remember's candidates and a new note's neighbours. Hits carry no snippet
        (the notes are compared, never shown). The index may rank by the query's rarest words only, but by at
        least `min_terms` of them (a wider net, for callers with no vector leg to catch what words miss).

        Raises:
            SearchUnavailableError: the index cannot answer; the caller falls back.
        """
        ...


@dataclass(frozen=True, slots=True)
class NoteVector:
    """A note's meaning as one model saw it, at one version of the note."""

    note_id: str
    project_id: str
    version: int
    model_id: str
    vector: Vector


class VectorSearch(Protocol):
    """Nearest-neighbour search over one project's note vectors, for one model at a time."""

    def nearest(
        self, workspace_id: str, project_id: str, model_id: str, query: Vector, limit: int
    ) -> list[tuple[str, float]]:
        """Up to `limit` (note id, cosine) pairs of the project's vectors of `model_id`, most similar first. The
        notes may since have been deleted or changed: callers hydrate and filter.

        Raises:
            SearchUnavailableError: the index cannot answer.
        """
        ...

    def vectors_of(self, workspace_id: str, note_ids: Sequence[str], model_id: str) -> dict[str, NoteVector]:
        """The stored vectors of `model_id` among `note_ids`; notes without one are absent."""
        ...


@runtime_checkable
class VectorIndex(VectorSearch, Protocol):
    """Vector search whose vectors the application writes itself, after each commit (the embedded store). A search
    index fed by a change stream (OpenSearch on AWS) is a VectorSearch only: its indexer writes the vectors."""

    def save_vectors(self, workspace_id: str, vectors: Sequence[NoteVector]) -> None:
        """Store each vector as its note's (one per note and model), unless a newer version's is already stored."""
        ...

    def notes_without_vectors(self, model_id: str, *, after: str, limit: int) -> list[Note]:
        """Up to `limit` live notes of any workspace, in id order after `after`, with no vector of `model_id` at
        their current version: what `notewell reindex` embeds. `after` is "workspace/note id" ("" from the start)."""
        ...

    def count_without_vectors(self, model_id: str) -> int:
        """How many live notes `notes_without_vectors` would return in all."""
        ...

    def drop_other_models(self, model_id: str) -> int:
        """Delete every stored vector of another model (after a model change); returns how many."""
        ...


@runtime_checkable
class ContextIndexUpgrade(Protocol):
    """A store whose lean context index arrived after projects had notes (DynamoDB's GSI4): old notes are rewritten
    to earn its keys, then the project is marked as served by it."""

    def refresh_note_items(self, workspace_id: str, notes: Sequence[Note]) -> int:
        """Rewrite each note as it is (same version, only derived attributes added); a note changed since it was
        read is skipped (its newer write has them). Returns how many were rewritten."""
        ...

    def mark_context_indexed(self, workspace_id: str, project_id: str, layout: int) -> None:
        """Record that every note of the project is in the context index's `layout` (model.CONTEXT_INDEX_LAYOUT)."""
        ...


@dataclass(frozen=True, slots=True)
class IndexPointer:
    """Which search document holds a note in one index, and at which version: the guard that keeps a stream-fed
    index from going back in time (a search collection that picks its own document ids cannot guard by id).

    `doc_id` None: the note has no document there (deleted). `vectored`: the document carries the note's vector."""

    workspace_id: str
    note_id: str
    index: str
    version: int
    doc_id: str | None
    vectored: bool

    @property
    def rank(self) -> int:
        """Orders the states of one note: a later version, else the same version with its vector, is ahead."""
        return self.version * 2 + (1 if self.vectored or self.doc_id is None else 0)


REMOVED_VERSION = 2**52  # a note removed from the table: no version of it may be indexed again


@runtime_checkable
class IndexPointers(Protocol):
    def get_pointer(self, workspace_id: str, note_id: str, index: str) -> IndexPointer | None:
        """Strongly consistent read of the note's pointer for `index`."""
        ...

    def put_pointer(self, pointer: IndexPointer) -> bool:
        """Store `pointer` only if no pointer of a higher or equal rank is stored; False when one is (a newer state
        won meanwhile), and nothing is written."""
        ...


class KeyStore(Protocol):
    def put_key(self, key: ApiKey) -> None: ...

    def find_key(self, secret_hash: str) -> ApiKey | None: ...

    def list_keys(self, workspace_id: str) -> list[ApiKey]: ...

    def revoke_key(self, workspace_id: str, key_id: str, revoked_at: str) -> ApiKey | None:
        """Mark the key revoked (idempotent); None when the workspace has no such key."""
        ...


class ExportCodec(Protocol):
    """Notewell's JSON Lines export format (README "Export format"): one line of text per record, no newline.

    Encoding is deterministic (a re-export of an imported export is byte-identical but for `exportedAt`).
    """

    def encode_header(self, exported_at: str) -> str: ...

    def encode_project(self, project: Project) -> str: ...

    def encode_note(self, note: Note) -> str: ...

    def encode_revision(self, revision: Note) -> str: ...

    def decode(self, line: str) -> ImportRecord:
        """One non-blank line of a Notewell export or of a memory.jsonl file, checked on its own.

        Raises:
            InvalidArgumentError, TooLargeError: what is wrong with the line, in one sentence.
        """
        ...


@dataclass(frozen=True, slots=True)
class AuthRecord:
    """One piece of OAuth state (a client, an authorization request, a code, a grant or one of its tokens), kept by
    (`pk`, `sk`) with a `status` that conditional writes compare. `fields` hold JSON values only."""

    pk: str
    sk: str
    status: str
    fields: Mapping[str, object]
    expires_at: str | None = None  # ISO-8601 UTC; the store may delete it after this (DynamoDB TTL)


ABSENT = "absent"  # a RecordWrite condition: no record at (pk, sk) yet
ANY = "any"  # no condition


@dataclass(frozen=True, slots=True)
class RecordWrite:
    """Put (or, with `delete`, remove) `record`, if the stored record at its key meets `condition`: ABSENT, ANY,
    or a status the stored record must have."""

    record: AuthRecord
    condition: str = ABSENT
    delete: bool = False


@runtime_checkable
class AuthRecords(Protocol):
    """OAuth state in the same store as the notes: reads by key or by partition, and all-or-nothing writes."""

    def get_record(self, pk: str, sk: str) -> AuthRecord | None: ...

    def records_under(self, pk: str) -> list[AuthRecord]:
        """Every record of partition `pk`, ordered by `sk`."""
        ...

    def write_records(self, writes: Sequence[RecordWrite]) -> int | None:
        """Apply every write or none: None when they all applied, else the index of a write whose condition failed
        (nothing was written)."""
        ...


class ClientDocumentError(Exception):
    """A client metadata document could not be fetched as the rules require (the message says why)."""


@dataclass(frozen=True, slots=True)
class ClientDocument:
    body: bytes
    max_age: int | None  # from Cache-Control, when given


class ClientDocuments(Protocol):
    def fetch(self, url: str) -> ClientDocument:
        """GET a client's metadata document: no redirects, a few kilobytes at most, a short timeout, and never an
        address inside a private network.

        Raises:
            ClientDocumentError: any of that went wrong.
        """
        ...


@dataclass(frozen=True, slots=True)
class VerdictWrite:
    """Store `record` as its note's last verdict if the stored one is still `expected`, the one the caller read and
    merged into (None: there was none)."""

    record: RecordedVerdict
    expected: RecordedVerdict | None


class VerdictRecords(Protocol):
    """The last freshness verdict on each anchored note (domain/freshness.py), kept beside the notes as derived
    data, like note vectors and usage counters: never a note version, never in the change feed or a revision."""

    def recorded_verdicts(
        self, workspace_id: str, project_id: str, note_ids: Sequence[str]
    ) -> dict[str, RecordedVerdict]:
        """The stored records of those notes of the project, by note id, whatever version they judged; notes
        without one are absent. Strongly consistent, one read per 100 notes at most."""
        ...

    def save_verdicts(self, workspace_id: str, writes: Sequence[VerdictWrite]) -> int:
        """Store each record whose stored counterpart is still the `expected` one (same version judged and
        `judged_at`); returns how many were stored. A write that lost to another recorder is skipped: derived data,
        the next check records again.

        Raises:
            UnavailableError: the store is busy; some records may be stored, others not.
        """
        ...


class Store(WorkspaceStore, ProjectStore, NoteStore, KeyStore, VerdictRecords, Protocol):
    """Everything one storage technology provides."""
