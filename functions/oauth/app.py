"""The OAuth authorization server's Lambda functions: metadata, register, authorize and token.

One code directory, four functions (one handler each, template.yaml): each answers only its own routes and gets
only the permissions it needs. The discovery documents need no table at all.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_oauth_app, oauth_rates
from notewell.entrypoints.lambda_asgi import invoke_asgi
from notewell.entrypoints.logs import configure_logging

if TYPE_CHECKING:
    from notewell.entrypoints.guard import RouteRate


@functools.cache
def _runtime() -> tuple[Services, Settings, dict[str, RouteRate]]:
    # First invocation of a container: settings, the store's client and the request budgets, once. Each invocation
    # builds a fresh app; the budgets outlive it. They bound one source hammering a warm container; API Gateway's
    # throttling is the limit across containers.
    settings = Settings.from_env(os.environ)
    configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    return bootstrap(settings), settings, oauth_rates()


def _serve(function: str, event: dict[str, Any], context: Any) -> dict[str, Any]:
    services, settings, rates = _runtime()
    app = build_oauth_app(
        services,
        function,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        rates=rates,
    )
    return invoke_asgi(app, event, context)


def metadata(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _serve("metadata", event, context)


def register(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _serve("register", event, context)


def authorize(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _serve("authorize", event, context)


def token(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _serve("token", event, context)
