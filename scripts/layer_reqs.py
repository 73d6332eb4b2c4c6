"""Print the Lambda layer's requirements: pyproject.toml's pinned runtime dependencies, nothing else."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layer_requirements() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = ["# Generated from pyproject.toml by 'make layer-reqs'; do not edit.", *project["dependencies"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(layer_requirements())
