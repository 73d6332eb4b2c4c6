"""`notewell branches sync` against a real git repository made in the test and an embedded SQLite store: a merge git
can see is recorded, git's own default branch wins over the one a project was made with, and a squash or rebase
merge, which git cannot see, is recorded by name with --merged. Each time, what a reader notices: whether a note
written on the branch now shows on the default branch."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteType, Principal
from notewell.entrypoints import branches_cli

if TYPE_CHECKING:
    from collections.abc import Callable

PROJECT = "billing-api"
DECISION = "Webhook deliveries retry at most 3 times with exponential delays."

Run = tuple[int, str]


def git(repo: Path, *args: str) -> None:
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **identity})


def commit_file(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")


def repository(tmp_path: Path, default: str) -> Path:
    """A repository on `default` with a feature branch holding one commit of its own, checked out on `default`."""
    root = tmp_path / PROJECT
    root.mkdir()
    git(root, "init", "-q")
    git(root, "branch", "-M", default)  # an unborn branch: renamed before the first commit
    commit_file(root, "README.md", "billing\n")
    git(root, "checkout", "-q", "-b", "feature/retries")
    commit_file(root, "retry.py", "DELAYS = (1, 2, 4)\n")
    git(root, "checkout", "-q", default)
    return root


@pytest.fixture
def local(tmp_path: Path) -> tuple[Services, Principal]:
    services = bootstrap(Settings(data_dir=tmp_path / "data"))
    workspace, _ = services.auth.default_workspace()
    return services, Principal(workspace_id=workspace.id, actor="cli")


@pytest.fixture
def sync(local: tuple[Services, Principal], capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """`notewell branches sync` as cli.py runs it (register, then run): (exit status, what it printed)."""
    parser = argparse.ArgumentParser(prog="notewell")
    branches_cli.register(parser.add_subparsers(dest="verb", required=True))

    def run(repo: Path, *argv: str) -> Run:
        args = parser.parse_args(["branches", "sync", "--repo-dir", str(repo), *argv])
        status = branches_cli.run(args, lambda: local)
        return status, capsys.readouterr().out

    return run


def the_branchs_decision(local: tuple[Services, Principal]) -> None:
    """A decision written on the feature branch (the project is made by it, with every project's default: main)."""
    services, me = local
    services.notes.create(me, PROJECT, title="Webhook retries", body=DECISION, type=NoteType.DECISION,
                          branch="feature/retries")  # fmt: skip


def shown_on(local: tuple[Services, Principal], branch: str) -> str:
    services, me = local
    return services.context.get_context(me, PROJECT, branch=branch).packed.text


def test_a_merge_git_can_see_is_recorded_and_the_branchs_note_shows_on_main(
    tmp_path: Path, local: tuple[Services, Principal], sync: Callable[..., Run]
) -> None:
    repo = repository(tmp_path, "main")
    the_branchs_decision(local)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge retries", "feature/retries")
    assert DECISION not in shown_on(local, "main")

    status, printed = sync(repo)

    assert status == 0
    assert printed.strip() == (
        f"{PROJECT}: default branch main; 1 merged branch(es) recorded (new: feature/retries); this checkout is on main"
    )
    assert DECISION in shown_on(local, "main")
    assert sync(repo)[1].startswith(f"{PROJECT}: default branch main; 1 merged branch(es) recorded; ")  # nothing new


def test_gits_default_branch_wins_over_the_one_the_project_was_made_with(
    tmp_path: Path, local: tuple[Services, Principal], sync: Callable[..., Run]
) -> None:
    repo = repository(tmp_path, "master")
    the_branchs_decision(local)  # the project says main
    git(repo, "merge", "-q", "--no-ff", "-m", "merge retries", "feature/retries")

    status, printed = sync(repo)

    assert status == 0 and f"{PROJECT}: default branch master; 1 merged branch(es) recorded" in printed
    assert DECISION in shown_on(local, "master")
    assert DECISION in shown_on(local, "feature/other")  # master's notes now, as every branch sees them


def test_the_default_branch_given_wins_over_gits(
    tmp_path: Path, local: tuple[Services, Principal], sync: Callable[..., Run]
) -> None:
    repo = repository(tmp_path, "master")
    git(repo, "branch", "trunk")

    status, printed = sync(repo, "--default-branch", "trunk")

    assert status == 0 and printed.startswith(f"{PROJECT}: default branch trunk; ")


def test_a_squash_merge_git_cannot_see_is_recorded_by_name(
    tmp_path: Path, local: tuple[Services, Principal], sync: Callable[..., Run]
) -> None:
    repo = repository(tmp_path, "main")
    the_branchs_decision(local)
    git(repo, "merge", "-q", "--squash", "feature/retries")
    git(repo, "commit", "-q", "-m", "retries (squashed)")

    unseen = sync(repo)
    assert unseen[0] == 0 and "0 merged branch(es) recorded" in unseen[1]
    assert DECISION not in shown_on(local, "main")

    status, printed = sync(repo, "--merged", "feature/retries", "--merged", "feature/old-idea")

    assert status == 0
    assert "2 merged branch(es) recorded (new: feature/retries, feature/old-idea)" in printed
    assert DECISION in shown_on(local, "main")
