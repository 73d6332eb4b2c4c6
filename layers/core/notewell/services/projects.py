"""Projects: listing and the fields agents read first (summary, instructions, default budget)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError
from notewell.services.access import Deps, writable_project

if TYPE_CHECKING:
    from notewell.domain.model import Principal, Project

MIN_DEFAULT_TOKENS = 256
MAX_DEFAULT_TOKENS = 32_000


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
    ) -> Project:
        if summary is None and instructions is None and default_max_tokens is None:
            raise InvalidArgumentError("Nothing to change; pass summary, instructions or defaultMaxTokens.")
        if summary is not None:
            rules.check_project_text("summary", summary)
        if instructions is not None:
            rules.check_project_text("instructions", instructions)
        if default_max_tokens is not None and not MIN_DEFAULT_TOKENS <= default_max_tokens <= MAX_DEFAULT_TOKENS:
            raise InvalidArgumentError(
                f"defaultMaxTokens {default_max_tokens} is out of range; use {MIN_DEFAULT_TOKENS} "
                f"to {MAX_DEFAULT_TOKENS}."
            )
        project = writable_project(self._deps, principal, slug)
        updated = replace(
            project,
            summary=summary if summary is not None else project.summary,
            instructions=instructions if instructions is not None else project.instructions,
            default_max_tokens=default_max_tokens if default_max_tokens is not None else project.default_max_tokens,
            updated_at=rules.format_ts(self._deps.clock.now()),
        )
        self._deps.store.save_project(updated)
        return updated
