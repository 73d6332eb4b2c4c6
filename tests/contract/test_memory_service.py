"""remember, checkpoint and conflicts over every store."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import (
    IdempotencyKeyReusedError,
    InvalidArgumentError,
    NotFoundError,
    UnavailableError,
    VersionConflictError,
)
from notewell.domain.model import IdempotencyRecord, Note, NoteStatus, NoteType, NoteWrite, Principal
from notewell.ports import Store
from notewell.services.memory import ConflictKind, RememberRequest, RememberStatus
from notewell.services.notes import NoteChanges
from tests.support.races import WAIT_SECONDS, CommitDoor


class FaultyStore:
    """Delegates to a real store; `before_commit` runs just before chosen commits (to race or to fail them)."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.before_commit: Any = None
        self.commits = 0

    def commit(
        self, workspace_id: str, writes: Sequence[NoteWrite], *, revision_cap: int,
        idempotency: IdempotencyRecord | None = None,
    ) -> None:  # fmt: skip
        self.commits += 1
        if self.before_commit is not None:
            self.before_commit(self.commits, writes)
        self._inner.commit(workspace_id, writes, revision_cap=revision_cap, idempotency=idempotency)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def faulty(store: Store) -> FaultyStore:
    return FaultyStore(store)


@pytest.fixture
def services(faulty: FaultyStore, tmp_path: Path) -> Services:
    from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore

    inner = faulty._inner
    search = SqliteFullTextIndex(inner) if isinstance(inner, SqliteStore) else None
    return bootstrap(Settings(data_dir=tmp_path), store=faulty, search=search, clock=FixedClock())  # type: ignore[arg-type]


def remember(services: Services, me: Principal, content: str, **kw: Any) -> Any:
    return services.memory.remember(me, RememberRequest("api", content, **kw))


def live_notes(services: Services, me: Principal) -> list[Note]:
    project = services.deps.store.get_project(me.workspace_id, "api")
    if project is None:
        return []
    return [n for n in services.deps.store.project_notes(me.workspace_id, project.id, limit=500) if not n.is_deleted]


def test_new_knowledge_is_created_with_a_derived_title(services: Services, me: Principal) -> None:
    outcome = remember(services, me, "Invoices are generated on the first day of the month. Finance needs them by 9am.")
    assert outcome.status is RememberStatus.CREATED
    assert outcome.note.note.title == "Invoices are generated on the first day of the month"
    assert outcome.review_required is False and outcome.neighbours == []


def test_a_new_decision_lists_same_type_neighbours_for_review(services: Services, me: Principal) -> None:
    older = remember(services, me, "Sessions are stored in Redis with a sliding expiry.", type=NoteType.DECISION)
    remember(services, me, "The session cookie is httpOnly and secure.", type=NoteType.CONSTRAINT)
    outcome = remember(services, me, "Session tokens are opaque random strings.", type=NoteType.DECISION)
    assert outcome.status is RememberStatus.CREATED and outcome.review_required is True
    assert [n.id for n in outcome.neighbours] == [older.note.note.id]  # same type only, never itself


def test_create_note_of_a_constraint_gets_the_same_review_as_remember(services: Services, me: Principal) -> None:
    older = remember(services, me, "Never call the payments API from the browser.", type=NoteType.CONSTRAINT)
    remember(services, me, "Payments go through the billing service.", type=NoteType.DECISION)
    created = services.notes.create(
        me, "api", title="Browser payments", body="Call the payments API from the browser for speed.",
        type=NoteType.CONSTRAINT,
    )  # fmt: skip
    review = services.memory.review(me, created)
    assert review.required is True
    assert [n.id for n in review.neighbours] == [older.note.note.id]  # same type only, never itself
    plain = services.notes.create(me, "api", title="Browser payments", body="A plain note is not reviewed.")
    assert services.memory.review(me, plain).required is False and services.memory.review(me, plain).neighbours == []


def test_a_duplicate_writes_nothing_and_names_the_note_that_holds_it(services: Services, me: Principal) -> None:
    first = remember(services, me, "Deploys go through the SAM pipeline.")
    again = remember(services, me, "Deploys go through the SAM pipeline.")
    assert again.status is RememberStatus.DUPLICATE and again.existing.id == first.note.note.id
    assert len(live_notes(services, me)) == 1
    assert services.notes.get(me, first.note.note.id).note.version == 1


