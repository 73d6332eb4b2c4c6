"""A hook's checkpoint is anchored to the code the session changed: the handoff (and any decision or failed approach
the checkpoint filed) gets whole-file anchors to the files touched according to git, the most changed first, exactly
as `notewell anchor PATH` makes them; so the next session sees the handoff marked once that code moves on."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pytest

from notewell.domain.hooks import HookClient
from notewell.entrypoints.hooks import run_hook
from tests.integration.test_hooks_claude_session import Transcript
from tests.integration.test_hooks_clients import git, machine_for, mcp_url, tool
from tests.support.jsonrpc import reply
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q")
SESSION = "3f9c2a71-5d4e-4b8a-9c0f-1e2d3c4b5a69"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def lines(count: int, word: str = "line") -> str:
    return "".join(f"{word} {n}\n" for n in range(count))


def committed_long_ago(repo: Path, message: str) -> None:
    """A commit from before the session: not among the files it touched."""
    past = {"GIT_COMMITTER_DATE": "2026-01-05T10:00:00Z", "GIT_AUTHOR_DATE": "2026-01-05T10:00:00Z"}
    subprocess.run(["git", "-C", str(repo), *COMMIT, "-m", message], check=True, capture_output=True,
                   env={**os.environ, **past})  # fmt: skip


def test_the_handoff_is_anchored_to_the_files_changed_most_as_notewell_anchor_would_and_marked_when_they_change(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    git(machine.repo, "remote", "add", "origin", "git@github.com:acme/billing-api.git")  # anchors name it so
    for name, text in {"retry.py": lines(10), "jobs.py": lines(3), "README.md": lines(2)}.items():
        (machine.repo / name).write_text(text)
    git(machine.repo, "add", "-A")
    committed_long_ago(machine.repo, "start")
    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr

    session = Transcript(machine.home / "s.jsonl", SESSION, machine.repo)
    session.add("user", "Rework the retry loop and add a dead-letter queue.")
    (machine.repo / "retry.py").write_text(lines(6) + lines(4, "changed"))  # 4 lines replaced: 8 changed
    (machine.repo / "jobs.py").write_text(lines(4))  # 1 line added
    git(machine.repo, *COMMIT, "-am", "retry loop")
    (machine.repo / "dlq.py").write_text(lines(5))  # new, not committed: its 5 lines
    (machine.repo / "README.md").write_text(lines(1) + "changed\n")  # 1 line replaced: 2 changed
    session.add("assistant", [{"type": "text", "text": "The retry loop is reworked; the queue is next."}])

    ended = machine.run_hook("SessionEnd", session.payload("SessionEnd", reason="prompt_input_exit"))

    assert (ended.returncode, ended.stdout) == (0, "")
    assert machine.log_text() == ""
    found = tool(served, "search_notes", {"project": machine.project, "query": "handoff", "types": ["handoff"]})
    (handoff,) = found["structuredContent"]["results"]  # type: ignore[index]
    note = tool(served, "get_note", {"id": handoff["id"]})["structuredContent"]
    by_hand = machine.notewell("anchor", "--print", "retry.py", "dlq.py", "README.md", "jobs.py")  # most changed first
    assert by_hand.returncode == 0, by_hand.stderr
    assert note["anchors"] == json.loads(by_hand.stdout)  # type: ignore[index]
    assert {anchor["repo"] for anchor in note["anchors"]} == {"github.com/acme/billing-api"}  # type: ignore[index]

    # The code moves on: the next session's briefing shows the handoff marked, to be re-checked.
    (machine.repo / "retry.py").write_text(lines(2))
    git(machine.repo, "add", "-A")
    git(machine.repo, *COMMIT, "-m", "retry loop, shorter")
    started = machine.run_hook("SessionStart", Transcript(machine.home / "t.jsonl", "next", machine.repo).payload(
        "SessionStart", source="startup"))  # fmt: skip
    briefing = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[changed: retry.py, re-check]" in next(
        line for line in briefing.splitlines() if "Rework the retry loop" in line
    )
    assert machine.log_text() == ""


class CheckpointServer(BaseHTTPRequestHandler):
    """Answers checkpoint as Notewell does when the checkpoint filed a decision, an open item and a failed approach
    it already had; records every call."""

    calls: ClassVar[list[tuple[str, dict[str, object]]]] = []

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        call = json.loads(self.rfile.read(int(self.headers["content-length"])))
        name, arguments = call["params"]["name"], call["params"]["arguments"]
        CheckpointServer.calls.append((name, arguments))
        structured: dict[str, object] = {"id": arguments.get("id"), "version": 2}
        if name == "checkpoint":
            structured = {"handoff": {"id": "n_handoff", "version": 1}, "conflicts": 0, "items": [
                {"kind": "decision", "status": "created", "id": "n_decision", "excerpt": "d"},
                {"kind": "open_item", "status": "created", "id": "n_task", "excerpt": "o"},
                {"kind": "failed_approach", "status": "duplicate", "existing_id": "n_old", "excerpt": "f"},
            ]}  # fmt: skip
        result = {"content": [{"type": "text", "text": "ok"}], "structuredContent": structured, "isError": False}
        reply(self, call["id"], result)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        """Quiet."""


def test_a_checkpoint_anchors_at_most_20_files_the_most_changed_and_only_the_notes_it_made(tmp_path: Path) -> None:
    repo = tmp_path / "api"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, *COMMIT, "--allow-empty", "-m", "start")
    for n in range(25):  # file n has n + 1 lines: the 20 most changed are f5 ... f24
        (repo / f"f{n:02}.py").write_text(lines(n + 1))
    transcript = Transcript(tmp_path / "s.jsonl", SESSION, repo)
    transcript.add("user", "Split the module.")
    server = HTTPServer(("127.0.0.1", 0), CheckpointServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    environ = {"NOTEWELL_API_KEY": "nwk_test", "NOTEWELL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    args = argparse.Namespace(action="checkpoint", client="claude-code", project="api",
                              url=f"http://127.0.0.1:{server.server_port}/mcp")  # fmt: skip
    try:
        run_hook(args, io.StringIO(transcript.payload("SessionEnd", reason="other")), io.StringIO(), environ,
                 deadline_s=10)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()

    assert not (tmp_path / "home" / "hooks" / "hooks.log").exists()
    anchored = {args["id"]: args["anchors"] for name, args in CheckpointServer.calls if name == "update_note"}
    assert list(anchored) == ["n_handoff", "n_decision"]
    paths = [anchor["path"] for anchor in anchored["n_handoff"]]  # type: ignore[attr-defined]
    assert paths == [f"f{n:02}.py" for n in range(24, 4, -1)]
    assert anchored["n_decision"] == anchored["n_handoff"]
