"""Cold start of the MCP function, by proxy: a fresh Python process of the Lambda runtime's version (3.13) with the
layer as scripts/build_layer.py builds it, importing functions/mcp/app.py and answering its first call (a
search_notes tools/call from events/) against DynamoDB served by moto's server over HTTP.

Measured with and without precompiled bytecode (Lambda's /opt is read-only: without it every cold start compiles
every module it imports), RUNS fresh processes each, median reported. Also the layer's size, unzipped and zipped,
as built for the deployed architecture (arm64), and the modules whose import costs most (python -X importtime).

Wall-clock figures of this machine, not Lambda's: compare them with each other (bytecode vs source, before vs after
a change), and with the issue's target for the same proxy (import plus first call <= 800 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from scripts.build_layer import RUNTIME_VERSION, build, runtime_python

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "functions" / "mcp"
EVENT = ROOT / "events" / "mcp_modern_search_notes.json"
TABLE = "notewell-cold-start"
HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
# (label, bytecode, third-party sources removed): as deployed, as the layer was before (source only), and the
# deployed one with sources kept beside the bytecode, to show that shipping bytecode alone costs no time.
VARIANTS = (("bytecode", True, True), ("bytecode+src", True, False), ("source only", False, False))
RUNS = 9  # wall-clock on a shared machine wanders: the median of 9 holds still within ~5 %

# Run in the child: the timings of one cold container.
CHILD = r"""
import json, os, sys, time
started = time.perf_counter()
sys.path.insert(0, os.environ["FUNCTION_DIR"])
import app
imported = time.perf_counter()
event = json.loads(os.environ["COLD_EVENT"])
class Context:
    function_name = "McpFunction"; memory_limit_in_mb = 1024; aws_request_id = "cold-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"
    def get_remaining_time_in_millis(self): return 29000
