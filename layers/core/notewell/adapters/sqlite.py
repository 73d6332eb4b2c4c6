"""The local store: one SQLite file (stdlib sqlite3, WAL), with FTS5 for full-text search.

Threads each get their own connection; every write is one `BEGIN IMMEDIATE` transaction, so a conditional
update and the read that decides a conflict see the same state.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import json
import math
import os
import sqlite3
import stat
import threading
import weakref
from array import array
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.config import ConfigError
from notewell.domain import packing, rules
from notewell.domain.errors import AlreadyExistsError, NotFoundError, UnavailableError, VersionConflictError
from notewell.domain.freshness import FileVerdict, Freshness, RecordedVerdict
from notewell.domain.model import (
    Anchor,
    ApiKey,
    ChangeScan,
    FeedPosition,
    IdempotencyRecord,
    Link,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Plan,
    Project,
    SearchFilters,
    SearchHit,
    SequencedChange,
    SequencedScan,
    Workspace,
)
from notewell.domain.refs import REF_CHARS, note_ref
from notewell.ports import (
    ABSENT,
    ANY,
    BODY_PREFIX_CHARS,
    AuthRecord,
    ContextNotes,
    IdempotencyKeyTakenError,
    NoteVector,
    SearchUnavailableError,
    TagRenameProgress,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from notewell.ports import RecordWrite, Vector, VerdictWrite

# 2: notes_by_type, notes_needing_attention (indexes); 3: usage; 4: notes.feed_seq and notes_feed (the commit
# sequence of the change feed); 5: note_vectors; 6: workspaces.suspended_at; 7: notes.anchors and revisions.anchors;
# 8: notes.branch, revisions.branch and the projects' branch record; 9: verdicts (the last freshness verdict on each
# anchored note). Opening an older file adds what it lacks.
SCHEMA_VERSION = 9
BUSY_TIMEOUT_SECONDS = 5.0
# Reads go through a memory map of the file up to this size (address space, not memory: the pages are the OS's file
# cache, shared by every connection). SQLite's own cache (2 MB a connection, emptied whenever another connection
# commits) otherwise copies each page it needs with a read call: ~600 a remember at 10k notes.
MMAP_BYTES = 1 << 30
SNIPPET_CHARS = 200
MAX_QUERY_TERMS = 32
_NO_UPPER_BOUND = 2**63 - 1

# A live note that needs attention: disputed, or superseded by another note without being marked superseded.
# The index's WHERE and the query's must read the same for SQLite to use the partial index.
_NEEDS_ATTENTION = "deleted_at IS NULL AND (status = 'disputed' OR (superseded_by <> '[]' AND status <> 'superseded'))"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        plan TEXT NOT NULL,
        revision_cap INTEGER NOT NULL,
        suspended_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS projects (
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL,
        slug TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        summary TEXT NOT NULL,
        instructions TEXT NOT NULL,
        default_max_tokens INTEGER,
        default_branch TEXT NOT NULL DEFAULT 'main',
        merged_branches TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (workspace_id, id),
        UNIQUE (workspace_id, slug)
    )""",
    # `seq` is the FTS5 content rowid: an INTEGER PRIMARY KEY survives VACUUM, an implicit rowid may not.
    # The columns search filters on come first and the body last, so filtering a match never reads the body.
    """CREATE TABLE IF NOT EXISTS notes (
        seq INTEGER PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        deleted_at TEXT,
        type TEXT NOT NULL,
        status TEXT NOT NULL,
        tags TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        author TEXT NOT NULL,
        write_id TEXT NOT NULL,
        importance INTEGER NOT NULL,
        canonical INTEGER NOT NULL,
        links TEXT NOT NULL,
        supersedes TEXT NOT NULL,
        superseded_by TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        feed_seq INTEGER NOT NULL DEFAULT 0,
        anchors TEXT NOT NULL DEFAULT '[]',
        branch TEXT,
        UNIQUE (workspace_id, id)
    )""",
    """CREATE INDEX IF NOT EXISTS notes_by_project
        ON notes (workspace_id, project_id, updated_at DESC, id DESC)""",
    # Live notes per (type, status), newest first: `notes_by_type` reads at most `limit` entries per pair.
    """CREATE INDEX IF NOT EXISTS notes_by_type
        ON notes (workspace_id, project_id, type, status, updated_at DESC, id DESC) WHERE deleted_at IS NULL""",
    # Live notes by how their body starts (TextLookup): an exact repeat is found without ranking. An index an older
    # Notewell ignores, so the schema version stays.
    f"""CREATE INDEX IF NOT EXISTS notes_by_start
        ON notes (workspace_id, project_id, substr(body, 1, {BODY_PREFIX_CHARS})) WHERE deleted_at IS NULL""",
    # Notes by ref (domain/refs.py, the last characters of the id): a tool given a ref finds its notes in one seek.
    # The id too, so the index covers the lookup (else the planner prefers the key's index and reads every id of
    # the workspace). An index an older Notewell ignores, so the schema version stays.
    f"""CREATE INDEX IF NOT EXISTS notes_by_ref ON notes (workspace_id, substr(id, -{REF_CHARS}), id)""",
    # Only the live notes that need attention (partial): `conflicted_notes` reads `limit` entries, whatever the size.
    f"""CREATE INDEX IF NOT EXISTS notes_needing_attention
        ON notes (workspace_id, project_id, updated_at DESC, id DESC) WHERE {_NEEDS_ATTENTION}""",
    """CREATE TABLE IF NOT EXISTS revisions (
        workspace_id TEXT NOT NULL,
        note_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        project_id TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        author TEXT NOT NULL,
        write_id TEXT NOT NULL,
        type TEXT NOT NULL,
        status TEXT NOT NULL,
        tags TEXT NOT NULL,
        links TEXT NOT NULL,
        importance INTEGER NOT NULL,
        canonical INTEGER NOT NULL,
        supersedes TEXT NOT NULL,
        superseded_by TEXT NOT NULL,
        deleted_at TEXT,
        anchors TEXT NOT NULL DEFAULT '[]',
        branch TEXT,
        PRIMARY KEY (workspace_id, note_id, version)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS idempotency (
        workspace_id TEXT NOT NULL,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        result TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (workspace_id, key)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS api_keys (
        workspace_id TEXT NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        project_id TEXT,
        read_only INTEGER NOT NULL,
        revoked_at TEXT,
        hint TEXT NOT NULL,
        PRIMARY KEY (workspace_id, id)
    )""",
    # Usage counters per workspace and period (a day 'YYYY-MM-DD', or 'total'): one row per counter, incremented.
    """CREATE TABLE IF NOT EXISTS usage (
        workspace_id TEXT NOT NULL,
        period TEXT NOT NULL,
        counter TEXT NOT NULL,
        value INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, period, counter)
    ) WITHOUT ROWID""",
    # Note vectors, one per note and embedding model, with the note version they were computed from. `stamp` grows
    # with every write, so a process holding a project's vectors in memory reads only what changed since.
    """CREATE TABLE IF NOT EXISTS note_vectors (
        workspace_id TEXT NOT NULL,
        note_id TEXT NOT NULL,
        model TEXT NOT NULL,
        project_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        stamp INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (workspace_id, note_id, model)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS note_vectors_by_project ON note_vectors (workspace_id, project_id, model, stamp)""",
    """CREATE INDEX IF NOT EXISTS note_vectors_by_stamp ON note_vectors (stamp)""",
    # Where an unfinished rename_tag stopped (a resume hint; IF NOT EXISTS adds it to older files as they open).
    # OAuth state: clients, authorization requests, codes, grants and their tokens (ports.AuthRecords).
    """CREATE TABLE IF NOT EXISTS auth_records (
        pk TEXT NOT NULL,
        sk TEXT NOT NULL,
        status TEXT NOT NULL,
        fields TEXT NOT NULL,
        expires_at TEXT,
        PRIMARY KEY (pk, sk)
    ) WITHOUT ROWID""",
    # The last freshness verdict on each anchored note (ports.VerdictRecords): derived data beside the note, never a
    # note version. `files`: JSON [[repo, path, freshness], ...]; `version`: the note version judged.
    """CREATE TABLE IF NOT EXISTS verdicts (
        workspace_id TEXT NOT NULL,
        note_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        files TEXT NOT NULL,
        judged_at TEXT NOT NULL,
        PRIMARY KEY (workspace_id, note_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS tag_renames (
        workspace_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        from_tag TEXT NOT NULL,
        to_tag TEXT NOT NULL,
        horizon TEXT NOT NULL,
        after_updated_at TEXT NOT NULL,
        after_id TEXT NOT NULL,
        PRIMARY KEY (workspace_id, project_id, from_tag, to_tag)
    ) WITHOUT ROWID""",
)

_FTS_TABLE = """CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, body, tags, content='notes', content_rowid='seq',
    tokenize='porter unicode61 remove_diacritics 2', prefix='2 3')"""