# Words the index and a naive splitter disagree on: letters glued to digits, underscores, hyphens, accents (one
# composed, one decomposed), non-Latin scripts.
GLUED_WORDS = {
    "digits": "alpha123 beta456 gamma789 delta012 epsilon345 zeta678 theta901 kappa234 lambda567 omicron890",
    "underscores": "queue_name retry_limit trace_id span_kind token_ttl cache_key shard_map region_tag",
    "hyphens": "queue-name retry-limit trace-id span-kind token-ttl cache-key shard-map region-tag",
    "mixed": "v2beta3 rc1final build42x node18lts py311env cfg_v2 x-y ab12cd",
    "unicode": "naïve cafe\u0301s résumé Straße größe façade smörgåsbord 日本語テキスト Ελληνικά кириллица",
}


@pytest.mark.parametrize("kind", GLUED_WORDS)
def test_the_same_long_content_of_glued_words_sent_three_times_is_one_note(
    services: Services, me: Principal, kind: str
) -> None:
    content = " ".join([GLUED_WORDS[kind]] * 8)
    statuses = [remember(services, me, content).status for _ in range(3)]
    assert statuses == [RememberStatus.CREATED, RememberStatus.DUPLICATE, RememberStatus.DUPLICATE]
    assert len(live_notes(services, me)) == 1


def test_the_same_content_with_its_longest_words_past_4000_characters_is_one_note(
    services: Services, me: Principal
) -> None:
    tail = "Reconciliation instrumentation observability dashboards, migrations, partitioning, throughput, latency."
    content = "ship it now. " * 400 + tail
    statuses = [remember(services, me, content).status for _ in range(3)]
    assert statuses == [RememberStatus.CREATED, RememberStatus.DUPLICATE, RememberStatus.DUPLICATE]
    assert len(live_notes(services, me)) == 1


def test_a_restatement_updates_the_note_in_place_and_keeps_the_revision(services: Services, me: Principal) -> None:
    first = remember(services, me, "Use opaque tokens for API sessions.", type=NoteType.DECISION)
    longer = "Use opaque tokens for API sessions, stored server-side in Redis so they can be revoked at once."
    outcome = remember(services, me, longer, type=NoteType.DECISION)
    assert outcome.status is RememberStatus.UPDATED
    assert outcome.note.note.id == first.note.note.id and outcome.note.note.version == 2
    assert services.notes.get(me, first.note.note.id).note.body == longer
    assert services.notes.revision(me, first.note.note.id, 1).body == "Use opaque tokens for API sessions."
    assert len(live_notes(services, me)) == 1


def test_a_reversal_is_a_conflict_that_stores_nothing_and_says_how_to_resolve_it(
    services: Services, me: Principal
) -> None:
    old = remember(services, me, "Use opaque tokens instead of JWTs.", type=NoteType.DECISION).note.note
    outcome = remember(services, me, "Use JWTs instead of opaque tokens.", type=NoteType.DECISION, idempotency_key="k")
    assert outcome.status is RememberStatus.CONFLICT and outcome.note is None and outcome.existing.id == old.id
    assert len(live_notes(services, me)) == 1
    supersede, force = outcome.resolutions
    assert supersede.tool == force.tool == "remember"
    assert supersede.arguments == {
        "project": "api", "content": "Use JWTs instead of opaque tokens.", "type": "decision",
        "supersedes": [old.id], "idempotencyKey": "k:supersede",
    }  # fmt: skip
    assert force.arguments["force"] is True and force.arguments["idempotencyKey"] == "k:force"
    assert old.id in outcome.message


def test_resending_with_supersedes_replaces_the_old_claim_atomically(services: Services, me: Principal) -> None:
    old = remember(services, me, "Use opaque tokens instead of JWTs.", type=NoteType.DECISION).note.note
    outcome = remember(services, me, "Use JWTs instead of opaque tokens.", type=NoteType.DECISION, supersedes=[old.id])
    assert outcome.status is RememberStatus.CREATED
    replaced = services.notes.get(me, old.id).note
    assert replaced.status is NoteStatus.SUPERSEDED and replaced.superseded_by == (outcome.note.note.id,)
    assert outcome.note.note.supersedes == (old.id,)


def test_force_stores_both_claims(services: Services, me: Principal) -> None:
    remember(services, me, "Retry failed webhooks 5 times.")
    outcome = remember(services, me, "Retry failed webhooks 3 times.", force=True)
    assert outcome.status is RememberStatus.CREATED and len(live_notes(services, me)) == 2


