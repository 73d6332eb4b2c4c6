"""The hook commands `notewell hooks install` writes, run the way each client runs them (its configuration file read,
the command given to a shell, the client's documented JSON payload on standard input: tests/fixtures/hooks) against
`notewell serve`; and what happens when anything fails: the client is never blocked, the log says why."""

from __future__ import annotations

import json
import os
import shutil
import socket
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.domain.hooks import CLIENTS, HookAction, HookClient
from notewell.entrypoints.hooks import call_tool
from tests.support.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
TRANSCRIPTS = {HookClient.CLAUDE_CODE: "transcript.jsonl", HookClient.CODEX: "rollout.jsonl",
               HookClient.CURSOR: "transcript.jsonl"}  # fmt: skip
FIXTURE_PROJECT = "billing-api"  # the project the fixture transcripts record decisions in
HOOK_SECONDS = 15  # bounds a hook run in a test; a hook gives up on its own after 2 s


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("serve") / "data", env={"NOTEWELL_EMBEDDER": "none"}) as running:
        yield running


def mcp_url(served: Served) -> str:
    return f"{served.base}/mcp"


def tool(served: Served, name: str, arguments: dict[str, object]) -> dict[str, object]:
    assert served.key is not None
    return call_tool(mcp_url(served), served.key, name, arguments, timeout=10)


@dataclass
class Machine:
    """A developer's machine: a repository with a change in it, a home directory with the client connected to
    Notewell (its MCP configuration holding the key), and the environment the client runs hooks with."""

    repo: Path
    home: Path
    env: dict[str, str]
    client: HookClient
    project: str

    @property
    def log(self) -> Path:
        return Path(self.env["NOTEWELL_HOME"]) / "hooks" / "hooks.log"

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def notewell(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "notewell.entrypoints.cli", *args],
            cwd=self.repo, env=self.env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip

    def config(self) -> dict[str, object]:
        loaded = json.loads((self.repo / CLIENTS[self.client].project_file).read_text())
        assert isinstance(loaded, dict)
        return loaded

    def command(self, event: str) -> str:
        """The command the client's configuration holds for `event`, as the client would find it."""
        entries = self.config()["hooks"][event]  # type: ignore[index]
        entry = entries[0]["hooks"][0] if CLIENTS[self.client].grouped else entries[0]
        return str(entry["command"])

    def payload(self, event: str, transcript: Path | None) -> str:
        text = (FIXTURES / self.client.value / f"{event}.json").read_text()
        filled = string.Template(text).substitute(TRANSCRIPT=str(transcript or ""), CWD=str(self.repo))
        data = json.loads(filled)
        if transcript is None:
            data["transcript_path"] = None
        return json.dumps(data)

    def run_hook(self, event: str, payload: str) -> subprocess.CompletedProcess[str]:
        """What the client does: the command through a shell, in the project, the payload on standard input."""
        return subprocess.run(
            self.command(event), shell=True, cwd=self.repo, env=self.env, input=payload, capture_output=True,
            text=True, timeout=HOOK_SECONDS,
        )  # fmt: skip

    def transcript(self, extra: list[str] = ()) -> Path:  # type: ignore[assignment]
        """The client's fixture transcript, its decisions recorded in this machine's project, plus `extra` lines."""
        text = (FIXTURES / self.client.value / TRANSCRIPTS[self.client]).read_text()
        path = self.home / f"{self.client.value}-session.jsonl"
        path.write_text(text.replace(FIXTURE_PROJECT, self.project) + "".join(line + "\n" for line in extra))
        return path


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=30)


def connect(client: HookClient, home: Path, repo: Path, url: str, key: str) -> None:
    """The client's MCP configuration as `notewell connect` tells each client to write it."""
    entry = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {key}"}}
    if client is HookClient.CLAUDE_CODE:  # `claude mcp add` in the repository: local scope in ~/.claude.json
        (home / ".claude.json").write_text(json.dumps({"projects": {str(repo): {"mcpServers": {"notewell": entry}}}}))
    elif client is HookClient.CURSOR:
        (repo / ".cursor").mkdir(exist_ok=True)
        (repo / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"notewell": entry}}))
    else:
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            f'[mcp_servers.notewell]\nurl = "{url}"\nhttp_headers = {{ "Authorization" = "Bearer {key}" }}\n'
        )