# Only text changes touch the index: a delete, restore or status change leaves it alone.
_FTS_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS notes_fts_insert AFTER INSERT ON notes BEGIN
        INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.seq, new.title, new.body, new.tags);
    END""",
    """CREATE TRIGGER IF NOT EXISTS notes_fts_delete AFTER DELETE ON notes BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            VALUES ('delete', old.seq, old.title, old.body, old.tags);
    END""",
    """CREATE TRIGGER IF NOT EXISTS notes_fts_update AFTER UPDATE OF title, body, tags ON notes
    WHEN old.title IS NOT new.title OR old.body IS NOT new.body OR old.tags IS NOT new.tags BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            VALUES ('delete', old.seq, old.title, old.body, old.tags);
        INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.seq, new.title, new.body, new.tags);
    END""",
)

# Columns after the id, in the order `_note_params` writes and `_note_from_row` reads them.
_NOTE_FIELDS = (
    "workspace_id, project_id, title, body, version, created_at, updated_at, author, write_id, type, status, "
    "tags, links, importance, canonical, supersedes, superseded_by, deleted_at, anchors, branch"
)
_NOTE_COLUMNS = "id, " + _NOTE_FIELDS
_N_NOTE_COLUMNS = "n." + ", n.".join(_NOTE_COLUMNS.split(", "))
_REVISION_COLUMNS = "note_id, " + _NOTE_FIELDS
_NOTE_MARKS = ", ".join("?" * len(_NOTE_COLUMNS.split(", ")))

_SELECT_NOTE = f"SELECT {_NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND id = ?"
_SELECT_NOTES = f"SELECT {_NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))"
_SELECT_REF = f"SELECT id FROM notes WHERE workspace_id = ? AND substr(id, -{REF_CHARS}) = ? ORDER BY id"
_SELECT_VERSION = "SELECT version FROM notes WHERE workspace_id = ? AND id = ?"
_INSERT_NOTE = f"INSERT INTO notes ({_NOTE_COLUMNS}) VALUES ({_NOTE_MARKS}) ON CONFLICT DO NOTHING"
# The key (workspace_id, id) is not rewritten: parameters are `_note_params(note)[2:]`, then the condition.
_UPDATE_NOTE = (
    "UPDATE notes SET "
    + ", ".join(f"{column} = ?" for column in _NOTE_FIELDS.split(", ")[1:])
    + " WHERE workspace_id = ? AND id = ? AND version = ?"
)
_INSERT_REVISION = f"INSERT INTO revisions ({_REVISION_COLUMNS}) VALUES ({_NOTE_MARKS}) ON CONFLICT DO NOTHING"
# Keeps the newest `cap` revisions whatever gaps the version numbers have.
_PRUNE_REVISIONS = """DELETE FROM revisions WHERE workspace_id = ?1 AND note_id = ?2 AND version <= (
    SELECT version FROM revisions WHERE workspace_id = ?1 AND note_id = ?2
    ORDER BY version DESC LIMIT 1 OFFSET ?3)"""
_SELECT_REVISIONS = f"""SELECT {_REVISION_COLUMNS} FROM revisions
    WHERE workspace_id = ? AND note_id = ? AND version < ? ORDER BY version DESC LIMIT ?"""
_SELECT_REVISION = f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE workspace_id = ? AND note_id = ? AND version = ?"
_SELECT_PROJECT_NOTES = f"""SELECT {_NOTE_COLUMNS} FROM notes WHERE workspace_id = ? AND project_id = ?
    ORDER BY updated_at DESC, id DESC LIMIT ?"""
# One index range per (type, status) pair, each cut to `limit`, then merged: the pairs travel as JSON arrays (one
# statement text), and no plan may walk the whole project to find a rare pair (INDEXED BY pins the bounded one).
_SELECT_NOTES_BY_TYPE = f"""WITH pairs AS MATERIALIZED (
        SELECT t.value AS type, s.value AS status FROM json_each(:types) AS t, json_each(:statuses) AS s)
    SELECT {_N_NOTE_COLUMNS} FROM pairs JOIN notes AS n ON n.seq IN (
        SELECT m.seq FROM notes AS m INDEXED BY notes_by_type
        WHERE m.workspace_id = :workspace AND m.project_id = :project AND m.type = pairs.type
            AND m.status = pairs.status AND m.deleted_at IS NULL
        ORDER BY m.updated_at DESC, m.id DESC LIMIT :limit)
    ORDER BY n.updated_at DESC, n.id DESC LIMIT :limit"""
# As _SELECT_NOTES_BY_TYPE, of notes needing no attention only (get_context's settled candidates).
_SELECT_SETTLED_BY_TYPE = _SELECT_NOTES_BY_TYPE.replace(
    "AND m.deleted_at IS NULL",
    "AND m.deleted_at IS NULL AND NOT (m.superseded_by <> '[]' AND m.status <> 'superseded')",
)
_SELECT_CONFLICTED_NOTES = f"""SELECT {_NOTE_COLUMNS} FROM notes INDEXED BY notes_needing_attention
    WHERE workspace_id = ? AND project_id = ? AND {_NEEDS_ATTENTION}
    ORDER BY updated_at DESC, id DESC LIMIT ?"""
# Live anchored notes only (partial): `anchored_notes` reads the project's anchored notes, never all of it. Made
# after the anchors column (an older file gains it by ALTER); an index an older Notewell ignores, so the schema
# version stays.
_ANCHORED_INDEX = """CREATE INDEX IF NOT EXISTS notes_anchored
    ON notes (workspace_id, project_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL AND anchors <> '[]'"""
# An anchor on one of the paths (:paths, a JSON array): the file itself (_NAMED), or a file under it (_UNDER).
_ANCHOR_PATHS = (
    "SELECT json_extract(a.value, '$.path') AS path, f.value AS named FROM json_each(n.anchors) AS a, "
    "json_each(:paths) AS f"
)
_NAMED = f"EXISTS (SELECT 1 FROM ({_ANCHOR_PATHS}) WHERE path = named)"
_UNDER = (
    f"EXISTS (SELECT 1 FROM ({_ANCHOR_PATHS}) WHERE path = named OR substr(path, 1, length(named) + 1) = named || '/')"
)
_SELECT_ANCHORED = f"""SELECT {_N_NOTE_COLUMNS} FROM notes AS n INDEXED BY notes_anchored
    WHERE n.workspace_id = :workspace AND n.project_id = :project AND n.deleted_at IS NULL AND n.anchors <> '[]'
        AND n.status IN (SELECT value FROM json_each(:statuses)) AND {_UNDER}
    ORDER BY {_NAMED} DESC, n.updated_at DESC, n.id DESC LIMIT :limit"""
_SELECT_ANCHORS = "SELECT id, anchors FROM notes WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))"
_SELECT_PROJECT_ANCHORED = f"""SELECT {_NOTE_COLUMNS} FROM notes INDEXED BY notes_anchored
    WHERE workspace_id = ? AND project_id = ? AND deleted_at IS NULL AND anchors <> '[]'
        AND status IN (SELECT value FROM json_each(?))
    ORDER BY updated_at DESC, id DESC LIMIT ?"""
_VERDICT_COLUMNS = "note_id, project_id, version, files, judged_at"
_SELECT_VERDICTS = f"""SELECT {_VERDICT_COLUMNS} FROM verdicts
    WHERE workspace_id = ? AND project_id = ? AND note_id IN (SELECT value FROM json_each(?))"""
# The commit sequence (SequencedFeed): each write gives its note the project's next number inside the write
# transaction. BEGIN IMMEDIATE serialises writers, so numbers follow commit order and a reader that saw n has
# seen every change committed before it: no horizon. `feed_seq` sits after the body column (added by ALTER on
# older files), so it is written by its own statement.
_FEED_INDEX = "CREATE INDEX IF NOT EXISTS notes_feed ON notes (workspace_id, project_id, feed_seq)"
_STAMP_FEED_SEQ = """UPDATE notes SET feed_seq = (
        SELECT coalesce(max(feed_seq), 0) + 1 FROM notes INDEXED BY notes_feed
        WHERE workspace_id = ?1 AND project_id = ?2)
    WHERE workspace_id = ?1 AND id = ?3"""
# Numbers existing notes per project in (updated_at, id) order, the order the feed served them in before: a
# cursor made then maps onto the sequence (`feed_start`).
_BACKFILL_FEED_SEQ = """UPDATE notes SET feed_seq = numbered.n FROM (
        SELECT seq AS row_id, row_number() OVER (PARTITION BY workspace_id, project_id ORDER BY updated_at, id) AS n
        FROM notes) AS numbered
    WHERE notes.seq = numbered.row_id"""
# The first number of a note after a position (the start of a `since`, or of a cursor made before the sequence).
_SELECT_FEED_START = """SELECT min(feed_seq) FROM notes INDEXED BY notes_by_project
    WHERE workspace_id = :workspace AND project_id = :project AND (updated_at, id) > (:updated_at, :id)"""
_SELECT_FEED_END = """SELECT coalesce(max(feed_seq), 0) FROM notes INDEXED BY notes_feed
    WHERE workspace_id = :workspace AND project_id = :project"""

# The change feed: one range of `notes_by_project` read in ascending (updated_at, id) order (SQLite walks the
# DESC index backwards), starting strictly after the position (a row-value seek). The filters travel as JSON
# arrays ('[]': no filter), so the statement text never changes.
_FEED_FILTERS = """(:types = '[]' OR type IN (SELECT value FROM json_each(:types)))
        AND (:statuses = '[]' OR status IN (SELECT value FROM json_each(:statuses)))"""
_SELECT_CHANGES = f"""SELECT {_NOTE_COLUMNS} FROM notes INDEXED BY notes_by_project
    WHERE workspace_id = :workspace AND project_id = :project AND (updated_at, id) > (:updated_at, :id)
        AND updated_at <= :horizon AND {_FEED_FILTERS}
    ORDER BY updated_at, id LIMIT :limit"""
# Whether a matching note is past the horizon: each statement seeks straight to its one bound (a position at or
# before the horizon makes `updated_at > :horizon` the whole condition; a later one makes the horizon moot).
_SELECT_PAST_HORIZON = f"""SELECT 1 FROM notes INDEXED BY notes_by_project
    WHERE workspace_id = :workspace AND project_id = :project AND updated_at > :horizon AND {_FEED_FILTERS}
    ORDER BY updated_at, id LIMIT 1"""
_SELECT_PAST_POSITION = f"""SELECT 1 FROM notes INDEXED BY notes_by_project
    WHERE workspace_id = :workspace AND project_id = :project AND (updated_at, id) > (:updated_at, :id)
        AND {_FEED_FILTERS}
    ORDER BY updated_at, id LIMIT 1"""

_SELECT_FEED = f"""SELECT feed_seq, {_NOTE_COLUMNS} FROM notes INDEXED BY notes_feed
    WHERE workspace_id = :workspace AND project_id = :project AND feed_seq > :after AND {_FEED_FILTERS}
    ORDER BY feed_seq LIMIT :limit"""

_IDEMPOTENCY_COLUMNS = "workspace_id, key, request_hash, result, recorded_at, expires_at"
_SELECT_IDEMPOTENCY = f"SELECT {_IDEMPOTENCY_COLUMNS} FROM idempotency WHERE workspace_id = ? AND key = ?"
_UPSERT_IDEMPOTENCY = f"INSERT OR REPLACE INTO idempotency ({_IDEMPOTENCY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"

_WORKSPACE_COLUMNS = "id, name, created_at, plan, revision_cap, suspended_at"
# An increment, never read-then-write: concurrent adds to one counter all count.
_ADD_USAGE = """INSERT INTO usage (workspace_id, period, counter, value) VALUES (?, ?, ?, ?)
    ON CONFLICT (workspace_id, period, counter) DO UPDATE SET value = value + excluded.value"""
_SELECT_USAGE = """SELECT period, counter, value FROM usage
    WHERE workspace_id = ? AND period IN (SELECT value FROM json_each(?)) ORDER BY period, counter"""
_PROJECT_COLUMNS = (
    "id, workspace_id, slug, created_at, updated_at, summary, instructions, default_max_tokens, default_branch, "
    "merged_branches"
)
_KEY_COLUMNS = "id, workspace_id, name, secret_hash, created_at, project_id, read_only, revoked_at, hint"

# ----- full-text search (SqliteFullTextIndex) --------------------------------------------------------------
# FTS5 finds the notes, but the scores are Okapi BM25 over the statistics of the searched project alone: its live
# notes (N), their average length in tokens, and how many of them hold each query word. FTS5's bm25() takes those
# from the whole table, every project of every workspace, so a project's scores and order moved when another
# tenant wrote the same words. Per query word (an FTS5 phrase), for the project's live notes:
#   * FTS5 reports bm25() with its table-wide statistics (_WORD_SCORES). For one phrase that is
#     idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average)), where the table's row count, token total
#     (its averages record) and the phrase's row count give idf and average, and the note's token count (its
#     docsize record) its length: so f, the phrase's column-weighted hits in the note, is solved exactly (an integer:
#     the weights are). The cost is the MATCH's walk of the phrase's postings, as before.
#   * df is how many of the project's live notes match; N and the average length come from their docsize records.
# Statement texts never change with the filters (they travel as JSON arrays), so the statement cache always hits.
CANDIDATE_ROWS = 500  # rows remember's candidate lookup ranks at most (split_terms; tests/bench/remember.py)
BM25_K1 = 1.2  # FTS5's constants
BM25_B = 0.75
BM25_WEIGHTS = "10.0, 1.0, 2.0"  # title, body, tags: integers, so a phrase's weighted hits are one too
_FILTERS = """(:types = '[]' OR n.type IN (SELECT value FROM json_each(:types)))
            AND (:statuses = '[]' OR n.status IN (SELECT value FROM json_each(:statuses)))
            AND (:tags = '[]' OR EXISTS (
                SELECT 1 FROM json_each(n.tags) AS t WHERE t.value IN (SELECT value FROM json_each(:tags))))"""
# FTS5's averages record (row id 1 of its data table): the indexed row count, then each column's token total.
_FTS_AVERAGES = "SELECT block FROM notes_fts_data WHERE id = 1"
_PHRASE_ROWS_ALL = "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH :phrase"
# The same, counted no further than :most (FTS5 stops walking the phrase's postings there).
_PHRASE_ROWS_UP_TO = "SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH :phrase LIMIT :most)"
# The project's live notes and their tokens (FTS5's docsize record: one varint per column; TOKENS_FUNCTION sums it).
TOKENS_FUNCTION = "notewell_fts_tokens"
_PROJECT_SIZE = f"""SELECT count(*), coalesce(sum({TOKENS_FUNCTION}(d.sz)), 0)
    FROM notes AS n CROSS JOIN notes_fts_docsize AS d ON d.id = n.seq
    WHERE n.workspace_id = :workspace AND n.project_id = :project AND n.deleted_at IS NULL"""
# One phrase's bm25() for each live note of the project it matches, its tokens, and whether it passes the filters.
_WORD_SCORES = f"""SELECT n.seq, n.id, bm25(notes_fts, {BM25_WEIGHTS}), d.sz, {_FILTERS}
    FROM notes_fts CROSS JOIN notes AS n ON n.seq = notes_fts.rowid CROSS JOIN notes_fts_docsize AS d ON d.id = n.seq
    WHERE notes_fts MATCH :phrase AND n.workspace_id = :workspace AND n.project_id = :project
        AND n.deleted_at IS NULL"""
# remember's candidates: FTS5 ranks the matches itself, in C, by its table-wide statistics. The ranking only
# chooses which notes get compared, so the project-scoped BM25 of search_notes (a Python pass over every match of
# every term, which grows with the project) is not worth its cost here. The ranking (a subquery with a LIMIT, which
# SQLite never flattens into a join) sorts only seq, id and bm25(), computed once a match; the winners' rows are
# read after it: sorting every match with its whole row cost a third of the lookup (~350 matches at 10k notes).
_CANDIDATES = f"""SELECT {_N_NOTE_COLUMNS}, -top.rank AS score
    FROM (SELECT n.seq AS seq, n.id AS id, bm25(notes_fts, {BM25_WEIGHTS}) AS rank
        FROM notes_fts CROSS JOIN notes AS n ON n.seq = notes_fts.rowid
        WHERE notes_fts MATCH :match AND n.workspace_id = :workspace AND n.project_id = :project
            AND n.deleted_at IS NULL AND {_FILTERS}
        ORDER BY rank, n.id LIMIT :limit) AS top
    CROSS JOIN notes AS n ON n.seq = top.seq
    ORDER BY top.rank, top.id"""
# The winners' rows, and their snippets (one rowid lookup each; CROSS JOIN keeps that order).
_HIT_ROWS = f"""SELECT top.value, {_N_NOTE_COLUMNS}
    FROM json_each(:seqs) AS top CROSS JOIN notes AS n ON n.seq = top.value"""
_HIT_SNIPPETS = """SELECT top.value, snippet(notes_fts, 1, '', '', '…', 24)
    FROM json_each(:seqs) AS top CROSS JOIN notes_fts ON notes_fts.rowid = top.value WHERE notes_fts MATCH :snippet"""


class _ConditionFailedError(Exception):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _record_from_row(row: tuple[Any, ...]) -> AuthRecord:
    pk, sk, status, fields, expires_at = row
    return AuthRecord(pk, sk, status, json.loads(fields), expires_at)


def _condition_holds(condition: str, stored_status: str | None) -> bool:
    if condition == ANY:
        return True
    if condition == ABSENT:
        return stored_status is None
    return stored_status == condition


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _note_params(note: Note) -> tuple[object, ...]:
    return (
        note.id,
        note.workspace_id,
        note.project_id,
        note.title,
        note.body,
        note.version,
        note.created_at,
        note.updated_at,
        note.author,
        note.write_id,
        note.type.value,
        note.status.value,
        _json(note.tags),
        _json([[link.target, link.relation] for link in note.links]),
        note.importance,
        int(note.canonical),
        _json(note.supersedes),
        _json(note.superseded_by),
        note.deleted_at,
        _json([rules.anchor_json(anchor) for anchor in note.anchors]),
        note.branch,
    )


def _note_from_row(row: Sequence[Any]) -> Note:
    return Note(
        id=row[0],
        workspace_id=row[1],
        project_id=row[2],
        title=row[3],
        body=row[4],
        version=row[5],
        created_at=row[6],
        updated_at=row[7],
        author=row[8],
        write_id=row[9],
        type=NoteType(row[10]),
        status=NoteStatus(row[11]),
        tags=_strings(row[12]),
        links=() if row[13] == "[]" else tuple(Link(target, relation) for target, relation in json.loads(row[13])),
        importance=row[14],
        canonical=bool(row[15]),
        supersedes=_strings(row[16]),
        superseded_by=_strings(row[17]),
        deleted_at=row[18],
        anchors=_anchors_of(row[19]),
        branch=row[20],
    )


def _verdict_from_row(row: Sequence[Any]) -> RecordedVerdict:
    files = tuple(FileVerdict(repo, path, Freshness(value)) for repo, path, value in json.loads(row[3]))
    return RecordedVerdict(note_id=row[0], project_id=row[1], version=row[2], files=files, judged_at=row[4])


def _strings(column: str) -> tuple[str, ...]:
    """A JSON array column; most are empty, which needs no parse (a read of remember's candidates has ~150)."""
    return () if column == "[]" else tuple(json.loads(column))


def _anchors_of(column: str) -> tuple[Anchor, ...]:
    return () if column == "[]" else tuple(map(rules.anchor_of_json, json.loads(column)))


def _workspace_from_row(row: Sequence[Any]) -> Workspace:
    return Workspace(
        id=row[0], name=row[1], created_at=row[2], plan=Plan(row[3]), revision_cap=row[4], suspended_at=row[5]
    )


def _project_from_row(row: Sequence[Any]) -> Project:
    return Project(
        id=row[0],
        workspace_id=row[1],
        slug=row[2],
        created_at=row[3],
        updated_at=row[4],
        summary=row[5],
        instructions=row[6],
        default_max_tokens=row[7],
        default_branch=row[8],
        merged_branches=tuple(json.loads(row[9])),
    )


def _key_from_row(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0],
        workspace_id=row[1],
        name=row[2],
        secret_hash=row[3],
        created_at=row[4],
        project_id=row[5],
        read_only=bool(row[6]),
        revoked_at=row[7],
        hint=row[8],
    )


def _idempotency_from_row(row: Sequence[Any]) -> IdempotencyRecord:
    return IdempotencyRecord(
        workspace_id=row[0],
        key=row[1],
        request_hash=row[2],
        result=json.loads(row[3]),
        recorded_at=row[4],
        expires_at=row[5],
    )


def _is_busy(exc: sqlite3.Error) -> bool:
    return exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _create_fts(connection: sqlite3.Connection) -> bool:
    """Create and fill the full-text table; False when this SQLite has no FTS5 (the store still works)."""
    try:
        connection.execute(_FTS_TABLE)
    except sqlite3.OperationalError:
        return False
    # Also indexes what a database first opened without FTS5 already holds.
    connection.execute("INSERT INTO notes_fts (notes_fts) VALUES ('rebuild')")
    return True


def _create_private(path: str) -> None:
    """Create the database file for its owner only (0600) before SQLite would (0644 less the umask): SQLite gives
    the -wal and -shm files it creates later the database file's permissions."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        for suffix in ("", "-wal", "-shm"):  # left readable by an older Notewell
            with contextlib.suppress(OSError):
                file = Path(path + suffix)
                mode = stat.S_IMODE(file.stat().st_mode)
                if mode & 0o077:
                    file.chmod(mode & 0o700)


def _unusable(path: str, exc: sqlite3.Error) -> ConfigError:
    """The one-sentence error for a database file that cannot be opened."""
    if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
        return ConfigError(
            f"{path} is not a usable Notewell database ({exc}); restore it from a backup, or set --data-dir or "
            "NOTEWELL_HOME to another directory."
        )
    return ConfigError(
        f"Cannot open the database {path} ({exc}); check its permissions, or set --data-dir or NOTEWELL_HOME to "
        "another directory."
    )


class _ThreadConnection:
    """Holds one thread's connection; when the thread ends, its thread-local slot dies and closes it."""

    __slots__ = ("connection", "__weakref__")

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection


class SqliteStore:
    """Every store port over one SQLite file (not ':memory:': each thread opens its own connection)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        if self._path == ":memory:" or self._path.startswith("file::memory:"):
            raise ValueError("SqliteStore needs a database file; each thread opens its own connection.")
        self._local = threading.local()
        self._lock = threading.Lock()
        # Writers of this process queue here and wake the moment the one before commits; left to SQLite's busy
        # handler they poll the file lock with sleeps of up to 100 ms, which became the tail of every write.
        self._writer = threading.Lock()
        self._slots: weakref.WeakSet[_ThreadConnection] = weakref.WeakSet()
        self._closed = False
        try:
            Path(self._path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _create_private(self._path)
            self._create_schema()
        except sqlite3.Error as exc:
            self.close()
            raise _unusable(self._path, exc) from exc
        except OSError as exc:
            raise ConfigError(
                f"Cannot create the database {self._path} ({exc.strerror}); set --data-dir or NOTEWELL_HOME to a "
                "directory you can write."
            ) from exc

    # ----- connections and transactions --------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use); shared with other adapters over the same file."""
        slot: _ThreadConnection | None = getattr(self._local, "slot", None)
        if slot is None or self._closed:
            slot = self._open()
        return slot.connection

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            slots = list(self._slots)
        for slot in slots:
            slot.connection.close()

    def _open(self) -> _ThreadConnection:
        with self._lock:
            if self._closed:
                raise RuntimeError("This SqliteStore is closed; open a new one.")
            # isolation_level=None: no implicit transactions, we issue BEGIN IMMEDIATE ourselves.
            # check_same_thread=False only so close() and the finalizer may close it from another thread.
            connection = sqlite3.connect(
                self._path,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=256,
            )
            try:
                connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
                connection.execute("PRAGMA journal_mode = WAL")
                # With WAL, NORMAL never corrupts the file; a power cut (not a crash) may lose recent commits.
                connection.execute("PRAGMA synchronous = NORMAL")
                connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
                connection.create_function(TOKENS_FUNCTION, 1, fts_tokens, deterministic=True)  # full-text scores
            except sqlite3.Error:
                connection.close()
                raise
            slot = _ThreadConnection(connection)
            # Server threads come and go (worker pools): close a connection when its thread is gone.
            weakref.finalize(slot, connection.close)
            self._slots.add(slot)
            self._local.slot = slot
            return slot

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, rolled back on any error; a busy database becomes UnavailableError."""
        try:
            connection = self.connection()
            if not self._writer.acquire(timeout=BUSY_TIMEOUT_SECONDS):
                raise UnavailableError("The local database is busy; retry in a moment.")
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                    connection.execute("COMMIT")
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise
            finally:
                self._writer.release()
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise UnavailableError("The local database is busy; retry in a moment.") from exc
            raise

    def _create_schema(self) -> None:
        with self._transaction() as connection:
            (version,) = connection.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                raise ConfigError(
                    f"{self._path} has schema version {version}, newer than this Notewell "
                    f"({SCHEMA_VERSION}); upgrade Notewell to open it."
                )
            for statement in _SCHEMA:
                connection.execute(statement)
            if "suspended_at" not in {row[1] for row in connection.execute("PRAGMA table_info(workspaces)")}:
                connection.execute("ALTER TABLE workspaces ADD COLUMN suspended_at TEXT")  # a file from before 6
            columns = {row[1] for row in connection.execute("PRAGMA table_info(notes)")}
            if "feed_seq" not in columns:  # a file from before the commit sequence: number its notes once
                connection.execute("ALTER TABLE notes ADD COLUMN feed_seq INTEGER NOT NULL DEFAULT 0")
                connection.execute(_BACKFILL_FEED_SEQ)
            connection.execute(_FEED_INDEX)
            for table in ("notes", "revisions"):  # a file from before 7: no note is anchored yet
                if "anchors" not in {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}:
                    connection.execute(f"ALTER TABLE {table} ADD COLUMN anchors TEXT NOT NULL DEFAULT '[]'")
                if "branch" not in {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}:
                    connection.execute(f"ALTER TABLE {table} ADD COLUMN branch TEXT")  # before 8: the default branch
            connection.execute(_ANCHORED_INDEX)
            if "default_branch" not in {row[1] for row in connection.execute("PRAGMA table_info(projects)")}:
                connection.execute("ALTER TABLE projects ADD COLUMN default_branch TEXT NOT NULL DEFAULT 'main'")
                connection.execute("ALTER TABLE projects ADD COLUMN merged_branches TEXT NOT NULL DEFAULT '[]'")
            has_fts = (
                connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'notes_fts'").fetchone()
                is not None
            ) or _create_fts(connection)
            if has_fts:
                for trigger in _FTS_TRIGGERS:
                    connection.execute(trigger)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # ----- OAuth state ---------------------------------------------------------------------------------------

    def get_record(self, pk: str, sk: str) -> AuthRecord | None:
        row = (
            self.connection()
            .execute("SELECT pk, sk, status, fields, expires_at FROM auth_records WHERE pk = ? AND sk = ?", (pk, sk))
            .fetchone()
        )
        return None if row is None else _record_from_row(row)

    def records_under(self, pk: str) -> list[AuthRecord]:
        rows = self.connection().execute(
            "SELECT pk, sk, status, fields, expires_at FROM auth_records WHERE pk = ? ORDER BY sk", (pk,)
        )
        return [_record_from_row(row) for row in rows]

    def write_records(self, writes: Sequence[RecordWrite]) -> int | None:
        try:
            with self._transaction() as connection:  # BEGIN IMMEDIATE: the checks and the writes see one state
                self._write_records(connection, writes)
        except _ConditionFailedError as failed:
            return failed.index
        return None

    @staticmethod
    def _write_records(connection: sqlite3.Connection, writes: Sequence[RecordWrite]) -> None:
        for index, write in enumerate(writes):
            record = write.record
            row = connection.execute(
                "SELECT status FROM auth_records WHERE pk = ? AND sk = ?", (record.pk, record.sk)
            ).fetchone()
            if not _condition_holds(write.condition, None if row is None else row[0]):
                raise _ConditionFailedError(index)  # rolls the transaction back: nothing is written
        for write in writes:
            record = write.record
            if write.delete:
                connection.execute("DELETE FROM auth_records WHERE pk = ? AND sk = ?", (record.pk, record.sk))
            else:
                connection.execute(
                    "INSERT OR REPLACE INTO auth_records (pk, sk, status, fields, expires_at) VALUES (?, ?, ?, ?, ?)",
                    (record.pk, record.sk, record.status, _json(dict(record.fields)), record.expires_at),
                )

    # ----- workspaces --------------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace) -> None:
        try:
            with self._transaction() as connection:
                connection.execute(
                    f"INSERT INTO workspaces ({_WORKSPACE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        workspace.id,
                        workspace.name,
                        workspace.created_at,
                        workspace.plan.value,
                        workspace.revision_cap,
                        workspace.suspended_at,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise AlreadyExistsError(f"Workspace {workspace.id} already exists; use it or pick a new id.") from exc

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        row = (
            self.connection()
            .execute(f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,))
            .fetchone()
        )
        return None if row is None else _workspace_from_row(row)

    def list_workspaces(self) -> list[Workspace]:
        rows = self.connection().execute(f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces ORDER BY created_at, id")
        return [_workspace_from_row(row) for row in rows]

    def set_plan(self, workspace_id: str, plan: Plan, revision_cap: int) -> Workspace | None:
        with self._transaction() as connection:
            connection.execute(
                "UPDATE workspaces SET plan = ?, revision_cap = ? WHERE id = ?",
                (Plan(plan).value, revision_cap, workspace_id),
            )
            row = connection.execute(
                f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
            ).fetchone()
        return None if row is None else _workspace_from_row(row)

    def set_suspended(self, workspace_id: str, suspended_at: str | None) -> Workspace | None:
        with self._transaction() as connection:
            connection.execute("UPDATE workspaces SET suspended_at = ? WHERE id = ?", (suspended_at, workspace_id))
            row = connection.execute(
                f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
            ).fetchone()
        return None if row is None else _workspace_from_row(row)

    def add_usage(self, workspace_id: str, period: str, deltas: Mapping[str, int]) -> None:
        if not deltas:
            return
        rows = [(workspace_id, period, counter, int(value)) for counter, value in deltas.items()]
        with self._transaction() as connection:
            connection.executemany(_ADD_USAGE, rows)

    def usage(self, workspace_id: str, periods: Sequence[str]) -> dict[str, dict[str, int]]:
        if not periods:
            return {}
        found: dict[str, dict[str, int]] = {}
        for period, counter, value in self.connection().execute(
            _SELECT_USAGE, (workspace_id, _json(list(dict.fromkeys(periods))))
        ):
            found.setdefault(period, {})[counter] = value
        return found

    # ----- projects ----------------------------------------------------------------------------------------

    def get_project(self, workspace_id: str, slug: str) -> Project | None:
        row = (
            self.connection()
            .execute(
                f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE workspace_id = ? AND slug = ?",
                (workspace_id, slug),
            )
            .fetchone()
        )
        return None if row is None else _project_from_row(row)

    def get_project_by_id(self, workspace_id: str, project_id: str) -> Project | None:
        row = (
            self.connection()
            .execute(
                f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE workspace_id = ? AND id = ?",
                (workspace_id, project_id),
            )
            .fetchone()
        )
        return None if row is None else _project_from_row(row)

    def create_project(self, project: Project) -> Project:
        with self._transaction() as connection:
            connection.execute(
                f"INSERT INTO projects ({_PROJECT_COLUMNS}) VALUES ({', '.join('?' * 10)}) ON CONFLICT DO NOTHING",
                (
                    project.id,
                    project.workspace_id,
                    project.slug,
                    project.created_at,
                    project.updated_at,
                    project.summary,
                    project.instructions,
                    project.default_max_tokens,
                    project.default_branch,
                    _json(project.merged_branches),
                ),
            )
            row = connection.execute(
                f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE workspace_id = ? AND slug = ?",
                (project.workspace_id, project.slug),
            ).fetchone()
        if row is None:  # the id, not the slug, was taken
            raise AlreadyExistsError(f"Project id {project.id} is already used; create the project with a new id.")
        return _project_from_row(row)

    def save_project(self, project: Project, *, expected: Project | None = None) -> bool:
        statement = """UPDATE projects SET summary = ?, instructions = ?, default_max_tokens = ?, updated_at = ?,
            default_branch = ?, merged_branches = ? WHERE workspace_id = ? AND id = ?"""
        params: tuple[object, ...] = (
            project.summary,
            project.instructions,
            project.default_max_tokens,
            project.updated_at,
            project.default_branch,
            _json(project.merged_branches),
            project.workspace_id,
            project.id,
        )
        if expected is not None:
            # Compare-and-set on the state that was read: a concurrent update or rename changed one of these.
            statement += """ AND slug = ? AND summary = ? AND instructions = ? AND default_max_tokens IS ?
                AND updated_at = ?"""
            params += (
                expected.slug,
                expected.summary,
                expected.instructions,
                expected.default_max_tokens,
                expected.updated_at,
            )
        with self._transaction() as connection:
            changed: int = connection.execute(statement, params).rowcount
        return changed == 1

    def get_tag_rename(self, workspace_id: str, project_id: str, old: str, new: str) -> TagRenameProgress | None:
        row = (
            self.connection()
            .execute(
                """SELECT horizon, after_updated_at, after_id FROM tag_renames
                WHERE workspace_id = ? AND project_id = ? AND from_tag = ? AND to_tag = ?""",
                (workspace_id, project_id, old, new),
            )
            .fetchone()
        )
        return None if row is None else TagRenameProgress(row[0], FeedPosition(row[1], row[2]))

    def save_tag_rename(
        self, workspace_id: str, project_id: str, old: str, new: str, progress: TagRenameProgress | None
    ) -> None:
        with self._transaction() as connection:
            if progress is None:
                connection.execute(
                    """DELETE FROM tag_renames
                    WHERE workspace_id = ? AND project_id = ? AND from_tag = ? AND to_tag = ?""",
                    (workspace_id, project_id, old, new),
                )
            else:
                connection.execute(
                    "INSERT OR REPLACE INTO tag_renames VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        workspace_id,
                        project_id,
                        old,
                        new,
                        progress.horizon,
                        progress.position.updated_at,
                        progress.position.note_id,
                    ),
                )

    def list_projects(self, workspace_id: str) -> list[Project]:
        rows = self.connection().execute(
            f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE workspace_id = ? ORDER BY slug", (workspace_id,)
        )
        return [_project_from_row(row) for row in rows]

    def rename_project(self, workspace_id: str, project_id: str, new_slug: str, updated_at: str) -> Project:
        select = f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE workspace_id = ? AND id = ?"
        try:
            with self._transaction() as connection:
                row = connection.execute(select, (workspace_id, project_id)).fetchone()
                if row is None:
                    raise NotFoundError(f"Project {project_id} does not exist; list the projects to find its id.")
                if row[2] != new_slug:  # the same slug (a retried rename) changes nothing
                    # One row holds the slug: the unique (workspace_id, slug) index refuses a taken one.
                    connection.execute(
                        "UPDATE projects SET slug = ?, updated_at = ? WHERE workspace_id = ? AND id = ?",
                        (new_slug, updated_at, workspace_id, project_id),
                    )
                    row = connection.execute(select, (workspace_id, project_id)).fetchone()
        except sqlite3.IntegrityError as exc:
            raise AlreadyExistsError(
                f"Another project already uses the slug {new_slug!r}; choose another slug."
            ) from exc
        return _project_from_row(row)

    # ----- notes -------------------------------------------------------------------------------------------

    def get_note(self, workspace_id: str, note_id: str) -> Note | None:
        row = self.connection().execute(_SELECT_NOTE, (workspace_id, note_id)).fetchone()
        return None if row is None else _note_from_row(row)

    def notes_starting_like(self, workspace_id: str, project_id: str, text: str, limit: int) -> list[Note]:
        rows = self.connection().execute(
            f"""SELECT {_NOTE_COLUMNS} FROM notes INDEXED BY notes_by_start
                WHERE workspace_id = ? AND project_id = ? AND substr(body, 1, {BODY_PREFIX_CHARS}) = ?
                    AND deleted_at IS NULL LIMIT ?""",
            (workspace_id, project_id, text[:BODY_PREFIX_CHARS], limit),
        )
        return [_note_from_row(row) for row in rows]

    def get_notes(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, Note]:
        if not note_ids:
            return {}
        rows = self.connection().execute(_SELECT_NOTES, (workspace_id, _json(list(note_ids))))
        return {note.id: note for note in map(_note_from_row, rows)}

    def ids_with_ref(self, workspace_id: str, ref: str, *, limit: int) -> list[str]:
        rows = self.connection().execute(_SELECT_REF, (workspace_id, ref))
        return [note_id for (note_id,) in rows if note_ref(note_id) == ref][:limit]

    def commit(
        self,
        workspace_id: str,
        writes: Sequence[NoteWrite],
        *,
        revision_cap: int,
        idempotency: IdempotencyRecord | None = None,
    ) -> None:
        for write in writes:
            if write.note.workspace_id != workspace_id:
                raise ValueError(f"note {write.note.id} belongs to another workspace than the commit")
        if idempotency is not None and idempotency.workspace_id != workspace_id:
            raise ValueError("the idempotency record belongs to another workspace than the commit")
        with self._transaction() as connection:
            if idempotency is not None:
                self._record_idempotency(connection, idempotency)
            for write in writes:
                self._apply(connection, workspace_id, write, revision_cap)

    def _record_idempotency(self, connection: sqlite3.Connection, record: IdempotencyRecord) -> None:
        row = connection.execute(_SELECT_IDEMPOTENCY, (record.workspace_id, record.key)).fetchone()
        if row is not None:
            existing = _idempotency_from_row(row)
            if existing.expires_at > record.recorded_at:
                raise IdempotencyKeyTakenError(existing)
        connection.execute(
            _UPSERT_IDEMPOTENCY,
            (
                record.workspace_id,
                record.key,
                record.request_hash,
                _json(record.result),
                record.recorded_at,
                record.expires_at,
            ),
        )

    def _apply(self, connection: sqlite3.Connection, workspace_id: str, write: NoteWrite, revision_cap: int) -> None:
        note = write.note
        if write.expected_version is None:
            changed = connection.execute(_INSERT_NOTE, _note_params(note)).rowcount
        else:
            changed = connection.execute(
                _UPDATE_NOTE, (*_note_params(note)[2:], workspace_id, note.id, write.expected_version)
            ).rowcount
        if changed != 1:
            row = connection.execute(_SELECT_VERSION, (workspace_id, note.id)).fetchone()
            raise VersionConflictError(note.id, write.expected_version or 0, 0 if row is None else row[0])
        connection.execute(_STAMP_FEED_SEQ, (workspace_id, note.project_id, note.id))
        previous = write.previous
        if previous is not None:
            connection.execute(_INSERT_REVISION, _note_params(previous))
            connection.execute(_PRUNE_REVISIONS, (workspace_id, previous.id, revision_cap))

    def list_revisions(
        self, workspace_id: str, note_id: str, *, limit: int, before_version: int | None = None
    ) -> list[Note]:
        upper = _NO_UPPER_BOUND if before_version is None else before_version
        rows = self.connection().execute(_SELECT_REVISIONS, (workspace_id, note_id, upper, limit))
        return [_note_from_row(row) for row in rows]

    def get_revision(self, workspace_id: str, note_id: str, version: int) -> Note | None:
        row = self.connection().execute(_SELECT_REVISION, (workspace_id, note_id, version)).fetchone()
        return None if row is None else _note_from_row(row)

    def get_idempotency(self, workspace_id: str, key: str) -> IdempotencyRecord | None:
        row = self.connection().execute(_SELECT_IDEMPOTENCY, (workspace_id, key)).fetchone()
        return None if row is None else _idempotency_from_row(row)

    def project_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        rows = self.connection().execute(_SELECT_PROJECT_NOTES, (workspace_id, project_id, limit))
        return [_note_from_row(row) for row in rows]

    def notes_by_type(
        self,
        workspace_id: str,
        project_id: str,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        *,
        limit: int,
    ) -> list[Note]:
        if not types or not statuses or limit < 1:
            return []
        params = {
            "workspace": workspace_id,
            "project": project_id,
            # Each pair once: a repeated type or status would return its notes twice.
            "types": _json(sorted({NoteType(t).value for t in types})),
            "statuses": _json(sorted({NoteStatus(s).value for s in statuses})),
            "limit": limit,
        }
        rows = self.connection().execute(_SELECT_NOTES_BY_TYPE, params)
        return [_note_from_row(row) for row in rows]

    def context_notes(
        self, workspace_id: str, project_id: str, *, per_section: int, recent: int, attention: int,
        by_section: bool = False,
    ) -> ContextNotes:  # fmt: skip
        def settled(types: Sequence[NoteType], statuses: Sequence[NoteStatus], limit: int) -> list[Note]:
            params = {
                "workspace": workspace_id, "project": project_id, "limit": limit,
                "types": _json(sorted({t.value for t in types})),
                "statuses": _json(sorted({s.value for s in statuses if s is not NoteStatus.DISPUTED})),
            }  # fmt: skip
            return [_note_from_row(row) for row in self.connection().execute(_SELECT_SETTLED_BY_TYPE, params)]

        sections = {
            section: [n for kind in types for n in settled([kind], packing.section_statuses(section), per_section)]
            for section, types in packing.SECTION_TYPES.items()
        }
        newest = settled(list(NoteType), packing.LIVE_STATUSES, recent)
        needing = self.conflicted_notes(workspace_id, project_id, limit=attention)
        joined, newest = packing.with_attention(sections, newest, needing, per_section=per_section, recent_limit=recent)
        return ContextNotes(joined, newest, needing)

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
        """One index range read of at most `limit` + 1 matching rows (the extra one tells `more`), and, only when
        nothing more is there up to the horizon, a LIMIT 1 read for a matching note past it (`settling`).

        The filters are applied in SQL, so `position` is the last note returned (`after` when none): notes filtered
        out after it are read again by the next call.

        Raises:
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        params: dict[str, object] = {
            "workspace": workspace_id,
            "project": project_id,
            # ('', '') precedes every note: a note's updated_at is never empty.
            "updated_at": "" if after is None else after.updated_at,
            "id": "" if after is None else after.note_id,
            "horizon": horizon,
            "types": _json(sorted({NoteType(t).value for t in types})),
            "statuses": _json(sorted({NoteStatus(s).value for s in statuses})),
            "limit": limit + 1,
        }
        connection = self.connection()
        notes = [_note_from_row(row) for row in connection.execute(_SELECT_CHANGES, params)]
        more = len(notes) > limit
        del notes[limit:]
        position = after if not notes else FeedPosition(notes[-1].updated_at, notes[-1].id)
        settling = False
        if not more:
            # Every match up to the horizon is returned: is one waiting past it?
            check = _SELECT_PAST_HORIZON
            if position is not None and position.updated_at > horizon:
                check = _SELECT_PAST_POSITION  # nothing was returned: the position itself is past the horizon
            settling = connection.execute(check, params).fetchone() is not None
        return ChangeScan(notes, position, more, settling)

    def feed_after(
        self,
        workspace_id: str,
        project_id: str,
        after: int,
        *,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
    ) -> SequencedScan:
        """One range read of `notes_feed`, at most `limit` + 1 matching rows (the extra one tells `more`). The filters
        are applied in SQL, so `position` is the last change returned (`after` when none).

        Raises:
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        params: dict[str, object] = {
            "workspace": workspace_id,
            "project": project_id,
            "after": after,
            "types": _json(sorted({NoteType(t).value for t in types})),
            "statuses": _json(sorted({NoteStatus(s).value for s in statuses})),
            "limit": limit + 1,
        }
        rows = self.connection().execute(_SELECT_FEED, params).fetchall()
        changes = [SequencedChange(row[0], _note_from_row(row[1:])) for row in rows[:limit]]
        return SequencedScan(changes, changes[-1].seq if changes else after, len(rows) > limit)

    def feed_start(self, workspace_id: str, project_id: str, after: FeedPosition) -> int:
        params = {"workspace": workspace_id, "project": project_id, "updated_at": after.updated_at, "id": after.note_id}
        connection = self.connection()
        with _read_snapshot(connection):  # the first later note and the end, as of one moment
            (first,) = connection.execute(_SELECT_FEED_START, params).fetchone()
            if first is not None:
                return int(first) - 1
            (end,) = connection.execute(_SELECT_FEED_END, params).fetchone()
            return int(end)

    def conflicted_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        if limit < 1:
            return []
        rows = self.connection().execute(_SELECT_CONFLICTED_NOTES, (workspace_id, project_id, limit))
        return [_note_from_row(row) for row in rows]

    def anchored_notes(
        self, workspace_id: str, project_id: str, paths: Sequence[str], *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """One read of the project's live anchored notes (notes_anchored), matched and ordered in SQL."""
        if not paths or limit < 1:
            return []
        params = {
            "workspace": workspace_id, "project": project_id, "paths": _json(list(paths)),
            "statuses": _json(sorted({NoteStatus(s).value for s in statuses})), "limit": limit,
        }  # fmt: skip
        return [_note_from_row(row) for row in self.connection().execute(_SELECT_ANCHORED, params)]

    def note_anchors(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, tuple[Anchor, ...]]:
        if not note_ids:
            return {}
        rows = self.connection().execute(_SELECT_ANCHORS, (workspace_id, _json(list(note_ids))))
        return {row[0]: _anchors_of(row[1]) for row in rows}

    def anchored_in_project(
        self, workspace_id: str, project_id: str, *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """The newest of the project's live anchored notes (notes_anchored), whole."""
        if limit < 1:
            return []
        chosen = _json(sorted({NoteStatus(s).value for s in statuses}))
        rows = self.connection().execute(_SELECT_PROJECT_ANCHORED, (workspace_id, project_id, chosen, limit))
        return [_note_from_row(row) for row in rows]

    # ----- freshness verdicts --------------------------------------------------------------------------------

    def recorded_verdicts(
        self, workspace_id: str, project_id: str, note_ids: Sequence[str]
    ) -> dict[str, RecordedVerdict]:
        if not note_ids:
            return {}
        rows = self.connection().execute(_SELECT_VERDICTS, (workspace_id, project_id, _json(list(note_ids))))
        return {row[0]: _verdict_from_row(row) for row in rows}

    def save_verdicts(self, workspace_id: str, writes: Sequence[VerdictWrite]) -> int:
        """One transaction: each record compared with the stored one, and written where it is still the expected."""
        if not writes:
            return 0
        stored = 0
        with self._transaction() as connection:
            for write in writes:
                record, expected = write.record, write.expected
                row = connection.execute(
                    "SELECT version, judged_at FROM verdicts WHERE workspace_id = ? AND note_id = ?",
                    (workspace_id, record.note_id),
                ).fetchone()
                if (None if row is None else tuple(row)) != (
                    None if expected is None else (expected.version, expected.judged_at)
                ):
                    continue  # another recorder wrote since the caller read
                files = _json([[f.repo, f.path, f.freshness.value] for f in record.files])
                connection.execute(
                    f"INSERT OR REPLACE INTO verdicts (workspace_id, {_VERDICT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                    (workspace_id, record.note_id, record.project_id, record.version, files, record.judged_at),
                )
                stored += 1
        return stored

    def import_notes(self, workspace_id: str, items: Sequence[tuple[Note, Sequence[Note]]]) -> int:
        """One transaction: every new note with its revisions, or nothing. The FTS triggers index them as they land."""
        for note, revisions in items:
            if note.workspace_id != workspace_id:
                raise ValueError(f"note {note.id} belongs to another workspace than the import")
            for revision in revisions:
                if revision.id != note.id or revision.workspace_id != workspace_id:
                    raise ValueError(f"a revision given for note {note.id} is another note's")
        written = 0
        with self._transaction() as connection:
            for note, revisions in items:
                # ON CONFLICT DO NOTHING: an id already in the workspace is skipped, and its revisions with it.
                if connection.execute(_INSERT_NOTE, _note_params(note)).rowcount != 1:
                    continue
                written += 1
                # Imported notes are new to this project: followers of its feed see them arrive.
                connection.execute(_STAMP_FEED_SEQ, (workspace_id, note.project_id, note.id))
                connection.executemany(_INSERT_REVISION, [_note_params(revision) for revision in revisions])
        return written

    # ----- API keys ----------------------------------------------------------------------------------------

    def put_key(self, key: ApiKey) -> None:
        try:
            with self._transaction() as connection:
                connection.execute(
                    f"""INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (workspace_id, id) DO UPDATE SET name = excluded.name,
                        secret_hash = excluded.secret_hash, created_at = excluded.created_at,
                        project_id = excluded.project_id, read_only = excluded.read_only,
                        revoked_at = excluded.revoked_at, hint = excluded.hint""",
                    (
                        key.id,
                        key.workspace_id,
                        key.name,
                        key.secret_hash,
                        key.created_at,
                        key.project_id,
                        int(key.read_only),
                        key.revoked_at,
                        key.hint,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise AlreadyExistsError("Another key has the same secret; generate a new secret.") from exc

    def find_key(self, secret_hash: str) -> ApiKey | None:
        # The one lookup without a workspace: authentication is what tells us the workspace.
        row = (
            self.connection()
            .execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE secret_hash = ?", (secret_hash,))
            .fetchone()
        )
        return None if row is None else _key_from_row(row)

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        rows = self.connection().execute(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id",
            (workspace_id,),
        )
        return [_key_from_row(row) for row in rows]

    def revoke_key(self, workspace_id: str, key_id: str, revoked_at: str) -> ApiKey | None:
        with self._transaction() as connection:
            # The first revocation time stands: revoking again changes nothing.
            connection.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE workspace_id = ? AND id = ?",
                (revoked_at, workspace_id, key_id),
            )
            row = connection.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? AND id = ?",
                (workspace_id, key_id),
            ).fetchone()
        return None if row is None else _key_from_row(row)


def _query_terms(text: str) -> list[str]:
    """The distinct words of `text` (rules.words, split as unicode61 splits them), in order, at most MAX_QUERY_TERMS."""
    return list(dict.fromkeys(rules.words(text)))[:MAX_QUERY_TERMS]


def _phrase(term: str) -> str:
    """`term` as an FTS5 string: never FTS5 syntax (AND, NEAR, *, ^, :), whatever it holds."""
    return '"' + term.replace('"', '""') + '"'


def _any_of(terms: Sequence[str]) -> str:
    return " OR ".join(map(_phrase, terms))


def match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression in which any word of `text` matches; None when `text` has no words.

    Every term is a quoted string, so no user input can reach the FTS5 query syntax (AND, NEAR, *, ^, :).
    """
    terms = _query_terms(text)
    return _any_of(terms) if terms else None


def split_terms(
    rows_by_term: dict[str, int], total_rows: int, budget: int = CANDIDATE_ROWS, min_terms: int = 1
) -> tuple[list[str], list[str]]:
    """(essential, rest): the terms worth ranking, rarest first, split where their matches pass `budget` rows.

    Dropped: a term that matches no row, and, when rarer terms exist, a term in half the rows or more and more rows
    than the budget (bm25's idf, ln((N - n + 0.5) / (n + 0.5)), is then 0 or less, which FTS5 clamps to 1e-6: the
    term adds nothing to a score but would add its rows to the match set). Within the budget it is kept: in a small
    table it may be the only word a candidate shares ("The flag is on." / "The flag is false."). The essential
    terms are the rarest ones whose matches add up to at most `budget` rows, at least one; `rest` holds the others.
    `total_rows` may overstate the table's row count (fewer terms are then dropped), never understate it.
    """
    live = sorted((term for term, rows in rows_by_term.items() if rows > 0), key=lambda term: rows_by_term[term])
    informative = [term for term in live if 2 * rows_by_term[term] < total_rows or rows_by_term[term] <= budget] or live
    essential: list[str] = []
    rows = 0
    for term in informative:
        if len(essential) >= min_terms and rows + rows_by_term[term] > budget:
            break
        essential.append(term)
        rows += rows_by_term[term]
    return essential, informative[len(essential) :]


def _rows_by_term(connection: sqlite3.Connection, words: Sequence[str], budget: int, min_terms: int) -> dict[str, int]:
    """How many rows of the table match each word, as far as split_terms(…, budget, min_terms)'s essential terms
    can tell. With one term to rank (remember with a model), a word in more than `budget` rows is counted to
    budget + 1 only, which saves walking the postings of the common words (most of a lookup's words at 10k notes),
    and exactly only when no word is within the budget. The essential terms are the same as with exact counts:
    every word within the budget is informative and sorts before every word past it, and once `min_terms` are taken
    a word past the budget always overflows it. With several terms to rank the common words are usually needed as
    well (words only: 3 lookups in 4 of the bench's at 10k notes), so they are counted exactly at once, not twice."""
    if min_terms > 1:
        return {w: connection.execute(_PHRASE_ROWS_ALL, {"phrase": _phrase(w)}).fetchone()[0] for w in words}
    rows = {
        w: connection.execute(_PHRASE_ROWS_UP_TO, {"phrase": _phrase(w), "most": budget + 1}).fetchone()[0]
        for w in words
    }
    if sum(0 < count <= budget for count in rows.values()) < min_terms:  # the common words are ranked among themselves
        for word, count in rows.items():
            if count > budget:
                rows[word] = connection.execute(_PHRASE_ROWS_ALL, {"phrase": _phrase(word)}).fetchone()[0]
    return rows


@contextmanager
def _read_snapshot(connection: sqlite3.Connection) -> Iterator[None]:
    """One read transaction around several statements: in autocommit each would read the state of its own moment,
    and the index's statistics, per-word counts and rows of concurrent writes would disagree (a negative idf)."""
    if connection.in_transaction:
        yield
        return
    connection.execute("BEGIN")  # deferred: the snapshot is taken at the first read, and no write lock is held
    try:
        yield
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")


def _scope(workspace_id: str, project_id: str, filters: SearchFilters) -> dict[str, object]:
    """The parameters every search statement filters by: the project and the caller's filters."""
    return {
        "workspace": workspace_id,
        "project": project_id,
        "types": _json(sorted(filters.types)),
        "statuses": _json(sorted(filters.statuses)),
        "tags": _json(sorted(filters.tags)),
    }


class SqliteFullTextIndex:
    """SearchIndex over the store's FTS5 table (kept in sync by triggers, so it never lags a commit); scores use
    the statistics of the searched project only, so other projects and workspaces never move them."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self._local = threading.local()  # per thread (per connection): project sizes, until the database changes

    def search(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[SearchHit]:
        words = _query_terms(query)
        ranked, _, rows, snippets = self._ranking(workspace_id, project_id, words, filters, limit, read_notes=True)
        hits: list[SearchHit] = []
        for seq, _, score in ranked:
            note = _note_from_row(rows[seq])
            hits.append(SearchHit(note, score, rules.excerpt(snippets.get(seq) or note.body, SNIPPET_CHARS)))
        return hits

    def ranked_ids(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        return self.ranked_with_ceiling(workspace_id, project_id, query, filters, limit)[0]

    def ranked_with_ceiling(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int
    ) -> tuple[list[tuple[str, float]], float]:
        """ranked_ids, and the score of a note holding every query word the project holds, at saturation."""
        words = _query_terms(query)
        ranked, ceiling, _, _ = self._ranking(workspace_id, project_id, words, filters, limit, read_notes=False)
        return [(note_id, score) for _, note_id, score in ranked], ceiling

    def _ranking(
        self, workspace_id: str, project_id: str, words: Sequence[str], filters: SearchFilters, limit: int, *,
        read_notes: bool,
    ) -> tuple[list[tuple[int, str, float]], float, dict[int, tuple[Any, ...]], dict[int, str]]:  # fmt: skip
        """The project's best `limit` notes for `words` as (seq, id, score), the query's ceiling (_ranked), and with
        `read_notes` their rows and FTS5 snippets by seq, all read from one snapshot."""
        if not words or limit <= 0:
            return [], 0.0, {}, {}
        params = _scope(workspace_id, project_id, filters)
        try:
            connection = self._store.connection()
            with _read_snapshot(connection):
                count, tokens = self._project_size(connection, params)
                read = self._read_since_change(connection)
                ranked, ceiling = _ranked(connection, words, params, count, tokens, limit, read) if count else ([], 0.0)
                if not ranked or not read_notes:
                    return ranked, ceiling, {}, {}
                seqs = _json([seq for seq, _, _ in ranked])
                rows = {row[0]: row[1:] for row in connection.execute(_HIT_ROWS, {"seqs": seqs})}
                snippet = {"seqs": seqs, "snippet": _any_of(words)}
                snippets = dict(connection.execute(_HIT_SNIPPETS, snippet).fetchall())
        except sqlite3.Error as exc:
            raise SearchUnavailableError(f"SQLite full-text search failed: {exc}") from exc
        return ranked, ceiling, rows, snippets

    def candidates(
        self, workspace_id: str, project_id: str, query: str, filters: SearchFilters, limit: int, *, min_terms: int = 1
    ) -> list[SearchHit]:
        words = _query_terms(query)
        if not words or limit <= 0:
            return []
        try:
            connection = self._store.connection()
            with _read_snapshot(connection):
                record = connection.execute(_FTS_AVERAGES).fetchone()
                table_rows = _varints(record[0])[0] if record is not None else 0
                # Ranked by the rarest words only: a word in most notes adds (almost) nothing to a score but all its
                # rows to the match set, which bm25 and the project filter then visit one by one.
                matched = _rows_by_term(connection, words, CANDIDATE_ROWS, min_terms)
                words, _ = split_terms(matched, max(table_rows, 1), CANDIDATE_ROWS, min_terms)
                if not words:
                    return []
                params = {**_scope(workspace_id, project_id, filters), "match": _any_of(words), "limit": limit}
                rows = connection.execute(_CANDIDATES, params).fetchall()
        except sqlite3.Error as exc:
            raise SearchUnavailableError(f"SQLite full-text search failed: {exc}") from exc
        return [SearchHit(_note_from_row(row[:-1]), round(float(row[-1]), 6), "") for row in rows]

    def _project_size(self, connection: sqlite3.Connection, params: dict[str, object]) -> tuple[int, int]:
        """(live notes, their tokens) of the project, re-read only once the database has changed."""
        sizes = self._read_since_change(connection).sizes
        key = (params["workspace"], params["project"])
        if key not in sizes:
            count, tokens = connection.execute(_PROJECT_SIZE, params).fetchone()
            sizes[key] = (int(count), int(tokens))
        return sizes[key]

    def _read_since_change(self, connection: sqlite3.Connection) -> _ReadSinceChange:
        """What this thread's connection has read and may reuse until the database changes: data_version moves
        when another connection commits, total_changes when this one writes."""
        (version,) = connection.execute("PRAGMA data_version").fetchone()
        stamp = (id(connection), version, connection.total_changes)
        if getattr(self._local, "stamp", None) != stamp:
            self._local.stamp, self._local.read = stamp, _ReadSinceChange()
        read: _ReadSinceChange = self._local.read
        return read


class _ReadSinceChange:
    """Project sizes, and the BM25 contributions of the words matching many notes (_Postings), as read since the
    database last changed. A common word ('the', 'how') costs a search most: FTS5 reports bm25() for each of its
    thousands of matches (26 ms for a word in all of 10k notes, more than the rest of a hybrid search), and the
    same few such words come back query after query."""

    __slots__ = ("ids", "postings", "sizes")

    def __init__(self) -> None:
        self.sizes: dict[tuple[object, ...], tuple[int, int]] = {}
        self.postings: dict[tuple[object, ...], _Postings] = {}
        self.ids: dict[int, str] = {}  # note ids by seq, of every note the kept postings hold


def _varints(record: bytes) -> list[int]:
    """The SQLite varints of an FTS5 record (7 bits a byte, big-endian, high bit set = more bytes follow)."""
    values: list[int] = []
    value = 0
    for byte in record:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            values.append(value)
            value = 0
    return values


def fts_tokens(size: bytes | None) -> int:
    """The tokens of one FTS5 docsize record (every column)."""
    return sum(_varints(size)) if size else 0


def _bm25_k(length: float, average: float) -> float:
    return BM25_K1 * (1 - BM25_B + BM25_B * length / average)  # FTS5's own expression, in its order


@dataclass(frozen=True, slots=True)
class _Postings:
    """One word's matches in a project: how many live notes hold it (df), and its BM25 contribution to each of them
    that passes the filters: `seqs` ascending, `scores` in the same order (16 bytes a posting)."""

    df: int
    seqs: array[int]
    scores: array[float]

    def score_of(self, seq: int) -> float | None:
        at = bisect.bisect_left(self.seqs, seq)
        return self.scores[at] if at < len(self.seqs) and self.seqs[at] == seq else None


CACHED_POSTINGS_ROWS = 200  # a word matching at least this many notes keeps its postings until the next change
CACHED_POSTINGS_TOTAL = 2_000_000  # at most this many postings are kept per thread (32 MB; then all are dropped)


def _ranked(
    connection: sqlite3.Connection, words: Sequence[str], params: dict[str, object], count: int, tokens: int,
    limit: int, read: _ReadSinceChange | None = None,
) -> tuple[list[tuple[int, str, float]], float]:  # fmt: skip
    """The best `limit` live notes of the project passing the filters as (seq, id, score), best first (ties: the
    lower id first): Okapi BM25 over the project's `count` notes and `tokens`, idf = ln(1 + (N - df + 0.5) /
    (df + 0.5)) (never negative, unlike the form FTS5 clamps to 1e-6). And the query's ceiling: the sum over the
    words the project holds of idf * (k1 + 1), what a note holding all of them would score at saturation.
    `read`: what was read since the database last changed, where common words' postings are kept."""
    average = tokens / count or 1.0
    record = connection.execute(_FTS_AVERAGES).fetchone()
    table_rows, *column_tokens = _varints(record[0]) if record is not None else [0]
    if table_rows <= 0:
        raise SearchUnavailableError("The FTS5 index holds no statistics; reopen the store to rebuild it.")
    statistics = (count, average, table_rows, sum(column_tokens) / table_rows)
    read = read if read is not None else _ReadSinceChange()
    cache, ids = read.postings, read.ids
    found: list[tuple[float, _Postings]] = []  # (the most the word can add to a score, its postings)
    for word in words:
        key = (params["workspace"], params["project"], params["types"], params["statuses"], params["tags"], word)
        postings = cache.get(key)
        if postings is None:
            postings = _postings(connection, word, params, statistics, ids)
            if postings is not None and postings.df >= CACHED_POSTINGS_ROWS:
                if sum(len(p.seqs) for p in cache.values()) + len(postings.seqs) > CACHED_POSTINGS_TOTAL:
                    cache.clear()
                cache[key] = postings
        if postings is not None:  # a word no note holds tells nothing about any note: it raises no ceiling either
            found.append((math.log(1 + (count - postings.df + 0.5) / (postings.df + 0.5)) * (BM25_K1 + 1), postings))
    ceiling = sum(most for most, _ in found)
    # Rarest first (MaxScore, Turtle and Flood 1995): once the `limit`-th best score so far is above all that the
    # words left could add, no note unseen yet can reach the top, and those words only add to the notes seen: the
    # best `limit` are the ones summing every posting would give, at the cost of the notes seen.
    found.sort(key=lambda item: -item[0])
    left = ceiling
    scores: dict[int, float] = {}
    closed = False
    for most, postings in found:
        if not closed and len(scores) >= limit:
            closed = heapq.nlargest(limit, scores.values())[-1] > left
        if closed:
            for seq in scores:
                if (score := postings.score_of(seq)) is not None:
                    scores[seq] += score
        else:
            for seq, score in zip(postings.seqs, postings.scores, strict=True):
                scores[seq] = scores.get(seq, 0.0) + score
        left -= most
    best = heapq.nsmallest(limit, scores, key=lambda seq: (-scores[seq], ids[seq]))
    return [(seq, ids[seq], round(scores[seq], 6)) for seq in best], round(ceiling, 6)


def _postings(
    connection: sqlite3.Connection, word: str, params: dict[str, object],
    statistics: tuple[int, float, int, float], ids: dict[int, str],
) -> _Postings | None:  # fmt: skip
    """`word`'s postings in the project, None when no live note of it holds the word (the ids of the notes it
    holds go into `ids`). `statistics`: the project's live notes and their average length, the table's rows and
    their average length."""
    count, average, table_rows, table_average = statistics
    phrase = _phrase(word)
    matched = connection.execute(_WORD_SCORES, {**params, "phrase": phrase}).fetchall()
    if not matched:
        return None
    (table_hits,) = connection.execute(_PHRASE_ROWS_ALL, {"phrase": phrase}).fetchone()
    table_idf = math.log((table_rows - table_hits + 0.5) / (table_hits + 0.5))
    table_idf = table_idf if table_idf > 0 else 1e-6  # FTS5 clamps the same way
    idf = math.log(1 + (count - len(matched) + 0.5) / (len(matched) + 0.5))
    scores: dict[int, float] = {}
    for seq, note_id, fts_score, size, admitted in matched:
        if not admitted:
            continue
        length = fts_tokens(size)
        table_k, k = _bm25_k(length, table_average), _bm25_k(length, average)
        ratio = -fts_score / table_idf  # f * (k1 + 1) / (f + k), solved for f, the phrase's weighted hits
        solved = ratio * table_k / (BM25_K1 + 1 - ratio)
        hits = round(solved)
        if hits < 1 or abs(solved - hits) > 1e-3:
            raise SearchUnavailableError(f"FTS5 statistics are not as expected (hits {solved!r})")
        scores[seq] = idf * hits * (BM25_K1 + 1) / (hits + k)
        ids[seq] = note_id
    ordered = sorted(scores)
    return _Postings(len(matched), array("q", ordered), array("d", (scores[seq] for seq in ordered)))


# ----- vectors ---------------------------------------------------------------------------------------------------

_SAVE_VECTOR = """INSERT INTO note_vectors (workspace_id, note_id, model, project_id, version, stamp, vector)
    VALUES (:workspace, :note, :model, :project, :version, :stamp, :vector)
    ON CONFLICT (workspace_id, note_id, model) DO UPDATE SET
        project_id = excluded.project_id, version = excluded.version, stamp = excluded.stamp, vector = excluded.vector
    WHERE excluded.version >= note_vectors.version"""
_VECTORS_SINCE = """SELECT note_id, stamp, vector FROM note_vectors
    WHERE workspace_id = ? AND project_id = ? AND model = ? AND stamp > ? ORDER BY stamp"""
_NOTES_WITHOUT_VECTORS = f"""SELECT {_N_NOTE_COLUMNS} FROM notes AS n
    LEFT JOIN note_vectors AS v ON v.workspace_id = n.workspace_id AND v.note_id = n.id AND v.model = :model
    WHERE n.deleted_at IS NULL AND (n.workspace_id, n.id) > (:after_workspace, :after_id)
      AND (v.version IS NULL OR v.version < n.version)
    ORDER BY n.workspace_id, n.id LIMIT :limit"""
_COUNT_WITHOUT_VECTORS = """SELECT count(*) FROM notes AS n
    LEFT JOIN note_vectors AS v ON v.workspace_id = n.workspace_id AND v.note_id = n.id AND v.model = :model
    WHERE n.deleted_at IS NULL AND (v.version IS NULL OR v.version < n.version)"""


class _ProjectMatrix:
    """One project's vectors of one model, in memory: a row per note (`count` rows used of the matrix's capacity),
    refreshed from the rows stamped since it was last read."""

    def __init__(self, dimensions: int) -> None:
        import numpy

        self.rows: dict[str, int] = {}
        self.ids: list[str] = []
        self.matrix = numpy.zeros((64, dimensions), dtype=numpy.float32)
        self.stamp = 0
        self.lock = threading.Lock()


class SqliteVectorIndex:
    """VectorIndex over the store's note_vectors table: exact cosine over a project's vectors with numpy (10k x 384
    floats is 15 MB and a millisecond per query), kept in memory per project and refreshed incrementally."""

    def __init__(self, store: SqliteStore, dimensions: int) -> None:
        import numpy  # only the local embedded mode needs it (the `embed` extra)

        self._numpy = numpy
        self._store = store
        self._dimensions = dimensions
        self._matrices: dict[tuple[str, str, str], _ProjectMatrix] = {}
        self._lock = threading.Lock()

    def save_vectors(self, workspace_id: str, vectors: Sequence[NoteVector]) -> None:
        if not vectors:
            return
        for item in vectors:
            if len(item.vector) != self._dimensions:
                raise ValueError(f"a vector of {len(item.vector)} floats for an index of {self._dimensions}")
        with self._store._transaction() as connection:
            (stamp,) = connection.execute("SELECT coalesce(max(stamp), 0) FROM note_vectors").fetchone()
            for offset, item in enumerate(vectors, start=1):
                connection.execute(
                    _SAVE_VECTOR,
                    {
                        "workspace": workspace_id, "note": item.note_id, "model": item.model_id,
                        "project": item.project_id, "version": item.version, "stamp": stamp + offset,
                        "vector": self._numpy.asarray(item.vector, dtype=self._numpy.float32).tobytes(),
                    },
                )  # fmt: skip

    def nearest(
        self, workspace_id: str, project_id: str, model_id: str, query: Vector, limit: int
    ) -> list[tuple[str, float]]:
        numpy = self._numpy
        if limit <= 0:
            return []
        try:
            project = self._refreshed(workspace_id, project_id, model_id)
        except sqlite3.Error as exc:
            raise SearchUnavailableError(f"SQLite vector read failed: {exc}") from exc
        with project.lock:
            if not project.ids:
                return []
            # einsum, not `@`: a matrix-vector product of this size goes to OpenBLAS's thread pool, whose threads then
            # spin-wait on both cores while the embedding model runs next (remember at 10k notes: 34 ms -> 21 ms).
            scores = numpy.einsum(
                "ij,j->i", project.matrix[: len(project.ids)], numpy.asarray(query, dtype=numpy.float32)
            )
            ids = list(project.ids)
        count = min(limit, len(ids))
        top = numpy.argpartition(-scores, count - 1)[:count] if count < len(ids) else numpy.arange(len(ids))
        best = sorted(((float(scores[i]), ids[i]) for i in top), key=lambda pair: (-pair[0], pair[1]))
        return [(note_id, round(score, 6)) for score, note_id in best]

    def vectors_of(self, workspace_id: str, note_ids: Sequence[str], model_id: str) -> dict[str, NoteVector]:
        if not note_ids:
            return {}
        rows = self._store.connection().execute(
            """SELECT note_id, project_id, version, vector FROM note_vectors
               WHERE workspace_id = ? AND model = ? AND note_id IN (SELECT value FROM json_each(?))""",
            (workspace_id, model_id, _json(list(note_ids))),
        )
        return {
            note_id: NoteVector(note_id, project_id, version, model_id, self._vector(blob))
            for note_id, project_id, version, blob in rows
        }

    def notes_without_vectors(self, model_id: str, *, after: str, limit: int) -> list[Note]:
        workspace, _, note_id = after.partition("/")
        rows = self._store.connection().execute(
            _NOTES_WITHOUT_VECTORS,
            {"model": model_id, "after_workspace": workspace, "after_id": note_id, "limit": limit},
        )
        return [_note_from_row(row) for row in rows]

    def count_without_vectors(self, model_id: str) -> int:
        (count,) = self._store.connection().execute(_COUNT_WITHOUT_VECTORS, {"model": model_id}).fetchone()
        return int(count)

    def drop_other_models(self, model_id: str) -> int:
        with self._store._transaction() as connection:
            dropped = connection.execute("DELETE FROM note_vectors WHERE model <> ?", (model_id,)).rowcount
        with self._lock:
            self._matrices = {key: m for key, m in self._matrices.items() if key[2] == model_id}
        return int(dropped)

    def _vector(self, blob: bytes) -> Vector:
        return tuple(self._numpy.frombuffer(blob, dtype=self._numpy.float32).tolist())  # Python floats, in C

    def _refreshed(self, workspace_id: str, project_id: str, model_id: str) -> _ProjectMatrix:
        numpy = self._numpy
        key = (workspace_id, project_id, model_id)
        with self._lock:
            project = self._matrices.get(key)
            if project is None:
                project = self._matrices[key] = _ProjectMatrix(self._dimensions)
        with project.lock:
            changed = self._store.connection().execute(_VECTORS_SINCE, (*key, project.stamp)).fetchall()
            if not changed:
                return project
            for note_id, stamp, blob in changed:
                row = project.rows.get(note_id)
                if row is None:
                    row = project.rows[note_id] = len(project.ids)
                    project.ids.append(note_id)
                    if row >= len(project.matrix):  # grow by doubling: appends stay cheap as the project grows
                        grown = numpy.zeros((2 * len(project.matrix), self._dimensions), dtype=numpy.float32)
                        grown[:row] = project.matrix[:row]
                        project.matrix = grown
                project.matrix[row] = numpy.frombuffer(blob, dtype=numpy.float32)
                project.stamp = max(project.stamp, stamp)
        return project
