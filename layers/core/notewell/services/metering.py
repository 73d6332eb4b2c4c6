"""Pay-per-call metering and plan limits, without a store write on the request path.

Every tool call is counted per workspace, day and tool (with the tokens it returned) in memory, and storage
changes (notes, revisions, bytes) likewise; the counters are flushed to the store as atomic increments at most
every FLUSH_SECONDS or FLUSH_CALLS calls, and when the process shuts down. On Lambda, where a container is frozen
after each reply and recycled without notice, the handler flushes at the end of every invocation instead
(functions/mcp/app.py): one atomic increment per workspace and day that had calls, so no count is lost. Resource
reads (export pages, notes) count like calls, as `resource:<name>`.
Quotas are checked against counters read at most every FLUSH_SECONDS, plus what this process has not flushed.

Each project also has its own counters (periods named `{project id}/{day}` and `{project id}/total`): its storage,
and the calls made with keys scoped to it. A project-scoped key's get_usage reports those, never the workspace's.
"""

from __future__ import annotations

import calendar
import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from notewell.domain.errors import ForbiddenError, InvalidArgumentError, QuotaExceededError
from notewell.domain.model import Plan
from notewell.domain.plans import UPGRADE_HINT, PlanLimits, limits_for

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.model import NoteWrite
    from notewell.ports import Clock, Store

FLUSH_SECONDS = 10.0
FLUSH_CALLS = 200
TOTAL = "total"


def project_period(project_id: str, period: str) -> str:
    """The name of a project's counters for `period` (a day or TOTAL); never a workspace period's name."""
    return f"{project_id}/{period}"


def month_days(moment: datetime) -> list[str]:
    last = calendar.monthrange(moment.year, moment.month)[1]
    return [f"{moment.year:04d}-{moment.month:02d}-{day:02d}" for day in range(1, min(moment.day, last) + 1)]


def seconds_to_next_month(moment: datetime) -> int:
    first = datetime(moment.year + (moment.month == 12), moment.month % 12 + 1, 1, tzinfo=UTC)
    return max(1, int((first - moment).total_seconds()))


@dataclass(frozen=True, slots=True)
class UsageReport:
    plan: Plan
    limits: PlanLimits
    period: str  # YYYY-MM
    calls: int
    calls_by_tool: dict[str, int]
    tokens: int
    notes: int
    revisions: int
    stored_bytes: int
    project: str | None = None  # set for a project-scoped key: every count above is this project's


def storage_deltas(writes: Sequence[NoteWrite], revision_cap: int) -> dict[str, int]:
    """What a commit changes in the workspace's storage counters."""
    deltas: dict[str, int] = defaultdict(int)
    for write in writes:
        new, old = write.note, write.previous
        new_live = 0 if new.is_deleted else 1
        old_live = 0 if old is None or old.is_deleted else 1
        deltas["notes"] += new_live - old_live
        deltas["bytes"] += len(new.body.encode()) - (len(old.body.encode()) if old is not None else 0)
        if old is not None:
            deltas["revisions"] += 1 if old.version <= revision_cap else 0  # past the cap, one is pruned per edit
            deltas["bytes"] += len(old.body.encode())
    return {k: v for k, v in deltas.items() if v}


