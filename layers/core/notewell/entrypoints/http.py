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
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route

from notewell.config import ConfigError
from notewell.domain import oauth
from notewell.domain.errors import UnavailableError
from notewell.domain.oauth import OAuthError
from notewell.entrypoints import consent
from notewell.entrypoints.guard import BodyLimit, HostGuard, RateLimit, RouteRate, SourceBuckets
from notewell.entrypoints.mcp_tools import CURRENT_PRINCIPAL, CURRENT_REQUEST_ID
from notewell.services.oauth import ACCESS_PREFIX, AuthorizationPageError, Consent, Redirect

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

    from mcp.server import MCPServer
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from notewell.bootstrap import Services
    from notewell.services.oauth import OAuthService

logger = logging.getLogger("notewell.http")


# The SDK's own Host/Origin check answers only on /mcp, in plain text, and after authentication; HostGuard below
# checks every path first. The SDK still checks the Content-Type of a POST.
SDK_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)

KIB = 1024
# The largest body each route reads, enforced while it arrives (guard.BodyLimit answers 413 at once). OAuth forms
# and registration metadata are small; /mcp is the SDK's own limit, here before the bearer check reads a body.
BODY_LIMITS = {
    "/register": 16 * KIB,
    "/token": 16 * KIB,
    "/authorize": 16 * KIB,
    "/mcp": 4 * KIB * KIB,
    "/console": 2 * KIB * KIB,  # a note edit at the largest plan's size, form-encoded
}
OTHER_BODY_LIMIT = 64 * KIB  # nothing else reads a body


def oauth_rates() -> dict[str, RouteRate]:
    """Fresh request budgets for the routes that write state for strangers: registration (each kept a day unless
    used) and consent requests (each kept 10 minutes). Keep the result as long as the process lives."""
    return {
        # A person registers a client now and then; 20 at once, then one per 3 minutes, from one address. Overall
        # 100 an hour bounds what many addresses together leave behind.
        "/register": RouteRate(SourceBuckets(20, 20 / 3600), overall=SourceBuckets(100, 100 / 3600)),
        # A sign-in is a GET and a POST or two; a few agents signing in at once from one machine stay well inside.
        "/authorize": RouteRate(SourceBuckets(60, 1)),
    }


def _guards(
    allowed_hosts: Sequence[str], allowed_origins: Sequence[str], rates: Mapping[str, RouteRate]
) -> list[Middleware]:
    """Outermost first: the host, then the request budget, then the body size; none reads the body."""
    return [
        Middleware(HostGuard, hosts=allowed_hosts, origins=allowed_origins),
        Middleware(RateLimit, routes=rates),
        Middleware(BodyLimit, limits=BODY_LIMITS, default=OTHER_BODY_LIMIT),
    ]


class BearerAuthMiddleware:
    """Resolves the bearer token to a principal before the MCP app runs; 401 without a valid one, 503 with
    Retry-After when the key store cannot answer (the key may well be valid). With an OAuth issuer, the 401's
    challenge tells a client where to discover how to sign in."""

    def __init__(
        self,
        app: ASGIApp,
        services: Services,
        protected_prefix: str = "/mcp",
        issuer: str | None = None,
        writing_tools: frozenset[str] = frozenset(),
    ) -> None:
        self._app = app
        self._services = services
        self._prefix = protected_prefix
        self._issuer = issuer
        self._writing_tools = writing_tools

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self._prefix):
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request_id = headers.get("x-request-id") or _lambda_request_id(scope) or uuid.uuid4().hex
        authorization = headers.get("authorization", "")
        token = authorization[7:].strip() if authorization[:7].lower() == "bearer " else ""
        oauth_service = self._services.oauth
        authenticate = (
            oauth_service.authenticate_access
            if oauth_service is not None and token.startswith(ACCESS_PREFIX)
            else self._services.auth.authenticate
        )
        try:
            principal = await anyio.to_thread.run_sync(authenticate, token) if token else None
        except UnavailableError as exc:
            # Every request reads its key, so under throttling this is routine: one line, no traceback, no key.
            logger.warning("key lookup unavailable", extra={"request_id": request_id, "retry_after": exc.retry_after})
            await _unavailable(send, exc)
            return
        if principal is None:
            await _unauthorized(send, token_sent=bool(token), issuer=self._issuer)
            return
        if token.startswith(ACCESS_PREFIX) and oauth.WRITE_SCOPE not in principal.scopes and self._issuer:
            # A token without the write scope calling a tool that writes: 403 with a challenge, so the client can
            # ask for the scope (MCP step-up) instead of reading a tool error.
            body = await _whole_body(receive)
            if _calls_one_of(body, self._writing_tools):
                await _insufficient_scope(send, self._issuer)
                return
            receive = _replay(body)
        principal_token = CURRENT_PRINCIPAL.set(principal)
        request_token = CURRENT_REQUEST_ID.set(request_id)
        try:
            await self._app(scope, receive, send)
        finally:
            CURRENT_PRINCIPAL.reset(principal_token)
            CURRENT_REQUEST_ID.reset(request_token)


