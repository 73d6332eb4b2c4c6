"""Domain values: workspaces, projects, notes, revisions, API keys, principals. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class NoteType(StrEnum):
    DECISION = "decision"
    CONSTRAINT = "constraint"
    ARCHITECTURE = "architecture"
    FACT = "fact"
    INCIDENT = "incident"
    FAILED_APPROACH = "failed_approach"
    PROCEDURE = "procedure"
    STATUS = "status"
    TASK = "task"
    HANDOFF = "handoff"
    PREFERENCE = "preference"
    REFERENCE = "reference"
    NOTE = "note"


class NoteStatus(StrEnum):
    CURRENT = "current"
    SUPERSEDED = "superseded"
    HISTORICAL = "historical"
    DISPUTED = "disputed"
    PENDING = "pending"


# The layout of a store's lean context index that new projects start in (Project.context_index).
CONTEXT_INDEX_LAYOUT = 5
ATTENTION_LAYOUT = 2  # the first layout with the notes needing attention apart
TYPE_PARTITION_LAYOUT = 4  # the first layout with a section's notes apart by type
REF_LAYOUT = 5  # the first layout with every note findable by its ref (domain/refs.py)


class Plan(StrEnum):
    FREE = "free"
    TEAM = "team"
    ENTERPRISE = "enterprise"


@dataclass(frozen=True, slots=True)
class Workspace:
    id: str
    name: str
    created_at: str
    plan: Plan = Plan.FREE
    revision_cap: int = 50
    suspended_at: str | None = None  # set by the operator: every call of the workspace is refused, nothing deleted


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    workspace_id: str
    slug: str
    created_at: str
    updated_at: str
    summary: str = ""
    instructions: str = ""
    default_max_tokens: int | None = None
    # Which layout of the store's lean context index holds every note of the project (DynamoDB: projects made
    # before a layout existed hold notes without its keys until `notewell reindex --stack` upgrades them; other
    # stores: always the current one). 0: none; 1: by section; 2 (ATTENTION_LAYOUT): by section, with the notes
    # needing attention apart; 3: and every anchored note findable by its paths (DynamoDB's anchor pointers, which
    # notes anchored before them gain when reindexed); 4 (TYPE_PARTITION_LAYOUT): a section's notes kept apart by
    # type, so each type's newest are read whatever the other types hold; 5 (REF_LAYOUT, CONTEXT_INDEX_LAYOUT): every
    # note findable by its ref (DynamoDB's GSI5).
    context_index: int = CONTEXT_INDEX_LAYOUT
    # The project's branch record (domain/branches.py): notes written on a merged branch count as the default
    # branch's, so a merge is one write here, never a rewrite of the branch's notes.
    default_branch: str = "main"
    merged_branches: tuple[str, ...] = ()

    @property
    def named_by_ref(self) -> bool:
        """Whether answers may name this project's notes by ref: only once its store finds them by ref (REF_LAYOUT;
        before `notewell reindex --stack`, a DynamoDB project's older notes have no ref key)."""
        return self.context_index >= REF_LAYOUT


@dataclass(frozen=True, slots=True)
class Link:
    target: str
    relation: str = "related"


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines `start` to `end` of a file, counted from 1, both included."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Anchor:
    """The code a note is about, as it was when the note was anchored: where it is and a hash of its text, never
    the text itself (rules.check_anchor has the limits; freshness.text_hash the hash).

    `lines`: the anchored lines (for a symbol, its block when anchored); None with no symbol: the whole file.
    `content_hash`: SHA-256 of the anchored text (the lines, else the whole file); `file_hash`: of the whole file,
    which is all a client that sends only `{path: hash}` pairs can be compared against.
    """

    repo: str
    path: str
    commit: str
    content_hash: str
    file_hash: str
    symbol: str | None = None
    lines: LineRange | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        """A note holds one anchor per key: anchoring the same file (or the same symbol in it) again replaces it."""
        return (self.repo, self.path, self.symbol)


@dataclass(frozen=True, slots=True)
class Note:
    id: str
    workspace_id: str
    project_id: str
    title: str
    body: str
    version: int
    created_at: str
    updated_at: str
    author: str
    write_id: str
    type: NoteType = NoteType.NOTE
    status: NoteStatus = NoteStatus.CURRENT
    tags: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    importance: int = 3
    canonical: bool = False
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    deleted_at: str | None = None
    anchors: tuple[Anchor, ...] = ()
    branch: str | None = None  # the git branch it was written on; None: the default branch
    # Set on a lean read (a context candidate): `body` then holds only the start of the body, this its whole size.
    full_size: int | None = None

    @property
    def body_size(self) -> int:
        return self.full_size if self.full_size is not None else len(self.body)

    @property
    def body_cut(self) -> bool:
        """Whether `body` is only the start of the note's body (a lean read)."""
        return self.full_size is not None and self.full_size > len(self.body)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None


@dataclass(frozen=True, slots=True)
class NoteWrite:
    """One note's part of an atomic commit.

    `expected_version` is None for an insert (the id must be new); otherwise the stored note must still be
    at that version. `previous`, when given, is kept as a revision.
    """

    note: Note
    expected_version: int | None
    previous: Note | None = None


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """The first outcome of a call made with an idempotency key; replays return `result`."""

    workspace_id: str
    key: str
    request_hash: str
    result: dict[str, str | int]
    recorded_at: str
    expires_at: str  # a record whose expiry is at or before a new call's `recorded_at` counts as absent


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    workspace_id: str
    name: str
    secret_hash: str
    created_at: str
    project_id: str | None = None
    read_only: bool = False
    revoked_at: str | None = None
    hint: str = ""  # last characters of the secret, so a person can tell keys apart


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the workspace is always taken from here, never from arguments."""

    workspace_id: str
    actor: str
    project_id: str | None = None
    read_only: bool = False
    scopes: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class SearchHit:
    note: Note
    score: float
    snippet: str


@dataclass(frozen=True, slots=True)
class SearchFilters:
    types: frozenset[NoteType] = frozenset()
    statuses: frozenset[NoteStatus] = frozenset()
    tags: frozenset[str] = frozenset()

    def admits(self, note: Note) -> bool:
        if note.is_deleted:
            return False
        if self.types and note.type not in self.types:
            return False
        if self.statuses and note.status not in self.statuses:
            return False
        return not (self.tags and not self.tags.intersection(note.tags))


@dataclass(frozen=True, slots=True)
class FeedPosition:
    """A point in a project's change feed: changes are ordered by (updated_at, note_id)."""

    updated_at: str
    note_id: str


@dataclass(frozen=True, slots=True)
class SequencedChange:
    """A note's current state at its place in the project's commit sequence (its newest change)."""

    seq: int
    note: Note


@dataclass(frozen=True, slots=True)
class SequencedScan:
    """One bounded read of a store's commit-sequenced change feed.

    `changes`: matching notes after the start, in commit order. `position`: the last sequence number examined,
    matching or not (the start when nothing was). `more`: more changes may follow `position`. `settling`: the read
    stopped at a change not fully visible yet; call again in a moment.
    """

    changes: list[SequencedChange]
    position: int
    more: bool
    settling: bool = False


@dataclass(frozen=True, slots=True)
class ChangeScan:
    """One bounded read of the change feed.

    `notes`: matching notes (deleted ones included), oldest first, all after the start position and at or before
    the horizon. `position`: where the next read should continue (the last note examined, matching or not; None
    when nothing was examined). `more`: more notes up to the horizon may follow `position`. `settling`: a note newer
    than the horizon exists after `position`.
    """

    notes: list[Note]
    position: FeedPosition | None
    more: bool
    settling: bool