class Meter:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self._pending_calls = 0
        self._last_flush = clock.now()
        self._cache: dict[tuple[str, str | None], tuple[datetime, dict[str, int]]] = {}
        self._plans: dict[str, tuple[datetime, Plan, str | None]] = {}  # read at, plan, suspended at

    def plan_of(self, workspace_id: str) -> Plan:
        """The workspace's plan, read from the store at most every FLUSH_SECONDS."""
        return self._standing(workspace_id)[0]

    def _standing(self, workspace_id: str) -> tuple[Plan, str | None]:
        """The workspace's plan and when it was suspended (None: it is not), read at most every FLUSH_SECONDS."""
        now = self._clock.now()
        cached = self._plans.get(workspace_id)
        if cached is not None and now - cached[0] < timedelta(seconds=FLUSH_SECONDS):
            return cached[1], cached[2]
        workspace = self._store.get_workspace(workspace_id)
        plan = workspace.plan if workspace is not None else Plan.FREE
        suspended = workspace.suspended_at if workspace is not None else None
        self._plans[workspace_id] = (now, plan, suspended)
        return plan, suspended

    def forget_plan(self, workspace_id: str) -> None:
        self._plans.pop(workspace_id, None)

    # ----- recording (in memory) ---------------------------------------------------------------------------

    def record_call(self, workspace_id: str, tool: str, tokens: int, project_id: str | None = None) -> None:
        """Count a call for the workspace and, when the key is scoped to a project, for that project too."""
        day = self._clock.now().strftime("%Y-%m-%d")
        periods = [day] if project_id is None else [day, project_period(project_id, day)]
        with self._lock:
            for period in periods:
                counters = self._pending[(workspace_id, period)]
                counters[f"calls:{tool}"] += 1
                counters[f"tokens:{tool}"] += tokens
            self._pending_calls += 1
        self.maybe_flush()

    def record_storage(self, workspace_id: str, deltas: dict[str, int], project_id: str | None = None) -> None:
        """Count storage changes for the workspace and, when given, for the project they happened in."""
        if not deltas:
            return
        periods = [TOTAL] if project_id is None else [TOTAL, project_period(project_id, TOTAL)]
        with self._lock:
            for period in periods:
                counters = self._pending[(workspace_id, period)]
                for name, value in deltas.items():
                    counters[name] += value

    # ----- flushing ----------------------------------------------------------------------------------------

    def maybe_flush(self) -> None:
        due = self._clock.now() - self._last_flush >= timedelta(seconds=FLUSH_SECONDS)
        if due or self._pending_calls >= FLUSH_CALLS:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, defaultdict(lambda: defaultdict(int))
            self._pending_calls = 0
            self._last_flush = self._clock.now()
            self._cache.clear()  # what was pending is now stored: re-read it rather than count it twice or never
        failed: dict[tuple[str, str], dict[str, int]] = {}
        for (workspace_id, period), counters in pending.items():
            try:
                self._store.add_usage(workspace_id, period, dict(counters))
            except Exception:  # noqa: BLE001 - counts are kept for the next flush, never dropped on a store error
                failed[(workspace_id, period)] = dict(counters)
        if failed:
            with self._lock:
                for key, counters in failed.items():
                    for name, value in counters.items():
                        self._pending[key][name] += value

    # ----- reading and limits ------------------------------------------------------------------------------

    def _stored(self, workspace_id: str, now: datetime, project_id: str | None = None) -> dict[str, int]:
        scope = (workspace_id, project_id)
        cached = self._cache.get(scope)
        if cached is not None and now - cached[0] < timedelta(seconds=FLUSH_SECONDS):
            return cached[1]
        names = {period: period for period in [*month_days(now), TOTAL]}
        if project_id is not None:
            names = {project_period(project_id, period): period for period in names}
        periods = self._store.usage(workspace_id, list(names))
        summary: dict[str, int] = defaultdict(int)
        for stored, counters in periods.items():
            period = names[stored]
            for name, value in counters.items():
                summary[name if period == TOTAL else f"month:{name}"] += value
        self._cache[scope] = (now, dict(summary))
        return self._cache[scope][1]

    def _current(self, workspace_id: str, now: datetime, project_id: str | None = None) -> dict[str, int]:
        summary = dict(self._stored(workspace_id, now, project_id))
        month = now.strftime("%Y-%m")
        prefix = "" if project_id is None else project_period(project_id, "")
        with self._lock:
            for (ws, stored), counters in self._pending.items():
                if ws != workspace_id or not stored.startswith(prefix):
                    continue
                period = stored[len(prefix) :]
                if "/" in period:  # a project's counters, read for the workspace: already in the workspace's own
                    continue
                for name, value in counters.items():
                    key = name if period == TOTAL else f"month:{name}" if period.startswith(month) else ""
                    if key:
                        summary[key] = summary.get(key, 0) + value
        return summary

    def admit_call(self, workspace_id: str) -> None:
        """Raises ForbiddenError (403) when the workspace is suspended (within FLUSH_SECONDS of it on every
        container), QuotaExceededError (429) when the month's calls are used up."""
        plan, suspended = self._standing(workspace_id)
        if suspended is not None:
            raise ForbiddenError(
                f"This workspace was suspended by its operator on {suspended[:10]}; every call is refused until it "
                "is resumed. Its notes are kept; ask the person who runs this Notewell."
            )
        limit = limits_for(plan).calls_per_month
        if limit is None:
            return
        now = self._clock.now()
        calls = sum(v for k, v in self._current(workspace_id, now).items() if k.startswith("month:calls:"))
        if calls >= limit:
            raise QuotaExceededError(
                f"This workspace has used its {limit:,} calls for {now:%B %Y} on the {plan.value} plan; "
                f"{UPGRADE_HINT}, or retry next month.",
                retry_after=seconds_to_next_month(now),
            )

    def admit_new_notes(self, workspace_id: str, plan: Plan, count: int = 1) -> None:
        """Raises ForbiddenError (403) when the plan's note count would be exceeded."""
        limit = limits_for(plan).notes_per_workspace
        if limit is None:
            return
        notes = self._current(workspace_id, self._clock.now()).get("notes", 0)
        if notes + count > limit:
            adding = f"Adding {count:,} notes to" if count > 1 else "A new note in"
            raise ForbiddenError(
                f"{adding} this workspace ({notes:,} notes) is refused: the limit of the {plan.value} plan is "
                f"{limit:,} notes; delete or supersede notes, or {UPGRADE_HINT}."
            )

    def month_report(self, workspace_id: str, plan: Plan, month: str) -> UsageReport:
        """A whole calendar month (YYYY-MM) of the workspace's calls, from the store (what this process has not
        flushed yet is flushed first), with its storage as it stands now: what an invoice is made from."""
        try:
            first = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
        except ValueError:
            raise InvalidArgumentError(f"month {month!r} is not YYYY-MM, e.g. 2026-11.") from None
        self.flush()
        last = calendar.monthrange(first.year, first.month)[1]
        days = month_days(first.replace(day=last))
        stored = self._store.usage(workspace_id, [*days, TOTAL])
        by_tool: dict[str, int] = defaultdict(int)
        tokens = 0
        for period, counters in stored.items():
            if period == TOTAL:
                continue
            for name, value in counters.items():
                if name.startswith("calls:"):
                    by_tool[name.removeprefix("calls:")] += value
                elif name.startswith("tokens:"):
                    tokens += value
        total = stored.get(TOTAL, {})
        return UsageReport(
            plan=plan, limits=limits_for(plan), period=month, calls=sum(by_tool.values()),
            calls_by_tool=dict(sorted(by_tool.items())), tokens=tokens, notes=total.get("notes", 0),
            revisions=total.get("revisions", 0), stored_bytes=total.get("bytes", 0),
        )  # fmt: skip

    def report(
        self, workspace_id: str, plan: Plan, project_id: str | None = None, project: str | None = None
    ) -> UsageReport:
        """The month's usage of the workspace, or with `project_id` of that project alone (named `project`)."""
        now = self._clock.now()
        summary = self._current(workspace_id, now, project_id)
        by_tool = {
            k.removeprefix("month:calls:"): v for k, v in sorted(summary.items()) if k.startswith("month:calls:")
        }
        tokens = sum(v for k, v in summary.items() if k.startswith("month:tokens:"))
        return UsageReport(
            plan=plan, limits=limits_for(plan), period=now.strftime("%Y-%m"), calls=sum(by_tool.values()),
            calls_by_tool=by_tool, tokens=tokens, notes=summary.get("notes", 0),
            revisions=summary.get("revisions", 0), stored_bytes=summary.get("bytes", 0), project=project,
        )  # fmt: skip
