"""Projects: listing and the fields agents read first (summary, instructions, default budget)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from notewell.domain import branches, rules
from notewell.domain.errors import (
    ForbiddenError,
    InvalidArgumentError,
    NotFoundError,
    UnavailableError,
    VersionConflictError,
)
from notewell.domain.model import NoteWrite
from notewell.ports import TagRenameProgress
from notewell.services.access import Deps, require_write, visible_project, writable_project

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.model import FeedPosition, Note, Principal, Project
    from notewell.services.notes import NoteService

MIN_DEFAULT_TOKENS = 256
MAX_DEFAULT_TOKENS = 32_000
CLEAR_DEFAULT_TOKENS = 0  # defaultMaxTokens 0 removes the project's default (get_context's own default applies)
PROJECT_UPDATE_ATTEMPTS = 5  # read-merge-write rounds before a contended update_project gives up (503)


class ProjectService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def list(self, principal: Principal) -> list[Project]:
        projects = self._deps.store.list_projects(principal.workspace_id)
        if principal.project_id is not None:
            projects = [p for p in projects if p.id == principal.project_id]
        return sorted(projects, key=lambda p: p.slug)

    def update(
        self,
        principal: Principal,
        slug: str,
        *,
        summary: str | None = None,
        instructions: str | None = None,
        default_max_tokens: int | None = None,
        default_branch: str | None = None,
        merged_branches: Sequence[str] = (),
    ) -> Project:
        only_branches = summary is None and instructions is None and default_max_tokens is None
        if only_branches and default_branch is None and not merged_branches:
            raise InvalidArgumentError("Nothing to change; pass summary, instructions or defaultMaxTokens.")
        if default_branch is not None:
            rules.check_branch(default_branch)
        for name in merged_branches:
            rules.check_branch(name)
        if summary is not None:
            rules.check_project_text("summary", summary)
        if instructions is not None:
            rules.check_project_text("instructions", instructions)
        if (
            default_max_tokens is not None
            and default_max_tokens != CLEAR_DEFAULT_TOKENS
            and not MIN_DEFAULT_TOKENS <= default_max_tokens <= MAX_DEFAULT_TOKENS
        ):
            raise InvalidArgumentError(
                f"defaultMaxTokens {default_max_tokens} is out of range; use {MIN_DEFAULT_TOKENS} "
                f"to {MAX_DEFAULT_TOKENS}, or {CLEAR_DEFAULT_TOKENS} to clear it."
            )
        project = writable_project(self._deps, principal, slug)
        # Read, merge only the fields this call sent, write on the condition that nothing changed since the read:
        # a concurrent update of other fields is merged on the next round, never overwritten.
        for _ in range(PROJECT_UPDATE_ATTEMPTS):
            tokens = project.default_max_tokens
            if default_max_tokens is not None:
                tokens = None if default_max_tokens == CLEAR_DEFAULT_TOKENS else default_max_tokens
            default = default_branch or project.default_branch
            updated = replace(
                project,
                summary=summary if summary is not None else project.summary,
                instructions=instructions if instructions is not None else project.instructions,
                default_max_tokens=tokens,
                default_branch=default,
                merged_branches=branches.merged_record(project.merged_branches, merged_branches, default),
                updated_at=rules.format_ts(self._deps.clock.now()),
            )
            same_record = updated.merged_branches == project.merged_branches
            if only_branches and same_record and updated.default_branch == project.default_branch:
                return project  # a sync that found nothing new writes nothing (the session hook syncs every start)
            if self._deps.store.save_project(updated, expected=project):
                return updated
            fresh = self._deps.store.get_project_by_id(principal.workspace_id, project.id)
            if fresh is None:
                raise NotFoundError(f"Project {slug!r} was deleted meanwhile; list_projects shows the projects left.")
            project = fresh
        raise UnavailableError("The project is being updated by others right now; retry in a few seconds.")

    def rename(self, principal: Principal, slug: str, new_slug: str) -> Project:
        """Rename a project; safe to retry: a retry after a rename that landed finds it done.

        Workspace-wide keys only: a scoped key could otherwise move its project onto a name the workspace's other
        keys write to (capturing their notes) and probe which names are taken.
        """
        require_write(principal)
        rules.check_project_slug(new_slug)
        project = visible_project(self._deps, principal, slug)
        if principal.project_id is not None:  # its own project (visible_project refused any other with 404)
            raise ForbiddenError(
                "Renaming a project needs a workspace-wide key; this key is scoped to one project, so ask an owner."
            )
        if project is None:
            moved = visible_project(self._deps, principal, new_slug) if slug != new_slug else None
            if moved is not None:
                return moved  # the rename already happened (e.g. a retry whose first reply was lost)
            raise NotFoundError(f"No project {slug!r}; list_projects shows the projects this key can see.")
        if new_slug == project.slug:
            return project
        return self._deps.store.rename_project(
            principal.workspace_id, project.id, new_slug, rules.format_ts(self._deps.clock.now())
        )


@dataclass(frozen=True, slots=True)
class TagRename:
    project: str
    renamed: int  # notes changed by this call
    done: bool  # False: the per-call budget ran out; call again to continue (already renamed notes are skipped)


# Notes examined per rename_tag call: bounded work per request (a Lambda must answer within 29 s).
TAG_RENAME_BUDGET = 2_000


class TagService:
    def __init__(self, deps: Deps, notes: NoteService) -> None:
        self._deps = deps
        self._notes = notes

    def rename(self, principal: Principal, slug: str, old: str, new: str) -> TagRename:
        require_write(principal)
        (old_tag,) = rules.check_tags([old])
        (new_tag,) = rules.check_tags([new])
        if old_tag == new_tag:
            raise InvalidArgumentError(f"from and to are the same tag ({old_tag!r}); nothing to rename.")
        project = visible_project(self._deps, principal, slug)
        if project is None:
            return TagRename(slug, 0, True)
        ws, store = principal.workspace_id, self._deps.store
        # Resume where the last call stopped, not at the oldest note: each call examines the next `budget` notes
        # of the feed, up to the horizon (when the rename began), so `done` comes after size / budget calls.
        # A renamed note moves to the feed's end, past the horizon, so it is not examined again.
        progress = store.get_tag_rename(ws, project.id, old_tag, new_tag)
        horizon = rules.format_ts(self._deps.clock.now()) if progress is None else progress.horizon
        position: FeedPosition | None = None if progress is None else progress.position
        budget = TAG_RENAME_BUDGET
        renamed = examined = 0
        while examined < budget:
            scan = store.changes_after(
                ws, project.id, position, horizon=horizon, types=[], statuses=[], limit=min(200, budget - examined)
            )
            for note in scan.notes:
                examined += 1
                if old_tag in note.tags:
                    renamed += self._retag(principal, note, old_tag, new_tag, horizon)
            position = scan.position
            if not scan.more:
                if progress is not None:  # forget it, so a later call (for notes tagged since) starts a new pass
                    store.save_tag_rename(ws, project.id, old_tag, new_tag, None)
                return TagRename(project.slug, renamed, True)
        if position is not None:
            store.save_tag_rename(ws, project.id, old_tag, new_tag, TagRenameProgress(horizon, position))
        return TagRename(project.slug, renamed, False)

    def _retag(self, principal: Principal, note: Note, old: str, new: str, horizon: str) -> int:
        """One new version per note, revision kept; a note edited meanwhile is re-read (bounded). The new version
        is stamped after `horizon`, so this pass never meets the note again."""
        current = note
        for _ in range(5):
            if old not in current.tags:
                return 0
            tags = tuple(dict.fromkeys(new if t == old else t for t in current.tags))
            edited = replace(
                current, tags=tags, version=current.version + 1,
                updated_at=rules.next_updated_at(self._deps.clock.now(), max(current.updated_at, horizon)),
                author=principal.actor, write_id=self._deps.ids.new_id("w"),
            )  # fmt: skip
            try:
                self._notes.commit(principal, [NoteWrite(edited, expected_version=current.version, previous=current)])
                return 1
            except VersionConflictError:
                fresh = self._deps.store.get_note(principal.workspace_id, current.id)
                if fresh is None:
                    return 0
                current = fresh
        raise VersionConflictError(note.id, current.version, current.version)
