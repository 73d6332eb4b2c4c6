"""What every benchmark section shares: the project, seeding through the services, timing rounds, CPU shares and
the text tables."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from notewell.domain.model import Plan
from tests.bench.local_server import machine_busy_cpu_seconds
from tests.bench.stats import summarize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from notewell.bootstrap import Services
    from notewell.domain.model import Principal
    from tests.bench.corpus import NoteSpec
    from tests.bench.local_server import Served

PROJECT = "bench"


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# ----- seeding ---------------------------------------------------------------------------------------------


def create_through_services(services: Services, principal: Principal, spec: NoteSpec) -> str:
    view = services.notes.create(
        principal,
        PROJECT,
        title=spec.title,
        body=spec.body,
        type=spec.type,
        status=spec.status,
        tags=spec.tags,
        importance=spec.importance,
    )
    return view.note.id


def seed(services: Services, principal: Principal, specs: Iterable[NoteSpec]) -> tuple[list[str], dict[str, Any]]:
    ids: list[str] = []
    started = time.perf_counter()
    for spec in specs:
        ids.append(create_through_services(services, principal, spec))
    elapsed = time.perf_counter() - started
    count = len(ids)
    return ids, {"notes": count, "seconds": round(elapsed, 2), "notes_per_s": round(count / max(elapsed, 1e-9), 1)}


def unlimited(services: Services, workspace_id: str) -> None:
    """Put a workspace on the plan without note or call quotas: the benchmarks create more notes and make more calls
    than the free plan allows, and measure speed, not quotas (metering still runs)."""
    services.workspaces.set_plan(workspace_id, Plan.ENTERPRISE)


def new_principal(services: Services) -> Principal:
    """A fresh workspace without quotas and a read-write key on the services' store, and the principal that key
    authenticates as."""
    workspace = services.auth.create_workspace("bench")
    unlimited(services, workspace.id)
    issued = services.auth.create_key(workspace.id, name="bench")
    principal = services.auth.authenticate(issued.secret)
    if principal is None:
        raise RuntimeError("a key just created does not authenticate")
    return principal


# ----- measuring -------------------------------------------------------------------------------------------


class CpuWatch:
    """Cores kept busy, over a phase, by the server (if any), by this process, and by everything else on the
    machine."""

    def __init__(self, served: Served | None = None) -> None:
        self._served = served
        self._start = self._read()

    def _read(self) -> tuple[float, float, float, float]:
        return (
            time.perf_counter(),
            self._served.cpu_seconds() if self._served is not None else 0.0,
            time.process_time(),
            machine_busy_cpu_seconds(),
        )

    def shares(self) -> dict[str, float]:
        end = self._read()
        wall, server, own, machine = (b - a for a, b in zip(self._start, end, strict=True))
        wall = max(wall, 1e-9)
        return {
            "server": round(server / wall, 2),
            "bench_process": round(own / wall, 2),
            "other_processes": round(max(machine - server - own, 0.0) / wall, 2),
        }


def chunks(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    size = -(-len(items) // parts)
    return [items[i * size : (i + 1) * size] for i in range(parts)]


def round_summary(rounds: list[list[float]], elapsed: float, errors: int = 0) -> dict[str, Any]:
    """Percentiles over every sample, plus each round's p50: the spread shows how noisy the machine was."""
    samples = [s for r in rounds for s in r]
    summary = summarize(samples, elapsed=elapsed, errors=errors)
    round_p50 = [summarize(r)["p50_ms"] for r in rounds if r]
    summary["round_p50_ms"] = round_p50
    summary["best_round_p50_ms"] = min(round_p50) if round_p50 else None
    return summary


def timed_rounds(
    ops: dict[str, tuple[Callable[[Any], object], Sequence[Any]]],
    rounds: int,
    orders: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """Call each op on its arguments, split into `rounds` rounds that alternate between the ops: round n calls them
    in `orders[n % len(orders)]` if orders are given, else as `ops` lists them."""
    clock = time.perf_counter
    samples: dict[str, list[list[float]]] = {name: [] for name in ops}
    elapsed = dict.fromkeys(ops, 0.0)
    split = {name: chunks(arguments, rounds) for name, (_, arguments) in ops.items()}
    for number in range(rounds):
        for name in orders[number % len(orders)] if orders else list(ops):
            call = ops[name][0]
            these: list[float] = []
            started = clock()
            for argument in split[name][number]:
                before = clock()
                call(argument)
                these.append(clock() - before)
            elapsed[name] += clock() - started
            samples[name].append(these)
    return {name: round_summary(samples[name], elapsed[name]) for name in ops}


# ----- report ----------------------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    def cell(value: object) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            if abs(value) >= 1000:
                return f"{value:,.0f}"
            return f"{value:.1f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)

    cells = [[cell(v) for v in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(row[1:], widths[1:], strict=True)]
        lines.append(indent + "  ".join(parts).rstrip())
        if number == 0:
            lines.append(indent + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cpu_note(shares: dict[str, float], *, server: bool = True) -> str:
    served = f"server {shares['server']}, " if server else ""
    return (
        f"  (cores busy meanwhile: {served}this process {shares['bench_process']}, "
        f"other processes {shares['other_processes']})"
    )
