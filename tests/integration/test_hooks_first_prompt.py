"""The first prompt orients the session (issue 41): Claude Code's and Codex's UserPromptSubmit hook, run as each
client runs it (the installed command, the documented payload in tests/fixtures/hooks) against `notewell serve`,
adds the project's context searched with what the person asked, once per session; the session start cannot know the
task, and a lean briefing without it misses what the task needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import HookClient
from notewell.domain.refs import name_of
from tests.integration.test_hooks_clients import (
    Machine,
    _closed_port,
    git,
    installed,
    machine_for,
    run_module,
    tool,
)
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q")
# What each fixture prompt needs, written long before the session, and crowded out of a lean briefing by newer notes.
NEEDED = {
    HookClient.CLAUDE_CODE: ("Webhook retries back off", "Webhook retries back off from 1 s and the partner "
                             "rate-limits us at 5 calls a second per merchant."),
    HookClient.CODEX: ("The CSV importer reads UTF-8 only", "The CSV importer reads UTF-8 only; blank lines used to "
                       "fail the whole import, not just the line."),
}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def added_context(output: str, event: str) -> str:
    data = json.loads(output)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    return str(data["hookSpecificOutput"]["additionalContext"])


def get_context_calls(served: Served) -> int:
    usage = tool(served, "get_usage", {})["structuredContent"]
    return int(usage["callsByTool"].get("get_context", 0))  # type: ignore[index]


def crowded(served: Served, machine: Machine, title: str, body: str) -> str:
    """The note the task needs, then 30 newer decisions on other subsystems; returns its id."""
    created = tool(served, "create_note", {"project": machine.project, "title": title, "type": "decision",
                                           "body": body})  # fmt: skip
    for n in range(30):
        tool(served, "create_note", {"project": machine.project, "title": f"Subsystem {n} decision", "type": "decision",
                                     "body": f"Subsystem {n} keeps its state in table t{n}."})  # fmt: skip
    return str(created["structuredContent"]["id"])  # type: ignore[index]


@pytest.mark.parametrize("client", [HookClient.CLAUDE_CODE, HookClient.CODEX])
def test_the_first_prompt_adds_the_context_the_task_needs_and_later_prompts_add_nothing(
    client: HookClient, tmp_path: Path, served: Served
) -> None:
    machine = installed(client, tmp_path, served)
    title, body = NEEDED[client]
    needed = crowded(served, machine, title, body)
    transcript = machine.transcript()

    started = added_context(machine.run_hook("SessionStart", machine.payload("SessionStart", transcript)).stdout,
                            "SessionStart")  # fmt: skip
    assert name_of(needed) not in started  # a lean briefing without the task cannot tell what it needs
    first = machine.run_hook("UserPromptSubmit", machine.payload("UserPromptSubmit", transcript))
    calls = get_context_calls(served)
    later = machine.run_hook("UserPromptSubmit", machine.payload("UserPromptSubmit", transcript))

    assert first.returncode == 0 and first.stderr == ""
    context = added_context(first.stdout, "UserPromptSubmit")
    assert context.startswith("Notewell's notes on this request")
    assert f"- {name_of(needed)} " in context and title in context
    assert (later.returncode, later.stdout, later.stderr) == (0, "", "")
    assert get_context_calls(served) == calls  # later prompts do not ask
    assert machine.log_text() == ""


def test_the_first_prompt_hashes_the_files_again_and_shows_a_note_whose_code_changed_since_the_start(
    tmp_path: Path, served: Served
) -> None:
    machine = installed(HookClient.CLAUDE_CODE, tmp_path, served)
    git(machine.repo, "branch", "-M", "main")
    git(machine.repo, "checkout", "-q", "-b", "feature/retries")
    (machine.repo / "retry.py").write_text("def backoff(attempt):\n    return min(2**attempt, 30)\n")
    git(machine.repo, "add", "-A")
    git(machine.repo, *COMMIT, "-m", "retry")
    printed = machine.notewell("anchor", "--print", "retry.py")
    assert printed.returncode == 0, printed.stderr
    retry = tool(served, "create_note", {
        "project": machine.project, "title": "Webhook retries back off, capped at 30 s", "type": "decision",
        "body": "Webhook retries back off exponentially, capped at 30 s.", "anchors": json.loads(printed.stdout),
    })["structuredContent"]["id"]  # type: ignore[index]  # fmt: skip
    transcript = machine.transcript()

    started = added_context(machine.run_hook("SessionStart", machine.payload("SessionStart", transcript)).stdout,
                            "SessionStart")  # fmt: skip
    # The person edits the file before typing: the note the start showed as it was is now about other code.
    (machine.repo / "retry.py").write_text("def backoff(attempt):\n    return min(2**attempt, 60)\n")
    first = machine.run_hook("UserPromptSubmit", machine.payload("UserPromptSubmit", transcript))

    assert f"- {name_of(retry)} [decision] Webhook retries back off" in started
    context = added_context(first.stdout, "UserPromptSubmit")
    line = next(line for line in context.splitlines() if line.startswith(f"- {name_of(retry)} "))
    assert line.startswith(f"- {name_of(retry)} [changed: retry.py, re-check] ")
    assert machine.log_text() == ""


def test_a_first_prompt_the_server_cannot_answer_costs_nothing_and_is_not_asked_again(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    machine.env["NOTEWELL_API_KEY"] = "nwk_unused"
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    payload = machine.payload("UserPromptSubmit", machine.transcript())

    first = run_module(machine, "prompt", url, payload)
    later = run_module(machine, "prompt", url, payload)

    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    assert (later.returncode, later.stdout, later.stderr) == (0, "", "")
    (logged,) = machine.log_text().splitlines()
    assert f"claude-code UserPromptSubmit: get_context: cannot reach {url}" in logged