async def _whole_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _calls_one_of(body: bytes, tools: frozenset[str]) -> bool:
    """Whether a JSON-RPC request (or any of a batch) is a tools/call of one of `tools`."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    requests = document if isinstance(document, list) else [document]
    return any(
        isinstance(r, dict) and r.get("method") == "tools/call" and isinstance(r.get("params"), dict)
        and r["params"].get("name") in tools
        for r in requests
    )  # fmt: skip


async def _insufficient_scope(send: Send, issuer: str) -> None:
    challenge = oauth.challenge(
        issuer, error="insufficient_scope", description="This tool writes: it needs notes:write"
    )
    body = {"error": "insufficient_scope", "error_description": "This tool needs the notes:write scope."}
    await _challenge(send, 403, challenge, body)


async def _challenge(send: Send, status: int, challenge: str, body: dict[str, str]) -> None:
    """A JSON refusal carrying a WWW-Authenticate challenge."""
    encoded = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge.encode()),
                (b"content-length", str(len(encoded)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": encoded})


def _lambda_request_id(scope: Scope) -> str | None:
    context = scope.get("aws.context")
    return getattr(context, "aws_request_id", None) if context is not None else None


async def _unauthorized(send: Send, *, token_sent: bool, issuer: str | None = None) -> None:
    if issuer is not None:  # RFC 9728 §5.1: where the client finds the authorization server, and what to ask for
        described = "The token or API key is unknown, expired or revoked"
        challenge = (
            oauth.challenge(issuer, error="invalid_token", description=described)
            if token_sent
            else oauth.challenge(issuer)
        )
    else:
        challenge = 'Bearer realm="notewell"'
        if token_sent:
            challenge += ', error="invalid_token", error_description="The API key is unknown or revoked"'
    message = (
        "The API key is unknown or revoked; create one with 'notewell keys create'."
        if token_sent
        else "Missing credentials; send 'Authorization: Bearer <API key>' (see 'notewell keys create')."
    )
    body = {"error": "invalid_token" if token_sent else "unauthorized", "error_description": message}
    await _challenge(send, 401, challenge, body)


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


NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def oauth_routes(oauth_service: OAuthService) -> list[Route]:
    """The authorization server's endpoints (registration so far), each answering OAuth errors as JSON."""

    async def register(request: Request) -> Response:
        body, content_type = await request.body(), request.headers.get("content-type")
        return await _oauth_answer(lambda: oauth_service.register(body, content_type), 201)

    def page(html: str, status: int, extra: dict[str, str] | None = None) -> Response:
        return HTMLResponse(html, status, headers={**consent.SECURITY_HEADERS, **(extra or {})})

    def answer(outcome: Consent | Redirect, status: int = 200) -> Response:
        if isinstance(outcome, Redirect):
            if not outcome.automatic:  # an error for an https client: the person follows a link, nothing is automatic
                return page(consent.error_page("The client's request was refused.", return_to=outcome.location), 400)
            return Response(status_code=303, headers={**consent.SECURITY_HEADERS, "Location": outcome.location})
        cookie = consent.csrf_cookie(oauth_service.issuer, outcome.csrf)
        return page(consent.consent_page(outcome), status, {"Set-Cookie": cookie})

    async def authorize(request: Request) -> Response:
        try:
            if request.method == "GET":
                outcome = await anyio.to_thread.run_sync(
                    oauth_service.begin_authorization, request.query_params.multi_items()
                )
                return answer(outcome)
            if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
                return page(consent.error_page("Send the sign-in form as the page does."), 400)
            form = {key: str(value) for key, value in (await request.form()).items()}
            cookie = request.cookies.get(consent.csrf_cookie_name(oauth_service.issuer))
            decided = await anyio.to_thread.run_sync(oauth_service.decide, form, cookie, request.headers.get("origin"))
            return answer(decided, 400)  # the page again means a wrong key
        except AuthorizationPageError as exc:
            return page(consent.error_page(exc.message), exc.status)
        except UnavailableError:
            return page(consent.error_page("Notewell is busy; try again in a moment."), 503)

    async def token(request: Request) -> Response:
        content_type = request.headers.get("content-type")
        # Only a urlencoded form is parsed: anything else (multipart spools files) is refused by the service unread.
        urlencoded = (content_type or "").split(";")[0].strip().lower() == "application/x-www-form-urlencoded"
        pairs = [(key, str(value)) for key, value in (await request.form()).multi_items()] if urlencoded else []
        basic = request.headers.get("authorization", "")[:6].lower() == "basic "
        return await _oauth_answer(lambda: oauth_service.token(pairs, content_type, basic), 200)

    return [
        Route("/register", register, methods=["POST"]),
        Route("/authorize", authorize, methods=["GET", "POST"]),
        Route("/token", token, methods=["POST"]),
    ]


async def _oauth_answer(call: Callable[[], dict[str, object]], status: int) -> Response:
    """A JSON endpoint of the authorization server: its answer, or its OAuth error, never cached."""
    try:
        answer = await anyio.to_thread.run_sync(call)
    except OAuthError as exc:
        challenge = {"WWW-Authenticate": 'Basic realm="notewell"'} if exc.status == 401 else {}
        return JSONResponse(exc.body(), exc.status, headers={**NO_STORE, **challenge})
    except UnavailableError as exc:
        busy = {"error": "temporarily_unavailable", "error_description": exc.message}
        return JSONResponse(busy, 503, headers={**NO_STORE, "Retry-After": str(exc.retry_after)})
    return JSONResponse(answer, status, headers=NO_STORE)


