"""Client metadata documents over HTTPS (CIMD): the one place Notewell fetches a URL a stranger chose.

So it is fenced: every address the host resolves to must be public (no loopback, private, link-local or
otherwise special target: §6.5), no redirect is followed, the body is cut off past 5 KB (§6.6), and the whole fetch
has a few seconds. What remains open: a name that resolves differently between the check and the connection
(DNS rebinding); the connection is made by name.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx2

from notewell.domain.oauth import CLIENT_DOCUMENT_MAX_BYTES
from notewell.ports import ClientDocument, ClientDocumentError

Resolver = Callable[[str], list[str]]
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d{1,9})\s*(?:,|$)", re.IGNORECASE)
TIMEOUT_SECONDS = 3.0


def resolve(host: str) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)]


class HttpClientDocuments:
    def __init__(self, *, resolver: Resolver = resolve, transport: httpx2.BaseTransport | None = None) -> None:
        self._resolve = resolver
        self._transport = transport

    def fetch(self, url: str) -> ClientDocument:
        host = urlsplit(url).hostname or ""
        try:
            addresses = self._resolve(host)
        except OSError as exc:
            raise ClientDocumentError(f"{host} does not resolve") from exc
        for address in addresses:
            ip = ipaddress.ip_address(address.partition("%")[0])
            if not ip.is_global or ip.is_multicast:
                raise ClientDocumentError(f"{host} resolves to a non-public address ({ip})")
        try:
            with (
                httpx2.Client(transport=self._transport, timeout=TIMEOUT_SECONDS, follow_redirects=False) as http,
                http.stream("GET", url, headers={"accept": "application/json"}) as response,
            ):
                if response.status_code != 200:
                    raise ClientDocumentError(f"the document answered HTTP {response.status_code}")
                body = b""
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > CLIENT_DOCUMENT_MAX_BYTES:
                        raise ClientDocumentError(f"the document is over {CLIENT_DOCUMENT_MAX_BYTES:,} bytes")
                cache = _MAX_AGE.search(response.headers.get("cache-control", ""))
        except httpx2.HTTPError as exc:
            raise ClientDocumentError(f"the document could not be fetched ({type(exc).__name__})") from exc
        return ClientDocument(body, int(cache.group(1)) if cache else None)
