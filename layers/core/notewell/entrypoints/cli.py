"""`notewell` command line: serve | keys create|list|revoke."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from notewell.bootstrap import Services, bootstrap
from notewell.config import ConfigError, Settings, default_data_dir
from notewell.domain.errors import NotewellError
from notewell.entrypoints.wire import KeyOut

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.model import Workspace
    from notewell.services.auth import IssuedKey

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="notewell", description="Durable project memory for AI coding agents.")
    verbs = parser.add_subparsers(dest="verb", required=True)

    serve = verbs.add_parser("serve", help="Run the MCP endpoint on the embedded SQLite store.")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"Interface to listen on (default {DEFAULT_HOST}).")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"Port (default {DEFAULT_PORT}).")
    serve.add_argument("--log-level", default="WARNING", help="Log level of the JSON request log (default WARNING).")
    _common(serve)

    keys = verbs.add_parser("keys", help="Create, list or revoke API keys.")
    key_verbs = keys.add_subparsers(dest="key_verb", required=True)
    create = key_verbs.add_parser("create", help="Create an API key (the secret is shown once).")
    create.add_argument("--project", default=None, help="Limit the key to one project (slug).")
    create.add_argument("--read-only", action="store_true", help="The key can read but not write.")
    create.add_argument("--name", default="", help="A label to recognise the key by.")
    create.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    listing = key_verbs.add_parser("list", help="List API keys (never their secrets).")
    listing.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    revoke = key_verbs.add_parser("revoke", help="Revoke an API key by id.")
    revoke.add_argument("id", help="Key id, as shown by 'notewell keys list'.")
    revoke.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    for sub in (create, listing, revoke):
        _common(sub)
        _backend(sub)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    environ = dict(os.environ)
    if getattr(args, "backend", None):
        environ["NOTEWELL_BACKEND"] = args.backend
    if getattr(args, "table", None):
        environ["NOTEWELL_TABLE"] = args.table
    settings = Settings.from_env(environ)
    data_dir = args.data_dir if args.data_dir is not None else default_data_dir(environ)
    return Settings(
        backend=settings.backend,
        data_dir=data_dir,
        table_name=settings.table_name,
        aws_region=settings.aws_region,
        dynamodb_endpoint=settings.dynamodb_endpoint,
        allowed_hosts=settings.allowed_hosts,
        cursor_secret=settings.cursor_secret,
    )


def connection_help(url: str, secret: str) -> str:
    config = {
        "mcpServers": {"notewell": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {secret}"}}}
    }
    return (
        f"API key (shown once, store it now): {secret}\n\n"
        "Connect Claude Code:\n"
        f'  claude mcp add --transport http notewell {url} --header "Authorization: Bearer {secret}"\n\n'
        "Other MCP clients (JSON config):\n"
        f"{json.dumps(config, indent=2)}\n"
    )


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from notewell.entrypoints.http import build_app
    from notewell.entrypoints.logs import configure_logging
    from notewell.entrypoints.mcp_tools import build_server

    settings = _settings(args)
    services = bootstrap(settings)
    configure_logging(args.log_level, stream=sys.stderr)
    workspace, created = services.auth.default_workspace()
    url = f"http://{args.host}:{args.port}/mcp"
    print(f"Notewell serving {url} (data: {settings.data_dir})", flush=True)
    if created:
        issued = services.auth.create_key(workspace.id, name="first key")
        print("First start: created a workspace and an API key.\n", flush=True)
        print(connection_help(url, issued.secret), flush=True)
    else:
        print("More keys: notewell keys create (see --help).", flush=True)
    hosts = ["127.0.0.1", "localhost", *([args.host] if args.host not in ("127.0.0.1", "localhost") else [])]
    app = build_app(build_server(services), services, allowed_hosts=hosts)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def _workspace(services: Services, args: argparse.Namespace) -> Workspace:
    if args.workspace:
        found = services.deps.store.get_workspace(args.workspace)
        if found is None:
            raise NotewellError(f"No workspace {args.workspace}; omit --workspace to use the only one.")
        return found
    workspace, _ = services.auth.default_workspace()
    return workspace


def _key_json(services: Services, issued: IssuedKey | None, out: KeyOut) -> dict[str, object]:
    data = out.model_dump(by_alias=True)
    if issued is not None:
        data["secret"] = issued.secret
    return data


def _keys(args: argparse.Namespace) -> int:
    services = bootstrap(_settings(args))
    workspace = _workspace(services, args)
    auth = services.auth
    if args.key_verb == "create":
        issued = auth.create_key(workspace.id, name=args.name, project=args.project, read_only=args.read_only)
        out = KeyOut.of(issued.key, issued.project)
        if args.json:
            print(json.dumps(_key_json(services, issued, out)))
        else:
            scope = f"project {issued.project}" if issued.project else "whole workspace"
            mode = "read-only" if issued.key.read_only else "read-write"
            print(f"Created key {issued.key.id} ({scope}, {mode}).")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.verb == "serve":
            return _serve(args)
        return _keys(args)
    except (NotewellError, ConfigError) as exc:
        print(f"notewell: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