def machine_for(client: HookClient, tmp_path: Path, served: Served, *, connected: bool = True) -> Machine:
    repo, home = tmp_path / "billing-api", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start")
    (repo / "webhooks.py").write_text("RETRIES = 3\n")
    assert served.key is not None
    if connected:
        connect(client, home, repo, mcp_url(served), served.key)
    env = {"HOME": str(home), "NOTEWELL_HOME": str(tmp_path / "notewell-home"), "PATH": os.environ.get("PATH", "")}
    project = f"{client.value}-{tmp_path.name}".lower().replace("_", "-")[:60].strip("-")
    return Machine(repo, home, env, client, project)


def installed(client: HookClient, tmp_path: Path, served: Served) -> Machine:
    machine = machine_for(client, tmp_path, served)
    done = machine.notewell("hooks", "install", "--client", client.value, "--project", machine.project,
                            "--url", mcp_url(served), "--yes")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return machine


def events_of(client: HookClient, action: HookAction) -> list[str]:
    return [event for event, does in CLIENTS[client].events if does is action]


def live_handoffs(served: Served, project: str) -> list[dict[str, object]]:
    found = tool(served, "search_notes", {"project": project, "query": "handoff", "types": ["handoff"]})
    notes = found["structuredContent"]["results"]  # type: ignore[index]
    return [note for note in notes if note["status"] == "current"]


# ----- session start ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", list(HookClient))
def test_session_start_adds_the_projects_context_where_the_client_reads_it(
    client: HookClient, tmp_path: Path, served: Served
) -> None:
    machine = installed(client, tmp_path, served)
    tool(served, "remember", {"project": machine.project, "type": "constraint",
                              "content": "Never log full card numbers, not even in debug builds."})  # fmt: skip
    (event,) = events_of(client, HookAction.CONTEXT)

    done = machine.run_hook(event, machine.payload(event, machine.transcript()))

    assert done.returncode == 0 and done.stderr == ""
    output = json.loads(done.stdout)
    context = output["additional_context"] if client is HookClient.CURSOR else output["hookSpecificOutput"]
    text = context if isinstance(context, str) else context["additionalContext"]
    if client is not HookClient.CURSOR:
        assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert f"# {machine.project}: lean context" in text
    assert "Never log full card numbers" in text
    assert machine.log_text() == ""


# ----- checkpoints -------------------------------------------------------------------------------------------------


FOLLOW_UP_TEXT = "Now document the retry policy."
FOLLOW_UP: dict[HookClient, dict[str, object]] = {  # one more request, in each client's transcript format
    HookClient.CLAUDE_CODE: {"type": "user", "message": {"role": "user", "content": FOLLOW_UP_TEXT}},
    HookClient.CODEX: {
        "timestamp": "2026-08-21T14:10:00.000Z",
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": FOLLOW_UP_TEXT}]},
    },
    HookClient.CURSOR: {
        "role": "user",
        "message": {"content": [{"type": "text", "text": f"<user_query>\n{FOLLOW_UP_TEXT}\n</user_query>"}]},
    },
}


