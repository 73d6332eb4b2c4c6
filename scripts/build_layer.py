#!/usr/bin/env python3
"""Build the core Lambda layer: the pinned requirements as wheels for the target runtime, the notewell package,
botocore's data pruned to the services Notewell calls, and precompiled bytecode.

`sam build` runs it through layers/core/Makefile (template.yaml: BuildMethod makefile), so building needs only
the Python that runs this script, whatever its version: pip fetches wheels for the runtime's version and platform
(--python-version, --platform), never building anything. `--resolve` only asks pip which wheels those would be
(a dry run: nothing downloaded but metadata, nothing installed) and fails naming each pin that has none, so a pin
with no arm64 wheel for Python 3.13 is found by `make test` (tests/integration/test_layer_resolve_aarch64.py), not
by `sam build` on the way to a deploy. Bytecode needs an interpreter of the runtime's version
(a .pyc is version-specific): found on PATH or under pyenv; without one the layer ships source only, and every cold
start compiles it (about a second: `make bench` shows the figure), which the build says.

Why each step (figures from `make bench`, tests/bench/cold_start.py):
- bytecode: Lambda's /opt is read-only, so nothing compiled at a cold start is kept for the next one;
- botocore's data holds API models for some 400 services (28 MB of the layer); Notewell calls five; its endpoint
  list, which every first client parses, names the same 400;
- uvicorn (and click, which only it uses) serves `notewell serve`, never a function: sse_starlette imports it when
  present, at every cold start;
- Powertools' event handlers and utilities are never imported (tests/integration/test_deploy_preparation.py runs
  the built function, logs and metrics included);
- third-party modules ship as bytecode alone (their pinned sources are on PyPI): the layer would otherwise carry
  each module twice. Tracebacks through them still name file and line; notewell keeps its source.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "layers" / "core" / "requirements.txt"
PACKAGE = ROOT / "layers" / "core" / "notewell"
# The AWS services whose API models the functions and the CLI load (botocore/data/<name>): the table, Bedrock
# embeddings, the stack's outputs and cursor secret (CLI), and STS (credential chains). OpenSearch Serverless is
# called over plain HTTPS with SigV4 (adapters/opensearch.py): no model needed.
BOTOCORE_SERVICES = ("dynamodb", "dynamodbstreams", "bedrock-runtime", "cloudformation", "secretsmanager", "sts")
# Powertools is pinned whole, but the functions use its logging formatter and metrics only: its event handlers
# and utilities (4 MB) are never imported. What they do import of `utilities`:
POWERTOOLS_UTILITIES_KEPT = ("__init__.py", "jmespath_utils", "typing")
# The local HTTP server and its command-line parser: `notewell serve` runs uvicorn, a function never does. The MCP
# SDK requires it but imports it only to run a server itself, and sse_starlette only tries to, to hook its shutdown
# (an ImportError it expects): shipping it costs every cold start ~20 ms of imports (make bench).
SERVER_ONLY = ("uvicorn", "click")
RUNTIME_VERSION = "3.13"  # template.yaml's Runtime
DEFAULT_PLATFORM = "manylinux2014_aarch64"  # template.yaml's Architectures: [arm64]
# Every wheel tag the arm64 runtime runs (Amazon Linux 2023, glibc 2.34): pip takes the first that a release has.
RUNTIME_PLATFORMS = (DEFAULT_PLATFORM, "manylinux_2_28_aarch64")
# pip's words when the index did not answer (as opposed to answering that a release has no such wheel).
_NO_ANSWER = re.compile(
    r"Retrying \(|connection broken|Could not fetch URL|NewConnectionError|NameResolution|timed out"
)
_NOT_FOUND = re.compile(r"No matching distribution found for (.+)|(ResolutionImpossible.*)")


def _platforms(platform: str | Sequence[str]) -> list[str]:
    """Platform tags, given as a list or comma-separated (NOTEWELL_LAYER_PLATFORM)."""
    given = platform.split(",") if isinstance(platform, str) else platform
    return [p.strip() for p in given if p.strip()]


def _wheels_for(python_version: str, platform: str | Sequence[str]) -> list[str]:
    """pip's options for wheels of the runtime, never a source build."""
    tags = [arg for tag in _platforms(platform) for arg in ("--platform", tag)]
    return ["--only-binary=:all:", "--implementation", "cp", "--python-version", python_version, *tags]


