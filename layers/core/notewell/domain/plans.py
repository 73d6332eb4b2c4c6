"""Plans and their limits, in one place. None means unlimited."""

from __future__ import annotations

from dataclasses import dataclass

from notewell.domain.model import Plan


@dataclass(frozen=True, slots=True)
class PlanLimits:
    revisions_per_note: int
    notes_per_workspace: int | None
    calls_per_month: int | None
    note_chars: int


PLANS: dict[Plan, PlanLimits] = {
    Plan.FREE: PlanLimits(revisions_per_note=50, notes_per_workspace=2_000, calls_per_month=20_000, note_chars=50_000),
    Plan.TEAM: PlanLimits(
        revisions_per_note=200, notes_per_workspace=200_000, calls_per_month=2_000_000, note_chars=100_000
    ),
    Plan.ENTERPRISE: PlanLimits(
        revisions_per_note=1_000, notes_per_workspace=None, calls_per_month=None, note_chars=100_000
    ),
}

UPGRADE_HINT = "ask your Notewell admin to raise the plan ('notewell workspace plan --set team')"


def limits_for(plan: Plan) -> PlanLimits:
    return PLANS[plan]


def smallest_note_chars() -> int:
    """The note size every plan allows: a body within it needs no look at the workspace's plan."""
    return min(limits.note_chars for limits in PLANS.values())
