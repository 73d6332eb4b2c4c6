"""get_changes_since: a bounded, oldest-first stream of what changed in a project, resumable by cursor.

Two orders, one contract (strict order, never skipped, never repeated, filters locked to a sealed cursor):

* The commit sequence (`SequencedFeed`: SQLite and DynamoDB). Every write gives its note the project's next
  number inside its own transaction, so numbers follow commit order: a reader that has seen n has seen every change
  committed before it, and a change is served as soon as its write is acknowledged. A note is served once, at its
  newest change. Cursors carry the number (version 2). A `since` time, or a version-1 cursor made before the store
  had the sequence, is mapped onto it (`feed_start`, which may start a little early) and the cursor keeps that
  point as its floor: notes at or before it were served already (or are older than since) and are skipped.
* (updatedAt, id) with a horizon: projects a DynamoDB table held before it had the sequence (`feed_after` answers
  None), and the version-1 cursors made for them. A note's updatedAt is stamped before its write commits, and the
  feed index is eventually consistent, so a change stamped just before a reader's position can become visible after
  the reader has passed it. That feed therefore only serves changes stamped at least `horizon` ago, and the
  response says when to call again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import cursor as feed_cursor
from notewell.domain import lines, rules
from notewell.domain.errors import InvalidArgumentError, InvalidCursorError
from notewell.domain.model import FeedPosition, Note, NoteStatus, NoteType, Principal, Project
from notewell.domain.refs import note_ref
from notewell.services.access import Deps, visible_project

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import timedelta

    from notewell.ports import SequencedFeed

MAX_LIMIT = 200
DEFAULT_LIMIT = 50
DEFAULT_MAX_TOKENS = 4_000
# The page's text opens with its count, what to do next and the cursor (compact: under 20 tokens): about 40.
PAGE_HEADER_TOKENS = 45
MIN_MAX_TOKENS = 100
MAX_MAX_TOKENS = 32_000
EXCERPT_CHARS = 160


@dataclass(frozen=True, slots=True)
class Change:
    note: Note
    kind: str  # created | updated | deleted
    excerpt: str


@dataclass(frozen=True, slots=True)
class ChangesPage:
    project: str
    changes: list[Change]
    has_more: bool
    cursor: str
    retry_after: int | None  # seconds until changes newer than the horizon can be served
    notice: str | None
    by_ref: bool = False  # text may name notes by ref (refs.names): the tools resolve the project's refs


def change_kind(note: Note) -> str:
    if note.is_deleted:
        return "deleted"
    return "created" if note.version == 1 else "updated"


class ChangesService:
    def __init__(
        self, deps: Deps, *, cursor_key: bytes, horizon: timedelta, sequenced: SequencedFeed | None = None
    ) -> None:
        self._deps = deps
        self._key = cursor_key
        self._horizon = horizon
        self._sequenced = sequenced

    def since(
        self,
        principal: Principal,
        project: str,
        *,
        since: str | None = None,
        cursor: str | None = None,
        types: Sequence[NoteType] = (),
        statuses: Sequence[NoteStatus] = (),
        limit: int = DEFAULT_LIMIT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> ChangesPage:
        if since is not None and cursor is not None:
            raise InvalidArgumentError("Pass since or cursor, not both: cursor continues, since starts afresh.")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit {limit} is out of range; use 1 to {MAX_LIMIT}.")
        if not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
            raise InvalidArgumentError(
                f"maxTokens {max_tokens} is out of range; use {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS}."
            )
        type_names = tuple(sorted({t.value for t in types}))
        status_names = tuple(sorted({s.value for s in statuses}))
        target = visible_project(self._deps, principal, project)

        position: FeedPosition | None = None
        seq: int | None = None
        floor: FeedPosition | None = None
        if cursor is not None:
            state = feed_cursor.unseal(
                cursor, self._key, workspace_id=principal.workspace_id,
                project_ids=(target.id, "") if target else ("",),
            )  # fmt: skip
            # A cursor from before the project existed ('' project) continues once it does.
            if state.workspace_id != principal.workspace_id or state.project_id not in (
                "",
                target.id if target else "",
            ):
                raise InvalidCursorError(
                    f"This cursor belongs to another project; start {project!r} with since, or pass its own cursor."
                )
            if (state.types, state.statuses) != (type_names, status_names):  # filters are locked to the cursor
                raise InvalidArgumentError(
                    "This cursor was made with other types/statuses filters; only limit and maxTokens may change "
                    f"between pages (the cursor has types={list(state.types)}, statuses={list(state.statuses)})."
                )
            position, seq, floor = state.position, state.seq, state.floor
        elif since is not None:
            try:
                start = rules.parse_ts(since)
            except InvalidArgumentError as exc:
                raise InvalidArgumentError(f"since: {exc.message}") from None
            # A future `since` reads as now: its cursor must not skip what is written until then.
            start = min(start, self._deps.clock.now())
            # '' sorts before every id: changes stamped exactly at `since` are included.
            position = FeedPosition(rules.format_ts(start), "")

        if target is None:
            empty = feed_cursor.FeedCursor(principal.workspace_id, "", type_names, status_names, position, seq, floor)
            return ChangesPage(
                project, [], False, feed_cursor.seal(empty, self._key), None,
                f"Project {project!r} has no notes yet; there is nothing to resume.",
            )  # fmt: skip

        if self._sequenced is not None:
            page = self._sequenced_page(
                principal, target, self._sequenced, position, seq, floor, types, statuses, limit, max_tokens
            )
            if page is not None:
                return page
        if seq is not None:  # a sequence cursor on a store without the sequence: another deployment's
            raise InvalidCursorError("This cursor is not one this server issued; start again with since.")
        now = self._deps.clock.now()
        horizon = rules.format_ts(now - self._horizon)
        scan = self._deps.store.changes_after(
            principal.workspace_id, target.id, position, horizon=horizon, types=list(types), statuses=list(statuses),
            limit=limit,
        )  # fmt: skip
        changes: list[Change] = []
        by_ref = target.named_by_ref
        names = _Names(by_ref)
        spent = PAGE_HEADER_TOKENS
        last = position
        for note in scan.notes:
            change = _change(note)
            cost = names.cost(change)
            if changes and spent + cost > max_tokens * (1 - rules.TOKENIZER_MARGIN):
                break  # the budget ends the page, never before the first change
            changes.append(change)
            names.add(change)
            spent += cost
            last = FeedPosition(note.updated_at, note.id)
        cut_short = len(changes) < len(scan.notes)
        if not cut_short and scan.position is not None:
            last = scan.position  # also skips what the store examined and filtered out
        has_more = cut_short or scan.more
        state = feed_cursor.FeedCursor(principal.workspace_id, target.id, type_names, status_names, last)
        retry_after = None
        notice = None
        if not has_more and scan.settling:
            retry_after = max(1, int(self._horizon.total_seconds()))
            notice = f"Newer changes are settling; call again with this cursor in {retry_after} s."
        return ChangesPage(
            target.slug, changes, has_more, feed_cursor.seal(state, self._key), retry_after, notice, by_ref
        )

    def _sequenced_page(
        self,
        principal: Principal,
        target: Project,
        feed: SequencedFeed,
        position: FeedPosition | None,
        seq: int | None,
        floor: FeedPosition | None,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
        max_tokens: int,
    ) -> ChangesPage | None:
        """A page of the commit sequence; None when the store cannot serve this project from it (the caller serves
        the (updatedAt, id) feed, where a cursor made from this position keeps working)."""
        start = seq
        if start is None and position is not None:
            # A since time or a version-1 cursor: the sequence from a number at or before that point, skipping what
            # is at or before it (the floor, kept in the cursor: a note edited since has moved past it).
            start, floor = feed.feed_start(principal.workspace_id, target.id, position), position
        scan = feed.feed_after(
            principal.workspace_id, target.id, start or 0, types=list(types), statuses=list(statuses), limit=limit
        )
        if scan is None:
            if seq is not None:
                raise InvalidCursorError("This cursor is not one this server issued; start again with since.")
            return None
        changes: list[Change] = []
        by_ref = target.named_by_ref
        names = _Names(by_ref)
        spent, last, cut_short = PAGE_HEADER_TOKENS, start or 0, False
        for entry in scan.changes:
            note = entry.note
            if floor is not None and (note.updated_at, note.id) <= (floor.updated_at, floor.note_id):
                last = entry.seq
                continue  # served before this cursor moved onto the sequence, or older than since
            change = _change(note)
            cost = names.cost(change)
            if changes and spent + cost > max_tokens * (1 - rules.TOKENIZER_MARGIN):
                cut_short = True
                break  # the budget ends the page, never before the first change
            changes.append(change)
            names.add(change)
            spent += cost
            last = entry.seq
        if not cut_short:
            last = scan.position
        state = feed_cursor.FeedCursor(
            principal.workspace_id, target.id, tuple(sorted({t.value for t in types})),
            tuple(sorted({s.value for s in statuses})), None, last, floor,
        )  # fmt: skip
        has_more = cut_short or scan.more
        retry_after = notice = None
        if scan.settling and not has_more:
            retry_after, notice = 1, "A change is still being committed; call again with this cursor in 1 s."
        return ChangesPage(
            target.slug, changes, has_more, feed_cursor.seal(state, self._key), retry_after, notice, by_ref
        )


def _change(note: Note) -> Change:
    return Change(note, change_kind(note), rules.excerpt(note.body, EXCERPT_CHARS))


def _cost(change: Change, name: str) -> int:
    """What the change's line costs in the page's text, the note named `name`: the line get_changes_since sends."""
    note = change.note
    line = lines.change_line(
        name, change.kind, note.version, note.updated_at, note.type.value, note.status.value, note.title,
        change.excerpt,
    )  # fmt: skip
    return rules.estimate_tokens(line) + 1


class _Names:
    """A page's notes named as its text will name them (refs.names over the page), while the page fills: by ref, by
    whole id where two changes of the page share a ref, or all by id when `by_ref` is False."""

    def __init__(self, by_ref: bool) -> None:
        self._by_ref = by_ref
        self._named: dict[str, Change | None] = {}  # ref: the page's one change named by it, None once two share it

    def cost(self, change: Change) -> int:
        """What adding `change` adds to the page's text: its line and, when it shares a ref with a change named by
        that ref so far, that change's line named by its whole id from then on."""
        ref = note_ref(change.note.id) if self._by_ref else None
        if ref is None:
            return _cost(change, change.note.id)
        if ref not in self._named:
            return _cost(change, ref)
        cost = _cost(change, change.note.id)
        if (first := self._named[ref]) is not None:
            cost += _cost(first, first.note.id) - _cost(first, ref)
        return cost

    def add(self, change: Change) -> None:
        ref = note_ref(change.note.id) if self._by_ref else None
        if ref is not None:
            self._named[ref] = None if ref in self._named else change