@pytest.mark.parametrize("client", list(HookClient))
def test_each_checkpoint_event_hands_the_session_off_and_the_session_keeps_one_live_handoff(
    client: HookClient, tmp_path: Path, served: Served
) -> None:
    machine = installed(client, tmp_path, served)
    first, last = events_of(client, HookAction.CHECKPOINT)
    more_work = json.dumps(FOLLOW_UP[client])

    before_compaction = machine.run_hook(first, machine.payload(first, machine.transcript()))
    at_end = machine.run_hook(last, machine.payload(last, machine.transcript([more_work])))

    assert (before_compaction.returncode, before_compaction.stdout) == (0, "")
    assert (at_end.returncode, at_end.stdout) == (0, "")
    assert machine.log_text() == ""
    (handoff,) = live_handoffs(served, machine.project)
    note = tool(served, "get_note", {"id": handoff["id"]})["structuredContent"]
    body = str(note["body"])  # type: ignore[index]
    record = {"claude-code": "Cap webhook retries at 3", "codex": "Make the CSV importer skip blank lines",
              "cursor": "Add cursor pagination to GET /notes"}[client.value]  # fmt: skip
    assert body.startswith(record)
    assert "Files touched (git): webhooks.py" in body
    assert f"checkpointed by the Notewell hook ({last}" in body
    assert "Also asked:" in body and "\n- Now document the retry policy." in body
    if client is not HookClient.CURSOR:  # the Cursor fixture records neither a to-do list nor a decision
        assert "Decisions recorded:" in body
        context = tool(served, "get_context", {"project": machine.project, "detail": "lean"})
        assert "[pending]" in _text(context)


def test_a_cursor_session_without_a_transcript_is_still_handed_off_from_git(tmp_path: Path, served: Served) -> None:
    machine = installed(HookClient.CURSOR, tmp_path, served)

    done = machine.run_hook("sessionEnd", machine.payload("sessionEnd", None))

    assert (done.returncode, done.stdout) == (0, "")
    (handoff,) = live_handoffs(served, machine.project)
    assert "Files touched (git): webhooks.py" in str(handoff["snippet"]) + str(handoff.get("title"))


def test_a_checkpoint_with_nothing_new_since_the_last_one_sends_nothing(tmp_path: Path, served: Served) -> None:
    machine = installed(HookClient.CODEX, tmp_path, served)
    payload = machine.payload("Stop", machine.transcript())

    for _ in range(3):  # Codex ends every turn with Stop
        assert machine.run_hook("Stop", payload).returncode == 0

    changes = tool(served, "get_changes_since", {"project": machine.project})["structuredContent"]
    handoffs = [c for c in changes["changes"] if c["type"] == "handoff"]  # type: ignore[index]
    assert len(handoffs) == 1


def _text(result: dict[str, object]) -> str:
    return "".join(str(block["text"]) for block in result["content"])  # type: ignore[attr-defined]


# ----- failures never block the client -----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_module(machine: Machine, action: str, url: str, payload: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "notewell.entrypoints.hooks", action, "--client", machine.client.value,
               "--project", machine.project, "--url", url]  # fmt: skip
    return subprocess.run(
        command, cwd=machine.repo, env=machine.env, input=payload, capture_output=True, text=True, timeout=HOOK_SECONDS
    )


