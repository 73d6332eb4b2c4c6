"""End to end, against `notewell serve` and a real git repository: a note written on a feature branch is hidden from
the session-start briefing on main until the branch is merged (the hook syncs the merge), then shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import HookClient
from tests.integration.test_hooks_clients import git, machine_for, mcp_url, tool
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q")


def payload(cwd: Path, event: str) -> str:
    return json.dumps({"session_id": "s-1", "cwd": str(cwd), "hook_event_name": event, "source": "startup"})


def context_of(output: str) -> str:
    return str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def test_a_feature_branchs_note_is_hidden_on_main_until_the_merge_then_shown(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)  # a repository named billing-api
    git(machine.repo, "branch", "-M", "main")
    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr
    tool(served, "remember", {"project": machine.project, "type": "constraint",
                              "content": "Never log full card numbers, not even in debug builds."})  # fmt: skip

    # A session on a feature branch: briefed with main's notes, told its branch, writes a decision on it.
    git(machine.repo, "checkout", "-q", "-b", "feature/retries")
    started = context_of(machine.run_hook("SessionStart", payload(machine.repo, "SessionStart")).stdout)
    assert "Never log full card numbers" in started
    assert "Git branch: feature/retries; pass branch: 'feature/retries'" in started
    decision = "Webhook deliveries retry at most 3 times with exponential delays."
    tool(served, "remember", {"project": machine.project, "type": "decision", "branch": "feature/retries",
                              "content": decision})  # fmt: skip
    (machine.repo / "retry.py").write_text("DELAYS = (1, 2, 4)\n")
    git(machine.repo, "add", "retry.py")
    git(machine.repo, *COMMIT, "-m", "retry delays")

    # The next session on main does not see the unmerged branch's decision, and is told what was left out.
    git(machine.repo, "checkout", "-q", "main")
    on_main = context_of(machine.run_hook("SessionStart", payload(machine.repo, "SessionStart")).stdout)
    assert "Never log full card numbers" in on_main
    assert "retry at most 3 times" not in on_main
    assert "1 note of other unmerged branches left out; allBranches: true shows them." in on_main

    # Merged: the session-start hook records the merge, and the decision is now main's.
    git(machine.repo, "merge", "-q", "--no-ff", "-m", "merge retries", "feature/retries")
    merged = context_of(machine.run_hook("SessionStart", payload(machine.repo, "SessionStart")).stdout)
    assert "Webhook deliveries retry at most 3 times" in merged
    assert "left out" not in merged
    assert machine.log_text() == ""


def update_project_calls(served: Served) -> int:
    usage = tool(served, "get_usage", {})["structuredContent"]
    return int(usage["callsByTool"].get("update_project", 0))  # type: ignore[index]


def test_in_a_master_repository_the_defaults_notes_show_on_a_feature_branch_and_are_recorded_once(
    tmp_path: Path, served: Served
) -> None:
    """The project existed before any session (its first note made it, with every project's default, `main`): the
    hook records git's `master` on it at the first session start, then sends nothing more for it."""
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    git(machine.repo, "branch", "-M", "master")
    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr
    # Written on master by an agent the briefing told its branch ("pass branch: 'master'").
    tool(served, "remember", {"project": machine.project, "type": "constraint", "branch": "master",
                              "content": "Never log full card numbers, not even in debug builds."})  # fmt: skip

    git(machine.repo, "checkout", "-q", "-b", "feature/retries")
    before = update_project_calls(served)
    started = context_of(machine.run_hook("SessionStart", payload(machine.repo, "SessionStart")).stdout)
    assert "Never log full card numbers" in started
    assert "left out" not in started
    assert update_project_calls(served) - before == 1

    again = context_of(machine.run_hook("SessionStart", payload(machine.repo, "SessionStart")).stdout)
    assert "Never log full card numbers" in again
    assert update_project_calls(served) - before == 1  # recorded already: no call
    assert machine.log_text() == ""