def install(target: Path, python_version: str, platform: str | Sequence[str]) -> None:
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            "--target", str(target), "--requirement", str(REQUIREMENTS), *_wheels_for(python_version, platform),
        ],
        check=True,
    )  # fmt: skip
    shutil.copytree(PACKAGE, target / "notewell", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


@dataclass(frozen=True, slots=True)
class Resolution:
    wheels: dict[str, str] = field(default_factory=dict)  # distribution -> the wheel pip would install
    missing: list[str] = field(default_factory=list)  # "pin: what pip found no wheel for", one per failing pin
    unreachable: str | None = None  # the index did not answer: nothing is known either way


def resolve(
    python_version: str = RUNTIME_VERSION, platform: str | Sequence[str] = RUNTIME_PLATFORMS,
    requirements: Path = REQUIREMENTS, *, index: Sequence[str] = (),
) -> Resolution:  # fmt: skip
    """Which wheel of each pin, and of what the pins require, the layer would get, asked of the package index
    without installing or building anything (`pip install --dry-run --report`). When that fails, each pin is asked
    alone, so that every pin without a wheel is named, not only the first. `index`: pip's index options, if not
    its configured ones."""
    done, report = _dry_run(python_version, platform, ["--requirement", str(requirements)], index)
    if done.returncode == 0:
        return Resolution(wheels={i["metadata"]["name"]: i["download_info"]["url"].rsplit("/", 1)[-1] for i in report})
    if _NO_ANSWER.search(done.stderr):
        return Resolution(unreachable=_last_error(done.stderr))
    missing = []
    for pin in _pins(requirements):
        alone, _ = _dry_run(python_version, platform, [pin], index)
        if alone.returncode != 0:
            found = _NOT_FOUND.search(alone.stderr)
            missing.append(f"{pin}: {(found.group(1) or found.group(2)) if found else _last_error(alone.stderr)}")
    return Resolution(missing=missing or [_last_error(done.stderr)])


def _dry_run(
    python_version: str, platform: str | Sequence[str], wanted: list[str], index: Sequence[str]
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="layer-resolve-") as scratch:
        report = Path(scratch) / "report.json"
        done = subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                "--disable-pip-version-check", "--report", str(report), "--target", str(Path(scratch) / "target"),
                "--retries", "1", "--timeout", "30", *index, *_wheels_for(python_version, platform), *wanted,
            ],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        installs = json.loads(report.read_text())["install"] if done.returncode == 0 else []
    return done, installs


def _pins(requirements: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in requirements.read_text().splitlines())
    return [line for line in lines if line]


def _last_error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("ERROR") or "Retrying" in line]
    return (errors or stderr.strip().splitlines() or ["pip failed and said nothing"])[-1]


def prune(target: Path) -> int:
    """Drop what no function imports or reads; returns the bytes removed."""
    removed = 0
    data = target / "botocore" / "data"
    for entry in data.iterdir():
        if entry.is_dir() and entry.name not in BOTOCORE_SERVICES:
            removed += _size(entry)
            shutil.rmtree(entry)
    removed += _prune_endpoints(data)
    powertools = target / "aws_lambda_powertools"
    unused = [powertools / "event_handler"] + [
        entry for entry in (powertools / "utilities").iterdir() if entry.name not in POWERTOOLS_UTILITIES_KEPT
    ]
    server_only = [entry for name in SERVER_ONLY for entry in (target / name, *target.glob(f"{name}-*.dist-info"))]
    for stale in [*unused, *server_only, *target.rglob("__pycache__"), target / "bin"]:
        if stale.is_dir():
            removed += _size(stale)
            shutil.rmtree(stale)
        elif stale.exists():
            removed += _size(stale)
            stale.unlink()
    return removed