def test_superseding_another_projects_deleted_or_unknown_note_is_refused_and_writes_nothing(
    services: Services, me: Principal
) -> None:
    elsewhere = services.memory.remember(me, RememberRequest("web", "Web uses Next.js.")).note.note
    gone = remember(services, me, "Temporary note.").note.note
    services.notes.delete(me, gone.id)
    before = len(live_notes(services, me))
    for target, error in ((elsewhere.id, InvalidArgumentError), (gone.id, InvalidArgumentError),
                          ("n_01ARZ3NDEKTSV4RRFFQ69G5FAV", NotFoundError)):  # fmt: skip
        with pytest.raises(error):
            remember(services, me, "A brand new claim about queues.", supersedes=[target])
    assert len(live_notes(services, me)) == before
    assert services.notes.get(me, elsewhere.id).note.status is NoteStatus.CURRENT


def test_a_supersession_that_fails_midway_leaves_nothing_half_written(
    services: Services, me: Principal, faulty: FaultyStore
) -> None:
    old = remember(services, me, "Use opaque tokens instead of JWTs.", type=NoteType.DECISION).note.note

    def someone_edits_the_old_note_first(n: int, writes: Sequence[NoteWrite]) -> None:
        if len(writes) == 2:  # the new note plus the superseded one: a concurrent edit lands in between
            current = services.deps.store.get_note(me.workspace_id, old.id)
            assert current is not None
            services.deps.store.commit(
                me.workspace_id,
                [NoteWrite(replace(current, version=current.version + 1, body=current.body + "!"), current.version,
                           current)],
                revision_cap=50,
            )  # fmt: skip

    faulty.before_commit = someone_edits_the_old_note_first
    with pytest.raises(VersionConflictError):
        remember(services, me, "Use JWTs instead of opaque tokens.", type=NoteType.DECISION, supersedes=[old.id])
    faulty.before_commit = None
    assert len(live_notes(services, me)) == 1  # the new note was never written
    after = services.notes.get(me, old.id).note
    assert after.status is NoteStatus.CURRENT and after.superseded_by == ()


def test_a_repeated_remember_replays_and_a_reused_key_with_other_content_is_refused(
    services: Services, me: Principal
) -> None:
    first = remember(services, me, "Postgres is the primary datastore.", idempotency_key="r1")
    again = remember(services, me, "Postgres is the primary datastore.", idempotency_key="r1")
    assert again.status is RememberStatus.CREATED and again.note.note.id == first.note.note.id
    with pytest.raises(IdempotencyKeyReusedError):
        remember(services, me, "MySQL is the primary datastore.", idempotency_key="r1")
    assert len(live_notes(services, me)) == 1
    dup = remember(services, me, "Postgres is the primary datastore.", idempotency_key="r2")
    assert dup.status is RememberStatus.DUPLICATE
    assert remember(services, me, "Postgres is the primary datastore.", idempotency_key="r2").status is (
        RememberStatus.DUPLICATE
    )


def test_concurrent_retries_of_one_remember_write_once(services: Services, me: Principal, faulty: FaultyStore) -> None:
    remember(services, me, "The project exists before the race.")
    door = CommitDoor(2)  # both retries pass the replay check and judge the content, then commit together
    about_to_write: list[str] = []

    def both_reach_the_commit(n: int, writes: Sequence[NoteWrite]) -> None:
        about_to_write.append(writes[0].note.id)
        door.arrive()

    faulty.before_commit = both_reach_the_commit
    outcomes: list[Any] = []
    failures: list[BaseException] = []

    def attempt() -> None:
        try:
            outcomes.append(remember(services, me, "Feature flags live in LaunchDarkly.", idempotency_key="twin"))
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            failures.append(exc)
            door.abort()

    threads = [threading.Thread(target=attempt, name=f"retry-{n}") for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS * 3)
    faulty.before_commit = None
    assert failures == [] and door.raced()
    assert len(set(about_to_write)) == 2, "both retries were about to write a note of their own"
    assert [o.status for o in outcomes] == [RememberStatus.CREATED] * 2
    stored = [n for n in live_notes(services, me) if n.body == "Feature flags live in LaunchDarkly."]
    assert len(stored) == 1 and {o.note.note.id for o in outcomes} == {stored[0].id}


