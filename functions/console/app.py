"""Console function: API Gateway HTTP API → Mangum → the web console for people (`GET /`, `/console/...`) on
DynamoDB. It never imports the MCP SDK, so a person's first page does not wait for it."""

from __future__ import annotations

from notewell.entrypoints import cold_start

cold_start.begin()  # before the heavy imports below

import functools
import os
from typing import Any

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.console import build_console_app
from notewell.entrypoints.lambda_asgi import invoke_asgi
from notewell.entrypoints.logs import configure_logging


@functools.cache
def _runtime() -> tuple[Services, Settings]:
    # First invocation of a container: read settings and build the clients once.
    settings = Settings.from_env(os.environ)
    configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    return bootstrap(settings), settings


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    services, settings = _runtime()
    try:
        app = build_console_app(
            services, allowed_hosts=settings.allowed_hosts, allowed_origins=settings.allowed_origins
        )
        return invoke_asgi(app, event, context)
    finally:
        services.meter.flush()  # the counts of this page are stored before the container may freeze
        cold_start.first_invocation_over()
