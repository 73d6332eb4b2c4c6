"""Isolation on every store: what a project-scoped key may change, see and learn, idempotency records per caller,
usage per project, and search scores that depend on the caller's project alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import AlreadyExistsError, ForbiddenError, NotewellError, NotFoundError
from notewell.domain.model import Principal
from notewell.ports import Store
from notewell.services.memory import RememberRequest, RememberStatus


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    search = SqliteFullTextIndex(store) if isinstance(store, SqliteStore) else None
    return bootstrap(Settings(data_dir=tmp_path), store=store, search=search, clock=clock)


@dataclass(frozen=True)
class Team:
    workspace: Principal  # workspace-wide, read-write
    alpha: Principal  # scoped to 'alpha'
    beta: Principal  # scoped to 'beta'


def key(services: Services, workspace_id: str, project: str | None = None, read_only: bool = False) -> Principal:
    principal = services.auth.authenticate(
        services.auth.create_key(workspace_id, project=project, read_only=read_only).secret
    )
    assert principal is not None
    return principal


@pytest.fixture
def team(services: Services) -> Team:
    ws = services.auth.create_workspace("acme").id
    return Team(key(services, ws), key(services, ws, "alpha"), key(services, ws, "beta"))


def slugs(services: Services, principal: Principal) -> list[str]:
    return [p.slug for p in services.projects.list(principal)]


def refusal(call: Callable[[], object]) -> tuple[int, str]:
    with pytest.raises(NotewellError) as caught:
        call()
    return caught.value.status, caught.value.message


# ----- rename and create -------------------------------------------------------------------------------------


def test_a_scoped_key_cannot_rename_its_project_so_workspace_writes_never_land_in_it(
    services: Services, team: Team
) -> None:
    services.notes.create(team.alpha, "alpha", title="Secret", body="alpha only")
    with pytest.raises(ForbiddenError, match="workspace-wide key"):
        services.projects.rename(team.alpha, "alpha", "prod")
    # the workspace's later write to 'prod' starts a new project the scoped key cannot reach
    prod = services.notes.create(team.workspace, "prod", title="Deploy", body="prod runbook")
    assert slugs(services, team.workspace) == ["alpha", "beta", "prod"]
    assert services.notes.get(team.workspace, prod.note.id).project == "prod"
    with pytest.raises(NotFoundError):
        services.notes.get(team.alpha, prod.note.id)


def test_a_scoped_key_learns_nothing_from_rename_about_which_names_are_taken(services: Services, team: Team) -> None:
    services.notes.create(team.workspace, "gamma", title="G", body="gamma")
    taken = refusal(lambda: services.projects.rename(team.alpha, "alpha", "gamma"))
    free = refusal(lambda: services.projects.rename(team.alpha, "alpha", "delta"))
    assert taken == free and taken[0] == 403
    # renaming another project: the same 404 whether it exists or not
    existing = refusal(lambda: services.projects.rename(team.alpha, "gamma", "omega"))
    services.projects.rename(team.workspace, "gamma", "gone")
    unknown = refusal(lambda: services.projects.rename(team.alpha, "gamma", "omega"))
    assert existing == unknown and existing[0] == 404
    assert slugs(services, team.workspace) == ["alpha", "beta", "gone"]


def test_only_a_workspace_wide_read_write_key_renames_and_only_it_hears_409(services: Services, team: Team) -> None:
    reader = key(services, team.workspace.workspace_id, read_only=True)
    services.notes.create(team.workspace, "web", title="W", body="web")
    assert refusal(lambda: services.projects.rename(reader, "alpha", "web"))[0] == 403
    with pytest.raises(AlreadyExistsError):
        services.projects.rename(team.workspace, "alpha", "web")
    assert services.projects.rename(team.workspace, "alpha", "apps").slug == "apps"
    # the scoped key follows its project to the new name
    assert services.notes.create(team.alpha, "apps", title="A", body="after the rename").project == "apps"


def test_a_scoped_key_never_creates_or_changes_another_project(services: Services, team: Team) -> None:
    before = slugs(services, team.workspace)
    writes: list[Callable[[], object]] = [
        lambda: services.notes.create(team.alpha, "new-one", title="T", body="b"),
        lambda: services.memory.remember(team.alpha, RememberRequest("new-one", "We use Postgres 16.")),
        lambda: services.memory.checkpoint(team.alpha, "new-one", summary="done", idempotency_key="cp-1"),
        lambda: services.projects.update(team.alpha, "new-one", summary="mine now"),
        lambda: services.projects.update(team.alpha, "beta", summary="mine now"),
        lambda: services.tags.rename(team.alpha, "beta", "x", "y"),
    ]
    for write in writes:
        assert refusal(write)[0] == 404
    assert slugs(services, team.workspace) == before
    assert all(p.summary == "" for p in services.projects.list(team.workspace))


# ----- idempotency records per caller and project ------------------------------------------------------------


def test_an_idempotency_key_reused_by_another_projects_key_is_independent_on_both_sides(
    services: Services, team: Team
) -> None:
    theirs = services.notes.create(team.beta, "beta", title="Beta plan", body="beta body", idempotency_key="k-1")
    # same key, other content, other project's key: a new note (no 422, no 404 naming beta's note)
    mine = services.notes.create(team.alpha, "alpha", title="Alpha plan", body="alpha body", idempotency_key="k-1")
    assert mine.project == "alpha" and mine.note.id != theirs.note.id
    # and beta's own retry still replays beta's note
    again = services.notes.create(team.beta, "beta", title="Beta plan", body="beta body", idempotency_key="k-1")
    assert again.note.id == theirs.note.id and again.note.version == 1


def test_remember_and_checkpoint_keys_of_one_caller_never_answer_another(services: Services, team: Team) -> None:
    first = services.memory.remember(
        team.beta, RememberRequest("beta", "Beta deploys on Fridays.", idempotency_key="r")
    )
    other = services.memory.remember(
        team.alpha, RememberRequest("alpha", "Alpha uses SQLite for tests.", idempotency_key="r")
    )
    assert (first.status, other.status) == (RememberStatus.CREATED, RememberStatus.CREATED)
    retry = services.memory.remember(
        team.beta, RememberRequest("beta", "Beta deploys on Fridays.", idempotency_key="r")
    )
    assert retry.note is not None and first.note is not None and retry.note.note.id == first.note.note.id

    beta_cp = services.memory.checkpoint(team.beta, "beta", summary="Beta session", idempotency_key="cp")
    alpha_cp = services.memory.checkpoint(team.alpha, "alpha", summary="Alpha session", idempotency_key="cp")
    assert alpha_cp.handoff.project == "alpha" and alpha_cp.handoff.note.id != beta_cp.handoff.note.id
    replay = services.memory.checkpoint(team.beta, "beta", summary="Beta session", idempotency_key="cp")
    assert replay.handoff.note.id == beta_cp.handoff.note.id


def test_one_workspace_key_reusing_a_key_in_two_projects_gets_two_notes(services: Services, team: Team) -> None:
    a = services.notes.create(team.workspace, "alpha", title="Same", body="same body", idempotency_key="k")
    b = services.notes.create(team.workspace, "beta", title="Same", body="same body", idempotency_key="k")
    assert (a.project, b.project) == ("alpha", "beta") and a.note.id != b.note.id


# ----- usage -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flushed", [False, True])
def test_a_scoped_key_sees_only_its_projects_usage(services: Services, team: Team, flushed: bool) -> None:
    ws = team.workspace.workspace_id
    services.notes.create(team.alpha, "alpha", title="A1", body="a" * 10)
    services.notes.create(team.workspace, "alpha", title="A2", body="b" * 5)
    for n in range(3):
        services.notes.create(team.workspace, "beta", title=f"B{n}", body="c" * 100)
    services.meter.record_call(ws, "create_note", 7, team.alpha.project_id)
    services.meter.record_call(ws, "search_notes", 11, team.beta.project_id)
    services.meter.record_call(ws, "get_usage", 2)
    if flushed:
        services.meter.flush()
    alpha = services.workspaces.usage(team.alpha)
    assert alpha.project == "alpha"
    assert (alpha.notes, alpha.stored_bytes, alpha.revisions) == (2, 15, 0)
    assert (alpha.calls, alpha.calls_by_tool, alpha.tokens) == (1, {"create_note": 1}, 7)
    whole = services.workspaces.usage(team.workspace)
    assert whole.project is None
    assert (whole.notes, whole.stored_bytes, whole.calls, whole.tokens) == (5, 315, 3, 20)


# ----- search scores depend on the caller's project alone ----------------------------------------------------

CORPUS = [
    ("Redis cache eviction", "The cache evicts keys with LRU when memory is full; cache hits matter."),
    ("Postgres connection pool", "The pool holds twenty connections; the cache layer sits in front of it."),
    ("Deploy checklist", "Run migrations, warm the cache, then switch traffic."),
    ("Cache keys", "Keys are prefixed by tenant so one cache serves every tenant."),
    ("Incident: stale reads", "A replica lag caused stale reads; the pool retried against the primary."),
]
NOISE = [(f"Noise {n}", "cache cache pool migrations tenant " * (n % 4 + 1)) for n in range(40)]


def ranked(services: Services, principal: Principal, project: str, query: str) -> list[tuple[str, float]]:
    outcome = services.search.run(principal, project, query, limit=10)
    return [(hit.note.title, hit.score) for hit in outcome.hits]


def fill(services: Services, principal: Principal, project: str, notes: list[tuple[str, str]]) -> None:
    for title, body in notes:
        services.notes.create(principal, project, title=title, body=body)


QUERIES = ["cache", "cache pool tenant", "stale primary replica", "migrations"]


def test_search_scores_do_not_move_when_other_projects_or_workspaces_hold_the_words(
    services: Services, team: Team
) -> None:
    fill(services, team.workspace, "alpha", CORPUS)
    before = {q: ranked(services, team.alpha, "alpha", q) for q in QUERIES}
    assert all(before.values())
    fill(services, team.workspace, "beta", NOISE)  # same workspace, another project
    rival = key(services, services.auth.create_workspace("rival").id)
    fill(services, rival, "alpha", NOISE[:20])  # another workspace, same project name
    after = {q: ranked(services, team.alpha, "alpha", q) for q in QUERIES}
    assert after == before


def test_two_workspaces_with_the_same_project_data_rank_it_identically(services: Services, team: Team) -> None:
    twin = key(services, services.auth.create_workspace("twin").id)
    fill(services, team.workspace, "alpha", CORPUS)
    fill(services, twin, "alpha", CORPUS)
    fill(services, twin, "other", NOISE)
    for query in QUERIES:
        assert ranked(services, team.workspace, "alpha", query) == ranked(services, twin, "alpha", query)
