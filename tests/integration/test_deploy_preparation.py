"""The README's deploy preparation, offline: `sam validate --lint` and `sam build` with the SAM CLI the project
installs (`make sam`), on this machine as the README sets it up (any Python 3.11+, the package registry), then
the built MCP function (its app.py and the built CoreLayer) invoked with the API Gateway events in events/ in a
fresh Python process, against DynamoDB served by moto over HTTP.

The layer is built for this machine's platform and interpreter (NOTEWELL_LAYER_PLATFORM, ..._PYTHON_VERSION,
read by scripts/build_layer.py) so that it can run here; template.yaml builds it for arm64 and python3.13."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from notewell.adapters.dynamodb import DynamoDBStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from scripts.build_layer import BOTOCORE_SERVICES, DEFAULT_PLATFORM, RUNTIME_VERSION, runtime_python
from tests.support.dynamo import table_spec

ROOT = Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv-sam" / "bin" / "sam"
EVENTS = ROOT / "events"
TABLE = "notewell-built"
HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"

INVOKE = r"""
import json, os, sys
sys.path.insert(0, os.environ["FUNCTION_DIR"])
import app
class Context:
    function_name = "McpFunction"; memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"
    def __init__(self, n): self.aws_request_id = f"built-{n}"
    def get_remaining_time_in_millis(self): return 29000
answers = [app.handler(event, Context(n)) for n, event in enumerate(json.loads(sys.stdin.read()))]
print(json.dumps(answers))
"""


def sam(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert SAM.exists(), f"{SAM} is missing: `make sam` installs the SAM CLI (make test does)"
    return subprocess.run(
        [str(SAM), *args], cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0", **(env or {})},
    )  # fmt: skip


@pytest.fixture(scope="module")
def interpreter() -> tuple[str, str]:
    """The runtime's Python when this machine has one, else the one running the tests (and its version)."""
    python = runtime_python(RUNTIME_VERSION)
    if python is not None:
        return python, RUNTIME_VERSION
    return sys.executable, f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, interpreter: tuple[str, str]) -> Path:
    machine = "manylinux2014_aarch64" if platform.machine() in ("aarch64", "arm64") else "manylinux2014_x86_64"
    build_dir = tmp_path_factory.mktemp("sam-build")
    done = sam(
        "build", "--build-dir", str(build_dir), "--region", "us-east-1",
        env={"NOTEWELL_LAYER_PLATFORM": machine, "NOTEWELL_LAYER_PYTHON_VERSION": interpreter[1]},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return build_dir


@pytest.fixture
def dynamodb() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        client = boto3.client(
            "dynamodb", region_name="us-east-1", endpoint_url=endpoint,
            aws_access_key_id="testing", aws_secret_access_key="testing",
        )  # fmt: skip
        client.create_table(TableName=TABLE, **table_spec())
        yield endpoint
    finally:
        server.stop()


def test_sam_validates_the_template_with_its_linter() -> None:
    done = sam("validate", "--lint", "--region", "us-east-1")
    assert done.returncode == 0 and "is a valid SAM Template" in done.stdout, done.stdout + done.stderr


def test_the_template_builds_the_layer_for_the_runtime_it_declares() -> None:
    template = (ROOT / "template.yaml").read_text()
    assert "Runtime: python3.13" in template and "Architectures: [arm64]" in template
    assert (RUNTIME_VERSION, DEFAULT_PLATFORM) == ("3.13", "manylinux2014_aarch64")  # what build_layer defaults to


def test_sam_build_makes_a_pruned_layer_and_handler_only_functions(built: Path) -> None:
    layer = built / "CoreLayer" / "python"
    assert (layer / "notewell" / "bootstrap.py").exists() and (layer / "mcp").is_dir()
    assert sorted(p.name for p in (layer / "botocore" / "data").iterdir() if p.is_dir()) == sorted(BOTOCORE_SERVICES)
    for function in ("McpFunction", "OAuthTokenFunction", "IndexerFunction"):
        assert sorted(p.name for p in (built / function).iterdir()) == ["app.py"]
    layer_bytes = sum(p.stat().st_size for p in layer.rglob("*") if p.is_file())
    assert layer_bytes < 250_000_000  # Lambda's limit for a function and its layers, unzipped


def test_the_built_function_answers_the_api_gateway_events(
    built: Path, dynamodb: str, interpreter: tuple[str, str]
) -> None:
    client = boto3.client(
        "dynamodb", region_name="us-east-1", endpoint_url=dynamodb,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    services = bootstrap(Settings(backend="dynamodb", table_name=TABLE, cursor_secret="built"),
                         store=DynamoDBStore(client, TABLE))  # fmt: skip
    secret = services.auth.create_key(services.auth.create_workspace("built").id).secret
    events: list[dict[str, Any]] = []
    for name in ("mcp_modern_tools_list", "mcp_legacy_create_note", "mcp_modern_search_notes"):
        event = json.loads((EVENTS / f"{name}.json").read_text())
        event["headers"]["authorization"] = f"Bearer {secret}"
        events.append(event)
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(built / "CoreLayer" / "python"), "FUNCTION_DIR": str(built / "McpFunction"),
        "PYTHONDONTWRITEBYTECODE": "1", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1", "NOTEWELL_BACKEND": "dynamodb", "NOTEWELL_TABLE": TABLE,
        "NOTEWELL_DYNAMODB_ENDPOINT": dynamodb, "NOTEWELL_CURSOR_SECRET": "built", "NOTEWELL_ALLOWED_HOSTS": HOST,
        "NOTEWELL_METRICS": "emf", "LOG_LEVEL": "WARNING",
    }  # fmt: skip
    done = subprocess.run(
        [interpreter[0], "-c", INVOKE], input=json.dumps(events), env=env, capture_output=True, text=True,
        timeout=120, cwd=built,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    assert [a["statusCode"] for a in answers] == [200, 200, 200]
    tools = json.loads(answers[0]["body"])["result"]["tools"]
    assert {"get_context", "remember", "search_notes"} <= {t["name"] for t in tools}
    found = json.loads(answers[2]["body"])["result"]["structuredContent"]
    assert [r["title"] for r in found["results"]] == ["Use SAM for deploys"]
