"""Cold start of the MCP function, by proxy: a fresh Python process of the Lambda runtime's version (3.13) with the
layer as scripts/build_layer.py builds it, importing functions/mcp/app.py and answering its first call (a
search_notes tools/call from events/) against DynamoDB served by moto's server over HTTP
(tests/support/built_function.py).

Measured with and without precompiled bytecode (Lambda's /opt is read-only: without it every cold start compiles
every module it imports), RUNS fresh processes each, median reported. Also the layer's size, unzipped and zipped,
as built for the deployed architecture (arm64), and the modules whose import costs most (python -X importtime).

Wall-clock figures of this machine, not Lambda's: compare them with each other (bytecode vs source, before vs after
a change), and with the issue's target for the same proxy (import plus first call <= 800 ms). With `--against REF`
the deployed build of another commit runs in the same rounds, and the report gives the median of the per-round
ratios of the two totals: the one comparison this machine's drifting speed leaves standing.

    python -m tests.bench.cold_start [--runs 21] [--against feb407f]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from scripts.build_layer import RUNTIME_VERSION, build, runtime_python
from tests.support.built_function import (
    dynamodb_server,
    events_with_key,
    function_environment,
    host_platform,
    invoke,
    signed_up,
)

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "functions" / "mcp"
EVENT = "mcp_modern_search_notes"  # events/: a search_notes tools/call
CONSOLE = ROOT / "functions" / "console"
CONSOLE_EVENT = "console_project"  # events/: a person's project page, signed in
TABLE = "notewell-cold-start"
# (label, bytecode, third-party sources removed): as deployed, as the layer was before (source only), and the
# deployed one with sources kept beside the bytecode, to show that shipping bytecode alone costs no time.
VARIANTS = (("bytecode", True, True), ("bytecode+src", True, False), ("source only", False, False))
RUNS = 9  # wall-clock on a shared machine wanders: the median of 9 holds still within ~5 %
GC_ON = "gc on"
CONSOLE_FN = "console fn"


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


def seed(endpoint: str) -> tuple[str, str]:
    """The table, a workspace, a key and the note the first call finds; returns the key and a console session
    opened with it (the cookie value)."""
    services, secret = signed_up(endpoint, TABLE)
    principal = services.auth.authenticate(secret)
    assert principal is not None
    services.notes.create(principal, "demo", title="Use SAM for deploys", body="We deploy with SAM.")
    return secret, services.console.sign_in(secret)[1]


def console_event(session: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / f"{CONSOLE_EVENT}.json").read_text())
    event["cookies"] = [cookie.replace("REPLACE_WITH_SESSION", session) for cookie in event["cookies"]]
    return event


def summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    imports = [i for i, _ in samples]
    calls = [c for _, c in samples]
    totals = [i + c for i, c in samples]
    return {"import_ms": statistics.median(imports), "first_call_ms": statistics.median(calls),
            "total_ms": statistics.median(totals), "max_total_ms": max(totals)}  # fmt: skip


def measure(python: str, cases: dict[str, tuple[dict[str, str], dict[str, Any]]], runs: int) -> dict[str, Any]:
    """Each case (environment, event) `runs` times, round-robin: this machine's wall clock drifts by 20 % over a
    minute, and interleaving makes the drift fall on every case alike, so their ratios hold."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (env, event) in cases.items():
            report, _ = invoke(python, env, [event])
            assert report["answers"][0]["statusCode"] == 200, (name, report["answers"][0])
            samples[name].append((report["import_ms"], report["call_ms"][0]))
    results: dict[str, Any] = {name: summary(found) for name, found in samples.items()}
    results["totals"] = {name: [i + c for i, c in found] for name, found in samples.items()}
    return results


def checkout(ref: str, target: Path) -> Path:
    """The tree of commit `ref` (git archive), for building its layer and running its function."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tree:
        tree.extractall(target, filter="data")
    return target


def paired_ratio(after: list[float], before: list[float]) -> float:
    """Median over rounds of after/before: both ran in each round, so a drift of the machine's speed cancels."""
    return statistics.median(a / b for a, b in zip(after, before, strict=True))


