"""Fetching client metadata documents: the fence around the one URL a stranger picks (CIMD §6.5, §6.6)."""

from __future__ import annotations

import httpx2
import pytest

from notewell.adapters.client_documents import HttpClientDocuments
from notewell.ports import ClientDocumentError

URL = "https://client.example.com/oauth/metadata.json"


def documents(handler: object, *addresses: str) -> HttpClientDocuments:
    return HttpClientDocuments(
        resolver=lambda host: list(addresses or ("93.184.216.34",)),
        transport=httpx2.MockTransport(handler),  # type: ignore[arg-type]
    )


def test_a_public_document_is_fetched_with_its_cache_lifetime() -> None:
    fetched = documents(lambda request: httpx2.Response(200, content=b'{"a":1}',
                                                        headers={"cache-control": "public, max-age=600"}))  # fmt: skip
    document = fetched.fetch(URL)
    assert document.body == b'{"a":1}' and document.max_age == 600


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.5", "192.168.1.1", "169.254.169.254", "::1", "fd00::1",
                                     "0.0.0.0", "100.64.0.1"])  # fmt: skip
def test_a_host_resolving_to_a_private_loopback_or_link_local_address_is_refused(address: str) -> None:
    calls: list[object] = []
    fetcher = documents(lambda request: calls.append(request) or httpx2.Response(200, content=b"{}"),
                        "93.184.216.34", address)  # fmt: skip
    with pytest.raises(ClientDocumentError, match="non-public"):
        fetcher.fetch(URL)
    assert calls == []  # never connected


def test_a_redirect_is_not_followed() -> None:
    fetcher = documents(lambda request: httpx2.Response(302, headers={"location": "http://169.254.169.254/"}))
    with pytest.raises(ClientDocumentError, match="HTTP 302"):
        fetcher.fetch(URL)


def test_a_document_over_5_kb_is_cut_off() -> None:
    fetcher = documents(lambda request: httpx2.Response(200, content=b"x" * 5_121))
    with pytest.raises(ClientDocumentError, match="over 5,120 bytes"):
        fetcher.fetch(URL)


def test_a_failed_connection_or_error_status_is_an_error_not_a_crash() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with pytest.raises(ClientDocumentError, match="could not be fetched"):
        documents(refuse).fetch(URL)
    with pytest.raises(ClientDocumentError, match="HTTP 404"):
        documents(lambda request: httpx2.Response(404)).fetch(URL)
    with pytest.raises(ClientDocumentError, match="does not resolve"):
        HttpClientDocuments(resolver=lambda host: (_ for _ in ()).throw(OSError("nx"))).fetch(URL)
