"""Coding-client hooks: the commands Claude Code, Codex and Cursor run, and `notewell hooks install|uninstall`.

    python -m notewell.entrypoints.hooks context    --client C [--project P] --url U [--detail D] [--max-tokens N]
    python -m notewell.entrypoints.hooks prompt     --client C [--project P] --url U
    python -m notewell.entrypoints.hooks checkpoint --client C [--project P] --url U

Each reads the client's JSON payload on standard input. `context` (session start) prints the project's get_context
for the client to add to the model's context; `prompt` (each prompt; only the session's first is answered) prints
get_context searched with what the prompt asks; `checkpoint` (before compaction, at the end) sends a checkpoint made
from the session's transcript and git, anchored to the files the session changed. A hook must never block its client:
each run has a deadline of two seconds, after which the process exits whatever it is doing, and every failure is
written to a log file and skipped; the exit status is always 0.

Start-up time is most of a hook's cost, so this module imports only the standard library and the pure
`notewell.domain.hooks` (about 65 ms to start, against 700 ms for the `notewell` command and its dependencies; a
checkpoint also imports the repository-name rule of `notewell anchor`), and
talks to the server with one plain JSON-RPC POST in the stateless 2026-07-28 protocol era: no MCP client, no
handshake. A deployed stack is reached the same way, with the key or OAuth token the client itself uses.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import io
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from notewell.domain.hooks import (
    ANCHORS_PER_NOTE,
    CLIENTS,
    HASHES_SENT,
    PROMPT_LEAD,
    HookAction,
    HookClient,
    HookConfigError,
    HookMoment,
    HookSettings,
    bearer_in_claude_oauth,
    bearer_in_servers,
    checkpoint_request,
    config_diff,
    context_output,
    file_hash,
    filed_notes,
    files_in_view,
    files_touched,
    hook_commands,
    hook_files,
    lines_changed,
    most_changed,
    prompt_query,
    read_session,
    relevant_line,
    render_config,
    request_digest,
    sendable,
    session_context,
    shown_lines,
    unseen_lines,
    whole_file_anchor,
    with_hooks,
    without_hooks,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from notewell.domain.hooks import ClientHooks

DEADLINE_S = 2.0
GIT_TIMEOUT_S = 0.5
CHECK_TIMEOUT_S = 5.0  # the check `hooks install` makes is not a hook: it may wait longer
DEFAULT_URL = "http://127.0.0.1:8765/mcp"  # `notewell serve`
PROTOCOL = "2026-07-28"
KEY_VARIABLE = "NOTEWELL_API_KEY"
MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024  # a longer transcript is read from its end
STATE_DAYS = 30  # a session's checkpoint state is kept this long
MAX_HASH_BYTES = 8 * 1024 * 1024  # a larger file is not hashed, so notes anchored to it are not judged
HASH_RESERVE_S = 0.8  # hashing stops with this much of the deadline left: get_context must still be answered
SECOND_CALL_S = 0.6  # a second get_context (judging anchored files the first did not hash) only with this much left
ANCHOR_RESERVE_S = 0.4  # hashing files to anchor a checkpoint stops with this much left: update_note must be sent
MERGED_KEPT = 500  # merged branches the hook remembers having recorded (a project keeps as many)
LOG_BYTES = 1024 * 1024  # the log is rotated once past this size


class HookError(Exception):
    """Why a hook did nothing: written to the log, never shown to the client."""


class ToolRefusedError(HookError):
    """The server answered, with an error result: the call as made will not do (e.g. an argument it does not know)."""


# ----- where things are ------------------------------------------------------------------------------------------


def hooks_home(environ: Mapping[str, str]) -> Path:
    """The hooks' log and session state: beside `notewell serve`'s data ($NOTEWELL_HOME, else ~/.notewell)."""
    home = environ.get("NOTEWELL_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".notewell") / "hooks"


def log_path(environ: Mapping[str, str]) -> Path:
    return hooks_home(environ) / "hooks.log"


def private_dir(path: Path) -> None:
    """`path` made with the parents it lacks, each 0700, as `notewell serve` makes its home: what the hooks keep is
    the person's own (their settings files' text, the paths they work on, what failed). Existing ones are left."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=0o700)


def _private_open(path: Path, flags: int) -> int:
    return os.open(path, flags | os.O_CREAT | os.O_WRONLY, 0o600)


def log_failure(environ: Mapping[str, str], where: str, message: str) -> None:
    """One line per failure; a log that cannot be written is not a reason to fail either."""
    path = log_path(environ)
    with contextlib.suppress(OSError):
        private_dir(path.parent)
        if path.exists() and path.stat().st_size > LOG_BYTES:
            path.replace(path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with os.fdopen(_private_open(path, os.O_APPEND), "a", encoding="utf-8") as log:
            log.write(f"{stamp} {where}: {' '.join(message.split())}\n")


def _ancestors(start: Path) -> Iterator[Path]:
    yield start
    yield from start.parents


def repository_root(start: Path) -> Path:
    """The nearest directory at or above `start` with a .git (a directory, or a file in a worktree), else `start`."""
    return next((d for d in _ancestors(start) if (d / ".git").exists()), start)


def payload_directory(payload: Mapping[str, object]) -> Path:
    """Where the session runs: `cwd` (Claude Code, Codex), the first of `workspace_roots` (Cursor), else ours."""
    roots = payload.get("workspace_roots")
    for candidate in (payload.get("cwd"), roots[0] if isinstance(roots, list) and roots else None):
        if isinstance(candidate, str) and candidate:
            return Path(candidate)
    return Path.cwd()


def git_dirs(start: Path) -> tuple[Path, Path] | None:
    """The git directory of the working tree at or above `start` and the repository's common one (the same but in
    a linked worktree, whose `.git` file names its own directory under the common one's `worktrees/`). Read from
    the files, not by running git: the session-start hook has 2 s for everything."""
    root = repository_root(start)
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git, dot_git
    try:
        pointer = dot_git.read_text(encoding="utf-8").strip()
        own = (root / pointer.removeprefix("gitdir:").strip()).resolve()
        common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, ValueError):
        return None
    return own, common


