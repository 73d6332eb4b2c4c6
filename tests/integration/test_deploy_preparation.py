"""The README's deploy preparation, offline: `sam validate --lint` and `sam build` with the SAM CLI the project
installs (`make sam`), on this machine as the README sets it up (any Python 3.11+, the package registry), then
the built MCP function (its app.py and the built CoreLayer) invoked with the API Gateway events in events/ in a
fresh Python process, against DynamoDB served by moto over HTTP.

The layer is built for this machine's platform and interpreter (NOTEWELL_LAYER_PLATFORM, ..._PYTHON_VERSION,
read by scripts/build_layer.py) so that it can run here; template.yaml builds it for arm64 and python3.13."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.build_layer import BOTOCORE_SERVICES, DEFAULT_PLATFORM, RUNTIME_VERSION, runtime_python
from tests.support.built_function import (
    EVENTS,
    dynamodb_server,
    events_with_key,
    function_environment,
    host_platform,
    invoke,
    signed_up,
)

ROOT = Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv-sam" / "bin" / "sam"
TABLE = "notewell-built"


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
    machine = host_platform()
    build_dir = tmp_path_factory.mktemp("sam-build")
    done = sam(
        "build", "--build-dir", str(build_dir), "--region", "us-east-1",
        env={"NOTEWELL_LAYER_PLATFORM": machine, "NOTEWELL_LAYER_PYTHON_VERSION": interpreter[1]},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return build_dir


@pytest.fixture
def dynamodb() -> Iterator[str]:
    with dynamodb_server() as endpoint:
        yield endpoint


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
    assert (layer / "notewell" / "domain" / "admission" / "data" / "units.json").is_file()  # the detectors' words
    assert sorted(p.name for p in (layer / "botocore" / "data").iterdir() if p.is_dir()) == sorted(BOTOCORE_SERVICES)
    endpoints = json.loads((layer / "botocore" / "data" / "endpoints.json").read_text())
    listed = {service for partition in endpoints["partitions"] for service in partition["services"]}
    assert listed == {"cloudformation", "dynamodb", "secretsmanager", "streams.dynamodb", "sts"}  # prefixes; no bedrock
    assert not list(layer.glob("uvicorn*")) and not list(layer.glob("click*"))  # `notewell serve`'s, not a function's
    for function in ("McpFunction", "ConsoleFunction", "OAuthTokenFunction", "IndexerFunction"):
        assert sorted(p.name for p in (built / function).iterdir()) == ["app.py"]
    layer_bytes = sum(p.stat().st_size for p in layer.rglob("*") if p.is_file())
    assert layer_bytes < 250_000_000  # Lambda's limit for a function and its layers, unzipped


def test_the_built_function_answers_the_api_gateway_events(
    built: Path, dynamodb: str, interpreter: tuple[str, str]
) -> None:
    _, secret = signed_up(dynamodb, TABLE)
    events = events_with_key(["mcp_modern_tools_list", "mcp_legacy_create_note", "mcp_modern_search_notes"], secret)
    env = function_environment(built / "CoreLayer" / "python", built / "McpFunction", dynamodb, TABLE)
    report = invoke(interpreter[0], env, events)[0]
    answers = report["answers"]
    assert [a["statusCode"] for a in answers] == [200, 200, 200]
    # Collection is off during the cold start only: after the first invocation it runs, its objects frozen.
    assert report["gc_enabled"] and report["gc_frozen"] > 10_000
    assert not report["mcp_client"]  # the SDK's client side is never imported into the function
    tools = json.loads(answers[0]["body"])["result"]["tools"]
    assert {"get_context", "remember", "search_notes"} <= {t["name"] for t in tools}
    found = json.loads(answers[2]["body"])["result"]["structuredContent"]
    assert [r["title"] for r in found["results"]] == ["Use SAM for deploys"]


def test_the_built_console_function_serves_a_signed_in_page(
    built: Path, dynamodb: str, interpreter: tuple[str, str]
) -> None:
    table = f"{TABLE}-console"  # moto's server keeps one set of tables per process
    services, secret = signed_up(dynamodb, table)
    principal = services.auth.authenticate(secret)
    assert principal is not None
    services.notes.create(principal, "demo", title="Use SAM for deploys", body="We deploy with SAM.")
    session = services.console.sign_in(secret)[1]
    home = json.loads((EVENTS / "console_home.json").read_text())
    page = json.loads((EVENTS / "console_project.json").read_text())
    page["cookies"] = [c.replace("REPLACE_WITH_SESSION", session) for c in page["cookies"]]
    env = function_environment(built / "CoreLayer" / "python", built / "ConsoleFunction", dynamodb, table)
    answers = invoke(interpreter[0], env, [home, page])[0]["answers"]
    assert [a["statusCode"] for a in answers] == [200, 200]
    assert "Sign in to the Notewell console" in answers[0]["body"] and "Use SAM for deploys" in answers[1]["body"]
