"""Client metadata documents over HTTPS (CIMD): the one place Notewell fetches a URL a stranger chose.

So it is fenced: every address the host resolves to must be public, including the IPv4 address an IPv6 one embeds
(no loopback, private, link-local or otherwise special target: §6.5), no redirect is followed, the body is cut off
past 5 KB after decompression (§6.6), and the whole fetch has one deadline of a few seconds, however slowly the
host answers. What remains open: a name that resolves differently between the check and the connection (DNS
rebinding); the connection is made by name.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
import zlib
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx2

from notewell.domain.oauth import CLIENT_DOCUMENT_MAX_BYTES
from notewell.ports import ClientDocument, ClientDocumentError

Resolver = Callable[[str], list[str]]
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d{1,9})\s*(?:,|$)", re.IGNORECASE)
TIMEOUT_SECONDS = 3.0  # the whole fetch, not each read: a host sending a byte at a time gets no longer
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))  # RFC 6052, RFC 8215
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d, still routed by some stacks


def resolve(host: str) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)]


def non_public(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address itself, or the IPv4 address it embeds (IPv4-mapped, NAT64, 6to4, Teredo), when that one is not
    a public unicast address; None when every form of it is public."""
    ip = ipaddress.ip_address(address.partition("%")[0])
    candidates: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            candidates.append(ip.sixtofour)
        if ip.teredo is not None:
            candidates.extend(ip.teredo)
        if any(ip in net for net in (*_NAT64, _IPV4_COMPATIBLE)):
            candidates.append(ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF))
    for candidate in candidates:
        if not candidate.is_global or candidate.is_multicast:
            return candidate
    return None


class _Body:
    """The document's bytes as they arrive, decompressed here so the 5 KB cap counts what would be kept."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._inflate: zlib._Decompress | None = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(wbits=47)  # 32 + 15: gzip or zlib header, detected
        else:
            raise ClientDocumentError(f"the document is sent with content-encoding {encoding[:40]!r}; serve it plain")
        self.data = b""

    def add(self, chunk: bytes) -> None:
        room = CLIENT_DOCUMENT_MAX_BYTES + 1 - len(self.data)
        if self._inflate is None:
            self.data += chunk[:room]
        else:
            try:  # max_length: never more than the cap leaves room for, whatever the chunk expands to
                self.data += self._inflate.decompress(self._inflate.unconsumed_tail + chunk, room)
            except zlib.error as exc:
                raise ClientDocumentError("the document's compression is broken") from exc
        if len(self.data) > CLIENT_DOCUMENT_MAX_BYTES:
            raise ClientDocumentError(f"the document is over {CLIENT_DOCUMENT_MAX_BYTES:,} bytes")


class HttpClientDocuments:
    def __init__(
        self, *, resolver: Resolver = resolve, transport: httpx2.BaseTransport | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self._resolve = resolver
        self._transport = transport
        self._monotonic = monotonic

    def _left(self, deadline: float) -> float:
        # Each connect and read waits at most what is left of the whole fetch (the loop checks between reads).
        return max(0.05, deadline - self._monotonic())

    def fetch(self, url: str) -> ClientDocument:
        deadline = self._monotonic() + TIMEOUT_SECONDS
        host = urlsplit(url).hostname or ""
        try:
            addresses = self._resolve(host)
        except OSError as exc:
            raise ClientDocumentError(f"{host} does not resolve") from exc
        for address in addresses:
            refused = non_public(address)
            if refused is not None:
                raise ClientDocumentError(f"{host} resolves to a non-public address ({refused})")
        try:
            with (
                httpx2.Client(transport=self._transport, timeout=self._left(deadline), follow_redirects=False) as http,
                http.stream(
                    "GET", url, headers={"accept": "application/json", "accept-encoding": "gzip, identity"}
                ) as response,
            ):
                if response.status_code != 200:
                    raise ClientDocumentError(f"the document answered HTTP {response.status_code}")
                # Raw bytes: the decompressing reader would inflate a bomb whole. A response the transport already
                # read (a MockTransport handed bytes) holds its decoded content.
                consumed = response.is_stream_consumed
                body = _Body("identity" if consumed else response.headers.get("content-encoding", ""))
                for chunk in [response.content] if consumed else response.iter_raw():
                    if self._monotonic() > deadline:
                        raise ClientDocumentError(f"the document took over {TIMEOUT_SECONDS:g} seconds to arrive")
                    body.add(chunk)
                cache = _MAX_AGE.search(response.headers.get("cache-control", ""))
        except httpx2.HTTPError as exc:
            raise ClientDocumentError(f"the document could not be fetched ({type(exc).__name__})") from exc
        return ClientDocument(body.data, int(cache.group(1)) if cache else None)
