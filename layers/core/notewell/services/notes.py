"""Note use cases: create, read, edit, patch, delete, restore, history.

Every edit is a conditional commit on the version that was read, so no path reads and then writes blindly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.branches import note_branch
from notewell.domain.errors import (
    IdempotencyKeyReusedError,
    InvalidArgumentError,
    NotFoundError,
    PatchTargetMissingError,
    TooLargeError,
    VersionConflictError,
)
from notewell.domain.freshness import CHECKED_STATUSES
from notewell.domain.model import (
    Anchor,
    IdempotencyRecord,
    Link,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Plan,
    Principal,
)
from notewell.domain.plans import UPGRADE_HINT, limits_for, smallest_note_chars
from notewell.domain.portability import EXPORT_HORIZON
from notewell.ports import IdempotencyKeyTakenError
from notewell.services.access import (
    Deps,
    may_see,
    note_id_of,
    require_write,
    visible_note,
    visible_project,
    writable_project,
)
from notewell.services.metering import Meter, storage_deltas

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from notewell.ports import Vector
    from notewell.services.meaning import Meaning

IDEMPOTENCY_TTL = timedelta(hours=24)
# `anchored` reads the change feed to its end (EXPORT_HORIZON), of the statuses a freshness check is worth.
_FEED_PAGE = 200


def idempotency_scope(principal: Principal, project: str, key: str) -> str:
    """The stored name of an idempotency key: one per caller (API key) and project, so no caller ever replays, is
    refused by or blocks another caller's record, and one project's record never answers for another project."""
    rules.check_unicode("idempotencyKey", key)  # stored as part of the record's key
    return f"{principal.actor}|{project}|{key}"


# Without expectedVersion, an edit that loses a race is re-read and re-applied (last write wins); the budget
# covers a burst of concurrent writers on one note, each round of which has at least one winner.
UNCONDITIONED_RETRIES = 25


class PatchMode(StrEnum):
    APPEND = "append"
    PREPEND = "prepend"
    REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class NoteView:
    """A note with its project's slug, as readers see it."""

    note: Note
    project: str


@dataclass(frozen=True, slots=True)
class NoteBatch:
    found: list[NoteView]
    missing: list[str]


@dataclass(frozen=True, slots=True)
class RevisionPage:
    note: Note
    revisions: list[Note]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class NoteChanges:
    """Fields an update may change; None means 'leave as is'."""

    title: str | None = None
    body: str | None = None
    type: NoteType | None = None
    status: NoteStatus | None = None
    tags: Sequence[str] | None = None
    links: Sequence[Link] | None = None
    importance: int | None = None
    canonical: bool | None = None
    supersedes: Sequence[str] | None = None  # added to the note's list; each named note becomes superseded
    anchors: Sequence[Anchor] | None = None  # replaces the note's anchors; () removes them


def anchors_hashed(anchors: Sequence[Anchor]) -> dict[str, object]:
    """The anchors' part of a request hash: nothing without anchors, so a retry across the upgrade that added them
    still matches its idempotency record."""
    return {"anchors": [rules.anchor_json(anchor) for anchor in anchors]} if anchors else {}


