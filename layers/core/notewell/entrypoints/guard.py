"""The outermost check of every HTTP app: the request is addressed to this deployment. No MCP import, so the
console's own function starts without the SDK."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from starlette.datastructures import Headers

if TYPE_CHECKING:
    from collections.abc import Sequence

    from starlette.types import ASGIApp, Receive, Scope, Send


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


async def _refuse(send: Send, status: int, error: str, message: str) -> None:
    body = json.dumps({"error": error, "error_description": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
