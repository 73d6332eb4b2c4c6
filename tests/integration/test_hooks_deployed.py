"""The same hook commands against a deployed stack: the MCP Lambda function (on DynamoDB, moto) behind a loopback
stand-in for API Gateway, which turns each HTTP request into the payload-v2 event API Gateway would send."""

from __future__ import annotations

import base64
import json
import os
import string
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

from functions.mcp import app as mcp_function
from notewell.domain.model import NoteType
from tests.integration.test_lambda_handler import HOST, FakeContext, lambda_env  # noqa: F401 - the fixture

if TYPE_CHECKING:
    from collections.abc import Iterator

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks" / "claude-code"
HOOK_SECONDS = 15.0


class ApiGateway(BaseHTTPRequestHandler):
    """POST /mcp → the function, as API Gateway (HTTP API, $default stage) invokes it."""

    requests = 0

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        ApiGateway.requests += 1
        body = self.rfile.read(int(self.headers["content-length"]))
        headers = {name.lower(): value for name, value in self.headers.items()}
        headers["host"] = HOST  # the stack's own name, which its Host check allows
        http = {"method": "POST", "path": self.path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.9",
                "userAgent": headers.get("user-agent", "")}  # fmt: skip
        context = {"domainName": HOST, "http": http, "requestId": f"hook-{ApiGateway.requests}",
                   "routeKey": "POST /mcp", "stage": "$default"}  # fmt: skip
        event = {"version": "2.0", "routeKey": "POST /mcp", "rawPath": self.path, "rawQueryString": "",
                 "headers": headers, "requestContext": context, "isBase64Encoded": True,
                 "body": base64.b64encode(body).decode()}  # fmt: skip
        response = mcp_function.handler(event, FakeContext(f"hook-{ApiGateway.requests}"))
        payload = response.get("body") or ""
        raw = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
        self.send_response(response["statusCode"])
        for name, value in response.get("headers", {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        """Quiet: the test reads the hook's log instead."""


def hook(gateway: HTTPServer, action: str, payload: str, env: dict[str, str], cwd: Path) -> str:
    """Run the hook process while serving its requests here, on this thread, where the function's event loop is."""
    url = f"http://127.0.0.1:{gateway.server_address[1]}/mcp"
    command = [sys.executable, "-m", "notewell.entrypoints.hooks", action, "--client", "claude-code",
               "--project", "billing-api", "--url", url]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd, text=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(payload)
    process.stdin.close()
    ends = time.monotonic() + HOOK_SECONDS
    while process.poll() is None and time.monotonic() < ends:
        gateway.handle_request()  # returns after gateway.timeout when no request came
    out = process.stdout.read()
    process.stdout.close()
    assert process.wait(HOOK_SECONDS) == 0
    return out


def gateway_server() -> Iterator[HTTPServer]:
    server = HTTPServer(("127.0.0.1", 0), ApiGateway)
    server.timeout = 0.05
    try:
        yield server
    finally:
        server.server_close()


def test_a_session_is_briefed_and_checkpointed_by_a_deployed_stack(lambda_env: str, tmp_path: Path) -> None:  # noqa: F811
    services = mcp_function._runtime()[1]
    principal = services.auth.authenticate(lambda_env)
    assert principal is not None
    services.notes.create(principal, "billing-api", title="Never log card numbers",
                          body="Never log full card numbers.", type=NoteType.CONSTRAINT)  # fmt: skip
    env = {"HOME": str(tmp_path), "NOTEWELL_HOME": str(tmp_path / "nh"), "PATH": os.environ.get("PATH", ""),
           "NOTEWELL_API_KEY": lambda_env}  # fmt: skip
    transcript = tmp_path / "session.jsonl"
    transcript.write_text((FIXTURES / "transcript.jsonl").read_text())

    def payload(event: str) -> str:
        text = (FIXTURES / f"{event}.json").read_text()
        return string.Template(text).substitute(TRANSCRIPT=str(transcript), CWD=str(tmp_path))

    for gateway in gateway_server():
        started = hook(gateway, "context", payload("SessionStart"), env, tmp_path)
        hook(gateway, "checkpoint", payload("SessionEnd"), env, tmp_path)

    context = json.loads(started)["hookSpecificOutput"]["additionalContext"]
    assert "Never log full card numbers" in context
    assert not (tmp_path / "nh" / "hooks" / "hooks.log").exists()
    found = services.search.run(principal, "billing-api", "handoff")
    (handoff,) = [hit for hit in found.hits if hit.note.type is NoteType.HANDOFF]
    assert handoff.note.title == "Handoff: Cap webhook retries at 3 and make the delay exponential"
