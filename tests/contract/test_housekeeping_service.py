"""rename_project, rename_tag, plans and metering over every store."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain import plans
from notewell.domain.errors import (
    AlreadyExistsError,
    ForbiddenError,
    QuotaExceededError,
    TooLargeError,
    UnavailableError,
)
from notewell.domain.model import NoteType, Plan, Principal
from notewell.ports import Store
from notewell.services import projects as projects_module
from notewell.services.memory import RememberRequest
from notewell.services.metering import TOTAL, month_days
from notewell.services.notes import NoteChanges


class FlakyStore:
    """Delegates to a real store; `fail` names a method and how many of its calls fail first."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.fail: dict[str, int] = {}
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            if self.fail.get(name, 0) > 0:
                self.fail[name] -= 1
                raise UnavailableError("The store is unavailable; retry in a second.")
            return target(*args, **kwargs)

        return call


@pytest.fixture
def flaky(store: Store) -> FlakyStore:
    return FlakyStore(store)


@pytest.fixture
def services(flaky: FlakyStore, clock: FixedClock, tmp_path: Path) -> Services:
    from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore

    inner = flaky._inner
    search = SqliteFullTextIndex(inner) if isinstance(inner, SqliteStore) else None
    return bootstrap(Settings(data_dir=tmp_path), store=flaky, search=search, clock=clock)  # type: ignore[arg-type]