@pytest.mark.parametrize("action", ["context", "checkpoint"])
def test_a_server_that_is_down_costs_the_client_nothing_and_the_log_says_which(
    action: str, tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    machine.env["NOTEWELL_API_KEY"] = "nwk_unused"
    event = "SessionStart" if action == "context" else "SessionEnd"

    done = run_module(machine, action, url, machine.payload(event, machine.transcript()))

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert f"cannot reach {url}" in machine.log_text()


def test_a_server_that_never_answers_is_given_up_on_at_the_deadline(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CURSOR, tmp_path, served)
    machine.env["NOTEWELL_API_KEY"] = "nwk_unused"
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"

        done = run_module(machine, "context", url, machine.payload("sessionStart", None))

    assert (done.returncode, done.stdout) == (0, "")
    assert "cursor sessionStart: gave up after 2 s" in machine.log_text()


def test_a_client_that_is_not_connected_to_notewell_gets_nothing_and_the_log_says_how_to_connect(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CODEX, tmp_path, served, connected=False)

    done = run_module(machine, "context", mcp_url(served), machine.payload("SessionStart", None))

    assert (done.returncode, done.stdout) == (0, "")
    assert f"no key for {mcp_url(served)}: connect Codex to it" in machine.log_text()


def test_a_refused_key_and_a_payload_that_is_not_json_are_logged_and_skipped(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)

    not_json = run_module(machine, "checkpoint", mcp_url(served), "{this is not json")
    machine.env["NOTEWELL_API_KEY"] = "nwk_not_a_real_key"
    refused = run_module(machine, "context", mcp_url(served), machine.payload("SessionStart", None))

    assert (not_json.returncode, not_json.stdout, refused.returncode, refused.stdout) == (0, "", 0, "")
    log = machine.log_text()
    assert "the client's payload is not JSON" in log
    assert "answered HTTP 401" in log


# ----- install and uninstall ---------------------------------------------------------------------------------------


def test_install_shows_the_diff_and_writes_nothing_unless_told_to(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)

    asked = machine.notewell("hooks", "install", "--url", mcp_url(served))

    assert asked.returncode == 1
    assert asked.stdout.startswith("--- /dev/null\n+++ b/.claude/settings.local.json\n")
    assert "Not written: run again with --yes" in asked.stdout
    assert not (machine.repo / ".claude").exists()


def test_install_checks_the_key_and_the_server_and_a_second_install_changes_nothing(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CURSOR, tmp_path, served)
    url = mcp_url(served)

    first = machine.notewell("hooks", "install", "--client", "cursor", "--url", url, "--yes")
    second = machine.notewell("hooks", "install", "--client", "cursor", "--url", url, "--yes")

    assert first.returncode == 0 and second.returncode == 0
    assert "Wrote .cursor/hooks.json." in first.stdout
    assert f"Checked: {url} answered get_context for billing-api" in first.stdout  # the repository's name
    assert ".cursor/hooks.json names this machine's Python and git does not ignore it" in first.stdout
    assert "already in .cursor/hooks.json; nothing to change" in second.stdout
    assert "---" not in second.stdout


def test_uninstall_gives_back_the_users_file_byte_for_byte(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CODEX, tmp_path, served)
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 3}]}]}}
    original = json.dumps(theirs, indent=2) + "\n"
    (machine.repo / ".codex").mkdir()
    (machine.repo / ".codex" / "hooks.json").write_text(original)

    install = machine.notewell("hooks", "install", "--client", "codex", "--url", mcp_url(served), "--yes")
    uninstall = machine.notewell("hooks", "uninstall", "--client", "codex", "--yes")

    assert install.returncode == 0 and uninstall.returncode == 0
    assert '+            "command": "notify-send done"' not in install.stdout  # the user's entry is not touched
    assert (machine.repo / ".codex" / "hooks.json").read_text() == original


def test_what_the_hooks_keep_is_private_and_a_private_settings_file_stays_private(
    tmp_path: Path, served: Served
) -> None:
    """On a machine that never ran `notewell serve`, the hooks make their home: the user's settings text (install
    records), the paths they work on and the log are theirs alone; install keeps the settings file's own mode."""
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    home = Path(machine.env["NOTEWELL_HOME"])
    settings = machine.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"SENTRY_DSN": "https://key@sentry.example/1"}}\n')
    settings.chmod(0o600)

    install = machine.notewell("hooks", "install", "--project", machine.project, "--url", mcp_url(served), "--yes")
    started = machine.run_hook("SessionStart", machine.payload("SessionStart", machine.transcript()))
    down = run_module(machine, "prompt", f"http://127.0.0.1:{_closed_port()}/mcp",
                      machine.payload("UserPromptSubmit", machine.transcript()))  # fmt: skip

    assert install.returncode == 0 and started.returncode == 0 and down.returncode == 0
    assert settings.stat().st_mode & 0o777 == 0o600
    made = [home, *home.rglob("*")]
    assert machine.log.exists() and any(p.parent.name == "installs" for p in made)  # each kind of file was made
    assert {oct(p.stat().st_mode & 0o777) for p in made if p.is_dir()} == {"0o700"}
    assert {oct(p.stat().st_mode & 0o777) for p in made if p.is_file()} == {"0o600"}


FOUR_SPACES = {"permissions": {"allow": ["Bash(make test)"]}, "env": {"LANG": "fr_FR.UTF-8", "GREETING": "Ça va"}}


