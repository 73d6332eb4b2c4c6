"""Workspace administration: plans and usage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from notewell.domain import rules
from notewell.domain.errors import NotFoundError
from notewell.domain.plans import limits_for

if TYPE_CHECKING:
    from notewell.domain.model import Plan, Principal, Workspace
    from notewell.services.access import Deps
    from notewell.services.metering import Meter, UsageReport


class WorkspaceService:
    def __init__(self, deps: Deps, meter: Meter) -> None:
        self._deps = deps
        self._meter = meter

    def usage(self, principal: Principal) -> UsageReport:
        """The workspace's usage; for a project-scoped key only its project's, so it learns nothing of the others."""
        plan = self._meter.plan_of(principal.workspace_id)
        if principal.project_id is None:
            return self._meter.report(principal.workspace_id, plan)
        project = self._deps.store.get_project_by_id(principal.workspace_id, principal.project_id)
        slug = project.slug if project is not None else principal.project_id
        return self._meter.report(principal.workspace_id, plan, principal.project_id, slug)

    def month_usage(self, workspace: Workspace, month: str) -> UsageReport:
        """Admin only (CLI): a workspace's usage over a calendar month, for invoicing."""
        return self._meter.month_report(workspace.id, workspace.plan, month)

    def suspend(self, workspace_id: str) -> Workspace:
        """Admin only (CLI): refuse every call of the workspace (its keys, its OAuth tokens); nothing is deleted."""
        return self._suspension(workspace_id, rules.format_ts(self._deps.clock.now()))

    def resume(self, workspace_id: str) -> Workspace:
        return self._suspension(workspace_id, None)

    def _suspension(self, workspace_id: str, at: str | None) -> Workspace:
        current = self._deps.store.get_workspace(workspace_id)
        if current is not None and at is not None and current.suspended_at is not None:
            return current  # suspended already: keep the first date
        updated = self._deps.store.set_suspended(workspace_id, at)
        if updated is None:
            raise NotFoundError(f"No workspace {workspace_id}; notewell workspace list shows them.")
        self._meter.forget_plan(workspace_id)
        return updated

    def set_plan(self, workspace_id: str, plan: Plan) -> Workspace:
        """Admin only (CLI): the plan also sets how many revisions each note keeps."""
        updated = self._deps.store.set_plan(workspace_id, plan, limits_for(plan).revisions_per_note)
        if updated is None:
            raise NotFoundError(f"No workspace {workspace_id}; 'notewell keys list' shows the workspace id.")
        self._meter.forget_plan(workspace_id)
        return updated