def repository_home(start: Path) -> Path:
    """The main working tree of the repository at `start`: every worktree of one repository has the same home,
    so their sessions share one project."""
    found = git_dirs(start)
    if found is None:
        return repository_root(start)
    common = found[1]
    return common.parent if common.name == ".git" else common  # a bare repository's worktrees: its own directory


def current_branch(start: Path) -> str | None:
    """The branch checked out in the working tree at `start` (None: detached, or no repository)."""
    found = git_dirs(start)
    try:
        head = (found[0] / "HEAD").read_text(encoding="utf-8").strip() if found else ""
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def git_default_branch(directory: Path, timeout: float) -> str | None:
    """The branch others merge into, as git knows it: origin's HEAD when the clone has it, else a local `main`, else
    `master` (None: none of those)."""
    origin = _git(directory, ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], timeout).strip()
    if origin.startswith("origin/"):
        return origin.removeprefix("origin/")
    listed = _git(directory, ["for-each-ref", "--format=%(refname:short)", "refs/heads/main", "refs/heads/master"],
                  timeout).split()  # fmt: skip
    return listed[0] if listed else None


def default_branch(directory: Path, timeout: float) -> str:
    """git_default_branch, else `main` (a new project's default branch)."""
    return git_default_branch(directory, timeout) or "main"


def merged_branches(directory: Path, default: str, timeout: float) -> list[str]:
    """The local branches whose tips the default branch contains (`git branch --merged`), but not one still at the
    default branch's own tip: that is also what a branch just created looks like, and a merge record is kept for
    good. A fast-forward merge is therefore recorded once the default branch moves on."""
    listed = _git(
        directory,
        ["for-each-ref", f"--merged=refs/heads/{default}", "--format=%(objectname) %(refname:short)", "refs/heads"],
        timeout,
    ).splitlines()
    tips = {name: tip for tip, _, name in (line.partition(" ") for line in listed)}
    return [name for name, tip in tips.items() if name != default and tip != tips.get(default)]


def project_for(directory: Path) -> str:
    """The project a hook installed without --project (in user scope) works on: its repository's name, as a slug
    (the main working tree's, so worktrees share it)."""
    from notewell.domain.rules import slugify  # only this path needs it; it costs 15 ms of imports

    return slugify(repository_home(directory).name)


def client_directory(client: HookClient, environ: Mapping[str, str]) -> Path:
    """The client's own configuration directory (its user-scope hooks, MCP servers and credentials)."""
    home = Path(environ.get("HOME") or Path.home())
    if client is HookClient.CLAUDE_CODE and environ.get("CLAUDE_CONFIG_DIR"):
        return Path(environ["CLAUDE_CONFIG_DIR"]).expanduser()
    if client is HookClient.CODEX and environ.get("CODEX_HOME"):
        return Path(environ["CODEX_HOME"]).expanduser()
    return home / {HookClient.CLAUDE_CODE: ".claude", HookClient.CODEX: ".codex", HookClient.CURSOR: ".cursor"}[client]


def config_path(spec: ClientHooks, *, user: bool, root: Path, environ: Mapping[str, str]) -> Path:
    return client_directory(spec.client, environ) / spec.user_file if user else root / spec.project_file


# ----- credentials: the key or token the client itself sends ------------------------------------------------------


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read_toml(path: Path) -> object:
    import tomllib  # Codex only

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _get(document: object, *keys: str) -> object:
    for key in keys:
        document = document.get(key) if isinstance(document, dict) else None
    return document


def _nearest(directory: Path, relative: str) -> Path | None:
    return next((d / relative for d in _ancestors(directory) if (d / relative).is_file()), None)


def server_lists(client: HookClient, directory: Path, environ: Mapping[str, str]) -> Iterator[tuple[str, object]]:
    """(where, MCP server list) the client reads, most specific first."""
    config = client_directory(client, environ)
    if client is HookClient.CLAUDE_CODE:
        # `claude mcp add` writes to ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json): per project directory
        # (local scope), then top level (user scope); a repository's .mcp.json is the shared project scope.
        state_file = (
            config / ".claude.json"
            if environ.get("CLAUDE_CONFIG_DIR")
            else Path(environ.get("HOME") or Path.home()) / ".claude.json"
        )
        state = _read_json(state_file)
        for d in _ancestors(directory):
            yield f"{state_file} (project {d})", _get(state, "projects", str(d), "mcpServers")
        shared = _nearest(directory, ".mcp.json")
        if shared is not None:
            yield str(shared), _get(_read_json(shared), "mcpServers")
        yield str(state_file), _get(state, "mcpServers")
    elif client is HookClient.CURSOR:
        for path in (_nearest(directory, ".cursor/mcp.json"), config / "mcp.json"):
            if path is not None:
                yield str(path), _get(_read_json(path), "mcpServers")
    else:
        for path in (_nearest(directory, ".codex/config.toml"), config / "config.toml"):
            if path is not None:
                yield str(path), _get(_read_toml(path), "mcp_servers")


def find_bearer(
    client: HookClient, url: str, directory: Path, environ: Mapping[str, str], now_ms: int
) -> tuple[str, str] | None:
    """(token, where it came from) for `url`: $NOTEWELL_API_KEY, else the header or variable the client's MCP entry
    for that URL sends, else (Claude Code) the OAuth access token it holds for it."""
    if environ.get(KEY_VARIABLE, "").strip():
        return environ[KEY_VARIABLE].strip(), f"${KEY_VARIABLE}"
    for where, servers in server_lists(client, directory, environ):
        token = bearer_in_servers(servers, url, environ)
        if token:
            return token, where
    if client is HookClient.CLAUDE_CODE:  # on macOS the client keeps these in the Keychain instead
        credentials = client_directory(client, environ) / ".credentials.json"
        token = bearer_in_claude_oauth(_read_json(credentials), url, now_ms)
        if token:
            return token, f"{credentials} (OAuth sign-in)"
    return None


# ----- one tool call ---------------------------------------------------------------------------------------------


