"""The layer's pins resolved for the runtime template.yaml declares (python3.13 on arm64), not for this machine: a
dry run of pip asks the package index which wheel each pin, and each thing a pin requires, would install, and
fails naming every pin that has none. The build for this machine (test_deploy_preparation.py) would never see it.

The real pins need the package index; where it does not answer, that test is skipped and says why. How a pin
without an arm64 wheel is told apart is checked offline, on wheels made here."""

from __future__ import annotations

import zipfile
from typing import TYPE_CHECKING

import pytest

from scripts.build_layer import REQUIREMENTS, RUNTIME_PLATFORMS, RUNTIME_VERSION, resolve

if TYPE_CHECKING:
    from pathlib import Path


def wheel(directory: Path, name: str, tag: str) -> None:
    """An empty wheel of `name` 1.0 with one tag (python-abi-platform): all pip reads in a dry run."""
    info = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(directory / f"{name}-1.0-{tag}.whl", "w") as archive:
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        archive.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n")
        archive.writestr(f"{info}/RECORD", "")


@pytest.fixture
def local_index(tmp_path: Path) -> list[str]:
    """pip's options for a directory of wheels, one per way a pin can be built, and no index."""
    found = tmp_path / "wheels"
    found.mkdir()
    for name, tag in [
        ("pure", "py3-none-any"),
        ("oldglibc", "cp313-cp313-manylinux2014_aarch64"),
        ("newerglibc", "cp313-cp313-manylinux_2_28_aarch64"),
        ("stableabi", "cp311-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64"),
        ("hostonly", "cp313-cp313-manylinux2014_x86_64"),
        ("toonewglibc", "cp313-cp313-manylinux_2_34_aarch64"),
        ("otherpython", "cp312-cp312-manylinux2014_aarch64"),
    ]:
        wheel(found, name, tag)
    return ["--no-index", "--find-links", str(found)]


def pins(tmp_path: Path, *names: str) -> Path:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# pinned\n" + "".join(f"{name}==1.0\n" for name in names))
    return requirements


def test_every_pin_of_the_layer_has_a_wheel_for_python_3_13_on_arm64() -> None:
    found = resolve(RUNTIME_VERSION, RUNTIME_PLATFORMS, REQUIREMENTS)
    if found.unreachable is not None:
        pytest.skip(f"the package index did not answer, so the arm64 resolve could not run: {found.unreachable}")
    assert found.missing == []
    pinned = {line.split("==")[0].lower() for line in REQUIREMENTS.read_text().splitlines() if "==" in line}
    assert pinned <= {name.lower().replace("_", "-") for name in found.wheels}
    for name, filename in found.wheels.items():
        python, abi, platform = filename.removesuffix(".whl").split("-")[-3:]
        assert platform == "any" or all(tag.endswith("_aarch64") for tag in platform.split(".")), (name, filename)
        assert "cp313" in python or abi == "abi3" or abi == "none", (name, filename)


def test_a_pin_without_an_arm64_wheel_for_python_3_13_fails_the_resolve_by_name(
    tmp_path: Path, local_index: list[str]
) -> None:
    runnable = ("pure", "oldglibc", "newerglibc", "stableabi")
    found = resolve(RUNTIME_VERSION, RUNTIME_PLATFORMS, pins(tmp_path, *runnable), index=local_index)
    assert (found.missing, found.unreachable, sorted(found.wheels)) == ([], None, sorted(runnable))

    unrunnable = ("hostonly", "toonewglibc", "otherpython")  # x86_64, glibc 2.34, Python 3.12
    found = resolve(RUNTIME_VERSION, RUNTIME_PLATFORMS, pins(tmp_path, "pure", *unrunnable), index=local_index)
    assert [problem.split(":")[0] for problem in found.missing] == [f"{name}==1.0" for name in unrunnable]
    assert found.wheels == {} and found.unreachable is None


def test_an_index_that_does_not_answer_is_not_taken_for_a_missing_wheel(tmp_path: Path) -> None:
    found = resolve(RUNTIME_VERSION, RUNTIME_PLATFORMS, pins(tmp_path, "hostonly"),
                    index=["--index-url", "http://127.0.0.1:9/simple"])  # fmt: skip  # the discard port: refused
    assert found.unreachable is not None and found.missing == []
