"""Scoping rules shared by every service: which projects and notes a principal may see or change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.errors import ForbiddenError, InvalidArgumentError, NotFoundError
from notewell.domain.model import Note, Principal, Project
from notewell.domain.refs import parse_ref

if TYPE_CHECKING:
    from collections.abc import Callable

    from notewell.ports import Clock, IdSource, Store


@dataclass(frozen=True, slots=True)
class Deps:
    store: Store
    clock: Clock
    ids: IdSource


def require_write(principal: Principal) -> None:
    if principal.read_only:
        raise ForbiddenError("This key is read-only; ask for a read-write key to change notes.")


def visible_project(deps: Deps, principal: Principal, slug: str) -> Project | None:
    """The project named `slug` if it exists and this principal may read it; None if it does not exist.

    Raises:
        NotFoundError: the key is scoped to another project (never reveal whether this one exists).
    """
    rules.check_project_slug(slug)
    project = deps.store.get_project(principal.workspace_id, slug)
    if principal.project_id is not None and (project is None or project.id != principal.project_id):
        raise NotFoundError(f"Project {slug!r} is not available to this key; it is scoped to one project.")
    return project


def writable_project(
    deps: Deps, principal: Principal, slug: str, *, before_create: Callable[[], object] | None = None
) -> Project:
    """The project named `slug`, created on first write; `before_create` runs first when it must be created (a
    plan check that refuses the write then leaves no empty project behind).

    Raises:
        ForbiddenError: read-only key.
        NotFoundError: the key is scoped to another project.
    """
    require_write(principal)
    project = visible_project(deps, principal, slug)
    if project is not None:
        return project
    if before_create is not None:
        before_create()
    now = rules.format_ts(deps.clock.now())
    return deps.store.create_project(
        Project(
            id=deps.ids.new_id("prj"),
            workspace_id=principal.workspace_id,
            slug=slug,
            created_at=now,
            updated_at=now,
        )
    )


MAX_REF_MATCHES = 10  # notes one ref may name before it is refused as ambiguous anyway: a bounded read


def note_id_of(deps: Deps, principal: Principal, value: str) -> str:
    """The note id `value` names: itself, or the one note with that ref (domain/refs.py) the principal may see.

    Raises:
        InvalidArgumentError: neither an id nor a ref, or a ref several such notes share (it names their ids).
        NotFoundError: no note the principal may see has that ref (nothing said about notes it may not see).
    """
    ref = parse_ref(value) if isinstance(value, str) else None
    if ref is None:
        return rules.check_note_id(value)
    ids = deps.store.ids_with_ref(principal.workspace_id, ref, limit=MAX_REF_MATCHES)
    if len(ids) > 1 or principal.project_id is not None:  # only the caller's notes count, also for ambiguity
        found = deps.store.get_notes(principal.workspace_id, ids)
        ids = [note_id for note_id in ids if note_id in found and may_see(principal, found[note_id])]
    if not ids:
        raise NotFoundError(f"No note has the ref {ref}; get_context and search_notes name the notes that exist.")
    if len(ids) > 1:
        raise InvalidArgumentError(f"The ref {ref} names {len(ids)} notes ({', '.join(ids)}); pass the whole id.")
    return ids[0]


def visible_note(deps: Deps, principal: Principal, note_id: str, *, allow_deleted: bool = False) -> Note:
    """The note if this principal may see it.

    Raises:
        InvalidArgumentError: not a note id.
        NotFoundError: unknown, in another workspace or project, or deleted (unless allowed).
    """
    rules.check_note_id(note_id)
    note = deps.store.get_note(principal.workspace_id, note_id)
    if note is None or not may_see(principal, note):
        raise NotFoundError(f"No note {note_id}; search_notes or get_context list the ids that exist.")
    if note.is_deleted and not allow_deleted:
        raise NotFoundError(f"Note {note_id} is deleted; call restore_note with its id to bring it back.")
    return note


def may_see(principal: Principal, note: Note) -> bool:
    return note.workspace_id == principal.workspace_id and (
        principal.project_id is None or note.project_id == principal.project_id
    )
