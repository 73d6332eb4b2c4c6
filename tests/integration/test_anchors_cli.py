"""`notewell anchor` and `notewell check` against a real git repository made in the test: notes anchored to two files,
then the code changes, moves and goes, commit after commit, and check says which notes to re-check."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Principal
from notewell.domain.refs import name_of
from notewell.entrypoints import anchors_cli

if TYPE_CHECKING:
    from collections.abc import Callable

RETRY = '''"""Retries of outgoing webhooks."""

MAX_ATTEMPTS = 5


def backoff(attempt: int) -> float:
    delay = 2.0**attempt
    return min(delay, 30.0)


def jitter() -> float:
    return 0.1
'''
QUEUE = 'QUEUE_NAME = "orders"\n'

Run = tuple[int, str]


def git(repo: Path, *args: str) -> None:
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **identity})


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "billing-api"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "src" / "retry.py").write_text(RETRY)
    (root / "src" / "queue.py").write_text(QUEUE)
    commit_all(root, "first")
    return root


@pytest.fixture
def local(tmp_path: Path) -> tuple[Services, Principal]:
    services = bootstrap(Settings(data_dir=tmp_path / "data"))
    workspace, _ = services.auth.default_workspace()
    return services, Principal(workspace_id=workspace.id, actor="cli")


@pytest.fixture
def notewell(local: tuple[Services, Principal], repo: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """The verbs as cli.py runs them (register, then run), in the repository: (exit status, what they printed)."""
    parser = argparse.ArgumentParser(prog="notewell")
    anchors_cli.register(parser.add_subparsers(dest="verb", required=True))

    def run(*argv: str) -> Run:
        args = parser.parse_args([*argv, "--repo-dir", str(repo)])
        status = anchors_cli.run(args, lambda: local)
        return status, capsys.readouterr().out

    return run


def freshness(run: Callable[..., Run]) -> tuple[int, dict[str, str], dict[str, Any]]:
    status, printed = run("check", "--json")
    report = json.loads(printed)
    return status, {note["title"]: note["freshness"] for note in report["notes"]}, report


def test_check_says_changed_for_the_note_whose_code_changed_then_gone_and_moved(
    notewell: Callable[..., Run], local: tuple[Services, Principal], repo: Path
) -> None:
    services, me = local
    backoff = services.notes.create(me, "billing", title="Backoff cap", body="Webhook backoff caps at 30 s.").note
    queue = services.notes.create(me, "billing", title="Orders queue", body="Orders go to the 'orders' queue.").note
    status, printed = notewell("anchor", backoff.id, "src/retry.py#backoff")
    assert status == 0 and "src/retry.py#backoff (lines 6-8)" in printed
    assert notewell("anchor", name_of(queue.id).lower(), "src/queue.py")[0] == 0  # a ref, as get_context names it
    stored = services.notes.get(me, backoff.id).note.anchors
    assert [(a.repo, a.path, a.symbol, a.lines and (a.lines.start, a.lines.end)) for a in stored] == [
        ("billing-api", "src/retry.py", "backoff", (6, 8))
    ]
    assert freshness(notewell)[:2] == (0, {"Backoff cap": "fresh", "Orders queue": "fresh"})

    (repo / "src" / "retry.py").write_text(RETRY.replace("30.0", "60.0"))
    commit_all(repo, "raise the backoff cap")
    status, verdicts, report = freshness(notewell)
    assert (status, verdicts) == (1, {"Backoff cap": "changed", "Orders queue": "fresh"})
    assert report["notes"][0]["title"] == "Backoff cap"  # the stalest first
    text = notewell("check")[1]
    assert f"changed  {backoff.id}" in text and "git diff" in text and f"notewell anchor {backoff.id}" in text

    (repo / "src" / "queue.py").unlink()
    commit_all(repo, "drop the queue module")
    assert freshness(notewell)[1] == {"Backoff cap": "changed", "Orders queue": "gone"}

    assert notewell("anchor", backoff.id, "src/retry.py#backoff")[0] == 0  # re-checked: anchored to the new code
    assert freshness(notewell)[1]["Backoff cap"] == "fresh"
    moved = RETRY.replace("30.0", "60.0").replace("MAX_ATTEMPTS = 5\n", "MAX_ATTEMPTS = 5\n\n\ndef base() -> int:\n"
                                                                         "    return 2\n")  # fmt: skip
    (repo / "src" / "retry.py").write_text(moved)
    commit_all(repo, "a helper above backoff")
    status, verdicts, report = freshness(notewell)
    assert verdicts == {"Backoff cap": "moved", "Orders queue": "gone"}
    moved_anchor = next(n for n in report["notes"] if n["title"] == "Backoff cap")["anchors"][0]
    assert moved_anchor["now"] == {"path": "src/retry.py", "lines": {"start": 10, "end": 12}}


def test_anchor_print_gives_json_for_a_tool_call_without_opening_the_store(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="notewell")
    anchors_cli.register(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["anchor", "--print", "src/retry.py:3-3", "src/queue.py", "--repo-dir", str(repo)])

    def no_store() -> tuple[Services, Principal]:
        raise AssertionError("--print opened the store")

    assert anchors_cli.run(args, no_store) == 0
    printed = capsys.readouterr().out
    lines, whole = json.loads(printed)
    assert lines["lines"] == {"start": 3, "end": 3} and "symbol" not in lines
    assert whole["contentHash"] == whole["fileHash"]
    assert len(lines["commit"]) == 40 and set(lines) == {"repo", "path", "lines", "commit", "contentHash", "fileHash"}
    assert "MAX_ATTEMPTS" not in printed and "orders" not in printed  # hashes and paths only, never the code


def test_what_cannot_be_anchored_is_refused_with_what_to_do(
    notewell: Callable[..., Run], local: tuple[Services, Principal], repo: Path
) -> None:
    services, me = local
    note = services.notes.create(me, "billing", title="T", body="b").note
    refusals = {
        "src/retry.py#retry_forever": "No definition of 'retry_forever' in src/retry.py",
        "src/retry.py:40-50": "src/retry.py has lines 1 to 12",
        "src/missing.py": "src/missing.py is not a file in the working tree",
        "../outside.py": "is outside the repository",
    }
    for spec, says in refusals.items():
        with pytest.raises(InvalidArgumentError, match=says):
            notewell("anchor", note.id, spec)
    with pytest.raises(InvalidArgumentError, match="'src/retry.py' is not a note id"):
        notewell("anchor", "src/retry.py")
    assert services.notes.get(me, note.id).note.version == 1  # nothing written


def test_anchors_to_another_repository_are_left_to_a_check_in_its_checkout(
    notewell: Callable[..., Run], local: tuple[Services, Principal]
) -> None:
    services, me = local
    note = services.notes.create(me, "billing", title="Web form", body="b").note
    assert notewell("anchor", note.id, "src/queue.py", "--repo", "github.com/acme/web")[0] == 0
    status, verdicts, report = freshness(notewell)
    assert (status, verdicts, report["elsewhere"]) == (0, {}, {"github.com/acme/web": 1})
