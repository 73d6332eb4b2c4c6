"""Per-tool call metrics in CloudWatch's embedded metric format (Powertools), one JSON line per call.

Lambda's log stream carries the line and CloudWatch turns it into metrics (namespace from the stack, dimensions
`service` and `tool`): no PutMetricData request, so no added latency or failure on the call's path. Nothing that
identifies a workspace goes in: dimensions multiply metric costs, and logs must not become a tenant index."""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

if TYPE_CHECKING:
    from typing import TextIO


class EmfCallMetrics:
    def __init__(self, namespace: str, *, service: str = "notewell", stream: TextIO | None = None) -> None:
        self._namespace = namespace
        self._service = service
        self._stream = stream
        self._lock = threading.Lock()  # one line at a time, whole, whatever threads the tools run on

    def record_call(self, tool: str, outcome: str, duration_ms: float) -> None:
        metrics = EphemeralMetrics(namespace=self._namespace, service=self._service)
        metrics.add_dimension(name="tool", value=tool)
        metrics.add_metric(name="Calls", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=0 if outcome == "ok" else 1)
        metrics.add_metric(name="Faults", unit=MetricUnit.Count, value=1 if outcome == "internal" else 0)
        metrics.add_metric(name="Duration", unit=MetricUnit.Milliseconds, value=round(duration_ms, 2))
        self._write(metrics)

    def record_count(self, name: str, value: int) -> None:
        """One count under `name`, with the `service` dimension alone (what an alarm on the name watches)."""
        metrics = EphemeralMetrics(namespace=self._namespace, service=self._service)
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
        self._write(metrics)

    def _write(self, metrics: EphemeralMetrics) -> None:
        line = json.dumps(metrics.serialize_metric_set(), separators=(",", ":"))
        stream = self._stream or sys.stdout
        with self._lock:
            stream.write(line + "\n")
            stream.flush()
