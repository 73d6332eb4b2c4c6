"""The scripted session: what "memory that follows the code" (issue 39) looks like from a Claude Code session, end to
end, against a real git repository made here and a real `notewell serve` process, each hook run as Claude Code runs it
(the command `notewell hooks install` wrote, through a shell, with Claude Code's documented payload).

Install the hooks; a session starts (context injected) and its first prompt adds the notes on the task that the start
did not show (here none: the project has one note); notes are anchored to two files; the session ends (a checkpoint,
anchored to what it changed); one file changes and is committed; the next session's briefing marks the notes on that
file `[changed: …]` and not the other; a note written on a feature branch is hidden on main until the branch is
merged, then shown."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import HookClient
from notewell.domain.refs import name_of
from tests.integration.test_hooks_claude_session import Transcript
from tests.integration.test_hooks_clients import git, machine_for, mcp_url, tool
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q")
RETRY = "def backoff(attempt):\n    return min(2**attempt, 30)\n"
JOBS = "QUEUE_DEPTH = 100\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def added(output: str, event: str) -> str:
    data = json.loads(output)["hookSpecificOutput"]
    assert data["hookEventName"] == event
    return str(data["additionalContext"])


def line_of(text: str, note_id: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"- {name_of(note_id)} "))


def test_a_scripted_session_follows_the_code_its_notes_are_anchored_to_and_its_branches(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)  # a repository named billing-api
    git(machine.repo, "branch", "-M", "main")
    (machine.repo / "retry.py").write_text(RETRY)
    (machine.repo / "jobs.py").write_text(JOBS)
    git(machine.repo, "add", "-A")
    git(machine.repo, *COMMIT, "-m", "retry and jobs")
    project = machine.project

    # Install the hooks.
    install = machine.notewell("hooks", "install", "--project", project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr
    assert f"Checked: {mcp_url(served)} answered get_context for {project}" in install.stdout
    tool(served, "remember", {"project": project, "type": "constraint",
                              "content": "Never log full card numbers, not even in debug builds."})  # fmt: skip

    # A session starts: the project's context is injected; its first prompt adds what the start did not show, once.
    first = Transcript(machine.home / "a.jsonl", "session-a", machine.repo)
    started = added(machine.run_hook("SessionStart", first.payload("SessionStart", source="startup")).stdout,
                    "SessionStart")  # fmt: skip
    assert f"# {project}: lean context" in started and "Never log full card numbers" in started
    ask = "Cap the webhook retry backoff and size the job queue; never log card numbers."
    first.add("user", ask)
    prompted = machine.run_hook("UserPromptSubmit", first.payload("UserPromptSubmit", prompt=ask))
    assert (prompted.returncode, prompted.stdout) == (0, "")  # its one note was in the start's context: not again
    again = machine.run_hook("UserPromptSubmit", first.payload("UserPromptSubmit", prompt="And the docs."))
    assert again.stdout == ""

    # The agent writes notes anchored to two files (`notewell anchor --print` gives the anchors' JSON).
    def anchored(path: str, title: str) -> str:
        printed = machine.notewell("anchor", "--print", path)
        assert printed.returncode == 0, printed.stderr
        arguments = {"project": project, "title": title, "type": "decision", "body": f"{title}, measured.",
                     "anchors": json.loads(printed.stdout)}  # fmt: skip
        return str(tool(served, "create_note", arguments)["structuredContent"]["id"])  # type: ignore[index]

    retry = anchored("retry.py#backoff", "Webhook retries back off, capped at 30 s")
    jobs = anchored("jobs.py", "The job queue holds 100 jobs")
    (machine.repo / "retry.py").write_text(RETRY + "\n\ndef jitter():\n    return 0.1\n")
    first.add("assistant", [{"type": "text", "text": "Backoff is capped; jitter added; the queue stays at 100."}])
    ended = machine.run_hook("SessionEnd", first.payload("SessionEnd", reason="prompt_input_exit"))
    assert (ended.returncode, ended.stdout) == (0, "")

    # One file changes and is committed.
    (machine.repo / "retry.py").write_text(RETRY.replace("30", "60") + "\n\ndef jitter():\n    return 0.1\n")
    git(machine.repo, *COMMIT, "-am", "backoff cap 60")

    # The next session: the note (and the handoff) on the changed file are marked; the other note is not.
    second = Transcript(machine.home / "b.jsonl", "session-b", machine.repo)
    briefing = added(machine.run_hook("SessionStart", second.payload("SessionStart", source="startup")).stdout,
                     "SessionStart")  # fmt: skip
    assert line_of(briefing, retry).startswith(
        f"- {name_of(retry)} [changed: retry.py, re-check] [decision] Webhook retries"
    )
    assert line_of(briefing, jobs) == f"- {name_of(jobs)} The job queue holds 100 jobs, measured."  # fresh: unmarked
    handoff = next(line for line in briefing.splitlines() if "Cap the webhook retry backoff" in line)
    assert "[changed: retry.py, re-check]" in handoff

    # A note written on a feature branch is hidden on main until the merge, then shown.
    git(machine.repo, "checkout", "-q", "-b", "feature/dlq")
    on_feature = added(machine.run_hook("SessionStart", second.payload("SessionStart", source="startup")).stdout,
                       "SessionStart")  # fmt: skip
    assert "Git branch: feature/dlq; pass branch: 'feature/dlq'" in on_feature
    dlq = "Exhausted webhook deliveries go to a dead-letter queue, kept 14 days."
    tool(served, "remember", {"project": project, "type": "decision", "branch": "feature/dlq", "content": dlq})
    (machine.repo / "dlq.py").write_text("KEEP_DAYS = 14\n")
    git(machine.repo, "add", "dlq.py")
    git(machine.repo, *COMMIT, "-m", "dead-letter queue")
    git(machine.repo, "checkout", "-q", "main")
    on_main = added(machine.run_hook("SessionStart", second.payload("SessionStart", source="startup")).stdout,
                    "SessionStart")  # fmt: skip
    assert "dead-letter queue" not in on_main
    assert "1 note of other unmerged branches left out; allBranches: true shows them." in on_main
    git(machine.repo, "merge", "-q", "--no-ff", "-m", "merge dlq", "feature/dlq")
    merged = added(machine.run_hook("SessionStart", second.payload("SessionStart", source="startup")).stdout,
                   "SessionStart")  # fmt: skip
    assert "Exhausted webhook deliveries go to a dead-letter queue" in merged
    assert "left out" not in merged
    assert machine.log_text() == ""
