"""The outermost check of every HTTP app: the request is addressed to this deployment. No MCP import, so the
console's own function starts without the SDK."""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from starlette.datastructures import Headers

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

_T = TypeVar("_T")


def split_host(value: str) -> tuple[str, str | None]:
    """`Host`-style `name[:port]` → (lowercased name without IPv6 brackets, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else None
    name, colon, port = value.rpartition(":")
    if not colon or ":" in name:  # no port, or a bare IPv6 address
        return value, None
    return name, port


class HostGuard:
    """Answers only requests addressed to this deployment: the Host must be an allowed host (DNS rebinding), and an
    Origin, when sent, must be on an allowed host or listed (a web page on another site). Runs outermost, on every
    path, before authentication, so a refused request looks the same with or without a key."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str], origins: Sequence[str] = ()) -> None:
        self._app = app
        self._hosts = [split_host(host) for host in hosts]
        self._origins = frozenset(origin.lower().rstrip("/") for origin in origins)

    def host_allowed(self, host: str) -> bool:
        name, port = split_host(host)
        return any(name == allowed and (want is None or port == want) for allowed, want in self._hosts)

    def origin_allowed(self, origin: str) -> bool:
        origin = origin.lower().rstrip("/")
        if origin in self._origins:
            return True
        scheme, separator, host = origin.partition("://")
        return bool(separator) and scheme in ("http", "https") and "/" not in host and self.host_allowed(host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host, origin = headers.get("host", ""), headers.get("origin")
        if not self.host_allowed(host):
            message = (
                f"This server does not answer to the host {host[:100]!r}; connect through an allowed name, or add it "
                "to NOTEWELL_ALLOWED_HOSTS (notewell serve --allowed-host)."
                if host
                else "The request has no Host header; send one that names this server."
            )
            await _refuse(send, 421, "invalid_host", message)
            return
        if origin is not None and not self.origin_allowed(origin):
            message = (
                f"Requests from the web origin {origin[:100]!r} are not accepted; add it to NOTEWELL_ALLOWED_ORIGINS "
                "(notewell serve --allowed-origin) to allow a browser client there."
            )
            await _refuse(send, 403, "invalid_origin", message)
            return
        await self._app(scope, receive, send)


async def _refuse(
    send: Send, status: int, error: str, message: str, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps({"error": error, "error_description": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _route_value(table: Mapping[str, _T], path: str) -> _T | None:
    """The entry of the longest prefix of `path` in `table` (a prefix matches itself and what is below it)."""
    best: str | None = None
    for prefix in table:
        if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return None if best is None else table[best]


DRAINED_FREELY = 64 * 1024


class _BodyTooLargeError(Exception):
    """Raised into the app from `receive` once the body passed its limit; the 413 has already been sent."""


class BodyLimit:
    """Refuses a request body over its route's limit with 413 as soon as that is known: from Content-Length before
    anything is read, else by counting bytes as the app reads them. The server reads on only when the app asks, so
    an oversized body is never held whole, whoever reads it (a route, the bearer check, the SDK)."""

    def __init__(self, app: ASGIApp, limits: Mapping[str, int], default: int) -> None:
        self._app = app
        self._limits = dict(limits)
        self._default = default

    def limit_for(self, path: str) -> int:
        found = _route_value(self._limits, path)
        return self._default if found is None else found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        message = f"The request body is over {_size(limit)}, the limit for {scope['path'][:100]}; send a smaller one."
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _refuse(send, 413, "too_large", message, [(b"connection", b"close")])
            return
        received = 0
        started = answered = False
        # A body too big to drain for free (the server buffers about this much anyway), or of unknown size.
        unread = (declared.isdigit() and int(declared) > DRAINED_FREELY) or "transfer-encoding" in headers

        async def counting_receive() -> Message:
            nonlocal received, answered, unread
            event = await receive()
            if event["type"] == "http.request":
                unread = bool(event.get("more_body"))
                received += len(event.get("body", b""))
                if received > limit and not answered:
                    if not started:
                        await _refuse(send, 413, "too_large", message, [(b"connection", b"close")])
                    answered = True
                    raise _BodyTooLargeError
            return event

        async def answering_send(event: Message) -> None:
            nonlocal started
            if answered:  # the 413 is out: whatever the app says after its read failed is dropped
                return
            if event["type"] == "http.response.start":
                started = True
                if unread:  # answered without reading it all: close, or the server reads the rest to reuse the line
                    event = {**event, "headers": [*event.get("headers", []), (b"connection", b"close")]}
            await send(event)

        try:
            await self._app(scope, counting_receive, answering_send)
        except Exception:
            # Some readers (the SDK) catch the read error and fail otherwise; once the 413 is out that is expected.
            if not answered:
                raise


def _size(limit: int) -> str:
    return f"{limit // 1024 // 1024} MiB" if limit % (1024 * 1024) == 0 else f"{math.ceil(limit / 1024)} KiB"


class SourceBuckets:
    """Token buckets keyed by request source: each holds `burst` requests and refills at `per_second`. Memory is
    bounded: at most `sources` buckets, the longest unseen dropped first (a dropped source starts full again)."""

    def __init__(
        self, burst: int, per_second: float, *, sources: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._burst = float(burst)
        self._rate = per_second
        self._sources = sources
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # source -> (tokens, at)

    def take(self, source: str) -> float:
        """0 when `source` may go ahead (its token spent), else the seconds until it may."""
        now = self._clock()
        tokens, at = self._buckets.pop(source, (self._burst, now))
        tokens = min(self._burst, tokens + (now - at) * self._rate)
        allowed = tokens >= 1
        self._buckets[source] = (tokens - 1 if allowed else tokens, now)
        while len(self._buckets) > self._sources:
            self._buckets.popitem(last=False)
        return 0.0 if allowed else (1 - tokens) / self._rate


@dataclass(frozen=True, slots=True)
class RouteRate:
    """How often a route may be called: per source, and (optionally) by everyone together."""

    per_source: SourceBuckets
    overall: SourceBuckets | None = None


class RateLimit:
    """Answers 429 with Retry-After when a route is called more often than its RouteRate allows, before the request
    is read or handled. The buckets live as long as the RouteRate objects: the caller keeps them across apps."""

    def __init__(self, app: ASGIApp, routes: Mapping[str, RouteRate]) -> None:
        self._app = app
        self._routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        rate = _route_value(self._routes, scope["path"]) if scope["type"] == "http" else None
        if rate is None:
            await self._app(scope, receive, send)
            return
        client = scope.get("client")
        source = str(client[0]) if client else "unknown"
        wait = rate.per_source.take(source)
        if not wait and rate.overall is not None:
            wait = rate.overall.take("*")
        if wait:
            seconds = max(1, math.ceil(wait))
            message = f"Too many requests to {scope['path'][:100]}; try again in {seconds} seconds."
            await _refuse(send, 429, "too_many_requests", message, [(b"retry-after", str(seconds).encode())])
            return
        await self._app(scope, receive, send)