def test_a_four_space_file_keeps_its_layout_and_uninstall_gives_it_back_byte_for_byte(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    settings = machine.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    original = json.dumps(FOUR_SPACES, indent=4, ensure_ascii=False) + "\n"
    settings.write_text(original)

    install = machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes")

    assert install.returncode == 0, install.stderr
    removed = [line for line in install.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed in ([], ["-    }"])  # the user's lines stay as they were (at most one gains a comma)
    installed = settings.read_text()
    assert '\n    "hooks": {\n        "SessionStart": [' in installed and '\n  "' not in installed

    uninstall = machine.notewell("hooks", "uninstall", "--yes")

    assert uninstall.returncode == 0, uninstall.stderr
    assert "it is back as it was before install" in uninstall.stdout
    assert settings.read_bytes() == original.encode()


def test_an_empty_settings_file_the_user_had_is_given_back_not_deleted(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    settings = machine.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{}")

    install = machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes")
    uninstall = machine.notewell("hooks", "uninstall", "--yes")

    assert install.returncode == 0 and uninstall.returncode == 0
    assert settings.read_bytes() == b"{}"


def test_a_file_edited_since_install_keeps_the_edit_and_its_layout_and_is_never_deleted(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    settings = machine.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")
    assert machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes").returncode == 0
    edited = {**json.loads(settings.read_text()), "model": "opus"}  # the user's own edit, in the file's layout
    settings.write_text(json.dumps(edited, indent=4) + "\n")

    uninstall = machine.notewell("hooks", "uninstall", "--yes")

    assert uninstall.returncode == 0, uninstall.stderr
    assert settings.read_text() == '{\n    "model": "opus"\n}\n'
    settings.write_text("{}\n")
    assert machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes").returncode == 0
    settings.write_text(json.dumps(json.loads(settings.read_text()), indent=8) + "\n")  # reformatted since install
    assert machine.notewell("hooks", "uninstall", "--yes").returncode == 0
    assert settings.read_text() == "{}\n"  # nothing of theirs left in it, but it is theirs


def test_hooks_installed_before_install_kept_records_still_come_out_entirely(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    settings = machine.repo / ".claude" / "settings.local.json"
    assert machine.notewell("hooks", "install", "--url", mcp_url(served), "--yes").returncode == 0
    shutil.rmtree(Path(machine.env["NOTEWELL_HOME"]) / "hooks" / "installs")  # as an older version left it
    again = machine.notewell("hooks", "install", "--url", mcp_url(served).replace("127.0.0.1", "localhost"), "--yes")
    assert again.returncode == 0, again.stderr

    assert machine.notewell("hooks", "uninstall", "--yes").returncode == 0

    assert settings.read_text() == "{}\n"  # whose the file was is not known: kept, with nothing of Notewell's in it


def test_a_configuration_the_client_could_not_read_is_refused_with_nothing_written(
    tmp_path: Path, served: Served
) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)
    (machine.repo / ".claude").mkdir()
    (machine.repo / ".claude" / "settings.local.json").write_text('{"hooks": [')

    done = machine.notewell("hooks", "install", "--yes")

    assert done.returncode == 2
    assert "settings.local.json is not valid JSON" in done.stderr
    assert (machine.repo / ".claude" / "settings.local.json").read_text() == '{"hooks": ['


def test_a_user_scope_install_briefs_each_repository_on_its_own_project(tmp_path: Path, served: Served) -> None:
    machine = machine_for(HookClient.CLAUDE_CODE, tmp_path, served)  # the repository is named billing-api
    tool(served, "remember", {"project": "billing-api", "type": "decision",
                              "content": "Invoices are numbered per tenant, never globally."})  # fmt: skip

    done = machine.notewell("hooks", "install", "--user", "--url", mcp_url(served), "--yes")

    assert done.returncode == 0, done.stderr
    settings = json.loads((machine.home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "--project" not in command
    payload = machine.payload("SessionStart", None)  # its cwd, not the process's, names the repository
    started = subprocess.run(command, shell=True, cwd=tmp_path, env=machine.env, text=True, input=payload,
                             capture_output=True, timeout=HOOK_SECONDS)  # fmt: skip
    assert "Invoices are numbered per tenant" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