def discovery_routes(issuer: str, *, client_documents: bool = False) -> list[Route]:
    """The OAuth discovery documents (RFC 9728 protected resource, at the path-inserted and the root form; RFC 8414
    authorization server), byte-identical wherever they are served. OpenID discovery is a plain 404."""
    resource = json.dumps(oauth.protected_resource_metadata(issuer), separators=(",", ":")).encode()
    server = json.dumps(
        oauth.authorization_server_metadata(issuer, client_metadata_documents=client_documents), separators=(",", ":")
    ).encode()

    def document(body: bytes) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            return Response(body, media_type="application/json", headers={"Cache-Control": "public, max-age=3600"})

        return serve

    async def not_found(request: Request) -> Response:
        return JSONResponse({"error": "not_found", "error_description": "Notewell is not an OpenID provider."}, 404)

    return [
        Route(oauth.PROTECTED_RESOURCE_PATH, document(resource), methods=["GET"]),
        Route("/.well-known/oauth-protected-resource", document(resource), methods=["GET"]),
        Route(oauth.AUTHORIZATION_SERVER_PATH, document(server), methods=["GET"]),
        Route("/.well-known/openid-configuration", not_found, methods=["GET"]),
    ]


async def _get_not_allowed(request: Request) -> Response:
    # A legacy GET would open an SSE stream that never ends (and hang a Lambda until its timeout).
    return Response(status_code=405, headers={"Allow": "POST"})


OAUTH_FUNCTIONS: dict[str, tuple[str, ...]] = {
    # Which paths each authorization-server Lambda function answers (template.yaml routes the same ones to it).
    "metadata": (oauth.PROTECTED_RESOURCE_PATH, "/.well-known/oauth-protected-resource",
                 oauth.AUTHORIZATION_SERVER_PATH, "/.well-known/openid-configuration"),
    "register": ("/register",),
    "authorize": ("/authorize",),
    "token": ("/token",),
}  # fmt: skip


def build_oauth_app(
    services: Services,
    function: str,
    *,
    allowed_hosts: Sequence[str],
    allowed_origins: Sequence[str] = (),
    rates: Mapping[str, RouteRate] | None = None,
) -> Starlette:
    """One part of the authorization server as its own app, for the Lambda function that serves it alone. Pass
    `rates` kept for the container (oauth_rates()): an app lives one invocation, its own budgets with it."""
    if services.oauth is None:
        raise ConfigError("The OAuth functions need NOTEWELL_ISSUER (the stack's https URL).")
    paths = OAUTH_FUNCTIONS[function]
    routes = [
        route
        for route in [
            *discovery_routes(services.oauth.issuer, client_documents=services.oauth.client_documents),
            *oauth_routes(services.oauth),
        ]
        if route.path in paths
    ]
    middleware = _guards(allowed_hosts, allowed_origins, oauth_rates() if rates is None else rates)
    return Starlette(routes=routes, middleware=middleware)


def build_app(
    server: MCPServer,
    services: Services,
    *,
    allowed_hosts: Sequence[str],
    allowed_origins: Sequence[str] = (),
    console: bool = False,
    rates: Mapping[str, RouteRate] | None = None,
) -> Starlette:
    """A fresh Starlette app around `server`. Cheap: Lambda builds one per invocation (see lambda_asgi.py). With
    `console`, the web console too (`notewell serve`; on AWS it has a function of its own). `rates`: as for
    build_oauth_app; by default the app's own, which is what `serve` (one app per process) wants."""
    issuer = services.oauth.issuer if services.oauth is not None else None
    console_routes = []
    if console:  # imported here: the MCP function never serves the console, and starts without loading it
        from notewell.entrypoints.console import Console

        console_routes = Console(services, secure=(issuer or "").startswith("https://")).routes()
    mcp_app = server.streamable_http_app(stateless_http=True, json_response=True, transport_security=SDK_SECURITY)
    manager = server.session_manager  # the manager this call just created

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():  # a mounted app's own lifespan never runs: the host enters it
            yield

    app = Starlette(
        routes=[
            Route("/health", _health, methods=["GET"]),
            Route("/mcp", _get_not_allowed, methods=["GET", "DELETE"]),
            *(
                discovery_routes(issuer, client_documents=services.oauth.client_documents)
                if services.oauth is not None and issuer is not None
                else []
            ),
            *(oauth_routes(services.oauth) if services.oauth is not None else []),
            *console_routes,
            Mount(
                "/",
                app=BearerAuthMiddleware(
                    mcp_app, services, issuer=issuer, writing_tools=getattr(server, "writing_tools", frozenset())
                ),
            ),
        ],
        lifespan=lifespan,
        middleware=_guards(allowed_hosts, allowed_origins, oauth_rates() if rates is None else rates),
    )
    return app
