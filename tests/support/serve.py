"""`notewell serve` as a real process for the tests that need one: started, waited for, always stopped."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

READY_SECONDS = 30  # bounds the wait for the banner; a server that never prints it fails the test


@dataclass(frozen=True, slots=True)
class Served:
    port: int
    printed: str  # everything it printed up to the connection help

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def key(self) -> str | None:
        """The first key, when this start created the workspace."""
        found = re.search(r"API key \(shown once, store it now\): (nwk_\S+)", self.printed)
        return found.group(1) if found else None


@contextlib.contextmanager
def serve(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """Run `notewell serve --data-dir DATA ARGS` (port 0 unless ARGS name one) until the block ends."""
    port = [] if "--port" in args else ["--port", "0"]
    process = subprocess.Popen(
        [sys.executable, "-m", "notewell.entrypoints.cli", "serve", *port, "--data-dir", str(data_dir), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    printed: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            printed.append(line)
            if line.startswith("More keys:"):  # the banner's last line: it is up
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(READY_SECONDS), "".join(printed)
        banner = next(line for line in printed if line.startswith("Notewell serving "))
        yield Served(int(banner.split(":")[2].split("/")[0]), "".join(printed))
    finally:
        process.terminate()
        process.wait(10)
        reader.join(5)
        assert process.stdout is not None
        process.stdout.close()
