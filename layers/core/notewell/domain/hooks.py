"""Coding-client hooks, the pure part: what each client's hook configuration looks like and how Notewell's entries
are merged into it and taken out again (an exact inverse), what a session transcript says (prompts, the last reply,
open items, decisions recorded), the checkpoint made from it, and the text a session starts with.

Everything here takes text and mappings and returns values: the entrypoint (entrypoints/hooks.py) reads the files,
runs git, talks HTTP and keeps the clock. Each client's formats are described where they are read, with the
versions they were checked against in the README ("Use with Claude Code / Codex / Cursor").
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

MODULE = "notewell.entrypoints.hooks"
MARKER = f"-m {MODULE} "  # how Notewell's entries are told apart from everyone else's in a client's configuration
CLIENT_TIMEOUT_S = 5  # the client's own limit on the command; ours (the hook's deadline) is shorter


class HookConfigError(ValueError):
    """A client's hook configuration is not in the shape that client reads; nothing is changed."""


class HookClient(StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    CURSOR = "cursor"


class HookAction(StrEnum):
    CONTEXT = "context"  # session start: the project's context is added to the model's
    PROMPT = "prompt"  # the session's first prompt: the project's context for what it asks
    CHECKPOINT = "checkpoint"  # before compaction and at the end: a checkpoint from the transcript


@dataclass(frozen=True, slots=True)
class ClientHooks:
    """Where and how one client reads hook commands."""

    client: HookClient
    label: str
    project_file: str  # relative to the repository
    user_file: str  # relative to the client's configuration directory
    events: tuple[tuple[str, HookAction], ...]  # the client's event name → what Notewell does on it
    grouped: bool  # matcher groups ({"hooks": [...]}) per event, or a flat list of commands (Cursor, version 1)


CLIENTS: dict[HookClient, ClientHooks] = {
    # Claude Code: settings.local.json is its per-machine project file (documented as not committed), the right
    # place for a command naming this machine's Python. SessionEnd, not Stop: Stop fires after every turn.
    HookClient.CLAUDE_CODE: ClientHooks(
        HookClient.CLAUDE_CODE, "Claude Code", ".claude/settings.local.json", "settings.json",
        (("SessionStart", HookAction.CONTEXT), ("UserPromptSubmit", HookAction.PROMPT),
         ("PreCompact", HookAction.CHECKPOINT), ("SessionEnd", HookAction.CHECKPOINT)),
        grouped=True,
    ),
    # Codex has no session-end event in its released versions, so its turn end (Stop) checkpoints: each one replaces
    # the session's previous handoff (see the entrypoint). Its UserPromptSubmit takes additionalContext as Claude
    # Code's does (codex-rs/hooks user-prompt-submit.command.output.schema.json).
    HookClient.CODEX: ClientHooks(
        HookClient.CODEX, "Codex", ".codex/hooks.json", "hooks.json",
        (("SessionStart", HookAction.CONTEXT), ("UserPromptSubmit", HookAction.PROMPT),
         ("PreCompact", HookAction.CHECKPOINT), ("Stop", HookAction.CHECKPOINT)),
        grouped=True,
    ),
    # Cursor's beforeSubmitPrompt can only let a prompt through or stop it (`continue`, `user_message`): no context.
    HookClient.CURSOR: ClientHooks(
        HookClient.CURSOR, "Cursor", ".cursor/hooks.json", "hooks.json",
        (("sessionStart", HookAction.CONTEXT), ("preCompact", HookAction.CHECKPOINT),
         ("sessionEnd", HookAction.CHECKPOINT)),
        grouped=False,
    ),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class HookSettings:
    """What the installed commands are told: the project (None: each repository's own, found when the hook runs),
    the MCP endpoint and the session-start budget."""

    client: HookClient
    project: str | None
    url: str
    detail: str = "lean"
    max_tokens: int | None = None


def hook_command(python: str, action: HookAction, settings: HookSettings) -> str:
    """The shell command a client runs for `action`: the interpreter that has Notewell, then the hook module, which
    imports only the standard library so that it starts in tens of milliseconds."""
    words = [python, "-m", MODULE, action.value, "--client", settings.client.value]
    words += ["--project", settings.project] if settings.project is not None else []
    words += ["--url", settings.url]
    if action is HookAction.CONTEXT:
        words += ["--detail", settings.detail]
        if settings.max_tokens is not None:
            words += ["--max-tokens", str(settings.max_tokens)]
    return " ".join(shlex.quote(word) for word in words)


def hook_commands(python: str, settings: HookSettings) -> dict[str, str]:
    """The command for each of the client's events."""
    return {event: hook_command(python, action, settings) for event, action in CLIENTS[settings.client].events}


# ----- configuration: merge, and its exact inverse ---------------------------------------------------------------


def _ours(entry: object) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and MARKER in entry["command"] + " "


def _command_entry(spec: ClientHooks, command: str) -> dict[str, object]:
    if spec.grouped:
        return {"type": "command", "command": command, "timeout": CLIENT_TIMEOUT_S}
    return {"command": command}  # Cursor refuses keys it does not document, and its default timeout is long


def _events_of(document: Mapping[str, object], label: str) -> dict[str, object]:
    hooks = document.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HookConfigError(f"'hooks' in {label} is not an object; fix it by hand, then run this again.")
    return hooks


def _event_list(hooks: Mapping[str, object], event: str, label: str) -> list[object]:
    entries = hooks.get(event, [])
    if not isinstance(entries, list):
        raise HookConfigError(f"hooks.{event} in {label} is not a list; fix it by hand, then run this again.")
    return entries


def _command_slots(spec: ClientHooks, entries: list[object]) -> Iterator[tuple[list[object], int]]:
    """Every (list, index) holding one of Notewell's commands among an event's entries, in order."""
    if not spec.grouped:
        yield from ((entries, i) for i, entry in enumerate(entries) if _ours(entry))
        return
    for group in entries:
        commands = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(commands, list):
            yield from ((commands, i) for i, command in enumerate(commands) if _ours(command))


def with_hooks(document: Mapping[str, object], spec: ClientHooks, commands: Mapping[str, str]) -> dict[str, object]:
    """`document` with Notewell's command on each event of `commands`: an existing one is replaced where it stands
    (so installing twice changes nothing), any other of ours is removed, the rest is left as it was.

    Raises:
        HookConfigError: the document does not have the shape the client reads.
    """
    merged = without_hooks(document, spec, keep=commands.keys())
    hooks = _events_of(merged, spec.label)
    for event, command in commands.items():
        entries = _event_list(hooks, event, spec.label)
        slots = list(_command_slots(spec, entries))
        if slots:
            holder, index = slots[0]
            replaced = holder[index]
            assert isinstance(replaced, dict)
            holder[index] = {**replaced, "command": command}  # keeps a timeout or matcher the user set on it
        else:
            entries.append(
                {"hooks": [_command_entry(spec, command)]} if spec.grouped else _command_entry(spec, command)
            )
        hooks[event] = entries
    merged["hooks"] = hooks
    if not spec.grouped and "version" not in merged:
        merged = {"version": 1, **merged}  # the only hooks.json version Cursor reads
    return merged


def without_hooks(document: Mapping[str, object], spec: ClientHooks, *, keep: Iterable[str] = ()) -> dict[str, object]:
    """`document` without Notewell's commands (on the events in `keep`, the first one stays, for `with_hooks` to
    replace in place). Groups, event lists and the hooks object that only held ours go too, and with the last of
    a Cursor file's hooks its version, as before the first install.

    Raises:
        HookConfigError: the document does not have the shape the client reads.
    """
    result = copy.deepcopy(dict(document))
    if "hooks" not in result:
        return result
    hooks = _events_of(result, spec.label)
    kept = set(keep)
    touched = False
    for event in list(hooks):
        entries = _event_list(hooks, event, spec.label)
        removed = list(_command_slots(spec, entries))[1 if event in kept else 0 :]
        if not removed:
            continue
        touched = True
        for holder, index in reversed(removed):
            del holder[index]
        if spec.grouped:  # a group goes only when it held nothing but ours
            emptied = {id(holder) for holder, _ in removed if not holder}
            entries[:] = [g for g in entries if not (isinstance(g, dict) and id(g.get("hooks")) in emptied)]
        if not entries:
            del hooks[event]
    if touched and not hooks:
        del result["hooks"]
        if not spec.grouped and result.get("version") == 1:
            del result["version"]  # install added it for the hooks; without them it says nothing
    return result


_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


def render_config(document: Mapping[str, object], like: str | None = None) -> str:
    """`document` as JSON, laid out as `like` (the file as it is) was: its indentation (two spaces when it shows
    none) and its final line break or none, so that only the lines that changed differ. When `document` only adds
    top-level keys to `like`'s, they are written after its text, which stays as the person wrote it."""
    found = _INDENT.search(like or "")
    indent = found.group(1) if found else "  "
    end = "\n" if not like or like.endswith("\n") else ""
    if like is not None and (appended := _appended(document, like, indent)) is not None:
        return appended + end
    return json.dumps(document, indent=indent, ensure_ascii=False) + end


def _appended(document: Mapping[str, object], like: str, indent: str) -> str | None:
    """`like` with the top-level keys `document` adds written before its closing brace; None when `document` changes
    anything else (or `like` is not a JSON object ending in its brace)."""
    try:
        before = json.loads(like)
    except ValueError:
        return None
    body = like.rstrip()
    if (
        not isinstance(before, dict)
        or not before
        or not body.endswith("}")
        or list(document)[: len(before)] != list(before)
    ):
        return None
    if any(document[key] != value for key, value in before.items()):
        return None
    added = [
        f"{indent}{json.dumps(key)}: "
        + json.dumps(document[key], indent=indent, ensure_ascii=False).replace("\n", "\n" + indent)
        for key in list(document)[len(before) :]
    ]
    if not added:
        return None
    text = body[:-1].rstrip() + ",\n" + ",\n".join(added) + "\n}"
    return text if json.loads(text) == document else None


def config_diff(label: str, before: str | None, after: str | None) -> str:
    """A unified diff of a configuration file, as `git diff` shows one (a missing file is empty)."""
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile="/dev/null" if before is None else f"a/{label}",
        tofile="/dev/null" if after is None else f"b/{label}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# ----- session start ---------------------------------------------------------------------------------------------

CHECKPOINT_NOTICE = (
    "Notewell checkpoints this session (handoff, open items, decisions you recorded, files touched) before "
    "compaction and at its end; record each decision with remember when you make it."
)


def session_context(context_text: str, *, leading: Sequence[str] = ()) -> str:
    """What a session starts with: `leading` first (notes that must come before the rest, e.g. those anchored to
    files changed since the last session), then get_context's text, then one line on what the hooks do."""
    parts = [*(text.strip() for text in leading if text.strip()), context_text.strip(), CHECKPOINT_NOTICE]
    return "\n\n".join(part for part in parts if part)


# What session start sends besides the project: the files changed on the branch since the last session (`files`:
# notes anchored there lead) and the hashes of the files anchored notes name (`checkFreshness`: stale ones marked).
FILES_SENT = 20  # the server takes this many `files` (domain/freshness.py MAX_FILES); more become their directories
HASHES_SENT = 2_000  # and this many `checkFreshness` paths (MAX_HASHED_PATHS)
MAX_PATH_BYTES = 1_024  # an anchor path's limit (rules.MAX_ANCHOR_PATH_BYTES)


def file_hash(data: bytes) -> str:
    """A file's `fileHash` as anchors record it (domain/freshness.py): SHA-256 of its text with CRLF read as LF and
    without the final line break, so a CRLF checkout hashes as an LF one."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n").removesuffix(b"\n")).hexdigest()


# Absolute or on a drive, a backslash, a control character or lone surrogate, or a '..' part.
_REFUSED_PATH = re.compile(r"^(?:/|[A-Za-z]:)|\\|[\x00-\x1f\x7f-\x9f\ud800-\udfff]|(?:^|/)\.\.(?:/|$)")


def sendable(path: str) -> bool:
    """Whether the server takes `path` as a repository path (the anchor path rules, rules.check_anchor_path): one
    odd name git reports must not cost the session its briefing, so such a path is not sent."""
    named = [part for part in path.split("/") if part not in ("", ".")]
    return (
        bool(named) and not _REFUSED_PATH.search(path) and len(path.encode("utf-8", "surrogatepass")) <= MAX_PATH_BYTES
    )


def files_in_view(paths: Sequence[str], cap: int = FILES_SENT) -> tuple[str, ...]:
    """`paths` as `files` sends them: each once, in order; when more than `cap`, the deepest become their directories
    (`src/a/x.py` and `src/a/y.py` become `src/a`), level by level, so every changed file stays covered; past that
    (more than `cap` top-level names), the first `cap`."""
    shown = list(dict.fromkeys(paths))
    while len(shown) > cap:
        depth = max(path.count("/") for path in shown)
        if depth == 0:
            return tuple(shown[:cap])
        shown = list(dict.fromkeys(path.rsplit("/", 1)[0] if path.count("/") == depth else path for path in shown))
    return tuple(shown)


def relevant_line(files: int) -> str:
    """What the briefing says about the notes that lead it: anchored to the files changed since the last session."""
    noun = "file" if files == 1 else "files"
    return f"Relevant below: notes anchored to the {files} {noun} changed on this branch since the last session."


def context_output(client: HookClient, text: str, event: str = "SessionStart") -> str:
    """A hook's standard output adding `text` to the model's context on `event`: Cursor reads `additional_context`;
    Claude Code and Codex read `hookSpecificOutput.additionalContext` (both also take plain text, but JSON says it is
    context, not a message)."""
    if client is HookClient.CURSOR:
        return json.dumps({"additional_context": text})  # ASCII escapes: whatever the locale of the pipe
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


# ----- the first prompt ----------------------------------------------------------------------------------------------

QUERY_CHARS = 500  # get_context's query limit (services/context.py MAX_QUERY_CHARS)
PROMPT_LEAD = (
    "Notewell's notes on this request (the project's context searched with it, less what the session start showed):"
)
# A listed note's line (packing.entry_line, pointer_line, conflict_line): its ref (or id), a date in recent changes,
# bracketed marks and flags, then what it says.
_ENTRY = re.compile(r"^- (n_[0-9A-Za-z]+|[0-9A-Z]{6})(?: \d{4}-\d{2}-\d{2})?((?: \[[^\]]*\])*) ?(.*)$")
_STALE = "re-check]"  # the end of a freshness mark (freshness.stale_mark), the one bracket that changes the reading
_HEADING = "## "


def line_digest(line: str) -> str:
    """What a note's line says, as a short digest: its id, a freshness mark, its words; not the flags and date that
    differ from section to section ([decision] where types mix), so the same words are the same line."""
    match = _ENTRY.match(line)
    said = (
        line
        if match is None
        else "\n".join(
            (match[1], " ".join(m for m in re.findall(r"\[[^\]]*\]", match[2]) if m.endswith(_STALE)), match[3])
        )
    )
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def shown_lines(context_text: str) -> list[str]:
    """Digests of the note lines a get_context text shows, to leave them out of a later answer of the session."""
    return [line_digest(line) for line in context_text.splitlines() if _ENTRY.match(line)]


def unseen_lines(context_text: str, seen: Collection[str]) -> str:
    """The note lines of a get_context text that the session has not been shown (digests in `seen`), each under its
    section's heading; "" when there are none. A note shown before but now in other words (a longer excerpt, a
    freshness mark) is shown again. What is not a note's line (the header, summary, notices, omitted ids) was said
    at the start."""
    kept: list[str] = []
    heading: str | None = None
    for line in context_text.splitlines():
        if line.startswith(_HEADING):
            heading = line
        elif _ENTRY.match(line) and line_digest(line) not in seen:
            if heading is not None:
                kept.append(heading)
                heading = None
            kept.append(line)
    return "\n".join(kept)


def prompt_query(prompt: object) -> str | None:
    """The first prompt as get_context's `query`: on one line, clipped to the query limit; None when it says nothing."""
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return _clip(prompt, QUERY_CHARS)


# ----- transcripts -------------------------------------------------------------------------------------------------

MAX_LINE_CHARS = 200_000  # longer lines are tool results (whole files); a prompt that long is not read
OPEN_STATUSES_DONE = frozenset({"completed", "complete", "done", "cancelled", "canceled"})
_TAG_BLOCK = re.compile(r"<(timestamp|user_query)>(.*?)</\1>", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What a transcript says about a session, for its checkpoint."""

    prompts: tuple[str, ...] = ()  # what the person asked, in order
    last_reply: str | None = None  # the agent's last words: where the session stopped
    open_items: tuple[str, ...] = ()  # unfinished entries of the agent's latest to-do list or plan
    decisions: tuple[str, ...] = ()  # decisions the agent recorded in Notewell during the session
    checkpointed: bool = False  # the agent sent its own checkpoint and nothing was asked after it
    started_at: str | None = None  # the first timestamp, for the files committed since


def _json_object(text: str) -> dict[str, object] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _turn(line: Mapping[str, object]) -> tuple[str, object] | None:
    """(role, content) of a transcript line, for the three formats:
    Claude Code `{"type": "user"|"assistant", "message": {"content": ...}}`, Cursor `{"role": ..., "message": ...}`,
    Codex `{"type": "response_item", "payload": {"type": "message"|"function_call", ...}}`."""
    if line.get("isMeta") or line.get("isSidechain") or line.get("isCompactSummary"):
        return None  # client-injected text, a sub-agent's turn, or the summary a compaction wrote
    payload = line.get("payload")
    if line.get("type") == "response_item" and isinstance(payload, dict):
        if payload.get("type") == "function_call":
            arguments = _json_object(str(payload.get("arguments") or "")) or {}
            return "assistant", [{"type": "tool_use", "name": payload.get("name"), "input": arguments}]
        if payload.get("type") == "message":
            return str(payload.get("role")), payload.get("content")
        return None
    role = line.get("type") if line.get("type") in ("user", "assistant") else line.get("role")
    message = line.get("message")
    if role not in ("user", "assistant") or not isinstance(message, dict):
        return None
    return str(role), message.get("content")


def _blocks(content: object) -> list[dict[str, object]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _prompt_text(text: str) -> str | None:
    """The person's words: Cursor wraps them in <user_query>; text that opens with any other tag was put there by
    the client (commands, their output, environment blocks, reminders)."""
    inner = [body for tag, body in _TAG_BLOCK.findall(text) if tag == "user_query"]
    if inner:
        text = inner[0]
    text = text.strip()
    return None if not text or text.startswith("<") else text


def _tool_name(name: object) -> str:
    """An MCP tool's own name: clients prefix it with the server's (`mcp__notewell__remember`)."""
    return str(name or "").rsplit("__", 1)[-1]


def _todo_items(arguments: Mapping[str, object]) -> list[str] | None:
    """The unfinished items of a to-do list or plan: Claude Code's TodoWrite `todos`, Codex's update_plan `plan`."""
    listed = arguments.get("todos", arguments.get("plan"))
    if not isinstance(listed, list):
        return None
    items = []
    for item in listed:
        if isinstance(item, dict) and str(item.get("status", "")).lower() not in OPEN_STATUSES_DONE:
            text = item.get("content") or item.get("step") or item.get("subject")
            if isinstance(text, str) and text.strip():
                items.append(text.strip())
    return items


def _recorded(tool: str, arguments: Mapping[str, object], project: str) -> list[str] | None:
    """The decisions a call of Notewell's remember, create_note or checkpoint recorded in `project` (None: not such a
    call). Other servers' tools of the same name do not take Notewell's `project`."""
    if arguments.get("project") != project or tool not in ("remember", "create_note", "checkpoint"):
        return None
    if tool == "checkpoint":
        listed = arguments.get("decisions")
        return [d.strip() for d in listed if isinstance(d, str) and d.strip()] if isinstance(listed, list) else []
    said = arguments.get("title") or arguments.get("content") or arguments.get("body")
    return [said.strip()] if arguments.get("type") == "decision" and isinstance(said, str) and said.strip() else []


def read_session(lines: Iterable[str], project: str) -> SessionRecord:
    """What a session's transcript (JSON Lines, any of the three clients) says; unreadable lines are skipped."""
    prompts: list[str] = []
    last_reply: str | None = None
    open_items: tuple[str, ...] = ()
    decisions: list[str] = []
    checkpointed = False
    started_at: str | None = None
    for raw in lines:
        if len(raw) > MAX_LINE_CHARS:
            continue
        line = _json_object(raw)
        if line is None:
            continue
        if started_at is None and isinstance(line.get("timestamp"), str):
            started_at = str(line["timestamp"])
        turn = _turn(line)
        if turn is None:
            continue
        role, content = turn
        for block in _blocks(content):
            kind = block.get("type")
            text = block.get("text")
            if role == "user" and kind in ("text", "input_text") and isinstance(text, str):
                prompt = _prompt_text(text)
                if prompt is not None:
                    prompts.append(prompt)
                    checkpointed = False
            elif role == "assistant" and kind in ("text", "output_text") and isinstance(text, str) and text.strip():
                last_reply = text.strip()
            elif role == "assistant" and kind == "tool_use":
                arguments = block.get("input")
                if not isinstance(arguments, dict):
                    continue
                todo = _todo_items(arguments)
                open_items = tuple(todo) if todo is not None else open_items
                recorded = _recorded(_tool_name(block.get("name")), arguments, project)
                if recorded is not None:
                    decisions += recorded
                    checkpointed = checkpointed or _tool_name(block.get("name")) == "checkpoint"
    return SessionRecord(
        tuple(prompts), last_reply, open_items, tuple(dict.fromkeys(decisions)), checkpointed, started_at
    )


# ----- files touched -----------------------------------------------------------------------------------------------


def files_touched(status: str, committed: str, ignored: Iterable[str] = ()) -> tuple[str, ...]:
    """Paths changed in the work tree (`git status --porcelain=v1 -z`) and in commits since the session started
    (`git log --name-only --format=`), each once, work tree first, without the `ignored` ones."""
    paths: list[str] = []
    entries = status.split("\0")
    skip_next = False
    for entry in entries:
        if skip_next:  # a rename's or copy's original path follows its new one
            skip_next = False
            continue
        if len(entry) > 3:
            paths.append(entry[3:])
            skip_next = entry[0] in "RC"
    paths += [line.strip() for line in committed.splitlines() if line.strip()]
    skipped = set(ignored)
    return tuple(path for path in dict.fromkeys(paths) if path not in skipped)


def hook_files(client: HookClient) -> tuple[str, ...]:
    """What git shows of the client's hook configuration in a repository (the file, or its directory when new): the
    install's doing, not the session's work."""
    path = CLIENTS[client].project_file
    return path, path.rsplit("/", 1)[0] + "/"


# ----- the checkpoint ----------------------------------------------------------------------------------------------

PROMPT_CHARS = 300
REPLY_CHARS = 1_200
MORE_PROMPTS = 5
FILES_LISTED = 40
OPEN_ITEMS = 20  # the checkpoint tool takes 30 items in all
ITEM_CHARS = 300


@dataclass(frozen=True, slots=True)
class HookMoment:
    """Which session, in which client, and why the hook fired (a compaction, the session's or a turn's end)."""

    client: HookClient
    session_id: str
    event: str
    reason: str | None = None  # the client's trigger or reason, when it gives one


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _session_label(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]", "", session_id)[:64] or "session"


def checkpoint_request(
    record: SessionRecord, files: Sequence[str], *, project: str, moment: HookMoment, last_message: str | None = None
) -> dict[str, object] | None:
    """The `checkpoint` arguments a hook sends for this session, or None when there is nothing to hand off (no
    prompt, reply, open item or changed file) or the agent's own checkpoint already closed it.

    The summary opens with the session's first request (the handoff's title comes from it), then where it stopped
    (the last reply), later requests, the decisions recorded in Notewell and the files touched. Decisions are listed,
    not sent again as `decisions`: they are stored already, and a second pass through admission could only answer
    `duplicate` or raise a false conflict.
    """
    reply = record.last_reply or (last_message.strip() if last_message and last_message.strip() else None)
    if record.checkpointed or not (record.prompts or reply or record.open_items or files):
        return None
    client = CLIENTS[moment.client].label
    why = f"{moment.event}: {moment.reason}" if moment.reason else moment.event
    lines = [_clip(record.prompts[0], PROMPT_CHARS) if record.prompts else f"{client} session without a request."]
    lines += ["", f"{client} session {_session_label(moment.session_id)}, checkpointed by the Notewell hook ({why})."]
    if reply:
        lines.append(f"Where it stopped: {_clip(reply, REPLY_CHARS)}")
    later = record.prompts[1:][-MORE_PROMPTS:]
    if later:
        lines += ["Also asked:", *(f"- {_clip(p, PROMPT_CHARS)}" for p in later)]
    if record.decisions:
        lines += ["Decisions recorded:", *(f"- {_clip(d, PROMPT_CHARS)}" for d in record.decisions)]
    if files:
        shown = ", ".join(files[:FILES_LISTED])
        more = f" (+{len(files) - FILES_LISTED} more)" if len(files) > FILES_LISTED else ""
        lines.append(f"Files touched (git): {shown}{more}")
    request: dict[str, object] = {"project": project, "summary": "\n".join(lines)}
    if record.open_items:
        request["openItems"] = [_clip(item, ITEM_CHARS) for item in record.open_items[:OPEN_ITEMS]]
    digest = request_digest(request)
    request["idempotencyKey"] = f"hook:{_session_label(moment.session_id)}:{digest}"
    return request


# ----- anchors for what a checkpoint files -------------------------------------------------------------------------

ANCHORS_PER_NOTE = 20  # a note takes this many anchors (rules.MAX_ANCHORS): the files with most lines changed
ANCHORED_KINDS = frozenset({"decision", "failed_approach"})  # checkpoint items made in this session's code


def lines_changed(*numstats: str) -> dict[str, int]:
    """Lines added and deleted per path, summed over `git diff|log --numstat -z --no-renames` outputs (`added TAB
    deleted TAB path` entries; a binary file's `-` counts nothing)."""
    counts: dict[str, int] = {}
    for numstat in numstats:
        for entry in numstat.split("\0"):
            added, _, rest = entry.lstrip("\n").partition("\t")
            deleted, _, path = rest.partition("\t")
            if path:
                counts[path] = counts.get(path, 0) + sum(int(n) for n in (added, deleted) if n.isdigit())
    return counts


def most_changed(paths: Iterable[str], changed: Mapping[str, int]) -> list[str]:
    """`paths` with the most lines changed first; ties keep their order."""
    return sorted(paths, key=lambda path: -changed.get(path, 0))


def whole_file_anchor(repo: str, path: str, commit: str, hashed: str) -> dict[str, object]:
    """The anchor `notewell anchor PATH` makes of a whole file (rules.anchor_json): its content is the file, so its
    contentHash is its fileHash."""
    return {"repo": repo, "path": path, "commit": commit, "contentHash": hashed, "fileHash": hashed}


def filed_notes(result: Mapping[str, object]) -> list[str]:
    """The notes a checkpoint's answer (structuredContent) made of this session's code: the handoff, and the decisions
    and failed approaches it filed as new notes (an open item is work still to do; an updated note predates it)."""
    handoff = result.get("handoff")
    ids = [handoff["id"]] if isinstance(handoff, dict) and isinstance(handoff.get("id"), str) else []
    items = result.get("items")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("kind") not in ANCHORED_KINDS or item.get("status") != "created":
            continue
        if isinstance(item.get("id"), str):
            ids.append(item["id"])
    return ids


def request_digest(request: Mapping[str, object]) -> str:
    """A short fingerprint of a checkpoint's content: the same content is never sent twice for a session."""
    content = {k: v for k, v in request.items() if k != "idempotencyKey"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


# ----- credentials from a client's MCP configuration -----------------------------------------------------------------

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def same_endpoint(left: str, right: str) -> bool:
    """Whether two MCP URLs name the same endpoint (scheme and host in any case, a trailing slash or not)."""

    def norm(url: str) -> str:
        scheme, _, rest = url.strip().partition("://")
        host, _, path = rest.partition("/")
        return f"{scheme.lower()}://{host.lower()}/{path.rstrip('/')}"

    return norm(left) == norm(right)


def expand(value: str, environ: Mapping[str, str]) -> str:
    """`${VAR}` (Claude Code's .mcp.json) and `${env:VAR}` (Cursor's mcp.json) replaced by the variable's value."""
    return _VARIABLE.sub(lambda match: environ.get(match.group(1), ""), value)


def _bearer(header: object) -> str | None:
    if not isinstance(header, str):
        return None
    scheme, _, token = header.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _header(headers: object, name: str) -> object:
    if isinstance(headers, dict):
        return next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == name), None)
    return None


