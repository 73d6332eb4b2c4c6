"""Dependencies point inward: the domain knows nothing of services, adapters, SDKs or I/O."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import notewell

CORE = Path(notewell.__file__).parent
VENDOR = {"boto3", "botocore", "mcp", "starlette", "mangum", "uvicorn", "sqlite3", "aws_lambda_powertools", "httpx2"}
IO_MODULES = {"os", "sqlite3", "socket", "time", "random", "secrets", "subprocess", "pathlib"}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_domain_imports_only_the_standard_library_and_itself() -> None:
    for path in (CORE / "domain").rglob("*.py"):
        for name in imports_of(path):
            top = name.split(".")[0]
            assert top not in VENDOR | IO_MODULES, f"{path.name} imports {name}"
            assert not name.startswith(("notewell.services", "notewell.adapters", "notewell.entrypoints")), (
                f"{path.name} imports {name}"
            )


def test_services_reach_technology_only_through_ports() -> None:
    for path in [*(CORE / "services").glob("*.py"), CORE / "ports.py"]:
        for name in imports_of(path):
            assert name.split(".")[0] not in VENDOR, f"{path.name} imports {name}"
            assert not name.startswith(("notewell.adapters", "notewell.entrypoints")), f"{path.name} imports {name}"


def test_only_adapters_import_storage_sdks_and_only_entrypoints_import_mcp() -> None:
    for path in CORE.rglob("*.py"):
        relative = path.relative_to(CORE).as_posix()
        for name in imports_of(path):
            top = name.split(".")[0]
            if top in {"boto3", "botocore", "sqlite3"}:
                assert relative.startswith("adapters/"), f"{relative} imports {name}"
            if top in {"mcp", "starlette", "mangum", "uvicorn"}:
                assert relative.startswith("entrypoints/"), f"{relative} imports {name}"


def test_every_module_imports_with_an_empty_environment() -> None:
    names = [m.name for m in pkgutil.walk_packages([str(CORE)], prefix="notewell.")]
    code = "import importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names)
    result = subprocess.run([sys.executable, "-c", code], env={}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert importlib.import_module("notewell.domain.model")


def test_the_layer_requirements_match_pyproject() -> None:
    from scripts.layer_reqs import ROOT, layer_requirements

    assert (ROOT / "layers/core/requirements.txt").read_text() == layer_requirements(), "run 'make layer-reqs'"


ADMISSION = CORE / "domain" / "admission"


def test_admission_stays_small_enough_to_read() -> None:
    """The detectors, the verdict and the loader of their words: at most 900 lines that hold something."""
    lines = [line for path in ADMISSION.glob("*.py") for line in path.read_text().splitlines() if line.strip()]
    assert len(lines) <= 900, f"{len(lines)} non-blank lines in domain/admission"


def test_word_lists_live_in_data_files_not_in_code() -> None:
    """No list, set, tuple or dict of more than 30 literal entries in admission's code: words are data."""
    for path in ADMISSION.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
                size = sum(isinstance(e, ast.Constant) for e in node.elts)
            elif isinstance(node, ast.Dict):
                size = sum(isinstance(k, ast.Constant) for k in node.keys)
            else:
                continue
            assert size <= 30, f"{path.name}:{node.lineno} holds {size} literal entries"
    for path in (ADMISSION / "data").glob("*.json"):
        assert json.loads(path.read_text())["_about"], f"{path.name} says what it holds"
