"""Console function: API Gateway HTTP API → Mangum → the web console for people (`GET /`, `/console/...`) on
DynamoDB. It never imports the MCP SDK, so a person's first page does not wait for it."""

from __future__ import annotations

import gc
import os

if "AWS_LAMBDA_FUNCTION_NAME" in os.environ:
    # A cold start builds ~100k objects (the SDK's and pydantic's classes, the clients) that all live as long as the
    # container: collecting while they are made finds nothing and costs ~8 % of the cold start (tests/bench/
    # cold_start.py). Collection resumes after the first invocation, with them frozen out of its way.
    gc.disable()

import functools
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
        if not gc.isenabled():  # the first invocation is over: what it built stays, later garbage is collected
            gc.freeze()
            gc.enable()
