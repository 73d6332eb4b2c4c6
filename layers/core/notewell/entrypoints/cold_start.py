"""A Lambda container's first invocation, cheaper.

No garbage collection while it builds what lives on: a cold start builds ~100k objects (the SDK's and pydantic's
classes, the clients) that all live as long as the container, so collecting while they are made finds nothing and
costs ~8 % of the cold start (tests/bench/cold_start.py). And no MCP client: the SDK's package `__init__` imports
its client side (sessions, stdio, the session group) only to re-export names, ~60 ms of every cold start for code a
server never runs; the server's own modules import what they use by full path.

Imports nothing but the standard library, so a function calls `begin()` before its heavy imports.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys

WITHOUT_REEXPORTS = ("mcp",)  # packages whose __init__ only re-exports, mostly what a function does not use


def begin() -> None:
    """Stop collecting until the first invocation is over, and register the packages above without running their
    `__init__` (their submodules import as usual); only inside Lambda (tests and the CLI never)."""
    if "AWS_LAMBDA_FUNCTION_NAME" in os.environ:
        gc.disable()
        for name in WITHOUT_REEXPORTS:
            spec = importlib.util.find_spec(name)
            if name not in sys.modules and spec is not None:
                sys.modules[name] = importlib.util.module_from_spec(spec)  # a package: __path__ set, not executed


def first_invocation_over() -> None:
    """Collect again, with what the start built frozen out of the collector's way (a no-op once done)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