def heaviest_imports(python: str, env: dict[str, str], event: dict[str, Any], top: int = 12) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (ms) in one cold import of the function."""
    _, stderr = invoke(python, env, [event], flags=["-X", "importtime"])
    by_package: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        if not cumulative.isdigit() or name.startswith(" ") or "." in name.strip():
            continue
        by_package[name.strip()] = by_package.get(name.strip(), 0.0) + int(cumulative) / 1000
    return sorted(by_package.items(), key=lambda item: -item[1])[:top]


def run(runs: int, against: str | None = None) -> dict[str, Any]:
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
        with dynamodb_server() as endpoint:
            secret, session = seed(endpoint)
            (event,) = events_with_key([EVENT], secret)
            cases: dict[str, tuple[dict[str, str], dict[str, Any]]] = {}
            for label, bytecode, sourceless in VARIANTS:
                layer = Path(tmp) / label.replace(" ", "-") / "python"
                build(layer, python_version=version, platform=host_platform(), bytecode=bytecode, sourceless=sourceless)
                env = function_environment(layer, FUNCTION, endpoint, TABLE)
                cases[label] = (env, event)
                if bytecode and sourceless:
                    results["heaviest_imports_ms"] = heaviest_imports(python, env, event)
                    # Outside Lambda (no AWS_LAMBDA_FUNCTION_NAME) app.py leaves collection on during the start.
                    cases[GC_ON] = ({k: v for k, v in env.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}, event)
                    cases[CONSOLE_FN] = (function_environment(layer, CONSOLE, endpoint, TABLE), console_event(session))
            if against is not None:
                tree = checkout(against, Path(tmp) / "against" / "tree")
                layer = Path(tmp) / "against" / "python"
                subprocess.run(
                    [sys.executable, str(tree / "scripts" / "build_layer.py"), str(layer), "--platform",
                     host_platform(), "--python-version", version],
                    check=True, cwd=tree,
                )  # fmt: skip
                then = function_environment(layer, tree / "functions" / "mcp", endpoint, TABLE)
                cases[f"at {against}"] = (then, event)
            results.update(measure(python, cases, runs))
            if against is not None:
                totals = results["totals"]
                results["against"] = {"ref": against, "rounds": runs,
                                      "ratio": paired_ratio(totals["bytecode"], totals[f"at {against}"])}  # fmt: skip
    return results


def report(results: dict[str, Any]) -> str:
    layer = results["layer"]
    lines = [
        f"=== Cold start (proxy): fresh python {results['python_version']} process, built layer, moto server ===",
        f"  {'layer':<12} {'import ms':>10} {'first call ms':>14} {'total ms':>9} {'worst ms':>9}",
    ]
    notes = {GC_ON: "  (bytecode, collecting during the start: as before)",
             CONSOLE_FN: "  (bytecode; a signed-in project page, no MCP SDK)"}  # fmt: skip
    against = results.get("against")
    labels = [*(v[0] for v in VARIANTS), GC_ON, CONSOLE_FN]
    if against:
        labels.append(f"at {against['ref']}")
        notes[labels[-1]] = "  (bytecode: that commit's layer and function)"
    for label in labels:
        r = results[label]
        lines.append(f"  {label:<12} {r['import_ms']:>10.0f} {r['first_call_ms']:>14.0f} {r['total_ms']:>9.0f} "
                     f"{r['max_total_ms']:>9.0f}{notes.get(label, '')}")  # fmt: skip
    ratio = results["source only"]["total_ms"] / results["bytecode"]["total_ms"]
    lines.append(f"  bytecode makes import plus first call {ratio:.1f}x faster (median of {results['runs']} runs each)")
    if against:
        lines.append(
            f"  against {against['ref']}: import plus first call takes {against['ratio']:.3f} of that commit's "
            f"(median of the per-round ratios, {against['rounds']} rounds)"
        )
    lines.append(
        f"  layer as deployed (arm64, python3.13): {layer['unzipped_mb']} MB unzipped, {layer['zipped_mb']} MB zipped "
        f"(-{layer['pruned_mb']} MB pruned: unused botocore models and endpoints, Powertools parts and uvicorn, "
        f"third-party sources beside their bytecode; bytecode: {layer['bytecode']})"
    )
    heavy = ", ".join(f"{name} {ms:.0f}" for name, ms in results["heaviest_imports_ms"])
    lines.append(f"  heaviest imports (ms, cumulative): {heavy}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures as JSON here.")
    parser.add_argument("--against", default=None, help="Also run the deployed build of this commit, paired.")
    args = parser.parse_args(argv)
    results = run(args.runs, args.against)
    print(report(results))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
