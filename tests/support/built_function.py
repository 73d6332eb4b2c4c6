"""The MCP function as `sam build` makes it (its app.py and the CoreLayer's python/), run in a fresh Python process
against DynamoDB served over HTTP: what the deploy-preparation test checks and the cold-start bench times."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from moto.server import ThreadedMotoServer

from notewell.adapters.dynamodb import DynamoDBStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from tests.support.dynamo import table_spec

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from notewell.bootstrap import Services

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"  # the Host header the events in events/ carry
CURSOR_SECRET = "built-function-cursor"

# The child: imports the function as a cold container does, invokes it with each event read from stdin, and
# prints the answers with the time the import and each invocation took.
INVOKE = r"""
import json, os, sys, time
events = json.loads(sys.stdin.read())
started = time.perf_counter()
sys.path.insert(0, os.environ["FUNCTION_DIR"])
import app
imported = time.perf_counter()
class Context:
    function_name = "McpFunction"; memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"
    def __init__(self, n): self.aws_request_id = f"built-{n}"
    def get_remaining_time_in_millis(self): return 29000
answers, call_ms = [], []
for n, event in enumerate(events):
    before = time.perf_counter()
    answers.append(app.handler(event, Context(n)))
    call_ms.append((time.perf_counter() - before) * 1000)
import gc
print(json.dumps({"import_ms": (imported - started) * 1000, "call_ms": call_ms, "answers": answers,
                  "gc_enabled": gc.isenabled(), "gc_frozen": gc.get_freeze_count(),
                  "mcp_client": "mcp.client" in sys.modules}))
"""


@contextlib.contextmanager
def dynamodb_server() -> Iterator[str]:
    """moto's server on a free loopback port, for processes of their own: its endpoint."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()  # returns once it accepts connections
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def host_platform() -> str:
    """The wheel platform of this machine, for a layer that must run here."""
    return "manylinux2014_aarch64" if platform.machine() in ("aarch64", "arm64") else "manylinux2014_x86_64"


def signed_up(endpoint: str, table: str) -> tuple[Services, str]:
    """The table from template.yaml at `endpoint`, a workspace and a key: the services on it and the key."""
    client = boto3.client(
        "dynamodb", region_name="us-east-1", endpoint_url=endpoint,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    client.create_table(TableName=table, **table_spec())
    services = bootstrap(Settings(backend="dynamodb", table_name=table, cursor_secret=CURSOR_SECRET),
                         store=DynamoDBStore(client, table))  # fmt: skip
    secret = services.auth.create_key(services.auth.create_workspace("built").id).secret
    return services, secret


def events_with_key(names: Sequence[str], secret: str) -> list[dict[str, Any]]:
    events = []
    for name in names:
        event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
        event["headers"]["authorization"] = f"Bearer {secret}"
        events.append(event)
    return events


def function_environment(layer: Path, function_dir: Path, endpoint: str, table: str) -> dict[str, str]:
    """What template.yaml gives the function, with the layer on the path and DynamoDB at `endpoint`."""
    return {
        "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(layer), "PYTHONDONTWRITEBYTECODE": "1", "FUNCTION_DIR": str(function_dir),
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
        "NOTEWELL_BACKEND": "dynamodb", "NOTEWELL_TABLE": table, "NOTEWELL_DYNAMODB_ENDPOINT": endpoint,
        "NOTEWELL_CURSOR_SECRET": CURSOR_SECRET, "NOTEWELL_ALLOWED_HOSTS": HOST,
        "NOTEWELL_METRICS": "emf", "POWERTOOLS_METRICS_NAMESPACE": "Notewell", "LOG_LEVEL": "WARNING",
        "AWS_LAMBDA_FUNCTION_NAME": f"notewell-{function_dir.name}",  # Lambda always sets it; app.py checks it
    }  # fmt: skip


def invoke(
    python: str, env: dict[str, str], events: Sequence[dict[str, Any]], *, flags: Sequence[str] = ()
) -> tuple[dict[str, Any], str]:
    """Run the function once in a fresh `python` process: its report (answers, import_ms, call_ms) and stderr."""
    done = subprocess.run(
        [python, *flags, "-c", INVOKE], input=json.dumps(list(events)), env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report, done.stderr
