"""The fence around fetching a client metadata document, against hosts that fight it: one that trickles bytes,
one that sends a compression bomb, and addresses that hide a private IPv4 address inside an IPv6 one."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Iterator

import httpx2
import pytest

from notewell.adapters.client_documents import TIMEOUT_SECONDS, HttpClientDocuments
from notewell.ports import ClientDocumentError

URL = "https://client.example.com/oauth/metadata.json"
PUBLIC = "93.184.216.34"


class FakeMonotonic:
    """The fetch's clock; the fake host moves it as it dawdles, so no test waits."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def fetcher(handler: object, *addresses: str, clock: FakeMonotonic | None = None) -> HttpClientDocuments:
    return HttpClientDocuments(
        resolver=lambda host: list(addresses or (PUBLIC,)),
        transport=httpx2.MockTransport(handler),  # type: ignore[arg-type]
        monotonic=clock or FakeMonotonic(),
    )


def test_a_host_sending_one_byte_every_2_5_seconds_is_cut_off_at_one_deadline_for_the_whole_fetch() -> None:
    clock = FakeMonotonic()
    sent: list[bytes] = []

    def trickle() -> Iterator[bytes]:
        for byte in b'{"client_id": "https://client.example.com/oauth/metadata.json"}':
            clock.now += 2.5  # each read is under the per-read timeout; together they are not
            sent.append(bytes([byte]))
            yield bytes([byte])

    with pytest.raises(ClientDocumentError, match=f"took over {TIMEOUT_SECONDS:g} seconds"):
        fetcher(lambda request: httpx2.Response(200, content=trickle()), clock=clock).fetch(URL)
    assert len(sent) <= 2  # stopped at the deadline, not at the end of the document


def test_a_gzip_bomb_is_cut_off_at_5_kb_of_decompressed_bytes_without_inflating_it() -> None:
    bomb = gzip.compress(b" " * 50_000_000)  # about 50 KB on the wire, 50 MB inflated
    documents = fetcher(lambda request: httpx2.Response(200, content=iter([bomb]),  # streamed, as from a socket
                                                        headers={"content-encoding": "gzip"}))  # fmt: skip
    tracemalloc.start()
    try:
        with pytest.raises(ClientDocumentError, match="over 5,120 bytes"):
            documents.fetch(URL)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 500_000  # about the bomb's own 50 KB: never megabytes of inflated spaces


def test_a_small_gzip_document_is_read_decompressed() -> None:
    document = b'{"client_id": "https://client.example.com/oauth/metadata.json"}'
    fetched = fetcher(
        lambda request: httpx2.Response(
            200, content=iter([gzip.compress(document)]), headers={"content-encoding": "gzip"}
        )  # fmt: skip
    ).fetch(URL)
    assert fetched.body == document


def test_a_document_in_an_encoding_the_fence_cannot_count_is_refused() -> None:
    documents = fetcher(
        lambda request: httpx2.Response(200, content=iter([b"\x00"]), headers={"content-encoding": "br"})
    )
    with pytest.raises(ClientDocumentError, match="serve it plain"):
        documents.fetch(URL)


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::7f00:1", "64:ff9b::a00:5", "64:ff9b:1::a9fe:a9fe", "::ffff:127.0.0.1", "::ffff:192.168.1.1",
     "2002:7f00:1::1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "::127.0.0.1"],
    ids=["nat64_loopback", "nat64_private", "nat64_local_prefix_metadata", "mapped_loopback", "mapped_private",
         "6to4_loopback", "6to4_link_local", "teredo_loopback_client", "ipv4_compatible_loopback"],
)  # fmt: skip
def test_nat64_6to4_teredo_and_ipv4_mapped_forms_of_private_addresses_are_refused(address: str) -> None:
    calls: list[httpx2.Request] = []

    def serve(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        return httpx2.Response(200, content=b"{}")

    documents = fetcher(serve, address)
    with pytest.raises(ClientDocumentError, match="non-public"):
        documents.fetch(URL)
    assert calls == []  # never connected


def test_a_nat64_form_of_a_public_address_is_fetched() -> None:
    documents = fetcher(lambda request: httpx2.Response(200, content=b"{}"), "64:ff9b::5db8:d822")
    assert documents.fetch(URL).body == b"{}"
