"""Glue between an API Gateway event and the ASGI app: the only core module that knows Lambda."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mangum import Mangum
from starlette.applications import Starlette


def invoke_asgi(app: Starlette, event: dict[str, Any], context: Any, *, base_path: str = "/") -> dict[str, Any]:
    """Serve one invocation with a fresh app.

    The SDK's session manager may run once per instance and Mangum runs the lifespan on every call, so each
    invocation gets its own app around the shared, cached MCP server (about 1.5 ms).
    """
    handler = Mangum(app, lifespan="on", api_gateway_base_path=base_path)
    response: dict[str, Any] = handler(event, context)
    return response


AppFactory = Callable[[], Starlette]