def bearer_in_servers(servers: object, url: str, environ: Mapping[str, str]) -> str | None:
    """The bearer token a client's MCP server list sends to `url`: an `Authorization` header (Claude Code and Cursor
    `headers`, Codex `http_headers`), Codex `env_http_headers` (header → variable) or `bearer_token_env_var`."""
    if not isinstance(servers, dict):
        return None
    for entry in servers.values():
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str) or not same_endpoint(entry["url"], url):
            continue
        for headers in (entry.get("headers"), entry.get("http_headers")):
            header = _header(headers, "authorization")
            token = _bearer(expand(header, environ)) if isinstance(header, str) else None
            if token:
                return token
        variable = _header(entry.get("env_http_headers"), "authorization")
        token = _bearer(environ.get(variable, "")) if isinstance(variable, str) else None
        variable = entry.get("bearer_token_env_var")
        token = token or (environ.get(variable, "").strip() or None if isinstance(variable, str) else None)
        if token:
            return token
    return None


def bearer_in_claude_oauth(credentials: object, url: str, now_ms: int) -> str | None:
    """An unexpired access token Claude Code holds for `url` after an OAuth sign-in (`mcpOAuth` in its credentials
    file). Never refreshed here: Notewell rotates refresh tokens, and a second user of one would revoke the client's."""
    entries = credentials.get("mcpOAuth") if isinstance(credentials, dict) else None
    if not isinstance(entries, dict):
        return None
    for entry in entries.values():
        if not isinstance(entry, dict) or not same_endpoint(str(entry.get("serverUrl", "")), url):
            continue
        token, expires = entry.get("accessToken"), entry.get("expiresAt")
        if isinstance(token, str) and token and (not isinstance(expires, int | float) or expires > now_ms):
            return token
    return None
