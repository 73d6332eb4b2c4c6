"""Data portability: export a project as Notewell JSON Lines, import such an export or a memory.jsonl file.

Export streams: the project's change feed is read a page at a time, oldest first by (updatedAt, id), each note
followed by its stored revisions, oldest first. Memory stays bounded by one feed page, one note's revisions and
the set of ids already written (an edit made during the export moves a note to the end of the feed; the set keeps
it from being written twice).

Over MCP the export is read as pages (resources), each the answer of one Lambda invocation, which may not pass
6 MB. A page is a run of whole lines of the export: it ends before a line that would take it past EXPORT_PAGE_BYTES
of that answer, or before a note that would make it hold more than `page_size` notes. A note with more history
than a page holds (its revisions) goes on over the next pages: read in order, the pages are the export line for
line, so its revisions still follow it. One line always fits (a body is at most 256 KiB: MAX_BODY_BYTES).

Import checks the whole file before writing anything: every line is decoded and checked (JSON, fields, enum values,
sizes, ids, timestamps), then what spans lines (order, duplicate ids, revisions following their note, relations
naming known entities, plan limits). Any problem raises InvalidArgumentError listing the first ones as
"line N: what is wrong", and nothing is written. The checked file is held in memory while it is written.

* Notewell export: notes are written exactly as exported (ids, versions, timestamps, lifecycle, links, anchors,
  revisions) through `store.import_notes`, in chunks. A note whose id is already in the target project is skipped, so an
  import that stopped midway can be re-run. A note whose id belongs to another project of the workspace (an export
  imported into a sibling project) gets a new id derived from the target project and the old id — deterministic,
  so a re-run skips it too — and references to it inside the file (links, supersedes, supersededBy) follow.
  Revisions beyond the workspace's revision cap are dropped, oldest first.
* memory.jsonl: each entity becomes a `note`-type note (title = name, tag = entityType, body = observations one
  per line); each relation a link `(target note, relationType)` on the `from` entity's note. An entity whose name
  is the exact title of a live note of the project is not created again: its observations, tag and links that the
  note lacks are added to it as one versioned edit (through the note service, on the version read); when it lacks
  nothing it is skipped. Importing the same file twice therefore adds nothing the second time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError, NotewellError, NotFoundError, UnavailableError
from notewell.domain.model import Link, Note, NoteStatus, NoteType, Plan, Project
from notewell.domain.plans import limits_for
from notewell.domain.portability import (
    EXPORT_FORMAT,
    EXPORT_HORIZON,
    EntityRecord,
    ExportHeader,
    ImportRecord,
    NoteRecord,
    ProjectRecord,
    RelationRecord,
    RevisionRecord,
)
from notewell.services.access import Deps, require_write, visible_project, writable_project
from notewell.services.notes import NoteChanges, NoteService
from notewell.services.projects import MAX_DEFAULT_TOKENS, MIN_DEFAULT_TOKENS, PROJECT_UPDATE_ATTEMPTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.model import Principal
    from notewell.ports import ExportCodec
    from notewell.services.metering import Meter

MEMORY_FORMAT = "memory-jsonl"
EXPORT_PAGE_NOTES = 500  # notes an export page holds at most
# The most an export page may take of a Lambda function's answer, whose payload is capped at 6 MB (counted here as
# 6 MiB, the lower reading); the rest is room for the JSON-RPC result around the page, the resource's uri and type,
# the status and headers (some 300 bytes).
LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024
EXPORT_PAGE_BYTES = LAMBDA_RESPONSE_BYTES - 64 * 1024
HEAD_LINES = 2  # the header and project lines that open an export
FEED_PAGE = 200
REVISION_PAGE = 100
IMPORT_CHUNK = 200
LOOKUP_CHUNK = 100
MAX_PAGE_SIZE = 1_000
MAX_REPORTED_ERRORS = 20
_KEPT_ERRORS = 10_000  # a garbage file is not held in memory as error messages
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_SPACES = re.compile(r"\s+")

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ImportReport:
    notes_written: int  # new notes
    notes_skipped: int  # already present (same id in the project; for memory.jsonl, same title and nothing to add)
    revisions_written: int
    links: int  # links written: on new notes, plus those added to existing ones
    notes_updated: int = 0  # memory.jsonl: existing notes that gained observations, a tag or links
    ids_reassigned: int = 0  # Notewell export: notes given a new id because theirs is used by another project
    format: str = EXPORT_FORMAT  # or MEMORY_FORMAT


@dataclass(frozen=True, slots=True)
class ExportCounts:
    notes: int  # every note of the project, deleted ones included
    deleted: int
    revisions: int
    pages: int  # export_page's pages of the same size and budget: read 1 to `pages`, in order


def response_bytes(line: str) -> int:
    """The most bytes an export line (and its newline) takes in the Lambda answer that carries its page. The page is
    a JSON string in the JSON-RPC result, and that result a JSON string in the Lambda response, or base64 where the
    body is encoded: a quote or backslash takes 4 bytes there, a character beyond ASCII up to 14 as \\uXXXX pairs
    (counted as ASCII-only JSON writes it, the larger way)."""
    once = json.dumps(line + "\n")
    return max(len(json.dumps(once)), -(-len(once) * 4 // 3))


@dataclass(slots=True)
class _Pages:
    """Numbers the export's lines with their page, in order (see the module's docstring)."""

    notes_per_page: int
    max_bytes: int
    count: int = 0  # pages begun
    _spent: int = 0  # response bytes of the current page
    _notes: int = 0  # notes begun on the current page

    def place(self, line: str, *, starts_note: bool) -> int:
        """The page (from 1) the next line of the export goes on."""
        cost = response_bytes(line)
        full = self._spent + cost > self.max_bytes or (starts_note and self._notes == self.notes_per_page)
        if self.count == 0 or (full and self._spent):
            self.count, self._spent, self._notes = self.count + 1, 0, 0
        self._spent += cost
        self._notes += starts_note
        return self.count


@dataclass(slots=True)
class _Errors:
    """Problems found while checking a file, by line number."""

    found: list[tuple[int, str]] = field(default_factory=list)
    count: int = 0

    def add(self, line: int, message: str) -> None:
        self.count += 1
        if len(self.found) < _KEPT_ERRORS:
            self.found.append((line, message))

    def raise_if_any(self) -> None:
        if not self.count:
            return
        shown = sorted(self.found)[:MAX_REPORTED_ERRORS]
        lines = [f"line {number}: {message}" for number, message in shown]
        if self.count > len(shown):
            lines.append(f"… and {self.count - len(shown)} more")
        plural = "problem" if self.count == 1 else "problems"
        raise InvalidArgumentError(
            f"Nothing was imported: the file has {self.count} {plural}; fix them and import again.\n" + "\n".join(lines)
        )


@dataclass(slots=True)
class _ExportedNote:
    line: int
    note: Note
    revisions: list[Note] = field(default_factory=list)


@dataclass(slots=True)
class _Entity:
    line: int
    title: str
    tags: list[str]
    observations: list[str]
    note_id: str = ""
    links: dict[tuple[str, str], int] = field(default_factory=dict)  # (target id, relation) -> line


class PortabilityService:
    def __init__(
        self, deps: Deps, codec: ExportCodec, notes: NoteService | None = None, meter: Meter | None = None
    ) -> None:
        self._deps = deps
        self._codec = codec
        self._notes = notes if notes is not None else NoteService(deps, meter)
        self._meter = meter

    # ----- export ------------------------------------------------------------------------------------------

    def export_lines(self, principal: Principal, project: str) -> Iterator[str]:
        """The project in export format, one line (without newline) at a time. The project is looked up now, so an
        unknown project raises before the first line."""
        target = self._readable(principal, project)
        return (line for line, _ in self._export(principal.workspace_id, target))

    def export_counts(
        self, principal: Principal, project: str, page_size: int = EXPORT_PAGE_NOTES,
        max_bytes: int = EXPORT_PAGE_BYTES,
    ) -> ExportCounts | None:  # fmt: skip
        """What an export of the project holds, and in how many of export_page's pages; None when the project does
        not exist (a read of an unknown project is empty, not an error). Reads the whole feed (and the revisions of
        edited notes)."""
        target = visible_project(self._deps, principal, project)
        if target is None:
            return None
        pages = _Pages(page_size, max_bytes)
        lines = notes = deleted = 0
        for line, note in self._export(principal.workspace_id, target):
            pages.place(line, starts_note=note is not None)
            lines += 1
            if note is not None:
                notes += 1
                deleted += note.is_deleted
        return ExportCounts(notes, deleted, lines - HEAD_LINES - notes, pages.count)

    def export_page(
        self, principal: Principal, project: str, page: int, page_size: int = EXPORT_PAGE_NOTES,
        max_bytes: int = EXPORT_PAGE_BYTES,
    ) -> list[str]:  # fmt: skip
        """Page `page` (from 1) of the export: the lines that follow the previous page's, at most `page_size` notes
        and `max_bytes` of a Lambda answer (see the module's docstring); page 1 starts with the header and project
        lines. A page past the end is empty. Where a page starts depends on the size of everything before it, so
        reaching page N reads the notes and revisions of the pages before it: deep pages cost more."""
        if page < 1:
            raise InvalidArgumentError(f"page {page} is out of range; pages start at 1.")
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidArgumentError(f"page_size {page_size} is out of range; use 1 to {MAX_PAGE_SIZE}.")
        target = self._readable(principal, project)
        pages = _Pages(page_size, max_bytes)
        lines: list[str] = []
        for line, note in self._export(principal.workspace_id, target):
            placed = pages.place(line, starts_note=note is not None)
            if placed > page:
                break
            if placed == page:
                lines.append(line)
        return lines

    def _readable(self, principal: Principal, project: str) -> Project:
        found = visible_project(self._deps, principal, project)
        if found is None:
            raise NotFoundError(f"No project {project!r} in this workspace; list_projects shows the ones that exist.")
        return found

    def _export(self, workspace_id: str, project: Project) -> Iterator[tuple[str, Note | None]]:
        """The export's lines, each with the note whose current state it is (None: the header, project and
        revision lines)."""
        yield self._codec.encode_header(rules.format_ts(self._deps.clock.now())), None
        yield self._codec.encode_project(project), None
        for note in self._feed(workspace_id, project.id):
            yield self._codec.encode_note(note), note
            for revision in self._revisions(workspace_id, note):
                yield self._codec.encode_revision(revision), None

    def _feed(self, workspace_id: str, project_id: str) -> Iterator[Note]:
        """Every note of the project once, deleted ones included, oldest first by (updatedAt, id)."""
        seen: set[str] = set()
        position = None
        while True:
            scan = self._deps.store.changes_after(
                workspace_id, project_id, position, horizon=EXPORT_HORIZON, types=(), statuses=(), limit=FEED_PAGE
            )
            for note in scan.notes:
                if note.id not in seen:
                    seen.add(note.id)
                    yield note
            if not scan.more or scan.position is None or scan.position == position:
                return
            position = scan.position

    def _revisions(self, workspace_id: str, note: Note) -> list[Note]:
        """The note's stored revisions below its version, oldest first."""
        found: list[Note] = []
        before = note.version
        while before > 1:
            page = self._deps.store.list_revisions(workspace_id, note.id, limit=REVISION_PAGE, before_version=before)
            found += page
            if len(page) < REVISION_PAGE:
                break
            before = page[-1].version
        found.reverse()
        return found

    # ----- import ------------------------------------------------------------------------------------------

    def import_file(
        self, principal: Principal, project: str, lines: Iterable[str], *, progress: Progress | None = None
    ) -> ImportReport:
        """Import a Notewell export or a memory.jsonl file (told apart by their first line) into `project`.

        Raises:
            InvalidArgumentError: the file has problems (the first ones listed by line); nothing was written.
            ForbiddenError: read-only key, or the plan's note count would be exceeded.
            NotFoundError: the key is scoped to another project.
        """
        require_write(principal)
        existing = visible_project(self._deps, principal, project)
        errors = _Errors()
        records = self._decode(lines, errors)
        if not records:
            errors.raise_if_any()
            raise InvalidArgumentError(
                "The file is empty; pass a Notewell export (notewell export) or a memory.jsonl file."
            )
        if isinstance(records[0][1], EntityRecord | RelationRecord):
            return self._import_memory(principal, project, existing, records, errors, progress)
        return self._import_export(principal, project, existing, records, errors, progress)

    def _decode(self, lines: Iterable[str], errors: _Errors) -> list[tuple[int, ImportRecord]]:
        records: list[tuple[int, ImportRecord]] = []
        for number, raw in enumerate(lines, start=1):
            text = raw.removeprefix("\ufeff") if number == 1 else raw
            text = text.rstrip("\r\n")
            if not text.strip():
                continue
            try:
                records.append((number, self._codec.decode(text)))
            except NotewellError as exc:
                errors.add(number, exc.message)
        return records

    # ----- Notewell export ---------------------------------------------------------------------------------

    def _import_export(
        self,
        principal: Principal,
        slug: str,
        existing: Project | None,
        records: list[tuple[int, ImportRecord]],
        errors: _Errors,
        progress: Progress | None,
    ) -> ImportReport:
        workspace_id = principal.workspace_id
        project_record, notes = self._check_export(records, errors)
        workspace = self._deps.store.get_workspace(workspace_id)
        plan = workspace.plan if workspace is not None else Plan.FREE
        revision_cap = workspace.revision_cap if workspace is not None else limits_for(plan).revisions_per_note
        note_chars = limits_for(plan).note_chars
        for entry in notes:
            if len(entry.note.body) > note_chars:
                errors.add(
                    entry.line,
                    f"body has {len(entry.note.body):,} characters; the {plan.value} plan allows {note_chars:,}",
                )
        errors.raise_if_any()
        assert project_record is not None  # _check_export reports a missing project line

        project_id = existing.id if existing is not None else self._deps.ids.new_id("prj")
        placement = self._place(workspace_id, project_id, notes)
        new_notes = sum(1 for entry in notes if entry.note.id not in placement.skipped)
        if self._meter is not None and new_notes:
            self._meter.admit_new_notes(workspace_id, plan, new_notes)

        target = self._target_project(principal, slug, existing, project_id, project_record)
        if target.id != project_id:  # another import created the project meanwhile
            placement = self._place(workspace_id, target.id, notes)

        items: list[tuple[Note, list[Note]]] = []
        for entry in notes:
            if entry.note.id in placement.skipped:
                continue
            note = placement.rebase(entry.note, workspace_id, target.id)
            kept = entry.revisions[-revision_cap:] if revision_cap > 0 else []
            items.append((note, [placement.rebase(r, workspace_id, target.id) for r in kept]))

        written = revisions = links = 0
        total = len(items)
        if progress is not None:
            progress(0, total)
        for start in range(0, total, IMPORT_CHUNK):
            chunk = items[start : start + IMPORT_CHUNK]
            count = self._deps.store.import_notes(workspace_id, chunk)
            landed = chunk if count == len(chunk) else self._landed(workspace_id, chunk)
            written += count
            revisions += sum(len(revs) for _, revs in landed)
            links += sum(len(note.links) for note, _ in landed)
            self._record_storage(workspace_id, landed)
            self._notes.index_vectors(workspace_id, [note for note, _ in landed])
            if progress is not None:
                progress(min(start + IMPORT_CHUNK, total), total)
        return ImportReport(
            notes_written=written,
            notes_skipped=len(notes) - written,
            revisions_written=revisions,
            links=links,
            ids_reassigned=placement.reassigned,
            format=EXPORT_FORMAT,
        )

    def _check_export(
        self, records: list[tuple[int, ImportRecord]], errors: _Errors
    ) -> tuple[ProjectRecord | None, list[_ExportedNote]]:
        """The project line and the notes with their revisions, reporting what is out of place."""
        project: ProjectRecord | None = None
        project_line = 0
        notes: list[_ExportedNote] = []
        lines_by_id: dict[str, int] = {}
        current: _ExportedNote | None = None
        first_line = records[0][0]
        failed = {number for number, _ in errors.found}  # lines that did not decode (maybe notes): already reported
        previous_line = 0
        orphaned = False
        if not isinstance(records[0][1], ExportHeader) and not any(n < first_line for n, _ in errors.found):
            errors.add(
                first_line,
                'a Notewell export starts with its header line {"format":"notewell-export","version":1,…}',
            )
        for number, record in records:
            if any(line in failed for line in range(previous_line + 1, number)):
                current = None  # the revisions that follow belong to a line already reported
                orphaned = True
            elif not isinstance(record, RevisionRecord):
                orphaned = False
            previous_line = number
            if isinstance(record, ExportHeader):
                if number != first_line:
                    errors.add(number, "a second header line; the header is the first line, once")
            elif isinstance(record, ProjectRecord):
                if project is not None:
                    errors.add(number, f"a second project line (the first is on line {project_line})")
                elif notes:
                    errors.add(number, "the project line must come before the notes, right after the header")
                else:
                    project, project_line = record, number
                    tokens = record.default_max_tokens
                    if tokens is not None and not MIN_DEFAULT_TOKENS <= tokens <= MAX_DEFAULT_TOKENS:
                        errors.add(
                            number,
                            f"defaultMaxTokens {tokens} is out of range; use {MIN_DEFAULT_TOKENS} to "
                            f"{MAX_DEFAULT_TOKENS} or null",
                        )
            elif isinstance(record, NoteRecord):
                note = record.note
                if project is None and not project_line:
                    errors.add(number, "the project line is missing; it comes right after the header")
                    project_line = -1  # reported once
                if note.id in lines_by_id:
                    errors.add(number, f"note {note.id} is also on line {lines_by_id[note.id]}; each note appears once")
                    current, orphaned = None, True  # its revisions are not reported again
                    continue
                lines_by_id[note.id] = number
                current = _ExportedNote(number, note)
                notes.append(current)
            elif isinstance(record, RevisionRecord):
                revision = record.revision
                if current is None and orphaned:
                    continue
                if current is None or current.note.id != revision.id:
                    errors.add(number, f"a revision of {revision.id} must follow that note's line (and its revisions)")
                elif revision.version >= current.note.version:
                    errors.add(
                        number,
                        f"revision version {revision.version} is not below its note's version {current.note.version}",
                    )
                elif current.revisions and revision.version <= current.revisions[-1].version:
                    errors.add(number, "revisions of a note are listed oldest first, each version once")
                else:
                    current.revisions.append(revision)
            else:
                errors.add(number, "a memory.jsonl line inside a Notewell export; import the two files separately")
        if project is None and not project_line:
            errors.add(first_line + 1, "the project line is missing; it comes right after the header")
        return project, notes

    def _place(self, workspace_id: str, project_id: str, notes: list[_ExportedNote]) -> _Placement:
        """Which file ids are already in the project (skipped) and which need a new id (used by another project)."""
        ids = [entry.note.id for entry in notes]
        found = self._lookup(workspace_id, ids)
        skipped: set[str] = set()
        renamed: dict[str, str] = {}
        for note_id in ids:
            stored = found.get(note_id)
            if stored is None:
                continue
            if stored.project_id == project_id:
                skipped.add(note_id)
            else:
                renamed[note_id] = reassigned_id(project_id, note_id)
        if renamed:
            again = self._lookup(workspace_id, list(renamed.values()))
            for old_id, new_id in list(renamed.items()):
                stored = again.get(new_id)
                if stored is None:
                    continue
                if stored.project_id != project_id:  # 80 hashed bits: not expected to happen
                    raise InvalidArgumentError(f"Note {old_id} cannot be given a free id; nothing was imported.")
                skipped.add(old_id)
        return _Placement(skipped, renamed)

    def _lookup(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, Note]:
        found: dict[str, Note] = {}
        for start in range(0, len(note_ids), LOOKUP_CHUNK):
            found.update(self._deps.store.get_notes(workspace_id, note_ids[start : start + LOOKUP_CHUNK]))
        return found

    def _landed(self, workspace_id: str, chunk: list[tuple[Note, list[Note]]]) -> list[tuple[Note, list[Note]]]:
        """The items of a chunk that this import wrote (the others were written meanwhile by someone else)."""
        stored = self._lookup(workspace_id, [note.id for note, _ in chunk])
        return [(note, revisions) for note, revisions in chunk if stored.get(note.id) == note]

    def _target_project(
        self, principal: Principal, slug: str, existing: Project | None, project_id: str, record: ProjectRecord
    ) -> Project:
        """Create the project with the file's fields, or give an existing one the file's non-empty fields."""
        store = self._deps.store
        if existing is None:
            created = store.create_project(
                Project(
                    id=project_id,
                    workspace_id=principal.workspace_id,
                    slug=slug,
                    created_at=record.created_at,
                    updated_at=record.updated_at,
                    summary=record.summary,
                    instructions=record.instructions,
                    default_max_tokens=record.default_max_tokens,
                )
            )
            if created.id == project_id:
                return created
            existing = created
        # The same conditional merge as update_project: a concurrent edit of the project's other fields (the
        # import may have been checking a big file meanwhile) is merged on the next round, never overwritten.
        for _ in range(PROJECT_UPDATE_ATTEMPTS):
            merged = replace(
                existing,
                summary=record.summary or existing.summary,
                instructions=record.instructions or existing.instructions,
                default_max_tokens=(
                    record.default_max_tokens if record.default_max_tokens is not None else existing.default_max_tokens
                ),
            )
            if merged == existing:
                return existing
            saved = replace(merged, updated_at=rules.next_updated_at(self._deps.clock.now(), existing.updated_at))
            if store.save_project(saved, expected=existing):
                return saved
            fresh = store.get_project_by_id(principal.workspace_id, existing.id)
            if fresh is None:
                raise NotFoundError(f"Project {slug!r} was deleted meanwhile; nothing was imported.")
            existing = fresh
        raise UnavailableError(f"Project {slug!r} is being updated by others right now; retry the import.")

    def _record_storage(self, workspace_id: str, landed: Sequence[tuple[Note, Sequence[Note]]]) -> None:
        if self._meter is None or not landed:
            return
        deltas = {
            "notes": sum(1 for note, _ in landed if not note.is_deleted),
            "revisions": sum(len(revisions) for _, revisions in landed),
            "bytes": sum(len(n.body.encode()) for note, revisions in landed for n in (note, *revisions)),
        }
        # An import lands in one project: count it for that project too (get_usage of a scoped key).
        self._meter.record_storage(workspace_id, {k: v for k, v in deltas.items() if v}, landed[0][0].project_id)

    # ----- memory.jsonl ------------------------------------------------------------------------------------

    def _import_memory(
        self,
        principal: Principal,
        slug: str,
        existing_project: Project | None,
        records: list[tuple[int, ImportRecord]],
        errors: _Errors,
        progress: Progress | None,
    ) -> ImportReport:
        workspace_id = principal.workspace_id
        entities: dict[str, _Entity] = {}
        relations: list[tuple[int, RelationRecord]] = []
        for number, record in records:
            if isinstance(record, EntityRecord):
                self._add_entity(number, record, entities, errors)
            elif isinstance(record, RelationRecord):
                relations.append((number, record))
            else:
                errors.add(number, "a Notewell export line inside a memory.jsonl file; import the two files separately")

        # Notes of the project the file may name, by exact title (the newest live one when several share it).
        by_title: dict[str, Note] = {}
        if existing_project is not None:
            for note in self._feed(workspace_id, existing_project.id):
                if not note.is_deleted:
                    by_title[note.title] = note
        for entity in entities.values():
            present = by_title.get(entity.title)
            entity.note_id = present.id if present is not None else self._deps.ids.note_id()

        for number, relation in relations:
            self._add_relation(number, relation, entities, by_title, slug, errors)

        workspace = self._deps.store.get_workspace(workspace_id)
        plan = workspace.plan if workspace is not None else Plan.FREE
        note_chars = limits_for(plan).note_chars
        now = rules.format_ts(self._deps.clock.now())
        new_notes: list[Note] = []
        updates: list[tuple[Note, NoteChanges, int]] = []  # (note, changes, links added)
        skipped = 0
        for entity in entities.values():
            present = by_title.get(entity.title)
            planned = self._plan_entity(entity, present, principal, now, note_chars, errors)
            if planned is None:
                skipped += present is not None
            elif isinstance(planned, Note):
                new_notes.append(planned)
            else:
                updates.append(planned)
        errors.raise_if_any()

        if self._meter is not None and new_notes:
            self._meter.admit_new_notes(workspace_id, plan, len(new_notes))
        target = existing_project or writable_project(self._deps, principal, slug)
        new_notes = [replace(note, project_id=target.id) for note in new_notes]
        total = len(new_notes) + len(updates)
        done = written = links = 0
        if progress is not None:
            progress(0, total)
        for start in range(0, len(new_notes), IMPORT_CHUNK):
            chunk: list[tuple[Note, list[Note]]] = [(note, []) for note in new_notes[start : start + IMPORT_CHUNK]]
            count = self._deps.store.import_notes(workspace_id, chunk)
            landed = chunk if count == len(chunk) else self._landed(workspace_id, chunk)
            written += count
            links += sum(len(note.links) for note, _ in landed)
            self._record_storage(workspace_id, landed)
            self._notes.index_vectors(workspace_id, [note for note, _ in landed])
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        for note, changes, added_links in updates:
            self._notes.update(principal, note.id, changes, expected_version=note.version)
            links += added_links
            done += 1
            if progress is not None:
                progress(done, total)
        return ImportReport(
            notes_written=written,
            notes_skipped=skipped + len(new_notes) - written,
            revisions_written=0,
            links=links,
            notes_updated=len(updates),
            format=MEMORY_FORMAT,
        )

    @staticmethod
    def _add_entity(number: int, record: EntityRecord, entities: dict[str, _Entity], errors: _Errors) -> None:
        try:
            title = rules.check_title(record.name)
        except NotewellError as exc:
            errors.add(number, f"entity name: {exc.message}")
            return
        tag = _SPACES.sub("-", record.entity_type.strip().lower())
        try:
            tags = list(rules.check_tags([tag])) if tag else []
        except NotewellError:
            errors.add(
                number,
                f"entityType {record.entity_type!r} cannot become a tag; use letters, digits and '.:/+-' "
                f"(at most {rules.MAX_TAG_CHARS} characters)",
            )
            return
        observations = list(dict.fromkeys(record.observations))
        known = entities.get(title)
        if known is None:
            entities[title] = _Entity(number, title, tags, observations)
            return
        # The same entity twice (the reference server never writes that, hand-made files may): merge.
        known.tags += [t for t in tags if t not in known.tags]
        known.observations += [o for o in observations if o not in known.observations]

    @staticmethod
    def _add_relation(
        number: int,
        relation: RelationRecord,
        entities: dict[str, _Entity],
        by_title: dict[str, Note],
        slug: str,
        errors: _Errors,
    ) -> None:
        ends: list[str] = []
        for role, name in (("from", relation.source), ("to", relation.target)):
            title = _SPACES.sub(" ", name).strip()
            entity = entities.get(title)
            note = by_title.get(title)
            if entity is None and note is None:
                errors.add(
                    number,
                    f"relation {role!r} names {name!r}, which is neither an entity of the file nor the title of "
                    f"a note of project {slug!r}",
                )
                return
            ends.append(entity.note_id if entity is not None else note.id if note is not None else "")
        source, target = ends
        relation_name = relation.relation_type.strip().lower()
        if len(relation_name) > rules.MAX_TAG_CHARS:
            errors.add(
                number, f"relationType {relation.relation_type!r} is longer than {rules.MAX_TAG_CHARS} characters"
            )
            return
        if source == target:
            errors.add(number, f"relation from {relation.source!r} to itself; a note cannot link to itself")
            return
        source_title = _SPACES.sub(" ", relation.source).strip()
        owner = entities.get(source_title)
        if owner is None:
            # Relations from a note the file does not describe: give it an entity without observations.
            owner = entities[source_title] = _Entity(number, source_title, [], [], note_id=source)
        owner.links.setdefault((target, relation_name), number)

    def _plan_entity(
        self,
        entity: _Entity,
        present: Note | None,
        principal: Principal,
        now: str,
        note_chars: int,
        errors: _Errors,
    ) -> Note | tuple[Note, NoteChanges, int] | None:
        """A new note for the entity, the edit its existing note needs, or None when there is nothing to add."""
        if present is None:
            body = "\n".join(entity.observations)
            tags = entity.tags
            links = [Link(target, relation) for target, relation in entity.links]
        else:
            lines = set(present.body.split("\n"))
            missing = [o for o in entity.observations if o not in lines and ("\n" not in o or o not in present.body)]
            body = present.body
            if missing:
                body += ("" if not body or body.endswith("\n") else "\n") + "\n".join(missing)
            tags = [*present.tags, *(t for t in entity.tags if t not in present.tags)]
            have = {(link.target, link.relation) for link in present.links}
            links = [*present.links, *(Link(t, r) for t, r in entity.links if (t, r) not in have)]
        try:
            rules.check_body(body)
            if len(body) > note_chars and (present is None or body != present.body):
                raise InvalidArgumentError(
                    f"the body would have {len(body):,} characters; the plan allows {note_chars:,}"
                )
            clean_tags = rules.check_tags(tags)
            if len(links) > rules.MAX_LINKS:
                have = {(link.target, link.relation) for link in present.links} if present is not None else set()
                added = sorted(line for key, line in entity.links.items() if key not in have)
                overflow = added[max(0, rules.MAX_LINKS - len(have))]
                errors.add(
                    overflow, f"{entity.title!r} would have {len(links)} links; a note takes at most {rules.MAX_LINKS}"
                )
                return None
            clean_links = rules.check_links(links, own_id=entity.note_id)
        except NotewellError as exc:
            errors.add(entity.line, f"entity {entity.title!r}: {exc.message}")
            return None
        if present is not None:
            if body == present.body and clean_tags == present.tags and clean_links == present.links:
                return None
            changes = NoteChanges(
                body=body if body != present.body else None,
                tags=clean_tags if clean_tags != present.tags else None,
                links=clean_links if clean_links != present.links else None,
            )
            return present, changes, len(clean_links) - len(present.links)
        return Note(
            id=entity.note_id,
            workspace_id=principal.workspace_id,
            project_id="",
            title=entity.title,
            body=body,
            version=1,
            created_at=now,
            updated_at=now,
            author=principal.actor,
            write_id=self._deps.ids.new_id("w"),
            type=NoteType.NOTE,
            status=NoteStatus.CURRENT,
            tags=clean_tags,
            links=clean_links,
        )