def test_checkpoint_stores_a_handoff_and_files_every_item(services: Services, me: Principal) -> None:
    remember(services, me, "Use opaque tokens instead of JWTs.", type=NoteType.DECISION)
    outcome = services.memory.checkpoint(
        me, "api", summary="Moved sessions to Redis. Load tests pending.",
        decisions=["Sessions live in Redis with a 30 minute sliding expiry.", "Use JWTs instead of opaque tokens."],
        open_items=["Run the load test against staging."], next_actions=["Run the load test", "Tune the pool"],
        failed_approaches=["Memcached evicted sessions under load."],
    )  # fmt: skip
    handoff = outcome.handoff.note
    assert handoff.type is NoteType.HANDOFF and handoff.title.startswith("Handoff: Moved sessions to Redis")
    assert "Next actions:\n- Run the load test\n- Tune the pool" in handoff.body
    statuses = [(i.kind, i.outcome.status) for i in outcome.items]
    assert statuses == [
        ("decision", RememberStatus.CREATED), ("decision", RememberStatus.CONFLICT),
        ("open_item", RememberStatus.CREATED), ("failed_approach", RememberStatus.CREATED),
    ]  # fmt: skip
    task = outcome.items[2].outcome.note.note
    assert (task.type, task.status) == (NoteType.TASK, NoteStatus.PENDING)


def test_a_checkpoint_retried_after_a_failure_midway_writes_everything_once(
    services: Services, me: Principal, faulty: FaultyStore
) -> None:
    args: dict[str, Any] = {
        "summary": "Session work done.", "decisions": ["Sessions live in Redis."],
        "open_items": ["Load test staging.", "Write the runbook."], "failed_approaches": ["Sticky sessions."],
        "idempotency_key": "cp-1",
    }  # fmt: skip
    calls = {"n": 0}

    def fail_the_third_item(n: int, writes: Sequence[NoteWrite]) -> None:
        if writes and writes[0].note.body == "Write the runbook.":
            calls["n"] += 1
            if calls["n"] == 1:
                raise UnavailableError("The store is throttling; retry in a second.")

    faulty.before_commit = fail_the_third_item
    with pytest.raises(UnavailableError):
        services.memory.checkpoint(me, "api", **args)
    assert len(live_notes(services, me)) == 2  # the first two items landed before the failure
    retried = services.memory.checkpoint(me, "api", **args)
    again = services.memory.checkpoint(me, "api", **args)
    notes = live_notes(services, me)
    assert len(notes) == 5  # 4 items + 1 handoff, each once
    assert [i.outcome.note.note.id for i in retried.items] == [i.outcome.note.note.id for i in again.items]
    assert retried.handoff.note.id == again.handoff.note.id
    with pytest.raises(IdempotencyKeyReusedError):
        services.memory.checkpoint(me, "api", **{**args, "summary": "Something else."})


def test_disputed_notes_and_unfinished_supersessions_are_listed_as_conflicts(services: Services, me: Principal) -> None:
    old = remember(services, me, "Use opaque tokens instead of JWTs.", type=NoteType.DECISION).note.note
    new = remember(services, me, "Use JWTs instead of opaque tokens.", supersedes=[old.id]).note.note
    assert services.memory.conflicts(me, "api") == []
    services.notes.update(me, old.id, NoteChanges(status=NoteStatus.CURRENT))  # a manual edit undoes it
    disputed = remember(services, me, "The cache TTL is five minutes.").note.note
    services.notes.update(me, disputed.id, NoteChanges(status=NoteStatus.DISPUTED))
    found = {(c.kind, c.note.id) for c in services.memory.conflicts(me, "api")}
    assert found == {(ConflictKind.UNFINISHED_SUPERSESSION, old.id), (ConflictKind.DISPUTED, disputed.id)}
    unfinished = next(c for c in services.memory.conflicts(me, "api") if c.kind is ConflictKind.UNFINISHED_SUPERSESSION)
    assert unfinished.counterparts == (new.id,)
    services.notes.update(me, new.id, NoteChanges(supersedes=[old.id]))  # finishing it
    assert {c.note.id for c in services.memory.conflicts(me, "api")} == {disputed.id}
    assert services.memory.conflicts(me, "ghost") == []


def test_the_first_note_of_a_reviewed_type_is_not_told_to_read_neighbours_it_has_none(
    services: Services, me: Principal
) -> None:
    first = remember(services, me, "Deploys need a green CI run.", type=NoteType.CONSTRAINT)
    assert first.neighbours == [] and "neighbours" not in first.message
    second = remember(services, me, "Hotfixes may skip the staging soak.", type=NoteType.CONSTRAINT)
    assert [n.id for n in second.neighbours] == [first.note.note.id] and "Read the neighbours" in second.message
