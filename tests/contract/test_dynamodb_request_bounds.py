"""DynamoDB work per call is a fixed bound, whatever the project's size, and never a Scan."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteType, Principal
from notewell.services.memory import RememberRequest
from tests.support.dynamo import count_operations, dynamodb_store

TYPES = [NoteType.DECISION, NoteType.CONSTRAINT, NoteType.FACT, NoteType.TASK, NoteType.FAILED_APPROACH]


def seed(services: Services, me: Principal, count: int) -> None:
    for n in range(count):
        services.notes.create(
            me, "api", title=f"Note {n}", body=f"Body {n} about subsystem {n % 7} and detail {n}.",
            type=TYPES[n % len(TYPES)],
        )  # fmt: skip


def requests_for(notes: int, tmp_path: Path) -> tuple[Counter[str], Counter[str]]:
    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        seed(services, me, notes)
        calls = count_operations(store.client)
        services.context.get_context(me, "api", query="subsystem 3 detail")
        context_calls = Counter(calls)
        calls.clear()
        services.memory.remember(me, RememberRequest("api", "Subsystem 3 is owned by the platform team.",
                                                     type=NoteType.DECISION))  # fmt: skip
        return context_calls, Counter(calls)


def test_get_context_and_remember_make_the_same_requests_at_any_project_size(tmp_path: Path) -> None:
    small_context, small_remember = requests_for(20, tmp_path / "small")
    large_context, large_remember = requests_for(120, tmp_path / "large")
    assert small_context == large_context, (small_context, large_context)  # one Query per index read, always
    for calls in (small_context, large_context, small_remember, large_remember):
        assert "Scan" not in calls
    assert sum(large_context.values()) <= 40
    # remember: candidates (one bounded index read), neighbours (topped up from the type index only when the
    # search found too few), one transaction. Never more, however large the project.
    assert sum(small_remember.values()) <= 12 and sum(large_remember.values()) <= 12
    assert large_remember["TransactWriteItems"] == 1
