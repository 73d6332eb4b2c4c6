"""Serving beyond loopback: only requests addressed to an allowed host (and, from a browser, an allowed origin) are
answered, on every path and before the key is looked at; `serve` takes allowed hosts from NOTEWELL_ALLOWED_HOSTS and
--allowed-host, and warns when it listens beyond loopback over plain HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest

from notewell.bootstrap import Services
from notewell.config import ConfigError, Settings
from notewell.entrypoints.cli import main, plain_http_warning, serve_hosts
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from tests.support.serve import serve

pytestmark = pytest.mark.anyio

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


@pytest.fixture
def key(services: Services) -> str:
    workspace, _ = services.auth.default_workspace()
    return services.auth.create_key(workspace.id, name="t").secret


@pytest.fixture
async def http(services: Services) -> AsyncIterator[httpx2.AsyncClient]:
    app = build_app(
        build_server(services),
        services,
        allowed_hosts=["notes.example.com", "10.0.0.5:8443", "[::1]"],
        allowed_origins=["https://app.example.net"],
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://notes.example.com") as client:
            yield client


async def call(http: httpx2.AsyncClient, path: str, headers: dict[str, str]) -> httpx2.Response:
    if path == "/mcp":
        return await http.post(path, json=LIST_TOOLS, headers={**MCP_HEADERS, **headers})
    return await http.get(path, headers=headers)


@pytest.mark.parametrize("path", ["/mcp", "/health"])
@pytest.mark.parametrize("with_key", [False, True], ids=["no key", "valid key"])
async def test_a_request_for_a_host_not_served_is_refused_before_the_key_is_checked(
    http: httpx2.AsyncClient, key: str, path: str, with_key: bool
) -> None:
    headers = {"host": "evil.example:8765", **({"authorization": f"Bearer {key}"} if with_key else {})}
    response = await call(http, path, headers)
    assert response.status_code == 421
    assert response.json() == {
        "error": "invalid_host",
        "error_description": "This server does not answer to the host 'evil.example:8765'; connect through an "
        "allowed name, or add it to NOTEWELL_ALLOWED_HOSTS (notewell serve --allowed-host).",
    }


async def test_the_same_requests_for_an_allowed_host_reach_health_and_authentication(
    http: httpx2.AsyncClient, key: str
) -> None:
    assert (await call(http, "/health", {})).json() == {"status": "ok"}
    assert (await call(http, "/mcp", {})).status_code == 401
    listed = await call(http, "/mcp", {"authorization": f"Bearer {key}"})
    assert listed.status_code == 200 and listed.json()["result"]["tools"]


@pytest.mark.parametrize(
    ("host", "answered"),
    [
        ("notes.example.com", True),
        ("notes.example.com:443", True),  # a name without a port is allowed on any port
        ("NOTES.Example.com:8765", True),  # host names are case-insensitive
        ("10.0.0.5:8443", True),
        ("10.0.0.5:9000", False),  # a name given with a port is allowed on that port only
        ("10.0.0.5", False),
        ("[::1]:8765", True),
        ("notes.example.com.evil.test", False),
        ("evil.test:notes.example.com", False),
        ("", False),
    ],
)
async def test_allowed_hosts_match_by_name_and_by_port_when_one_is_given(
    http: httpx2.AsyncClient, host: str, answered: bool
) -> None:
    response = await http.get("/health", headers={"host": host})
    assert response.status_code == (200 if answered else 421), response.text


@pytest.mark.parametrize(
    ("origin", "answered"),
    [
        ("https://notes.example.com", True),  # a page served from an allowed host
        ("http://notes.example.com:3000", True),
        ("https://app.example.net", True),  # listed in allowed origins
        ("https://app.example.net:8443", False),  # an origin is scheme, host and port: exactly as listed
        ("https://evil.example", False),
        ("null", False),  # sandboxed frames and file:// pages
        ("https://notes.example.com.evil.example", False),
    ],
)
async def test_browser_origins_are_accepted_on_allowed_hosts_or_when_listed(
    http: httpx2.AsyncClient, key: str, origin: str, answered: bool
) -> None:
    response = await call(http, "/mcp", {"origin": origin, "authorization": f"Bearer {key}"})
    if answered:
        assert response.status_code == 200 and response.json()["result"]["tools"]
    else:
        assert response.status_code == 403
        assert response.json()["error"] == "invalid_origin"
        assert "NOTEWELL_ALLOWED_ORIGINS" in response.json()["error_description"]


def test_allowed_hosts_and_origins_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {"NOTEWELL_ALLOWED_HOSTS": " Notes.Example.com, 10.0.0.5:8443,", "NOTEWELL_ALLOWED_ORIGINS": "https://App.net/"}
    )
    assert settings.allowed_hosts == ("notes.example.com", "10.0.0.5:8443")
    assert settings.allowed_origins == ("https://app.net",)
    with pytest.raises(ConfigError, match="NOTEWELL_ALLOWED_HOSTS has 'https://notes.example.com', which is not a"):
        Settings.from_env({"NOTEWELL_ALLOWED_HOSTS": "https://notes.example.com"})
    with pytest.raises(ConfigError, match="NOTEWELL_ALLOWED_ORIGINS has 'app.net', which is not an origin"):
        Settings.from_env({"NOTEWELL_ALLOWED_ORIGINS": "app.net"})


def test_serve_answers_loopback_the_bound_address_and_the_configured_hosts() -> None:
    assert serve_hosts("127.0.0.1", []) == ["127.0.0.1", "localhost", "[::1]"]
    assert serve_hosts("0.0.0.0", ["notes.test"]) == ["127.0.0.1", "localhost", "[::1]", "notes.test"]
    assert serve_hosts("192.168.1.5", ["notes.test"])[3:] == ["192.168.1.5", "notes.test"]
    assert serve_hosts("fe80::1", [])[3:] == ["[fe80::1]"]


@pytest.mark.parametrize(
    ("address", "warned"),
    [("127.0.0.1", False), ("127.0.0.2", False), ("::1", False), ("0.0.0.0", True), ("::", True), ("10.1.2.3", True)],
)
def test_plain_http_is_warned_about_beyond_loopback_only(address: str, warned: bool) -> None:
    assert (plain_http_warning(address, 8765) is not None) is warned


def test_a_bad_allowed_host_flag_is_one_line_and_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", "--allowed-host", "notes.test/mcp", "--data-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "notewell: --allowed-host has 'notes.test/mcp', which is not a host name; give names like notes.example.com "
        "or notes.example.com:8443, without a scheme or path."
    ]


@pytest.fixture
def served_on_all_interfaces(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    """`notewell serve --host 0.0.0.0 --port 0` with a host from the flag and one from the environment."""
    flags = ("--host", "0.0.0.0", "--allowed-host", "flag.notes.test")
    with serve(tmp_path, *flags, env={"NOTEWELL_ALLOWED_HOSTS": "env.notes.test"}) as served:
        yield served.port, served.printed.splitlines(keepends=True)


def test_serve_on_all_interfaces_warns_and_answers_the_allowed_hosts(
    served_on_all_interfaces: tuple[int, list[str]],
) -> None:
    port, printed = served_on_all_interfaces
    assert printed[0] == (
        f"notewell: warning: listening on 0.0.0.0:{port} over plain HTTP, so API keys and notes cross the network "
        "unencrypted; listen on 127.0.0.1 behind a TLS reverse proxy instead (README: Serving beyond loopback).\n"
    )
    assert "Answering Host names: 127.0.0.1, localhost, [::1], env.notes.test, flag.notes.test" in "".join(printed)
    with httpx2.Client(base_url=f"http://127.0.0.1:{port}") as client:
        for host in ("env.notes.test", "flag.notes.test", f"localhost:{port}"):
            assert client.get("/health", headers={"host": host}).status_code == 200, host
        assert client.get("/health", headers={"host": "other.notes.test"}).status_code == 421
        # Reachable by other names and no NOTEWELL_ISSUER: no OAuth discovery (a loopback issuer would mislead).
        metadata = client.get("/.well-known/oauth-authorization-server", headers={"host": "env.notes.test"})
        assert metadata.status_code == 404
