"""`notewell serve` as a subprocess on a free loopback port, the way a person runs it, plus /proc readings."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
_KEY = re.compile(r"API key \(shown once, store it now\): (nwk_\S+)")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ServerStartError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    key: str
    printed: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def memory_kb(self) -> dict[str, int]:
        """Memory of the server process in kB: VmHWM (peak resident set), VmRSS and its anonymous and
        file-backed parts (/proc/<pid>/status), and Pss (/proc/<pid>/smaps_rollup: shared pages divided among
        the processes, and counted once however many times this process maps them). Plus its thread count.

        VmHWM/VmRSS count a file page once per mapping: SQLite connections that memory-map the database
        (PRAGMA mmap_size) each add the whole mapped file to them, though the pages are the same page cache.
        """
        values: dict[str, int] = {}
        with open(f"/proc/{self.pid}/status") as status:  # noqa: PTH123 - a /proc file, not a project path
            for line in status:
                name, _, rest = line.partition(":")
                if name in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Threads"):
                    values[name] = int(rest.split()[0])
        with contextlib.suppress(OSError), open(f"/proc/{self.pid}/smaps_rollup") as rollup:  # noqa: PTH123
            for line in rollup:
                name, _, rest = line.partition(":")
                if name == "Pss":
                    values["Pss"] = int(rest.split()[0])
        return values

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process (all its threads) has used so far."""
        with open(f"/proc/{self.pid}/stat") as stat:  # noqa: PTH123 - a /proc file, not a project path
            fields = stat.read().rpartition(")")[2].split()
        # After the ')' that closes comm: state is field 3, utime field 14, stime field 15 (1-based, proc(5)).
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def machine_busy_cpu_seconds() -> float:
    """CPU seconds all processes on the machine have used so far (every CPU, not idle or iowait; /proc/stat)."""
    with open("/proc/stat") as stat:  # noqa: PTH123 - a /proc file, not a project path
        fields = [int(v) for v in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / _CLOCK_TICKS


def wait_for_port(
    port: int, deadline: float, process: subprocess.Popen[str] | None = None, interval: float = 0.05
) -> None:
    """Poll until something accepts connections on `port` (every `interval` s: the granularity of a start-up time
    measured with it), or raise ServerStartError at `deadline` (time.monotonic) or when `process` has exited."""
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex((HOST, port)) == 0:
                return
        if process is not None and process.poll() is not None:
            break
        time.sleep(interval)
    raise ServerStartError(f"notewell serve did not accept connections on {HOST}:{port} in time")


@contextlib.contextmanager
def serve(data_dir: Path, home: Path) -> Iterator[Served]:
    """Start `notewell serve --data-dir data_dir` on a fresh data dir; yields once it answers, with its first
    key (read from its stdout); always terminates it."""
    port = free_port()
    env = {**os.environ, "NOTEWELL_HOME": str(home)}
    command = [sys.executable, "-m", "notewell.entrypoints.cli", "serve", "--host", HOST, "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    printed: list[str] = []
    key_seen = threading.Event()

    def drain() -> None:  # keeps reading until exit, so a chatty server never blocks on a full pipe
        assert process.stdout is not None
        for line in process.stdout:
            printed.append(line)
            if _KEY.search(line):
                key_seen.set()

    reader = threading.Thread(target=drain, name="notewell-serve-stdout", daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not key_seen.wait(0.1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise ServerStartError(
                    "notewell serve printed no first key (is the data dir fresh?):\n" + "".join(printed)
                )
        match = _KEY.search("".join(printed))
        assert match is not None
        wait_for_port(port, deadline)
        yield Served(process, f"http://{HOST}:{port}/mcp", match.group(1), printed)
    finally:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT_S)
        reader.join(5)
        if process.stdout is not None:
            process.stdout.close()
