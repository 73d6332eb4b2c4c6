"""MCP function: API Gateway HTTP API → Mangum → the Notewell MCP app on DynamoDB."""

from __future__ import annotations

from notewell.entrypoints import cold_start

cold_start.begin()  # before the heavy imports below

import functools
import os
from typing import TYPE_CHECKING, Any

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.lambda_asgi import invoke_asgi
from notewell.entrypoints.logs import configure_logging
from notewell.entrypoints.mcp_tools import build_server

if TYPE_CHECKING:
    from mcp.server import MCPServer


@functools.cache
def _runtime() -> tuple[MCPServer, Services, Settings]:
    # First invocation of a container: read settings, build boto3 clients and the MCP server once.
    settings = Settings.from_env(os.environ)
    configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    services = bootstrap(settings)
    return build_server(services), services, settings


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    server, services, settings = _runtime()
    try:
        return invoke_asgi(
            build_app(server, services, allowed_hosts=settings.allowed_hosts, allowed_origins=settings.allowed_origins),
            event,
            context,
        )
    finally:
        # Lambda may freeze this container after the reply and recycle it unannounced: the counts that bill this
        # call are stored before it ends (one atomic increment per workspace and day, only when there are any).
        services.meter.flush()
        cold_start.first_invocation_over()