def test_a_renamed_project_keeps_its_notes_history_keys_and_feed(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    note = services.notes.create(me, "billing", title="Invoices", body="Monthly invoices.").note
    services.notes.update(me, note.id, NoteChanges(body="Monthly invoices, in EUR."))
    scoped_secret = services.auth.create_key(me.workspace_id, project="billing").secret
    clock.advance(minutes=5)
    cursor_page = services.changes.since(me, "billing")
    renamed = services.projects.rename(me, "billing", "invoicing")
    assert renamed.slug == "invoicing"
    assert services.notes.get(me, note.id).project == "invoicing"
    assert services.notes.revisions(me, note.id).revisions[0].body == "Monthly invoices."
    assert services.search.run(me, "billing", "invoices").project_exists is False  # the old name is gone
    assert [h.note.id for h in services.search.run(me, "invoicing", "invoices").hits] == [note.id]
    scoped = services.auth.authenticate(scoped_secret)
    assert scoped is not None and services.notes.get(scoped, note.id).note.id == note.id
    services.notes.update(me, note.id, NoteChanges(title="Invoices (EUR)"))
    clock.advance(minutes=5)  # past the feed's horizon
    later = services.changes.since(me, "invoicing", cursor=cursor_page.cursor)
    assert [c.note.title for c in later.changes] == ["Invoices (EUR)"]


def test_renaming_onto_a_taken_name_is_refused_and_changes_nothing(services: Services, me: Principal) -> None:
    services.notes.create(me, "web", title="A", body="a")
    services.notes.create(me, "api", title="B", body="b")
    with pytest.raises(AlreadyExistsError) as caught:
        services.projects.rename(me, "web", "api")
    assert caught.value.status == 409
    assert {p.slug for p in services.projects.list(me)} == {"web", "api"}


def test_a_rename_is_safe_to_retry_after_a_failure_or_a_lost_reply(
    services: Services, me: Principal, flaky: FlakyStore
) -> None:
    services.notes.create(me, "web", title="A", body="a")
    flaky.fail["rename_project"] = 1
    with pytest.raises(UnavailableError):
        services.projects.rename(me, "web", "site")
    assert [p.slug for p in services.projects.list(me)] == ["web"]  # the failed attempt left nothing behind
    assert services.projects.rename(me, "web", "site").slug == "site"
    assert services.projects.rename(me, "web", "site").slug == "site"  # the retry after success finds it done
    assert [p.slug for p in services.projects.list(me)] == ["site"]


def test_rename_tag_gives_every_tagged_note_one_new_version(services: Services, me: Principal) -> None:
    tagged = [services.notes.create(me, "p", title=f"T{n}", body="b", tags=["auth", "api"]).note for n in range(4)]
    plain = services.notes.create(me, "p", title="Plain", body="b", tags=["api"]).note
    both = services.notes.create(me, "p", title="Both", body="b", tags=["auth", "identity"]).note
    outcome = services.tags.rename(me, "p", "auth", "identity")
    assert outcome.done and outcome.renamed == 5
    for note in tagged:
        current = services.notes.get(me, note.id).note
        assert current.tags == ("identity", "api") and current.version == 2
        assert services.notes.revision(me, note.id, 1).tags == ("auth", "api")
    assert services.notes.get(me, both.id).note.tags == ("identity",)
    assert services.notes.get(me, plain.id).note.version == 1
    assert services.tags.rename(me, "p", "auth", "identity").renamed == 0  # a retry does nothing more


def test_an_interrupted_tag_rename_resumes_without_double_versions(
    services: Services, me: Principal, flaky: FlakyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = [services.notes.create(me, "p", title=f"T{n}", body="b", tags=["old"]).note for n in range(6)]
    original = flaky._inner.commit
    count = {"n": 0}

    def fail_third(*args: Any, **kwargs: Any) -> None:
        count["n"] += 1
        if count["n"] == 3:
            raise UnavailableError("The store is unavailable; retry in a second.")
        original(*args, **kwargs)

    monkeypatch.setattr(flaky._inner, "commit", fail_third)
    with pytest.raises(UnavailableError):
        services.tags.rename(me, "p", "old", "new")
    monkeypatch.setattr(projects_module, "TAG_RENAME_BUDGET", 3)
    rounds = 0
    while not services.tags.rename(me, "p", "old", "new").done:
        rounds += 1
        assert rounds < 10
    for note in notes:
        current = services.notes.get(me, note.id).note
        assert current.tags == ("new",) and current.version == 2


def test_calls_are_counted_per_tool_and_concurrent_calls_are_not_lost(services: Services, me: Principal) -> None:
    meter = services.meter

    def hammer() -> None:
        for _ in range(250):
            meter.record_call(me.workspace_id, "search_notes", 10)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    meter.record_call(me.workspace_id, "get_note", 3)
    meter.flush()
    report = services.workspaces.usage(me)
    assert report.calls_by_tool == {"get_note": 1, "search_notes": 1000}
    assert report.calls == 1001 and report.tokens == 10_003


def test_storage_counters_follow_notes_revisions_and_bytes(services: Services, me: Principal) -> None:
    a = services.notes.create(me, "p", title="A", body="alpha").note
    b = services.notes.create(me, "p", title="B", body="beta").note
    services.notes.create(me, "p", title="C", body="gamma")
    services.notes.update(me, a.id, NoteChanges(body="alpha two"))
    services.notes.delete(me, b.id)
    services.meter.flush()
    report = services.workspaces.usage(me)
    assert (report.notes, report.revisions) == (2, 2)
    assert report.stored_bytes == len("alpha two") + len("alpha") + len("beta") * 2 + len("gamma")
    stored = services.deps.store.usage(me.workspace_id, [TOTAL])
    assert stored[TOTAL]["notes"] == 2


def test_over_the_monthly_call_quota_calls_get_429_until_the_plan_is_raised(
    services: Services, me: Principal, monkeypatch: pytest.MonkeyPatch, clock: FixedClock
) -> None:
    small = plans.PlanLimits(revisions_per_note=50, notes_per_workspace=100, calls_per_month=5, note_chars=50_000)
    monkeypatch.setitem(plans.PLANS, Plan.FREE, small)
    for _ in range(5):
        services.meter.admit_call(me.workspace_id)
        services.meter.record_call(me.workspace_id, "get_note", 1)
    with pytest.raises(QuotaExceededError) as caught:
        services.meter.admit_call(me.workspace_id)
    assert caught.value.status == 429 and caught.value.retry_after and "5 calls" in caught.value.message
    assert "plan" in caught.value.message
    services.workspaces.set_plan(me.workspace_id, Plan.TEAM)
    services.meter.admit_call(me.workspace_id)  # allowed again
    assert month_days(clock.now())[-1] == clock.now().strftime("%Y-%m-%d")


def test_storage_limits_of_the_plan_are_enforced_with_clear_messages(
    services: Services, me: Principal, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    with pytest.raises(TooLargeError, match="free plan allows 50,000"):
        services.notes.create(me, "p", title="Big", body="x" * 60_000)
    services.workspaces.set_plan(me.workspace_id, Plan.TEAM)
    assert services.notes.create(me, "p", title="Big", body="x" * 60_000).note.version == 1
    workspace = store.get_workspace(me.workspace_id)
    assert workspace is not None and workspace.revision_cap == 200
    tight = plans.PlanLimits(revisions_per_note=200, notes_per_workspace=2, calls_per_month=None, note_chars=100_000)
    monkeypatch.setitem(plans.PLANS, Plan.TEAM, tight)
    services.notes.create(me, "p", title="Second", body="y")
    with pytest.raises(ForbiddenError, match="limit of the team plan is 2") as caught:
        services.notes.create(me, "p", title="Third", body="z", type=NoteType.FACT)
    assert caught.value.status == 403


def test_a_write_over_the_note_count_into_a_new_project_leaves_no_empty_project_behind(
    services: Services, me: Principal, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    tight = plans.PlanLimits(revisions_per_note=50, notes_per_workspace=2, calls_per_month=None, note_chars=50_000)
    monkeypatch.setitem(plans.PLANS, Plan.FREE, tight)
    services.notes.create(me, "p", title="First", body="a")
    services.notes.create(me, "p", title="Second", body="b")
    services.meter.flush()

    writes = {
        "create_note": lambda: services.notes.create(me, "fresh", title="Third", body="c"),
        "remember": lambda: services.memory.remember(me, RememberRequest("fresh", "We deploy on Fridays.")),
        "checkpoint": lambda: services.memory.checkpoint(me, "fresh", summary="Did things.", decisions=["Use SQS."]),
    }
    for name, write in writes.items():
        with pytest.raises(ForbiddenError, match="limit of the free plan is 2") as caught:
            write()
        assert caught.value.status == 403, name
        assert [p.slug for p in store.list_projects(me.workspace_id)] == ["p"], name