def request_hash(operation: str, payload: dict[str, object]) -> str:
    canonical = json.dumps({"op": operation, **payload}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _check_plan_size(plan: Plan, body: str) -> None:
    limit = limits_for(plan).note_chars
    if len(body) > limit:
        raise TooLargeError(
            f"Note body has {len(body):,} characters; the {plan.value} plan allows {limit:,}. Split it into linked "
            f"notes, or {UPGRADE_HINT}."
        )


def _check_client_status(status: NoteStatus) -> NoteStatus:
    if status is NoteStatus.SUPERSEDED:
        raise InvalidArgumentError(
            "A note becomes 'superseded' only through its replacement: create the new note with "
            "supersedes: [id] instead of setting the status."
        )
    return status


class NoteService:
    def __init__(self, deps: Deps, meter: Meter | None = None, meaning: Meaning | None = None) -> None:
        self._deps = deps
        self._meter = meter
        self._meaning = meaning

    # ----- reads -------------------------------------------------------------------------------------------

    def get(self, principal: Principal, note_id: str) -> NoteView:
        note_id = self.note_id(principal, note_id)
        note = visible_note(self._deps, principal, note_id)
        return NoteView(note, self.slug(principal, note.project_id))

    def get_many(self, principal: Principal, note_ids: Sequence[str]) -> NoteBatch:
        if not note_ids:
            raise InvalidArgumentError("Pass at least one note id in ids.")
        if len(note_ids) > rules.MAX_GET_NOTES:
            raise InvalidArgumentError(
                f"get_notes takes at most {rules.MAX_GET_NOTES} ids ({len(note_ids)} given); split the call."
            )
        named = {asked: self._named(principal, asked) for asked in dict.fromkeys(note_ids)}  # id or ref: its id
        found = self._deps.store.get_notes(principal.workspace_id, [i for i in named.values() if i is not None])
        views: list[NoteView] = []
        missing: list[str] = []
        slugs: dict[str, str] = {}
        for asked, note_id in named.items():
            note = found.get(note_id) if note_id is not None else None
            if note is None or note.is_deleted or not may_see(principal, note):
                missing.append(asked)
                continue
            if any(view.note.id == note.id for view in views):
                continue  # asked for by id and by ref: one note
            if note.project_id not in slugs:
                slugs[note.project_id] = self.slug(principal, note.project_id)
            views.append(NoteView(note, slugs[note.project_id]))
        return NoteBatch(views, missing)

    def revisions(
        self, principal: Principal, note_id: str, *, limit: int = 20, cursor: str | None = None
    ) -> RevisionPage:
        note_id = self.note_id(principal, note_id)
        note = visible_note(self._deps, principal, note_id, allow_deleted=True)
        if not 1 <= limit <= 100:
            raise InvalidArgumentError(f"limit {limit} is out of range; use 1 to 100.")
        before = note.version
        if cursor is not None:
            position = rules.parse_decimal(cursor)
            if position is None or not 1 <= position <= note.version:
                raise InvalidArgumentError(
                    "cursor is not one this tool returned; pass nextCursor from the previous page, or omit it."
                )
            before = position
        page = self._deps.store.list_revisions(principal.workspace_id, note_id, limit=limit + 1, before_version=before)
        more = len(page) > limit
        page = page[:limit]
        return RevisionPage(note, page, str(page[-1].version) if more and page else None)

    def revision(self, principal: Principal, note_id: str, version: int) -> Note:
        note_id = self.note_id(principal, note_id)
        note = visible_note(self._deps, principal, note_id, allow_deleted=True)
        if version == note.version:
            return note
        if not 1 <= version < note.version:
            raise NotFoundError(f"Note {note_id} has versions 1 to {note.version}; ask for one in that range.")
        found = self._deps.store.get_revision(principal.workspace_id, note_id, version)
        if found is None:
            raise NotFoundError(
                f"Version {version} of note {note_id} is no longer kept (old revisions are pruned); "
                "list_note_revisions shows the versions that remain."
            )
        return found

    # ----- writes ------------------------------------------------------------------------------------------

    def create(
        self,
        principal: Principal,
        project: str,
        *,
        title: str,
        body: str,
        type: NoteType = NoteType.NOTE,  # noqa: A002 - the contract's field name
        status: NoteStatus = NoteStatus.CURRENT,
        tags: Sequence[str] = (),
        links: Sequence[Link] = (),
        importance: int = 3,
        canonical: bool = False,
        supersedes: Sequence[str] = (),
        idempotency_key: str | None = None,
        anchors: Sequence[Anchor] = (),
        branch: str | None = None,
    ) -> NoteView:
        require_write(principal)
        clean_title = rules.check_title(title)
        clean_anchors = rules.check_anchors(anchors)
        if branch is not None:
            rules.check_branch(branch)
        rules.check_body(body)
        clean_tags = rules.check_tags(tags)
        rules.check_importance(importance)
        _check_client_status(status)
        note_id = self._deps.ids.note_id()
        clean_links = rules.check_links(self.links_of(principal, links), own_id=note_id)
        superseded_ids = list(dict.fromkeys(self.note_ids(principal, supersedes)))
        if len(superseded_ids) > rules.MAX_SUPERSEDES:
            raise InvalidArgumentError(
                f"A note can supersede at most {rules.MAX_SUPERSEDES} notes at once; split the change."
            )

        hashed = None
        if idempotency_key is not None:
            hashed = request_hash(
                "create_note",
                {
                    "project": project,
                    "title": clean_title,
                    "body": body,
                    "type": type,
                    "status": status,
                    "tags": clean_tags,
                    "links": [(x.target, x.relation) for x in clean_links],
                    "importance": importance,
                    "canonical": canonical,
                    "supersedes": superseded_ids,
                    **anchors_hashed(clean_anchors),
                    **({"branch": branch} if branch is not None else {}),
                },
            )
            replayed = self._replay(principal, project, idempotency_key, hashed)
            if replayed is not None:
                return replayed

        self.check_plan_size(principal, body)
        target = writable_project(
            self._deps, principal, project, before_create=lambda: self.admit_new_notes(principal, 1)
        )
        now = rules.format_ts(self._deps.clock.now())
        write_id = idempotency_key or self._deps.ids.new_id("w")
        note = Note(
            id=note_id,
            workspace_id=principal.workspace_id,
            project_id=target.id,
            title=clean_title,
            body=body,
            version=1,
            created_at=now,
            updated_at=now,
            author=principal.actor,
            write_id=write_id,
            type=type,
            status=status,
            tags=clean_tags,
            links=clean_links,
            importance=importance,
            canonical=canonical,
            supersedes=tuple(superseded_ids),
            anchors=clean_anchors,
            branch=note_branch(target, branch),
        )
        writes = [NoteWrite(note, expected_version=None)]
        writes.extend(self.supersession_writes(principal, target.id, note, superseded_ids))

        record = None
        if idempotency_key is not None and hashed is not None:
            record = self.idempotency_record(principal, project, idempotency_key, hashed, {"id": note.id, "version": 1})
        try:
            self.commit(principal, writes, record)
        except IdempotencyKeyTakenError as taken:
            # A concurrent twin won the race: answer as its replay would.
            return self._replay_record(principal, taken.record, idempotency_key or "", hashed or "")
        return NoteView(note, target.slug)

    def update(
        self, principal: Principal, note_id: str, changes: NoteChanges, *, expected_version: int | None = None
    ) -> NoteView:
        require_write(principal)
        note_id = self.note_id(principal, note_id)
        if changes == NoteChanges():  # an empty edit would still cost a version and a revision
            raise InvalidArgumentError(
                "Nothing to change: send at least one of title, body, type, status, tags, links, importance, "
                "canonical or anchors; nothing was written."
            )
        if changes.title is not None:
            rules.check_title(changes.title)
        if changes.body is not None:
            rules.check_body(changes.body)
        if changes.tags is not None:
            rules.check_tags(changes.tags)
        if changes.links is not None:
            links = self.links_of(principal, changes.links)
            rules.check_links(links, own_id=note_id)
            changes = replace(changes, links=links)
        if changes.importance is not None:
            rules.check_importance(changes.importance)
        if changes.status is not None:
            _check_client_status(changes.status)
        anchors = rules.check_anchors(changes.anchors) if changes.anchors is not None else None

        def apply(note: Note) -> Note:
            return replace(
                note,
                title=rules.check_title(changes.title) if changes.title is not None else note.title,
                body=changes.body if changes.body is not None else note.body,
                type=changes.type if changes.type is not None else note.type,
                status=changes.status if changes.status is not None else note.status,
                tags=rules.check_tags(changes.tags) if changes.tags is not None else note.tags,
                links=rules.check_links(changes.links, own_id=note.id) if changes.links is not None else note.links,
                importance=changes.importance if changes.importance is not None else note.importance,
                canonical=changes.canonical if changes.canonical is not None else note.canonical,
                supersedes=tuple(dict.fromkeys((*note.supersedes, *(changes.supersedes or ())))),
                anchors=anchors if anchors is not None else note.anchors,
            )

        def supersede(new: Note) -> list[NoteWrite]:
            return self.supersession_writes(
                principal, new.project_id, new, list(dict.fromkeys(changes.supersedes or ()))
            )

        if changes.supersedes is not None:
            if len(changes.supersedes) > rules.MAX_SUPERSEDES:
                raise InvalidArgumentError(
                    f"A note can supersede at most {rules.MAX_SUPERSEDES} notes at once; split the change."
                )
            changes = replace(changes, supersedes=self.note_ids(principal, changes.supersedes))
        return self._edit(principal, note_id, apply, expected_version=expected_version, extra_writes=supersede)

    def patch(
        self,
        principal: Principal,
        note_id: str,
        *,
        mode: PatchMode,
        text: str,
        find: str | None = None,
        expected_version: int | None = None,
    ) -> NoteView:
        require_write(principal)
        note_id = self.note_id(principal, note_id)
        if mode is PatchMode.REPLACE:
            if not find:
                raise InvalidArgumentError("mode 'replace' needs find: the exact text to replace.")
        else:
            if find is not None:
                raise InvalidArgumentError(f"find is only used with mode 'replace', not '{mode}'; drop it.")
            if not text:
                raise InvalidArgumentError(f"text is empty; give the text to {mode}.")

        def apply(note: Note) -> Note:
            body = note.body
            if mode is PatchMode.APPEND:
                separator = "" if not body or body.endswith("\n") else "\n"
                new_body = body + separator + text
            elif mode is PatchMode.PREPEND:
                separator = "" if not body or text.endswith("\n") else "\n"
                new_body = text + separator + body
            else:
                assert find is not None
                at = body.find(find)
                if at < 0:
                    raise PatchTargetMissingError(
                        f"The find text does not occur in note {note.id} (v{note.version}); nothing was "
                        "changed. Call get_note to see the current body and retry with exact text."
                    )
                new_body = body[:at] + text + body[at + len(find) :]
            rules.check_body(new_body)
            return replace(note, body=new_body)

        return self._edit(principal, note_id, apply, expected_version=expected_version)

    def delete(self, principal: Principal, note_id: str, *, expected_version: int | None = None) -> NoteView:
        require_write(principal)
        note_id = self.note_id(principal, note_id)
        current = visible_note(self._deps, principal, note_id, allow_deleted=True)
        if current.is_deleted:
            if expected_version is not None and expected_version != current.version:
                raise VersionConflictError(note_id, expected_version, current.version)
            return NoteView(current, self.slug(principal, current.project_id))  # already deleted: nothing to do
        now = rules.format_ts(self._deps.clock.now())
        return self._edit(
            principal,
            note_id,
            lambda note: replace(note, deleted_at=now),
            expected_version=expected_version,
        )

    def restore(self, principal: Principal, note_id: str) -> NoteView:
        require_write(principal)
        note_id = self.note_id(principal, note_id)
        current = visible_note(self._deps, principal, note_id, allow_deleted=True)
        if not current.is_deleted:
            return NoteView(current, self.slug(principal, current.project_id))
        return self._edit(
            principal, note_id, lambda note: replace(note, deleted_at=None), expected_version=None, allow_deleted=True
        )

    def anchor(self, principal: Principal, note_id: str, anchors: Sequence[Anchor]) -> NoteView:
        """Add anchors to a note, each replacing the one it has of the same key (Anchor.key), as one new version."""
        require_write(principal)
        note_id = self.note_id(principal, note_id)
        added = rules.check_anchors(anchors)
        if not added:
            raise InvalidArgumentError("No anchor given; name a file, lines or a symbol to anchor the note to.")
        return self._edit(
            principal,
            note_id,
            lambda note: replace(note, anchors=rules.check_anchors((*note.anchors, *added))),
            expected_version=None,
        )

    def anchored(self, principal: Principal, project: str) -> list[NoteView]:
        """The project's live anchored notes (not deleted, superseded or historical), oldest change first; none for
        an unknown project. Reads the project's whole change feed."""
        target = visible_project(self._deps, principal, project)
        if target is None:
            return []
        found: list[NoteView] = []
        seen: set[str] = set()
        position = None
        while True:
            scan = self._deps.store.changes_after(
                principal.workspace_id, target.id, position, horizon=EXPORT_HORIZON, types=(),
                statuses=CHECKED_STATUSES, limit=_FEED_PAGE,
            )  # fmt: skip
            for note in scan.notes:
                if note.anchors and not note.is_deleted and note.id not in seen:
                    seen.add(note.id)
                    found.append(NoteView(note, target.slug))
            if not scan.more or scan.position is None or scan.position == position:
                return found
            position = scan.position

    # ----- note ids and refs -------------------------------------------------------------------------------

    def note_id(self, principal: Principal, value: str) -> str:
        """The id a tool argument names: an id as it is, a ref resolved (access.note_id_of)."""
        return note_id_of(self._deps, principal, value)

    def note_ids(self, principal: Principal, values: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.note_id(principal, value) for value in values)

    def links_of(self, principal: Principal, links: Sequence[Link]) -> tuple[Link, ...]:
        return tuple(replace(link, target=self.note_id(principal, link.target)) for link in links)

    def _named(self, principal: Principal, value: str) -> str | None:
        """get_notes' reading of one value: its id, or None for a ref no visible note has (listed as missing)."""
        try:
            return self.note_id(principal, value)
        except NotFoundError:
            return None

    # ----- internals ---------------------------------------------------------------------------------------

    def _edit(
        self,
        principal: Principal,
        note_id: str,
        apply: Callable[[Note], Note],
        *,
        expected_version: int | None,
        allow_deleted: bool = False,
        extra_writes: Callable[[Note], list[NoteWrite]] | None = None,
    ) -> NoteView:
        """Read, apply, and commit on the version read; re-read on a lost race only when the caller did not
        pin a version."""
        attempts = 1 if expected_version is not None else UNCONDITIONED_RETRIES
        for attempt in range(attempts):
            current = visible_note(self._deps, principal, note_id, allow_deleted=True)
            if current.is_deleted and not allow_deleted:
                raise NotFoundError(f"Note {note_id} is deleted; call restore_note with its id before editing it.")
            if expected_version is not None and expected_version != current.version:
                raise VersionConflictError(note_id, expected_version, current.version)
            edited = apply(current)
            now = self._deps.clock.now()
            new = replace(
                edited,
                version=current.version + 1,
                updated_at=rules.next_updated_at(now, current.updated_at),
                author=principal.actor,
                write_id=self._deps.ids.new_id("w"),
            )
            try:
                writes = [NoteWrite(new, expected_version=current.version, previous=current)]
                if extra_writes is not None:
                    writes += extra_writes(new)
                self.commit(principal, writes)
            except VersionConflictError as conflict:
                if expected_version is not None:
                    raise VersionConflictError(note_id, expected_version, conflict.current) from conflict
                if attempt == attempts - 1:
                    raise
                continue
            return NoteView(new, self.slug(principal, new.project_id))
        raise AssertionError("unreachable")

    def supersession_writes(
        self, principal: Principal, project_id: str, new: Note, old_ids: Sequence[str]
    ) -> list[NoteWrite]:
        writes: list[NoteWrite] = []
        if not old_ids:
            return writes
        found = self._deps.store.get_notes(principal.workspace_id, list(old_ids))
        for old_id in old_ids:
            old = found.get(old_id)
            if old_id == new.id:
                raise InvalidArgumentError("A note cannot supersede itself; drop its own id from supersedes.")
            if old is None or not may_see(principal, old):
                raise NotFoundError(f"supersedes names {old_id}, which does not exist; check the id.")
            if old.project_id != project_id:
                raise InvalidArgumentError(
                    f"Note {old_id} belongs to another project; a note can only supersede notes of its own project."
                )
            if old.is_deleted:
                raise InvalidArgumentError(
                    f"Note {old_id} is deleted; restore_note it first or drop it from supersedes."
                )
            writes.append(
                NoteWrite(
                    replace(
                        old,
                        status=NoteStatus.SUPERSEDED,
                        superseded_by=tuple(dict.fromkeys((*old.superseded_by, new.id))),
                        version=old.version + 1,
                        updated_at=rules.next_updated_at(self._deps.clock.now(), old.updated_at),
                        author=principal.actor,
                        write_id=new.write_id,
                    ),
                    expected_version=old.version,
                    previous=old,
                )
            )
        return writes

    def commit(
        self,
        principal: Principal,
        writes: Sequence[NoteWrite],
        record: IdempotencyRecord | None = None,
        vectors: Mapping[str, Vector] | None = None,
    ) -> None:
        """Apply the writes atomically, within the workspace plan's limits, and meter the storage they use; then
        store the notes' vectors (`vectors`: those the caller already computed, by note id)."""
        workspace = self._deps.store.get_workspace(principal.workspace_id)
        cap = workspace.revision_cap if workspace is not None else 50
        plan = workspace.plan if workspace is not None else Plan.FREE
        for write in writes:
            changed_body = write.previous is None or write.previous.body != write.note.body
            if changed_body:
                _check_plan_size(plan, write.note.body)
        inserts = sum(1 for w in writes if w.expected_version is None)
        if self._meter is not None and inserts:
            self._meter.admit_new_notes(principal.workspace_id, plan, inserts)
        self._deps.store.commit(principal.workspace_id, writes, revision_cap=cap, idempotency=record)
        if self._meter is not None:
            for project_id in dict.fromkeys(w.note.project_id for w in writes):  # per project too (get_usage)
                mine = [w for w in writes if w.note.project_id == project_id]
                self._meter.record_storage(principal.workspace_id, storage_deltas(mine, cap), project_id)
        if self._meaning is not None:  # every written note: a vector is kept at its note's version
            self._meaning.index(principal.workspace_id, [w.note for w in writes], vectors)

    def index_vectors(self, workspace_id: str, notes: Sequence[Note]) -> None:
        """Store the vectors of notes written without `commit` (imports), when an embedder is configured."""
        if self._meaning is not None:
            self._meaning.index(workspace_id, notes)

    def admit_new_notes(self, principal: Principal, count: int) -> None:
        """Refuse (403) `count` new notes over the plan's note count, before anything is written (commit checks
        again, for the notes each write actually adds)."""
        if self._meter is None:
            return
        workspace = self._deps.store.get_workspace(principal.workspace_id)
        self._meter.admit_new_notes(
            principal.workspace_id, workspace.plan if workspace is not None else Plan.FREE, count
        )

    def check_plan_size(self, principal: Principal, body: str) -> None:
        """Refuse a new body over the workspace plan's note size before anything, even its project, is written
        (commit checks again, for the bodies edits make)."""
        if len(body) <= smallest_note_chars():
            return
        workspace = self._deps.store.get_workspace(principal.workspace_id)
        _check_plan_size(workspace.plan if workspace is not None else Plan.FREE, body)

    def live_idempotency(self, principal: Principal, project: str, key: str) -> IdempotencyRecord | None:
        """The unexpired record of this caller's idempotency key for `project`, if any."""
        record = self._deps.store.get_idempotency(principal.workspace_id, idempotency_scope(principal, project, key))
        now = rules.format_ts(self._deps.clock.now())
        return None if record is None or record.expires_at <= now else record

    def idempotency_record(
        self, principal: Principal, project: str, key: str, hashed: str, result: dict[str, str | int]
    ) -> IdempotencyRecord:
        now = self._deps.clock.now()
        return IdempotencyRecord(
            workspace_id=principal.workspace_id,
            key=idempotency_scope(principal, project, key),
            request_hash=hashed,
            result=result,
            recorded_at=rules.format_ts(now),
            expires_at=rules.format_ts(now + IDEMPOTENCY_TTL),
        )

    def _replay(self, principal: Principal, project: str, key: str, hashed: str) -> NoteView | None:
        record = self.live_idempotency(principal, project, key)
        return None if record is None else self._replay_record(principal, record, key, hashed)

    def _replay_record(self, principal: Principal, record: IdempotencyRecord, key: str, hashed: str) -> NoteView:
        if record.request_hash != hashed:
            raise IdempotencyKeyReusedError(
                f"idempotencyKey {key!r} was already used for a different request; use a new key for new content."
            )
        note = visible_note(self._deps, principal, str(record.result["id"]), allow_deleted=True)
        return NoteView(note, self.slug(principal, note.project_id))

    def slug(self, principal: Principal, project_id: str) -> str:
        project = self._deps.store.get_project_by_id(principal.workspace_id, project_id)
        return project.slug if project is not None else project_id
