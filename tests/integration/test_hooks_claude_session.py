"""End to end: a Claude Code session's hooks, in the order Claude Code runs them, against `notewell serve`.

The repository is connected the way `claude mcp add` does it (the key in ~/.claude.json), `notewell hooks install`
writes .claude/settings.local.json, and each event's command is read from that file and run through a shell with
Claude Code's payload, while the transcript grows and the work tree changes as a session's would."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import HookClient
from tests.integration.test_hooks_clients import git, machine_for, mcp_url, tool
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SESSION_A = "0d6f3b8e-2c41-4f7a-9b1e-5a7c3d2e1f00"
SESSION_B = "7e2a9c14-8b3d-4e61-a5f0-c9d8e7b6a512"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


class Transcript:
    """A Claude Code transcript file that grows as the session goes on."""

    def __init__(self, path: Path, session: str, cwd: Path) -> None:
        self.path, self.session, self.cwd = path, session, cwd
        self.clock = datetime.now(UTC) - timedelta(minutes=10)  # before anything the session commits
        path.write_text("")

    def add(self, kind: str, content: object, **extra: object) -> None:
        self.clock += timedelta(seconds=5)
        message = {"role": kind, "content": content}
        line = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(self.cwd),
                "sessionId": self.session, "version": "2.1.240", "gitBranch": "main", "type": kind,
                "message": message, "uuid": f"u-{self.clock.timestamp()}",
                "timestamp": self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z"), **extra}  # fmt: skip
        with self.path.open("a") as out:
            out.write(json.dumps(line) + "\n")

    def tool_use(self, name: str, arguments: dict[str, object]) -> None:
        self.add("assistant", [{"type": "tool_use", "id": f"toolu_{self.clock.timestamp()}", "name": name,
                                "input": arguments}])  # fmt: skip
        self.add("user", [{"tool_use_id": "t", "type": "tool_result", "content": "ok"}])

    def payload(self, event: str, **fields: object) -> str:
        return json.dumps({"session_id": self.session, "transcript_path": str(self.path), "cwd": str(self.cwd),
                           "permission_mode": "default", "hook_event_name": event, **fields})  # fmt: skip


def context_of(output: str) -> str:
    data = json.loads(output)
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return str(data["hookSpecificOutput"]["additionalContext"])


def test_a_claude_code_session_is_briefed_checkpointed_at_compaction_and_at_exit_and_the_next_one_resumes(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)  # a repository named billing-api
    tool(served, "remember", {"project": "billing-api", "type": "constraint",
                              "content": "Never log full card numbers, not even in debug builds."})  # fmt: skip

    install = machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr
    assert "Checked:" in install.stdout and "billing-api" in install.stdout

    # Session A starts: the project's state is in the model's context before the first prompt.
    session = Transcript(machine.home / "a.jsonl", SESSION_A, machine.repo)
    started = machine.run_hook("SessionStart", session.payload("SessionStart", source="startup"))
    assert started.returncode == 0
    assert "Never log full card numbers" in context_of(started.stdout)

    # The work: a request, a to-do list, a decision recorded through Notewell, an edit and a commit.
    session.add("user", "Cap webhook retries at 3 and make the delay exponential.")
    session.tool_use(
        "TodoWrite",
        {
            "todos": [
                {"content": "Cap retries at 3", "status": "completed", "activeForm": "Capping"},
                {
                    "content": "Send exhausted deliveries to a dead-letter queue",
                    "status": "pending",
                    "activeForm": "DLQ",
                },
            ]
        },
    )
    decision = {"project": "billing-api", "type": "decision",
                "content": "Webhook deliveries retry at most 3 times, because the partner rate-limits us."}  # fmt: skip
    tool(served, "remember", decision)  # what the agent's call did on the server
    session.tool_use("mcp__notewell__remember", decision)
    (machine.repo / "retry.py").write_text("DELAYS = (1, 2, 4)\n")
    git(machine.repo, "add", "retry.py")
    git(machine.repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "retry delays")
    session.add("assistant", [{"type": "text", "text": "Retries are capped at 3 with delays of 1, 2 and 4 s."}])

    # The context fills up: a checkpoint before compaction, and the compacted session is briefed again.
    compacting = machine.run_hook("PreCompact", session.payload("PreCompact", trigger="auto", custom_instructions=""))
    assert (compacting.returncode, compacting.stdout) == (0, "")
    resumed = machine.run_hook("SessionStart", session.payload("SessionStart", source="compact"))
    assert "Handoff: Cap webhook retries at 3 and make the delay exponential" in context_of(resumed.stdout)

    # More work, then the person exits: the session's final checkpoint replaces the one before compaction.
    session.add("user", "Also log each failed attempt with the delivery id.")
    (machine.repo / "webhooks.py").write_text("RETRIES = 3\nlog_failures = True\n")
    session.add("assistant", [{"type": "text", "text": "Failed attempts are logged with their delivery id."}])
    ended = machine.run_hook("SessionEnd", session.payload("SessionEnd", reason="prompt_input_exit"))
    assert (ended.returncode, ended.stdout) == (0, "")

    # Session B starts where A stopped: one live handoff, the open item, the decision, the constraint.
    next_session = Transcript(machine.home / "b.jsonl", SESSION_B, machine.repo)
    briefing = context_of(
        machine.run_hook("SessionStart", next_session.payload("SessionStart", source="startup")).stdout
    )
    assert briefing.count("Handoff: Cap webhook retries at 3") == 1
    assert "Where it stopped: Failed attempts are logged with their delivery id." in briefing
    assert "[pending] Send exhausted deliveries to a dead-letter queue" in briefing
    assert "Webhook deliveries retry at most 3 times" in briefing
    assert "Never log full card numbers" in briefing

    handoffs = tool(served, "search_notes", {"project": "billing-api", "query": "handoff", "types": ["handoff"]})
    by_status = sorted(str(n["status"]) for n in handoffs["structuredContent"]["results"])  # type: ignore[index]
    assert by_status == ["current", "historical"]
    (live,) = [n for n in handoffs["structuredContent"]["results"] if n["status"] == "current"]  # type: ignore[index]
    body = str(tool(served, "get_note", {"id": live["id"]})["structuredContent"]["body"])  # type: ignore[index]
    assert "Also asked:\n- Also log each failed attempt with the delivery id." in body
    assert "Decisions recorded:\n- Webhook deliveries retry at most 3 times" in body
    assert "Files touched (git): webhooks.py, retry.py" in body  # the work tree, then what was committed
    assert "(SessionEnd: prompt_input_exit)" in body
    assert machine.log_text() == ""

    # Uninstalling takes back exactly what install wrote.
    removed = machine.notewell("hooks", "uninstall", "--yes")
    assert removed.returncode == 0
    assert not (machine.repo / ".claude").exists()