def _prune_endpoints(data: Path) -> int:
    """endpoints.json lists every service of every partition (1.3 MB), and botocore parses it whole when it makes
    its first client (~10-20 ms of each cold start): keep the entries of the services left in `data`, found under
    their endpoint prefix (dynamodbstreams answers as streams.dynamodb)."""
    prefixes = set()
    for service in data.iterdir():
        for model in sorted(service.glob("*/service-2.json*"))[-1:]:  # the newest API version's model
            raw = model.read_bytes()
            metadata = json.loads(gzip.decompress(raw) if model.suffix == ".gz" else raw)["metadata"]
            prefixes.add(metadata.get("endpointPrefix", service.name))
    path = data / "endpoints.json"
    before = path.stat().st_size
    endpoints = json.loads(path.read_text())
    for partition in endpoints["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in prefixes}
    path.write_text(json.dumps(endpoints, separators=(",", ":")))
    return before - path.stat().st_size


def runtime_python(version: str) -> str | None:
    """An interpreter of the runtime's version, for bytecode: NOTEWELL_LAYER_PYTHON, PATH, then pyenv's."""
    explicit = os.environ.get("NOTEWELL_LAYER_PYTHON")
    candidates = [explicit] if explicit else []
    candidates.append(shutil.which(f"python{version}"))
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / f"python{version}") for p in sorted(pyenv.glob(f"{version}.*"), reverse=True)]
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


def compile_bytecode(target: Path, python: str, *, sourceless: bool) -> int:
    """Precompile everything; with `sourceless`, third-party modules keep only their bytecode, beside where the
    source was (`module.pyc`, which Python imports when `module.py` is absent), while notewell keeps its source for
    readable tracebacks. Returns the bytes of source removed."""
    # unchecked-hash: a .pyc is used without comparing the source's mtime (the zip does not keep it).
    common = [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash"]
    if not sourceless:
        subprocess.run([*common, str(target)], check=True)
        return 0
    subprocess.run([*common, str(target / "notewell")], check=True)
    others = [str(p) for p in target.iterdir() if p.name != "notewell" and (p.is_dir() or p.suffix == ".py")]
    subprocess.run([*common, "-b", *others], check=True)  # -b: module.pyc beside module.py
    removed = 0
    for source in target.rglob("*.py"):
        if source.is_relative_to(target / "notewell") or not source.with_suffix(".pyc").exists():
            continue
        removed += source.stat().st_size
        source.unlink()
    return removed


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(
    target: Path, *, python_version: str, platform: str | Sequence[str], bytecode: bool = True, sourceless: bool = True
) -> dict[str, object]:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    install(target, python_version, platform)
    pruned = prune(target)
    python = runtime_python(python_version) if bytecode else None
    if python is not None:
        pruned += compile_bytecode(target, python, sourceless=sourceless)
    elif bytecode:
        print(
            f"build_layer: no python{python_version} found (PATH, pyenv or NOTEWELL_LAYER_PYTHON): the layer has no "
            "bytecode, so each cold start compiles it",
            file=sys.stderr,
        )
    return {"bytes": _size(target), "pruned_bytes": pruned, "bytecode": python is not None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, nargs="?", help="Directory to fill (the layer's python/ directory).")
    parser.add_argument("--python-version", default=os.environ.get("NOTEWELL_LAYER_PYTHON_VERSION", RUNTIME_VERSION))
    parser.add_argument(
        "--platform", default=os.environ.get("NOTEWELL_LAYER_PLATFORM", ",".join(RUNTIME_PLATFORMS)),
        help="Wheel platform tags, comma-separated.",
    )  # fmt: skip
    parser.add_argument("--resolve", action="store_true", help="Only name the wheels pip would install (a dry run).")
    parser.add_argument("--no-bytecode", action="store_true", help="Ship source only (for measuring the difference).")
    parser.add_argument(
        "--keep-sources", action="store_true", help="Keep third-party sources beside their bytecode (a bigger layer)."
    )
    args = parser.parse_args(argv)
    if args.resolve:
        return _print_resolution(resolve(args.python_version, args.platform))
    if args.target is None:
        parser.error("give the directory to fill, or --resolve")
    report = build(
        args.target, python_version=args.python_version, platform=args.platform, bytecode=not args.no_bytecode,
        sourceless=not args.keep_sources,
    )  # fmt: skip
    print(f"build_layer: {args.target}: {report['bytes'] / 1e6:.1f} MB, bytecode {report['bytecode']}", file=sys.stderr)
    return 0


def _print_resolution(found: Resolution) -> int:
    if found.unreachable is not None:
        print(f"build_layer: the package index did not answer: {found.unreachable}", file=sys.stderr)
        return 2
    for problem in found.missing:
        print(f"build_layer: no wheel for the runtime: {problem}", file=sys.stderr)
    for name, wheel in sorted(found.wheels.items()):
        print(f"{name}: {wheel}")
    return 1 if found.missing else 0


if __name__ == "__main__":
    sys.exit(main())
