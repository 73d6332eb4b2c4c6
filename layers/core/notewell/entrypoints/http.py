"""The HTTP application shared by `notewell serve` and the Lambda function: /mcp, /health."""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from typing import TYPE_CHECKING

import anyio.to_thread
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from notewell.domain.errors import UnavailableError
from notewell.entrypoints.mcp_tools import CURRENT_PRINCIPAL, CURRENT_REQUEST_ID

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from mcp.server import MCPServer
    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

    from notewell.bootstrap import Services

logger = logging.getLogger("notewell.http")


def security_for(hosts: Sequence[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection: only these Host headers (each also with any port) reach the MCP endpoint."""
    allowed: list[str] = []
    for host in hosts:
        allowed += [host, f"{host}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=[])


class BearerAuthMiddleware:
    """Resolves the bearer token to a principal before the MCP app runs; 401 without a valid one, 503 with
    Retry-After when the key store cannot answer (the key may well be valid)."""

    def __init__(self, app: ASGIApp, services: Services, protected_prefix: str = "/mcp") -> None:
        self._app = app
        self._services = services
        self._prefix = protected_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self._prefix):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request_id = headers.get("x-request-id") or _lambda_request_id(scope) or uuid.uuid4().hex
        authorization = headers.get("authorization", "")
        token = authorization[7:].strip() if authorization[:7].lower() == "bearer " else ""
        try:
            principal = await anyio.to_thread.run_sync(self._services.auth.authenticate, token) if token else None
        except UnavailableError as exc:
            # Every request reads its key, so under throttling this is routine: one line, no traceback, no key.
            logger.warning("key lookup unavailable", extra={"request_id": request_id, "retry_after": exc.retry_after})
            await _unavailable(send, exc)
            return
        if principal is None:
            await _unauthorized(send, token_sent=bool(token))
            return
        principal_token = CURRENT_PRINCIPAL.set(principal)
        request_token = CURRENT_REQUEST_ID.set(request_id)
        try:
            await self._app(scope, receive, send)
        finally:
            CURRENT_PRINCIPAL.reset(principal_token)
            CURRENT_REQUEST_ID.reset(request_token)


def _lambda_request_id(scope: Scope) -> str | None:
    context = scope.get("aws.context")
    return getattr(context, "aws_request_id", None) if context is not None else None


async def _unauthorized(send: Send, *, token_sent: bool) -> None:
    challenge = 'Bearer realm="notewell"'
    if token_sent:
        challenge += ', error="invalid_token", error_description="The API key is unknown or revoked"'
    message = (
        "The API key is unknown or revoked; create one with 'notewell keys create'."
        if token_sent
        else "Missing credentials; send 'Authorization: Bearer <API key>' (see 'notewell keys create')."
    )
    body = json.dumps({"error": "invalid_token" if token_sent else "unauthorized", "error_description": message})
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})


async def _unavailable(send: Send, exc: UnavailableError) -> None:
    body = json.dumps(
        {"error": "temporarily_unavailable", "error_description": exc.message, "retryAfter": exc.retry_after}
    )
    await send(
        {
            "type": "http.response.start",
            "status": exc.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", str(exc.retry_after).encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def _get_not_allowed(request: Request) -> Response:
    # A legacy GET would open an SSE stream that never ends (and hang a Lambda until its timeout).
    return Response(status_code=405, headers={"Allow": "POST"})


def build_app(server: MCPServer, services: Services, *, allowed_hosts: Sequence[str]) -> Starlette:
    """A fresh Starlette app around `server`. Cheap: Lambda builds one per invocation (see lambda_asgi.py)."""
    mcp_app = server.streamable_http_app(
        stateless_http=True, json_response=True, transport_security=security_for(allowed_hosts)
    )
    manager = server.session_manager  # the manager this call just created

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():  # a mounted app's own lifespan never runs: the host enters it
            yield

    app = Starlette(
        routes=[
            Route("/health", _health, methods=["GET"]),
            Route("/mcp", _get_not_allowed, methods=["GET", "DELETE"]),
            Mount("/", app=BearerAuthMiddleware(mcp_app, services)),
        ],
        lifespan=lifespan,
    )
    return app