answer = app.handler(event, Context())
answered = time.perf_counter()
assert answer["statusCode"] == 200, answer
print(json.dumps({"import_ms": (imported - started) * 1000, "first_call_ms": (answered - imported) * 1000}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def host_platform() -> str:
    return "manylinux2014_aarch64" if platform.machine() in ("aarch64", "arm64") else "manylinux2014_x86_64"


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def zipped_bytes(path: Path) -> int:
    """The layer as `sam deploy` uploads it: a deflated zip with python/ at its root."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "layer.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as out:
            for file in sorted(path.rglob("*")):
                if file.is_file():
                    out.write(file, Path("python") / file.relative_to(path))
        return archive.stat().st_size


def start_dynamodb(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("moto_server did not start")


def environment(port: int, layer: Path, secret: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(layer), "PYTHONDONTWRITEBYTECODE": "1", "FUNCTION_DIR": str(FUNCTION),
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
        "NOTEWELL_BACKEND": "dynamodb", "NOTEWELL_TABLE": TABLE,
        "NOTEWELL_DYNAMODB_ENDPOINT": f"http://127.0.0.1:{port}", "NOTEWELL_CURSOR_SECRET": "cold-start-cursor",
        "NOTEWELL_ALLOWED_HOSTS": HOST, "NOTEWELL_METRICS": "emf", "POWERTOOLS_METRICS_NAMESPACE": "Notewell",
        "LOG_LEVEL": "INFO",
        "COLD_EVENT": json.dumps(event_with(secret)),
    }  # fmt: skip


def event_with(secret: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads(EVENT.read_text())
    event["headers"]["authorization"] = f"Bearer {secret}"
    return event


def seed(port: int) -> str:
    """The table from template.yaml, a workspace, a key and a note to find; returns the key."""
    import boto3

    from notewell.adapters.dynamodb import DynamoDBStore
    from notewell.bootstrap import bootstrap
    from notewell.config import Settings
    from tests.support.dynamo import table_spec

    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "dynamodb", region_name="us-east-1", endpoint_url=endpoint,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    client.create_table(TableName=TABLE, **table_spec())
    services = bootstrap(Settings(backend="dynamodb", table_name=TABLE, cursor_secret="x"),
                         store=DynamoDBStore(client, TABLE))  # fmt: skip
    workspace = services.auth.create_workspace("cold")
    secret = services.auth.create_key(workspace.id).secret
    principal = services.auth.authenticate(secret)
    assert principal is not None
    services.notes.create(principal, "demo", title="Use SAM for deploys", body="We deploy with SAM.")
    return secret


def measure(python: str, layer: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        done = subprocess.run([python, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    imports = [s["import_ms"] for s in samples]
    calls = [s["first_call_ms"] for s in samples]
    totals = [s["import_ms"] + s["first_call_ms"] for s in samples]
    return {"import_ms": statistics.median(imports), "first_call_ms": statistics.median(calls),
            "total_ms": statistics.median(totals), "max_total_ms": max(totals)}  # fmt: skip


def heaviest_imports(python: str, env: dict[str, str], top: int = 12) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (ms) in one cold import of the function."""
    done = subprocess.run([python, "-X", "importtime", "-c", CHILD], env=env, capture_output=True, text=True)
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        if not cumulative.isdigit() or name.startswith(" ") or "." in name.strip():
            continue
        by_package[name.strip()] = by_package.get(name.strip(), 0.0) + int(cumulative) / 1000
    return sorted(by_package.items(), key=lambda item: -item[1])[:top]


def run(runs: int) -> dict[str, Any]:
    python = runtime_python(RUNTIME_VERSION)
    version = RUNTIME_VERSION
    if python is None:  # measure with what there is, and say so
        python, version = sys.executable, f"{sys.version_info[0]}.{sys.version_info[1]}"
    results: dict[str, Any] = {"python": python, "python_version": version, "runs": runs}
    with tempfile.TemporaryDirectory(prefix="notewell-cold-") as tmp:
        deployed = Path(tmp) / "arm64" / "python"
        report = build(deployed, python_version=RUNTIME_VERSION, platform="manylinux2014_aarch64")
        results["layer"] = {"unzipped_mb": round(directory_bytes(deployed) / 1e6, 1),
                            "zipped_mb": round(zipped_bytes(deployed) / 1e6, 1),
                            "pruned_mb": round(int(str(report["pruned_bytes"])) / 1e6, 1),
                            "bytecode": report["bytecode"]}  # fmt: skip
        port = free_port()
        server = start_dynamodb(port)
        try:
            secret = seed(port)
            for label, bytecode, sourceless in VARIANTS:
                layer = Path(tmp) / label.replace(" ", "-") / "python"
                build(layer, python_version=version, platform=host_platform(), bytecode=bytecode, sourceless=sourceless)
                env = environment(port, layer, secret)
                results[label] = measure(python, layer, env, runs)
                if bytecode:
                    results["heaviest_imports_ms"] = heaviest_imports(python, env)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return results


def report(results: dict[str, Any]) -> str:
    layer = results["layer"]
    lines = [
        f"=== Cold start (proxy): fresh python {results['python_version']} process, built layer, moto server ===",
        f"  {'layer':<12} {'import ms':>10} {'first call ms':>14} {'total ms':>9} {'worst ms':>9}",
    ]
    for label, _, _ in VARIANTS:
        r = results[label]
        lines.append(f"  {label:<12} {r['import_ms']:>10.0f} {r['first_call_ms']:>14.0f} {r['total_ms']:>9.0f} "
                     f"{r['max_total_ms']:>9.0f}")  # fmt: skip
    ratio = results["source only"]["total_ms"] / results["bytecode"]["total_ms"]
    lines.append(f"  bytecode makes import plus first call {ratio:.1f}x faster (median of {results['runs']} runs each)")
    lines.append(
        f"  layer as deployed (arm64, python3.13): {layer['unzipped_mb']} MB unzipped, {layer['zipped_mb']} MB zipped "
        f"(-{layer['pruned_mb']} MB pruned: unused botocore models and Powertools parts, third-party sources beside "
        f"their bytecode; bytecode: {layer['bytecode']})"
    )
    heavy = ", ".join(f"{name} {ms:.0f}" for name, ms in results["heaviest_imports_ms"])
    lines.append(f"  heaviest imports (ms, cumulative): {heavy}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures as JSON here.")
    args = parser.parse_args(argv)
    results = run(args.runs)
    print(report(results))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
