"""The branch visibility rule (domain/branches.py), branch names, and how the hooks read a repository's branch and
identity from git's files, worktrees included."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

from notewell.domain import branches, rules
from notewell.domain.branches import BranchScope
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Note, Project
from notewell.entrypoints.hooks import current_branch, project_for

if TYPE_CHECKING:
    from pathlib import Path

PROJECT = Project("p_1", "ws_1", "api", "t", "t", default_branch="main", merged_branches=("feature/old",))


def note(note_id: str, branch: str | None) -> Note:
    return Note(note_id, "ws_1", "p_1", "T", "B", 1, "t", "t", "a", "w", branch=branch)


def test_a_reader_on_a_branch_sees_its_own_the_default_branchs_and_merged_branches_notes_only() -> None:
    notes = [note("a", None), note("b", "main"), note("c", "feature/x"), note("d", "feature/old"), note("e", "fix")]
    shown, hidden = BranchScope.of(PROJECT, "feature/x").split(notes)
    assert [n.id for n in shown] == ["a", "b", "c", "d"] and hidden == {"e"}
    assert BranchScope.of(PROJECT, "main").split(notes)[1] == {"c", "e"}
    assert BranchScope.of(PROJECT, None).split(notes)[1] == set()  # no branch said: everything, as before
    assert BranchScope.of(PROJECT, "main", all_branches=True).split(notes)[1] == set()


def test_a_note_written_on_the_default_branch_records_none_and_the_merge_record_stays_small() -> None:
    assert branches.note_branch(PROJECT, "main") is None and branches.note_branch(PROJECT, "x") == "x"
    assert branches.merged_record(("a",), ["main", "b", "a"], "main") == ("a", "b")
    many = [f"f/{i}" for i in range(rules.MAX_MERGED_BRANCHES + 3)]
    kept = branches.merged_record((), many, "main")
    assert len(kept) == rules.MAX_MERGED_BRANCHES and kept[-1] == many[-1]  # the oldest merges are forgotten


@pytest.mark.parametrize("name", ["main", "feature/login", "release-1.2", "user/joe/x#2"])
def test_names_git_accepts_pass(name: str) -> None:
    assert rules.check_branch(name) == name


@pytest.mark.parametrize("name", ["", " x", "a..b", "-x", "x.lock", "x/", "a//b", "a~1", "a:b", "@", "x" * 201])
def test_names_git_refuses_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgumentError, match="not a git branch name"):
        rules.check_branch(name)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_worktrees_of_one_repository_share_its_project_and_each_knows_its_branch(tmp_path: Path) -> None:
    repo = tmp_path / "billing-api"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "s")
    worktree = tmp_path / "hotfix-checkout"
    git(repo, "worktree", "add", "-q", "-b", "hotfix/idempotency", str(worktree))
    (worktree / "src").mkdir()
    assert project_for(worktree / "src") == project_for(repo) == "billing-api"
    assert (current_branch(worktree), current_branch(repo)) == ("hotfix/idempotency", "main")
    git(repo, "checkout", "-q", "--detach")
    assert current_branch(repo) is None
