"""Branches over every store: a note records the branch it was written on, get_context on a branch leaves out (and
counts) other unmerged branches' notes, a merge recorded on the project brings them in, and exports carry branches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import NoteType, Principal
from notewell.ports import Store
from notewell.services.memory import RememberRequest


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


def shown(services: Services, me: Principal, **branch: object) -> set[str]:
    result = services.context.get_context(me, "api", **branch)  # type: ignore[arg-type]
    return {str(entry["id"]) for _, entries in result.packed.sections for entry in entries}


def write_three(services: Services, me: Principal) -> tuple[str, str, str]:
    """A decision on main (written without a branch), one on feature/login and one on feature/billing."""
    main = services.notes.create(me, "api", title="Tokens expire in 15 min", body="Short-lived access tokens.")
    login = services.notes.create(
        me, "api", title="Login uses PKCE", body="PKCE for the login flow.", type=NoteType.DECISION,
        branch="feature/login",
    )  # fmt: skip
    billing = services.memory.remember(
        me, RememberRequest("api", "Invoices are cut on the first of the month.", type=NoteType.DECISION,
                            branch="feature/billing"),
    )  # fmt: skip
    assert billing.note is not None
    return main.note.id, login.note.id, billing.note.note.id


def test_each_note_keeps_the_branch_it_was_written_on_and_one_on_the_default_branch_records_none(
    services: Services, me: Principal
) -> None:
    main, login, billing = write_three(services, me)
    on_main = services.notes.create(me, "api", title="Logs are JSON", body="Structured logs.", branch="main")
    found = services.notes.get_many(me, [main, login, billing, on_main.note.id]).found
    assert [view.note.branch for view in found] == [None, "feature/login", "feature/billing", None]


def test_get_context_on_a_branch_shows_its_notes_and_the_default_branchs_and_counts_the_rest(
    services: Services, me: Principal
) -> None:
    main, login, billing = write_three(services, me)
    on_login = services.context.get_context(me, "api", branch="feature/login")
    ids = {entry["id"] for _, entries in on_login.packed.sections for entry in entries}
    assert main in ids and login in ids and billing not in ids
    assert on_login.other_branches == 1
    assert on_login.notice == "1 note of other unmerged branches left out; allBranches: true shows them."
    on_main = shown(services, me, branch="main")
    assert main in on_main and not {login, billing} & on_main
    assert {main, login, billing} <= shown(services, me, branch="main", all_branches=True)
    everything = services.context.get_context(me, "api")  # a client that does not say its branch: as before
    assert everything.other_branches == 0
    assert {main, login, billing} <= shown(services, me)


def test_a_merge_recorded_on_the_project_brings_the_branchs_notes_to_the_default_branch(
    services: Services, me: Principal
) -> None:
    _, login, billing = write_three(services, me)
    assert login not in shown(services, me, branch="main")
    services.projects.update(me, "api", merged_branches=["feature/login"])
    on_main = services.context.get_context(me, "api", branch="main")
    ids = {entry["id"] for _, entries in on_main.packed.sections for entry in entries}
    assert login in ids and billing not in ids and on_main.other_branches == 1
    assert services.projects.list(me)[0].merged_branches == ("feature/login",)


def test_the_default_branch_is_settable_and_a_sync_that_finds_nothing_new_writes_nothing(
    services: Services, me: Principal
) -> None:
    services.notes.create(me, "api", title="Trunk note", body="Written on trunk.", branch="trunk")
    project = services.projects.update(me, "api", default_branch="trunk", merged_branches=["feature/x", "trunk"])
    assert (project.default_branch, project.merged_branches) == ("trunk", ("feature/x",))
    again = services.projects.update(me, "api", merged_branches=["feature/x"])
    assert again.updated_at == project.updated_at  # nothing new: the project was not written
    reread = services.projects.list(me)[0]
    assert (reread.default_branch, reread.merged_branches) == ("trunk", ("feature/x",))


def test_a_name_git_would_refuse_is_refused_before_anything_is_written(services: Services, me: Principal) -> None:
    for bad in ("", "has space", "a..b", "-x", "x.lock", "x/"):
        with pytest.raises(InvalidArgumentError, match="not a git branch name"):
            services.notes.create(me, "api", title="T", body="B", branch=bad)
    assert services.projects.list(me) == []


def test_export_and_import_carry_each_notes_branch(services: Services, me: Principal) -> None:
    main, login, _ = write_three(services, me)
    lines = list(services.portability.export_lines(me, "api"))
    records = {r.get("id"): r for r in map(json.loads, lines)}
    assert records[login]["branch"] == "feature/login" and "branch" not in records[main]  # as older exports read
    services.portability.import_file(me, "copy", lines)
    (pkce,) = services.search.run(me, "copy", "PKCE").hits
    (tokens,) = services.search.run(me, "copy", "short-lived tokens").hits
    assert (pkce.note.branch, tokens.note.branch) == ("feature/login", None)
