"""A Lambda container's first invocation, cheaper: no garbage collection while it builds what lives on.

A cold start builds ~100k objects (the SDK's and pydantic's classes, the clients) that all live as long as the
container: collecting while they are made finds nothing and costs ~8 % of the cold start (tests/bench/
cold_start.py). Imports nothing but the standard library, so a function calls `begin()` before its heavy imports.
"""

from __future__ import annotations

import gc
import os


def begin() -> None:
    """Stop collecting until the first invocation is over; only inside Lambda (tests and the CLI never)."""
    if "AWS_LAMBDA_FUNCTION_NAME" in os.environ:
        gc.disable()


def first_invocation_over() -> None:
    """Collect again, with what the start built frozen out of the collector's way (a no-op once done)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
