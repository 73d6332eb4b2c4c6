"""Latency summaries: percentiles in milliseconds and throughput, from samples in seconds."""

from __future__ import annotations

import math
from typing import Any


def percentile(sorted_samples: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); the list must be sorted and non-empty."""
    position = (len(sorted_samples) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(sorted_samples) - 1)
    return sorted_samples[low] + (sorted_samples[high] - sorted_samples[low]) * (position - low)


def summarize(samples: list[float], *, elapsed: float | None = None, errors: int = 0) -> dict[str, Any]:
    """p50/p95/mean/min/max in ms and ops/s (calls over `elapsed`, else over the sum of the samples)."""
    if not samples:
        return {"n": 0, "errors": errors}
    ordered = sorted(samples)
    wall = elapsed if elapsed is not None else sum(samples)
    return {
        "n": len(samples),
        "errors": errors,
        "p50_ms": round(percentile(ordered, 0.50) * 1000, 3),
        "p95_ms": round(percentile(ordered, 0.95) * 1000, 3),
        "mean_ms": round(sum(samples) / len(samples) * 1000, 3),
        "min_ms": round(ordered[0] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
        "ops_per_s": round(len(samples) / wall, 1) if wall > 0 else None,
    }
