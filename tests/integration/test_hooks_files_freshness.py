"""End to end, against `notewell serve` and a real git repository: the session-start hook sends the files changed on
the branch since the last session (`files`) and the hashes of the files anchored notes name (`checkFreshness`), so the
session opens with the notes on that code first and the stale ones marked; against a server that predates those
arguments it still briefs the session."""

from __future__ import annotations

import argparse
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import HookClient
from notewell.domain.refs import name_of
from notewell.entrypoints.hooks import run_hook
from tests.integration.test_hooks_clients import git, machine_for, mcp_url, tool
from tests.support.jsonrpc import reply
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

COMMIT = ("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q")
RETRY = "def backoff(attempt):\n    return min(2**attempt, 30)\n"


def payload(cwd: Path) -> str:
    return json.dumps({"session_id": "s-1", "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"})


def context_of(output: str) -> str:
    return str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


def line_of(text: str, note_id: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"- {name_of(note_id)} "))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def test_the_session_opens_with_notes_on_the_changed_files_first_and_stale_ones_marked(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    git(machine.repo, "branch", "-M", "main")
    (machine.repo / "retry.py").write_text(RETRY)
    (machine.repo / "jobs.py").write_text("DEPTH = 100\n")
    git(machine.repo, "add", "-A")
    git(machine.repo, *COMMIT, "-m", "retry and jobs")
    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr

    def anchored(spec: str, title: str) -> str:
        printed = machine.notewell("anchor", "--print", spec)
        assert printed.returncode == 0, printed.stderr
        created = tool(
            served,
            "create_note",
            {
                "project": machine.project,
                "title": title,
                "type": "decision",
                "body": f"{title}: measured.",
                "anchors": json.loads(printed.stdout),
            },
        )
        return str(created["structuredContent"]["id"])  # type: ignore[index]

    retry = anchored("retry.py#backoff", "Webhook retries back off, capped at 30 s")
    jobs = anchored("jobs.py", "The job list holds 100 jobs")
    for n in range(30):  # newer decisions crowd the anchored ones out of a lean briefing
        tool(served, "create_note", {"project": machine.project, "title": f"Decision {n}", "type": "decision",
                                     "body": f"Decision {n} is what we do for subsystem {n}."})  # fmt: skip

    # A first session on a feature branch that changed retry.py: its note leads, marked; jobs.py's is unchanged.
    git(machine.repo, "checkout", "-q", "-b", "feature/retries")
    (machine.repo / "retry.py").write_text(RETRY.replace("30", "60"))
    started = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert "Relevant below: notes anchored to the 1 file changed on this branch since the last session." in started
    assert "## Relevant" in started
    assert line_of(started, retry).startswith(
        f"- {name_of(retry)} [changed: retry.py, re-check] [decision] Webhook retries"
    )
    assert name_of(jobs) not in started

    # Committed during that session: changed since it started, and still stale until the note is re-anchored.
    git(machine.repo, *COMMIT, "-am", "retry cap 60")
    again = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert line_of(again, retry).startswith(f"- {name_of(retry)} [changed: retry.py, re-check]")
    printed = machine.notewell("anchor", "--print", "retry.py#backoff")
    tool(served, "update_note", {"id": retry, "anchors": json.loads(printed.stdout)})

    # Re-checked and nothing changed since: nothing leads, nothing is marked.
    calm = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert "## Relevant" not in calm and "re-check" not in calm

    # jobs.py deleted on the branch: the next session opens with its note, marked gone.
    git(machine.repo, "rm", "-q", "jobs.py")
    git(machine.repo, *COMMIT, "-m", "drop the jobs")
    gone = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert line_of(gone, jobs).startswith(f"- {name_of(jobs)} [gone: jobs.py, re-check] [decision] The job list holds")
    assert machine.log_text() == ""


class OldServer(BaseHTTPRequestHandler):
    """A server from before `files` and `checkFreshness`: it refuses them as it refuses any argument it does not know,
    and answers get_context without them."""

    calls: list[dict[str, object]] = []

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        call = json.loads(self.rfile.read(int(self.headers["content-length"])))
        arguments = call["params"]["arguments"]
        OldServer.calls.append(arguments)
        unknown = [name for name in ("files", "checkFreshness") if name in arguments]
        text = f"Unknown argument {unknown[0]!r}; did you mean 'project'?" if unknown else "# api: lean context"
        result = {"content": [{"type": "text", "text": text}], "isError": bool(unknown)}
        reply(self, call["id"], result)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        """Quiet."""


def test_a_server_older_than_files_still_briefs_the_session(tmp_path: Path) -> None:
    repo = tmp_path / "api"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, *COMMIT, "--allow-empty", "-m", "start")
    (repo / "retry.py").write_text(RETRY)  # a change in the work tree: `files` is sent
    server = HTTPServer(("127.0.0.1", 0), OldServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    environ = {"NOTEWELL_API_KEY": "nwk_test", "NOTEWELL_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    args = argparse.Namespace(action="context", client="claude-code", project="api", detail="lean", max_tokens=None,
                              url=f"http://127.0.0.1:{server.server_port}/mcp")  # fmt: skip
    out = io.StringIO()
    try:
        run_hook(args, io.StringIO(payload(repo)), out, environ, deadline_s=10)
    finally:
        server.shutdown()
        server.server_close()
    assert "# api: lean context" in context_of(out.getvalue())
    assert [sorted(call) for call in OldServer.calls[-2:]] == [
        ["branch", "checkFreshness", "detail", "files", "project"], ["branch", "detail", "project"],
    ]  # fmt: skip
    log = (tmp_path / "home" / "hooks" / "hooks.log").read_text()
    assert "Unknown argument 'files'" in log and "asked again without files and checkFreshness" in log


def test_a_first_session_has_every_note_it_shows_judged_and_later_ones_ask_once(tmp_path: Path, served: Served) -> None:
    """The notes a briefing shows may be anchored to files the hook did not hash (none changed since the last session,
    no session before): the answer names them, and the hook asks once more with their hashes, then keeps them."""
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    git(machine.repo, "branch", "-M", "main")
    (machine.repo / "settings.py").write_text("TIMEOUT_S = 5\n")
    git(machine.repo, "add", "settings.py")
    git(machine.repo, *COMMIT, "-m", "settings")
    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    assert install.returncode == 0, install.stderr
    printed = machine.notewell("anchor", "--print", "settings.py")
    constraint = tool(served, "create_note", {
        "project": machine.project, "title": "Upstream calls time out after 5 s", "type": "constraint",
        "body": "Upstream calls time out after 5 s: the gateway cuts at 6.", "anchors": json.loads(printed.stdout),
    })["structuredContent"]["id"]  # type: ignore[index]  # fmt: skip
    (machine.repo / "settings.py").write_text("TIMEOUT_S = 10\n")
    git(machine.repo, *COMMIT, "-am", "longer timeout")  # before any session: not a change "since the last one"

    def get_context_calls() -> int:
        usage = tool(served, "get_usage", {})["structuredContent"]
        return int(usage["callsByTool"].get("get_context", 0))  # type: ignore[index]

    before = get_context_calls()
    first = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert line_of(first, constraint).startswith(f"- {name_of(constraint)} [changed: settings.py, re-check] ")
    assert "## Relevant" not in first  # judged, not led: settings.py did not change since a last session
    assert get_context_calls() - before == 2
    second = context_of(machine.run_hook("SessionStart", payload(machine.repo)).stdout)
    assert line_of(second, constraint).startswith(f"- {name_of(constraint)} [changed: settings.py, re-check] ")
    assert get_context_calls() - before == 3  # settings.py was kept from the first answer: hashed at once
    assert machine.log_text() == ""