@dataclass(frozen=True, slots=True)
class _Placement:
    skipped: set[str]  # file ids already in the target project
    renamed: dict[str, str]  # file id -> the id it gets (its own is used by another project)

    @property
    def reassigned(self) -> int:
        return sum(1 for old in self.renamed if old not in self.skipped)

    def rebase(self, note: Note, workspace_id: str, project_id: str) -> Note:
        """The note in the target project, with every id the file reassigned replaced."""
        renamed = self.renamed
        if not renamed:
            return replace(note, workspace_id=workspace_id, project_id=project_id)
        return replace(
            note,
            id=renamed.get(note.id, note.id),
            workspace_id=workspace_id,
            project_id=project_id,
            links=tuple(Link(renamed.get(link.target, link.target), link.relation) for link in note.links),
            supersedes=tuple(renamed.get(x, x) for x in note.supersedes),
            superseded_by=tuple(renamed.get(x, x) for x in note.superseded_by),
        )


def reassigned_id(project_id: str, note_id: str) -> str:
    """The id a note imported into `project_id` gets when its own is taken by another project: the same creation
    time (the first 10 characters), then 80 bits derived from the project and the old id — the same on every run."""
    value = int.from_bytes(hashlib.sha256(f"{project_id}\0{note_id}".encode()).digest()[:10], "big")
    tail = "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(75, -1, -5))
    return note_id[:12] + tail