def _loopback(url: str) -> bool:
    return (urllib.parse.urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


def _rpc_error(body: bytes) -> str:
    try:
        error = json.loads(body).get("error") or {}
        return str(error.get("message") or body[:200].decode(errors="replace"))
    except (ValueError, AttributeError):
        return body[:200].decode(errors="replace")


def _decoded(body: bytes, content_type: str) -> dict[str, object]:
    if content_type.startswith("text/event-stream"):  # a server may answer with one event; its data is the message
        data = [line[5:].strip() for line in body.decode().splitlines() if line.startswith("data:")]
        body = data[-1].encode() if data else b""
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ValueError("not a JSON-RPC message")
    return message


def call_tool(url: str, token: str, name: str, arguments: Mapping[str, object], timeout: float) -> dict[str, object]:
    """One tools/call, stateless (2026-07-28 era: one POST, no initialize), returning the tool's result.

    Raises:
        HookError: the server could not be reached, refused the call, or the tool answered with an error.
    """
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "notewell-hooks", "version": "0.1.0"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": dict(arguments), "_meta": meta}}  # fmt: skip
    headers = {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL, "mcp-method": "tools/call", "mcp-name": name,
        "authorization": f"Bearer {token}", "user-agent": "notewell-hooks/0.1.0",
    }  # fmt: skip
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    # A proxy from the environment is right for a deployed stack, never for `serve` on this machine.
    handlers = [urllib.request.ProxyHandler({})] if _loopback(url) else []
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=max(timeout, 0.05)) as response:
            message = _decoded(response.read(), response.headers.get("content-type", ""))
    except urllib.error.HTTPError as exc:
        raise HookError(f"{name}: {url} answered HTTP {exc.code}: {_rpc_error(exc.read())}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:  # refused, reset, cut short
        reason = getattr(exc, "reason", exc)
        raise HookError(f"{name}: cannot reach {url} ({reason or type(exc).__name__})") from exc
    except ValueError as exc:
        raise HookError(f"{name}: {url} did not answer with JSON-RPC ({exc})") from exc
    result = message.get("result")
    if not isinstance(result, dict):
        raise HookError(f"{name}: {_rpc_error(json.dumps(message).encode())}")
    if result.get("isError"):
        raise ToolRefusedError(f"{name}: {_text_of(result)}")
    return result


def _text_of(result: Mapping[str, object]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")


# ----- the deadline ------------------------------------------------------------------------------------------------


class Deadline:
    """Ends the process (status 0) when the time is up, whatever it is waiting on: DNS, a socket, git, a disk.
    Output is written under a lock the watchdog also takes, so the client never reads half an answer."""

    def __init__(self, seconds: float, on_expiry: Callable[[], None]) -> None:
        self._end = time.monotonic() + seconds
        self._on_expiry = on_expiry
        self.output = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return max(self._end - time.monotonic(), 0.0)

    def _expire(self) -> None:
        # An answer being written finishes first (unless the client stopped reading it).
        self.output.acquire(timeout=0.5)
        self._on_expiry()
        os._exit(0)

    def cancel(self) -> None:
        self._timer.cancel()


# ----- state kept between runs ---------------------------------------------------------------------------------------


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    private_dir(path.parent)
    temporary = path.with_suffix(".tmp")
    with os.fdopen(_private_open(temporary, os.O_TRUNC), "w", encoding="utf-8") as file:
        file.write(json.dumps(data))
    temporary.replace(path)


def _save_state(path: Path, state: Mapping[str, object]) -> None:
    private_dir(path.parent)
    cutoff = time.time() - STATE_DAYS * 86_400
    for old in path.parent.glob("*.json"):  # sessions long over
        with contextlib.suppress(OSError):
            if old.stat().st_mtime < cutoff:
                old.unlink()
    _write_json(path, state)


class StateFile:
    """One small JSON object kept between hook runs; a file that cannot be read is empty, one that cannot be written
    is let go (the next run does the work again)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        loaded = _read_json(path)
        self.data: dict[str, object] = loaded if isinstance(loaded, dict) else {}

    @classmethod
    def of_session(cls, environ: Mapping[str, str], client: str, session: str) -> StateFile:
        """A session's: its checkpoint (the live handoff, what it held), the files its start sent, its first prompt."""
        name = hashlib.sha256(f"{client}:{session}".encode()).hexdigest()[:32]
        return cls(hooks_home(environ) / "sessions" / f"{name}.json")

    @classmethod
    def of_repository(cls, environ: Mapping[str, str], project: str, root: Path) -> StateFile:
        """A project's in one working tree: the HEAD each branch's last session started at, the paths its notes are
        anchored to, what the hook last recorded of its branches."""
        name = hashlib.sha256(f"{project}\n{root}".encode()).hexdigest()[:32]
        return cls(hooks_home(environ) / "repos" / f"{name}.json")

    def save(self, **changes: object) -> None:
        self.data.update(changes)
        with contextlib.suppress(OSError):
            _save_state(self.path, self.data)


def _session_id(payload: Mapping[str, object]) -> str:
    return str(payload.get("session_id") or payload.get("conversation_id") or "unknown")


# ----- the hooks -----------------------------------------------------------------------------------------------------


def _client_token(args: argparse.Namespace, directory: Path, environ: Mapping[str, str]) -> str:
    found = find_bearer(HookClient(args.client), args.url, directory, environ, int(time.time() * 1000))
    if found is None:
        label = CLIENTS[HookClient(args.client)].label
        raise HookError(
            f"no key for {args.url}: connect {label} to it (notewell connect --url {args.url}) or set {KEY_VARIABLE}"
        )
    return found[0]


def context_answer(
    args: argparse.Namespace, payload: Mapping[str, object], environ: Mapping[str, str], timeout: Callable[[], float]
) -> str:
    """The session-start hook's output: the project's get_context, in the client's JSON. In a git repository it
    records the project's default and merged branches (sync_branches), and sends the files changed on this branch
    since the last session (their anchored notes lead) and the hashes of the files anchored notes name (stale ones
    are marked): see code_view.

    Raises:
        HookError: no key, or the call failed.
    """
    directory = payload_directory(payload)
    project = args.project or project_for(directory)
    token = _client_token(args, directory, environ)
    arguments: dict[str, object] = {"project": project, "detail": args.detail}
    if args.max_tokens is not None:
        arguments["maxTokens"] = args.max_tokens
    branch = current_branch(directory)
    root = repository_root(directory)
    repo = StateFile.of_repository(environ, project, root)
    in_git = git_dirs(directory) is not None
    known = git_default_branch(directory, min(GIT_TIMEOUT_S, timeout())) if in_git else None
    default = (known or "main") if in_git else None
    if branch is not None and default is not None:
        arguments["branch"] = branch
        sync_branches(args.url, token, project, directory, known, repo, timeout)
    client = HookClient(args.client)
    view = code_view(client, repo, root, branch, default, timeout) if default else None
    if view is not None:  # what the session's first prompt sends again (the HEAD kept below is this session's)
        StateFile.of_session(environ, client.value, _session_id(payload)).save(files=view.changed)
    result, view = ask_context(args.url, token, arguments, view, environ, timeout)
    leading = [relevant_line(len(view.changed))] if view is not None and view.led(result) else []
    if view is not None:
        view.save(result)
    # The first prompt's answer leaves out what this one showed: the model has it already.
    StateFile.of_session(environ, args.client, _session_id(payload)).save(shown=shown_lines(_text_of(result)))
    # The agent's own writes carry the branch only if it knows it: the briefing tells it.
    if branch:
        leading.append(f"Git branch: {branch}; pass branch: {branch!r} when you remember or checkpoint.")
    return context_output(client, session_context(_text_of(result), leading=leading))


def prompt_answer(
    args: argparse.Namespace, payload: Mapping[str, object], environ: Mapping[str, str], timeout: Callable[[], float]
) -> str | None:
    """The first prompt's hook output: get_context with the prompt as its query, and the code in view as the session
    start sent it, so the session is oriented by the task asked. Only the note lines the session start did not show
    are added (the model has those; a note now marked stale, or with a longer excerpt, is shown again); None when
    there are none, for every later prompt of the session, and for one that says nothing. The prompt is taken as
    asked once, even when the call fails: a later prompt never waits on the server again.

    Raises:
        HookError: no key, or the call failed.
    """
    query = prompt_query(payload.get("prompt"))
    session = StateFile.of_session(environ, args.client, _session_id(payload))
    if query is None or session.data.get("prompted"):
        return None
    session.save(prompted=True)
    directory = payload_directory(payload)
    project = args.project or project_for(directory)
    token = _client_token(args, directory, environ)
    arguments: dict[str, object] = {"project": project, "query": query, "detail": args.detail}
    if args.max_tokens is not None:
        arguments["maxTokens"] = args.max_tokens
    branch = current_branch(directory)
    default = default_branch(directory, min(GIT_TIMEOUT_S, timeout())) if git_dirs(directory) else None
    if branch is not None and default is not None:
        arguments["branch"] = branch
    started = session.data.get("files")
    changed = [path for path in started if isinstance(path, str)] if isinstance(started, list) else None
    client = HookClient(args.client)
    root = repository_root(directory)
    repo = StateFile.of_repository(environ, project, root)
    view = code_view(client, repo, root, branch, default, timeout, changed=changed) if default else None
    result, view = ask_context(args.url, token, arguments, view, environ, timeout)
    listed = session.data.get("shown")
    seen = {digest for digest in listed if isinstance(digest, str)} if isinstance(listed, list) else set()
    unseen = unseen_lines(_text_of(result), seen)
    if not unseen:  # every note it found, the session start showed
        return None
    return context_output(client, f"{PROMPT_LEAD}\n\n{unseen}", "UserPromptSubmit")


def ask_context(
    url: str,
    token: str,
    arguments: Mapping[str, object],
    view: CodeView | None,
    environ: Mapping[str, str],
    timeout: Callable[[], float],
) -> tuple[dict[str, object], CodeView | None]:
    """get_context with what `view` says of the code in hand, asked once more when the answer shows notes anchored to
    files the view had no hash of; returns the answer and the view it was given (None: the server refused it).

    Raises:
        HookError: the call failed.
    """
    try:
        result = call_tool(url, token, "get_context", {**arguments, **(view.arguments() if view else {})}, timeout())
    except ToolRefusedError as refused:
        if view is None:
            raise
        # A server older than `files` and `checkFreshness` refuses them: the briefing matters more.
        log_failure(environ, "get_context", f"{refused}; asked again without files and checkFreshness")
        return call_tool(url, token, "get_context", arguments, timeout()), None
    if view is None:
        return result, None

    def again(more: Mapping[str, object]) -> dict[str, object]:
        return call_tool(url, token, "get_context", {**arguments, **more}, timeout())

    return view.judge_the_rest(result, again, timeout), view


def sync_branches(
    url: str,
    token: str,
    project: str,
    directory: Path,
    known_default: str | None,
    repo: StateFile,
    timeout: Callable[[], float],
) -> None:
    """Record on the project what git says of its branches, so the notes written on the default branch and on merged
    ones show from this session on: the default branch git knows (`master` or `trunk` as well as `main`) when it is
    not the one this hook last recorded (`main`, every project's own, before any), and the merged branches it has
    not recorded yet. One update_project when something is new, none otherwise; a refused one (a read-only key) is
    let go, and tried again at the next start: the briefing matters more."""
    default = known_default or "main"
    kept = repo.data.get("recorded")
    recorded = kept if isinstance(kept, dict) else {}
    listed = recorded.get("merged")
    merged_before = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []
    change: dict[str, object] = {}
    if known_default is not None and known_default != recorded.get("defaultBranch", "main"):
        change["defaultBranch"] = known_default
    new = [b for b in merged_branches(directory, default, min(GIT_TIMEOUT_S, timeout())) if b not in merged_before]
    if new:
        change["mergedBranches"] = new
    if not change:
        return
    try:
        call_tool(url, token, "update_project", {"project": project, **change}, timeout())
    except HookError:
        return
    repo.save(recorded={"defaultBranch": default, "merged": [*merged_before, *new][-MERGED_KEPT:]})


class CodeView:
    """What a hook tells get_context about the code in hand, and what a session start keeps for the next one (in the
    repository's StateFile: the HEAD each branch's last session started at, the paths its notes are anchored to).

    `changed`: files changed on the branch since its last session (the first: since it left the default branch),
    committed or in the work tree, deleted ones too; sent as `files` (files_in_view). `hashes`: the fileHash of
    each of those and of the anchored paths kept, None for a file not in the tree; sent as `checkFreshness`."""

    def __init__(self, repo: StateFile, root: Path, branch: str | None, head: str) -> None:
        self.repo, self.root, self.branch, self.head = repo, root, branch, head
        self.changed: list[str] = []
        self.hashes: dict[str, str | None] = {}

    @property
    def files(self) -> tuple[str, ...]:
        return files_in_view(self.changed)

    def arguments(self) -> dict[str, object]:
        """An empty checkFreshness still asks for meta.anchoredPaths: what to hash the next time."""
        view: dict[str, object] = {"checkFreshness": dict(self.hashes)}
        if self.files:
            view["files"] = list(self.files)
        return view

    def led(self, result: Mapping[str, object]) -> bool:
        """Whether the answer opens with notes anchored to the changed files (its relevant section)."""
        sections = _get(result.get("structuredContent"), "sections")
        return bool(self.files) and isinstance(sections, list) and any(_get(s, "name") == "relevant" for s in sections)

    def hash(self, paths: Sequence[str], timeout: Callable[[], float]) -> list[str]:
        """Hash each path not hashed yet (None: not in the tree; a directory, an unreadable or very large file, or a
        name the server would refuse, skipped), until HASHES_SENT or the time for it runs out; returns those added."""
        added: list[str] = []
        for path in paths:
            if len(self.hashes) >= HASHES_SENT or timeout() < HASH_RESERVE_S:
                break
            if path in self.hashes or not sendable(path):
                continue
            file = self.root / path
            try:
                if file.is_file():
                    if file.stat().st_size > MAX_HASH_BYTES:
                        continue
                    self.hashes[path] = file_hash(file.read_bytes())
                elif not file.exists():
                    self.hashes[path] = None
                else:
                    continue
            except OSError:
                continue
            added.append(path)
        return added

    def judge_the_rest(
        self,
        result: dict[str, object],
        again: Callable[[Mapping[str, object]], dict[str, object]],
        timeout: Callable[[], float],
    ) -> dict[str, object]:
        """The answer, asked again once when it shows notes anchored to files this view had no hash of (a first
        session, or notes anchored since the last): the session opens with every stale note it shows marked."""
        listed = _get(result.get("structuredContent"), "meta", "anchoredPaths")
        paths = [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
        if not self.hash(paths, timeout) or timeout() < SECOND_CALL_S:
            return result
        try:
            return again(self.arguments())
        except HookError:
            return result  # the first answer stands: its stale notes are just not marked

    def save(self, result: Mapping[str, object]) -> None:
        listed = _get(result.get("structuredContent"), "meta", "anchoredPaths")
        heads = self.repo.data.get("heads")
        heads = dict(heads) if isinstance(heads, dict) else {}
        if self.branch is not None and self.head:
            heads[self.branch] = self.head
        anchored = (
            [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else self.repo.data.get("anchored")
        )
        self.repo.save(heads=heads, anchored=anchored or [])


def code_view(
    client: HookClient, repo: StateFile, root: Path, branch: str | None, default: str, timeout: Callable[[], float],
    *, changed: Sequence[str] | None = None,
) -> CodeView:  # fmt: skip
    """This hook's CodeView: what changed since the last session on this branch (`changed`, when the caller knows it:
    the first prompt sends what its session start sent), hashed with the anchored paths the last answer named."""
    head = _git(root, ["rev-parse", "--verify", "-q", "HEAD"], min(GIT_TIMEOUT_S, timeout())).strip()
    view = CodeView(repo, root, branch, head)
    if changed is None:
        heads = repo.data.get("heads")
        since = heads.get(branch) if isinstance(heads, dict) and branch is not None else None
        committed = _committed_since(root, since, timeout) if isinstance(since, str) and head else None
        if committed is None and head and branch not in (None, default):  # a first session here: the branch's work
            base = _git(root, ["merge-base", default, "HEAD"], min(GIT_TIMEOUT_S, timeout())).strip()
            committed = _committed_since(root, base, timeout) if base else None
        status = _git(root, ["status", "--porcelain=v1", "-z", "--no-renames"], min(GIT_TIMEOUT_S, timeout()))
        changed = files_touched(status, "\n".join(committed or ()), ignored=hook_files(client))
    view.changed = [path for path in changed if sendable(path)]
    anchored = repo.data.get("anchored")
    view.hash([*view.changed, *(p for p in anchored if isinstance(p, str))] if isinstance(anchored, list)
              else view.changed, timeout)  # fmt: skip
    return view


def _committed_since(root: Path, base: str, timeout: Callable[[], float]) -> list[str] | None:
    """Files changed by the commits from `base` to HEAD (a rename as its two paths); None when git cannot tell (a
    commit no longer there, after a rebase)."""
    done = _git_run(root, ["diff", "--name-only", "--no-renames", "-z", base, "HEAD"], min(GIT_TIMEOUT_S, timeout()))
    if done is None or done.returncode != 0:
        return None
    return [path for path in done.stdout.decode("utf-8", errors="replace").split("\0") if path]


def _transcript_lines(path: object) -> list[str]:
    """The transcript's lines, the last MAX_TRANSCRIPT_BYTES of it at most; none when the client gave no path
    (Cursor's CLI) or it cannot be read."""
    if not isinstance(path, str) or not path:
        return []
    try:
        with Path(path).expanduser().open("rb") as transcript:
            size = transcript.seek(0, os.SEEK_END)
            transcript.seek(max(size - MAX_TRANSCRIPT_BYTES, 0))
            data = transcript.read()
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if size > MAX_TRANSCRIPT_BYTES else lines  # the first line was cut


def _git_run(directory: Path, arguments: Sequence[str], timeout: float) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            ["git", "-C", str(directory), *arguments], capture_output=True, timeout=max(timeout, 0.05), check=False
        )
    except (OSError, subprocess.TimeoutExpired):  # no git, or too slow: the checkpoint goes without file names
        return None


def _git(directory: Path, arguments: Sequence[str], timeout: float) -> str:
    done = _git_run(directory, arguments, timeout)
    return done.stdout.decode("utf-8", errors="replace") if done is not None and done.returncode == 0 else ""


def git_changes(
    client: HookClient, directory: Path, since: str | None, timeout: Callable[[], float]
) -> tuple[tuple[str, ...], dict[str, int]]:
    """Files changed in the work tree, and in commits made since the session started; and the lines changed in each
    tracked one (committed since then, and not yet committed)."""
    status = _git(directory, ["status", "--porcelain=v1", "-z"], min(GIT_TIMEOUT_S, timeout()))
    numstat = ["--numstat", "-z", "--no-renames", "--format="]
    committed = _git(directory, ["log", f"--since={since}", *numstat], min(GIT_TIMEOUT_S, timeout())) if since else ""
    uncommitted = _git(directory, ["diff", *numstat[:-1], "HEAD"], min(GIT_TIMEOUT_S, timeout()))
    files = files_touched(status, "\n".join(lines_changed(committed)), ignored=hook_files(client))
    return files, lines_changed(committed, uncommitted)


def send_checkpoint(
    args: argparse.Namespace, payload: Mapping[str, object], environ: Mapping[str, str], timeout: Callable[[], float]
) -> str | None:
    """Checkpoint the session from its transcript and git; returns the new handoff's id (None: nothing to send).

    Each session keeps one live handoff: a later checkpoint of the same session (after a compaction, or Codex's
    next turn) marks the one before it historical, as get_context expects of a thread's older handoffs. The handoff
    (and any decision or failed approach it filed) is then anchored to the files the session changed most
    (file_anchors), so a later session sees it marked when that code moves on.

    Raises:
        HookError: no key, or the call failed.
    """
    directory = payload_directory(payload)
    project = args.project or project_for(directory)
    client = HookClient(args.client)
    session = _session_id(payload)
    reason = payload.get("trigger") or payload.get("reason")
    moment = HookMoment(
        client, session, str(payload.get("hook_event_name") or "checkpoint"), str(reason) if reason else None
    )
    record = read_session(_transcript_lines(payload.get("transcript_path")), project)
    files, changed = git_changes(client, directory, record.started_at, timeout)
    last = payload.get("last_assistant_message")
    request = checkpoint_request(
        record, files, project=project, moment=moment, last_message=last if isinstance(last, str) else None
    )
    if request is None:
        return None
    branch = current_branch(directory)
    if branch is not None:
        request = {**request, "branch": branch}
    state = StateFile.of_session(environ, client.value, session)
    digest = request_digest(request)
    if state.data.get("digest") == digest:
        return None  # nothing new since this session's last checkpoint
    token = _client_token(args, directory, environ)
    result = call_tool(args.url, token, "checkpoint", request, timeout())
    structured = result.get("structuredContent")
    handoff = _get(structured, "handoff", "id")
    if not isinstance(handoff, str):
        raise HookError("checkpoint: the answer names no handoff")
    older = state.data.get("handoff")
    state.save(handoff=handoff, digest=digest)
    if isinstance(older, str) and older != handoff:
        call_tool(args.url, token, "update_note", {"id": older, "status": "historical"}, timeout())
    notes = filed_notes(structured) if isinstance(structured, dict) else [handoff]
    anchors = file_anchors(directory, files, changed, timeout)
    for note in notes if anchors else ():
        try:
            call_tool(args.url, token, "update_note", {"id": note, "anchors": anchors}, timeout())
        except HookError as exc:  # the checkpoint stands without its anchors
            log_failure(environ, f"{client.value} anchors", str(exc))
            break
    return handoff


def file_anchors(
    directory: Path, files: Sequence[str], changed: Mapping[str, int], timeout: Callable[[], float]
) -> list[dict[str, object]]:
    """Whole-file anchors, as `notewell anchor PATH` makes them (the working tree's text, HEAD's commit, the
    repository's name), to the ANCHORS_PER_NOTE files of `files` with the most lines changed (a new file: all of
    its lines). Deleted files, directories, very large files and names the server would refuse are left out, and so
    is whatever the time left does not allow."""
    root = repository_root(directory)
    head = _git(root, ["rev-parse", "--verify", "-q", "HEAD"], min(GIT_TIMEOUT_S, timeout())).strip()
    if not head or not files:
        return []
    from notewell.adapters.git_tree import repo_name  # the name `notewell anchor` gives; 18 ms, checkpoints only

    remote = _git(root, ["config", "--get", "remote.origin.url"], min(GIT_TIMEOUT_S, timeout())).strip()
    repo = repo_name(remote or None, root)
    texts: dict[str, bytes | None] = {}

    def text(path: str) -> bytes | None:
        if path not in texts:
            file = root / path
            try:
                regular = sendable(path) and file.is_file() and file.stat().st_size <= MAX_HASH_BYTES
                texts[path] = file.read_bytes() if regular else None
            except OSError:
                texts[path] = None
        return texts[path]

    lines = dict(changed)
    for path in files:
        if timeout() < ANCHOR_RESERVE_S:
            break
        if path not in lines and (data := text(path)) is not None:  # untracked: git counted none of its lines
            lines[path] = len(data.splitlines())
    anchors: list[dict[str, object]] = []
    for path in most_changed(files, lines):
        if len(anchors) >= ANCHORS_PER_NOTE or timeout() < ANCHOR_RESERVE_S:
            break
        data = text(path)
        if data is not None:
            anchors.append(whole_file_anchor(repo, path, head, file_hash(data)))
    return anchors


def _read_payload(stdin: TextIO) -> dict[str, object]:
    try:
        payload = json.loads(stdin.read() or "{}")
    except ValueError as exc:
        raise HookError(f"the client's payload is not JSON ({exc})") from exc
    return payload if isinstance(payload, dict) else {}


def run_hook(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, environ: Mapping[str, str], *, deadline_s: float
) -> int:
    """Run one hook. Always 0: a failure is logged, never passed on to the client."""
    where = f"{args.client} {args.action}"  # the client's event name once the payload is read: the log names it
    deadline = Deadline(deadline_s, lambda: log_failure(environ, where, f"gave up after {deadline_s:g} s"))
    try:
        payload = _read_payload(stdin)
        where = f"{args.client} {payload.get('hook_event_name') or args.action}"
        if args.action == HookAction.CHECKPOINT.value:
            send_checkpoint(args, payload, environ, deadline.remaining)
            return 0
        answer = (context_answer if args.action == HookAction.CONTEXT.value else prompt_answer)(
            args, payload, environ, deadline.remaining
        )
        if answer is not None:
            with deadline.output:
                stdout.write(answer + "\n")
                stdout.flush()
    except HookError as exc:
        log_failure(environ, where, str(exc))
    except Exception as exc:  # a bug of ours must not break the client's session either
        log_failure(environ, where, f"unexpected {type(exc).__name__}: {exc}")
    finally:
        deadline.cancel()
    return 0


def hook_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=[a.value for a in HookAction])
    parser.add_argument("--client", choices=[c.value for c in HookClient], required=True)
    parser.add_argument("--project", default=None)
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--detail", choices=["lean", "balanced", "deep"], default="lean")
    parser.add_argument("--max-tokens", type=int, default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = hook_parser().parse_args(argv)
    except SystemExit as exc:  # a command from an older install, say: logged, never an error shown to the client
        if exc.code:
            log_failure(os.environ, "hook", f"bad arguments: {' '.join(argv or sys.argv[1:])}")
        return 0
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")  # JSON is UTF-8, whatever the locale
    return run_hook(args, stdin, sys.stdout, os.environ, deadline_s=DEADLINE_S)


# ----- notewell hooks install | uninstall -----------------------------------------------------------------------


def _max_tokens(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if not 200 <= value <= 32000:
        raise argparse.ArgumentTypeError(f"{text!r}: give a token budget from 200 to 32000.")
    return value


def add_hook_verbs(hooks: argparse.ArgumentParser) -> None:
    """`notewell hooks install|uninstall`, added to the `notewell` command line."""
    verbs = hooks.add_subparsers(dest="hook_verb", required=True)
    install = verbs.add_parser(
        "install", help="Write the client's hook configuration: context at session start, checkpoints after."
    )
    uninstall = verbs.add_parser("uninstall", help="Remove exactly the hook entries install added.")
    for sub in (install, uninstall):
        sub.add_argument("--client", choices=[c.value for c in HookClient], default=HookClient.CLAUDE_CODE.value,
                         help="The coding client (default claude-code).")  # fmt: skip
        sub.add_argument("--user", action="store_true", help="User scope (every repository), not this repository.")
        sub.add_argument("--yes", action="store_true", help="Write without asking (the diff is still shown).")
        sub.add_argument("--dry-run", action="store_true", help="Show the diff only.")
    install.add_argument(
        "--project", default=None,
        help="Notewell project (default: this repository's name; with --user, each repository's own).",
    )  # fmt: skip
    install.add_argument(
        "--url", default=DEFAULT_URL, help=f"The MCP endpoint (default {DEFAULT_URL}, notewell serve)."
    )
    install.add_argument("--detail", choices=["lean", "balanced", "deep"], default="lean",
                         help="get_context's detail level at session start (default lean).")  # fmt: skip
    install.add_argument("--max-tokens", type=_max_tokens, default=None,
                         help="Session-start token budget (default: the project's, else the level's).")  # fmt: skip


def hook_verb(args: argparse.Namespace) -> int:
    """`notewell hooks install|uninstall`: show the diff, ask (unless --yes), write.

    Raises:
        ConfigError: the configuration file cannot be read or has a shape the client does not read.
    """
    from notewell.config import ConfigError

    try:
        return _install(args) if args.hook_verb == "install" else _uninstall(args)
    except HookConfigError as exc:
        raise ConfigError(str(exc)) from exc


def _load(path: Path) -> tuple[str | None, dict[str, object]]:
    from notewell.config import ConfigError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from exc
    try:
        document = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it by hand, then run this again.") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it by hand, then run this again.")
    return text, document


def _shown(path: Path, root: Path) -> str:
    with contextlib.suppress(ValueError):
        return path.relative_to(root).as_posix()
    with contextlib.suppress(ValueError):
        return "~/" + path.relative_to(Path.home()).as_posix()
    return str(path)


def _apply(args: argparse.Namespace, path: Path, label: str, before: str | None, after: str | None) -> bool:
    """Show the change and write it, or delete the file when `after` is None (asking first on a terminal, unless
    --yes); whether it was written."""
    print(config_diff(label, before, after), end="")
    if args.dry_run:
        print("Dry run: nothing written.")
        return False
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"Not written: run again with --yes to write {label}.")
            return False
        if input(f"Write {label}? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Nothing written.")
            return False
    if after is None:
        path.unlink()
        with contextlib.suppress(OSError):  # the client's directory, when install made it and nothing else is in it
            path.parent.rmdir()
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.notewell.tmp")
    temporary.write_text(after, encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):  # the file keeps its mode (a 0600 settings file stays 0600)
        temporary.chmod(path.stat().st_mode & 0o7777)
    temporary.replace(path)
    return True


def _install_record(path: Path) -> Path:
    """Where install keeps, for one configuration file, the text it found there (null: no file) and the text it
    wrote: uninstall gives the first back, byte for byte, while the second is still what the file holds."""
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return hooks_home(os.environ) / "installs" / f"{name}.json"


def _installed_over(path: Path, text: str | None) -> dict[str, object] | None:
    """The install record of `path` when `text` is what that install wrote (the file unchanged since)."""
    record = _read_json(_install_record(path))
    return record if isinstance(record, dict) and "before" in record and record.get("after") == text else None


def _install(args: argparse.Namespace) -> int:
    from notewell.domain.rules import check_project_slug

    spec = CLIENTS[HookClient(args.client)]
    root = repository_root(Path.cwd())
    project = args.project if args.project is not None else (None if args.user else project_for(root))
    if project is not None:
        check_project_slug(project)
    settings = HookSettings(spec.client, project, args.url, args.detail, args.max_tokens)
    path = config_path(spec, user=args.user, root=root, environ=os.environ)
    label = _shown(path, root)
    before, document = _load(path)
    after = with_hooks(document, spec, hook_commands(sys.executable, settings))
    if after == document:
        print(f"Notewell's hooks for {spec.label} are already in {label}; nothing to change.")
    else:
        written = render_config(after, like=before)  # the file's own layout: the diff shows only Notewell's lines
        earlier = _installed_over(path, before)  # installing again (another URL, say) keeps the user's original
        if not _apply(args, path, label, before, written):
            return 0 if args.dry_run else 1
        with contextlib.suppress(OSError):
            if earlier is None and without_hooks(document, spec) != document:
                # Over Notewell's hooks that no record explains (an older install): what the user had is not known,
                # so uninstall takes the entries out instead of giving back a text that still holds them.
                _install_record(path).unlink(missing_ok=True)
            else:
                _write_json(_install_record(path), {"path": str(path), "after": written,
                                                    "before": earlier["before"] if earlier else before})  # fmt: skip
        print(f"Wrote {label}.")
    ignored = _git_run(root, ["check-ignore", "-q", str(path)], CHECK_TIMEOUT_S)
    shared = not args.user and (root / ".git").exists() and ignored is not None and ignored.returncode == 1
    print(_installed_summary(spec, settings, label, shared_in_git=shared))
    print(_check(settings, root))
    return 0


def _uninstall(args: argparse.Namespace) -> int:
    """Give the file back as install found it, byte for byte, when nothing else changed it since (deleted, if install
    made it); else take Notewell's entries out of what the file holds now, in its layout. A file the user had is
    never deleted."""
    spec = CLIENTS[HookClient(args.client)]
    root = repository_root(Path.cwd())
    path = config_path(spec, user=args.user, root=root, environ=os.environ)
    label = _shown(path, root)
    before, document = _load(path)
    record = _installed_over(path, before) if before is not None else None
    if record is not None:
        original = record["before"]
        after = original if isinstance(original, str) else None
    else:
        remaining = without_hooks(document, spec)
        if remaining == document:
            print(f"No Notewell hooks for {spec.label} in {label}; nothing to change.")
            return 0
        made = _read_json(_install_record(path))
        made_by_install = isinstance(made, dict) and "before" in made and made["before"] is None
        after = None if not remaining and made_by_install else render_config(remaining, like=before)
    if not _apply(args, path, label, before, after):
        return 0 if args.dry_run else 1
    with contextlib.suppress(OSError):
        _install_record(path).unlink()
    if after is None:
        print(f"Removed Notewell's hooks from {label}; install had made the file, so it is deleted.")
    elif record is not None:
        print(f"Removed Notewell's hooks from {label}: it is back as it was before install.")
    else:
        print(f"Removed Notewell's hooks from {label}.")
    return 0


def _installed_summary(spec: ClientHooks, settings: HookSettings, label: str, *, shared_in_git: bool) -> str:
    def events(action: HookAction) -> str:
        return ", ".join(event for event, does in spec.events if does is action)

    project = f"project {settings.project}" if settings.project else "each repository's project (its name)"
    budget = f", at most {settings.max_tokens} tokens" if settings.max_tokens else ""
    lines = [f"  {events(HookAction.CONTEXT)}: {project}'s context ({settings.detail}{budget}) from {settings.url}"]
    if events(HookAction.PROMPT):
        lines.append(
            f"  {events(HookAction.PROMPT)}: on the session's first prompt only, the notes on what it asks that the "
            "start did not show"
        )
    lines += [
        f"  {events(HookAction.CHECKPOINT)}: a checkpoint of the session (handoff, open items, decisions, files "
        "touched), anchored to the files it changed most",
        f"  Failures never block {spec.label}: each run gives up after {DEADLINE_S:g} s and logs to "
        f"{_shown(log_path(os.environ), Path.cwd())}.",
    ]
    if shared_in_git:
        lines.append(f"  {label} names this machine's Python and git does not ignore it: add it to .git/info/exclude.")
    if spec.client is HookClient.CODEX:
        lines.append("  Codex runs a hook once you trust it: open /hooks in Codex and trust Notewell's.")
    if spec.client is HookClient.CURSOR:
        lines.append("  Cursor reads hooks.json at start: restart it, or open a new agent window.")
    return "\n".join(lines)


def _check(settings: HookSettings, root: Path) -> str:
    """What the first session start will do, found out now: the key it will send, and the server's answer."""
    found = find_bearer(settings.client, settings.url, root, os.environ, int(time.time() * 1000))
    if found is None:
        label = CLIENTS[settings.client].label
        return (
            f"Warning: no key for {settings.url} in {label}'s MCP configuration or ${KEY_VARIABLE}, so the hooks "
            f"will do nothing yet. Connect {label} first (notewell connect --url {settings.url} --client "
            f"{settings.client.value}), or export {KEY_VARIABLE}."
        )
    token, where = found
    project = settings.project or project_for(root)
    arguments: dict[str, object] = {"project": project, "detail": settings.detail}
    try:
        result = call_tool(settings.url, token, "get_context", arguments, CHECK_TIMEOUT_S)
    except HookError as exc:
        return f"Key from {where}; but the check failed: {exc}"
    spent = _get(result.get("structuredContent"), "meta", "spent")
    return f"Checked: {settings.url} answered get_context for {project} ({spent} tokens) with the key from {where}."


if __name__ == "__main__":
    sys.exit(main())
