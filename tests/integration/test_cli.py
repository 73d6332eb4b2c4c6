"""The `notewell` command as a person runs it: serve on a real port, then keys create | list | revoke."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client

from notewell.entrypoints.cli import main
from tests.support.serve import serve

pytestmark = pytest.mark.anyio


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """`notewell serve` in a subprocess on a free port; yields (url, first key, everything it printed)."""
    with serve(tmp_path, env={"NOTEWELL_HOME": str(tmp_path / "home")}) as server:
        # serve binds before it prints: the port accepts connections from here on
        assert server.key is not None, server.printed
        yield f"{server.base}/mcp", server.key, server.printed


async def test_first_serve_prints_a_working_key_and_the_connect_commands(served: tuple[str, str, str]) -> None:
    url, key, output = served
    assert f"claude mcp add --transport http notewell {url}" in output
    config, _ = json.JSONDecoder().raw_decode(output[output.index("{", output.index("Other MCP clients")) :])
    assert config["mcpServers"]["notewell"]["url"] == url
    assert config["mcpServers"]["notewell"]["headers"]["Authorization"] == f"Bearer {key}"
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}) as http:
        for mode in ("legacy", "2026-07-28"):
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                created = await client.call_tool("create_note", {"project": "cli", "title": "Hi", "body": "there"})
                assert not created.is_error and created.structured_content
        health = await http.get(url.replace("/mcp", "/health"))
        assert health.json() == {"status": "ok"}
    # The console it names answers at the root, with its sign-in page.
    console_url = output.split("Console for people: ", 1)[1].split()[0]
    assert console_url == url.removesuffix("mcp")
    async with httpx2.AsyncClient() as browser:
        page = await browser.get(console_url)
        assert page.status_code == 200 and "Sign in to the Notewell console" in page.text


def test_keys_create_list_and_revoke_against_the_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main(["keys", "create", "--project", "web", "--read-only", "--name", "ci", "--json", *data]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["secret"].startswith("nwk_") and created["project"] == "web" and created["readOnly"] is True

    assert main(["keys", "list", "--json", *data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [k["id"] for k in listed] == [created["id"]]
    assert "secret" not in listed[0] and created["secret"] not in json.dumps(listed)
    assert listed[0]["hint"] == "…" + created["secret"][-4:]

    assert main(["keys", "revoke", created["id"], "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out)["revokedAt"]
    assert main(["keys", "revoke", "key_nope", *data]) == 2
    assert "No key key_nope" in capsys.readouterr().err


def test_workspace_plan_is_shown_and_changed_by_the_admin_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main(["workspace", "plan", "--json", *data]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["plan"] == "enterprise"  # the embedded store's own workspace has no quotas
    assert main(["workspace", "plan", "--set", "team", "--json", *data]) == 0
    changed = json.loads(capsys.readouterr().out)
    assert changed["plan"] == "team" and changed["revisionsPerNote"] == 200 and changed["callsPerMonth"] == 2_000_000
    with pytest.raises(SystemExit):  # argparse refuses an unknown plan with its usage message
        main(["workspace", "plan", "--set", "gold", *data])
    assert "invalid choice: 'gold'" in capsys.readouterr().err


def test_serve_on_a_port_in_use_says_so_and_exits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--data-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert f"Cannot listen on 127.0.0.1:{port}" in error and "--port" in error


def test_grants_list_shows_who_approved_what_and_revoke_ends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    from notewell.adapters.sqlite import SqliteStore
    from notewell.bootstrap import bootstrap
    from notewell.config import Settings
    from notewell.domain.oauth import OAuthError
    from tests.support.oauth import issue_tokens

    data = ["--data-dir", str(tmp_path)]
    assert main(["keys", "create", "--project", "web", "--name", "person", "--json", *data]) == 0
    key = json.loads(capsys.readouterr().out)
    store = SqliteStore(tmp_path / "notewell.db")
    services = bootstrap(Settings(data_dir=tmp_path, issuer="http://127.0.0.1:8765"), store=store)
    oauth = services.oauth
    assert oauth is not None
    client, issued = issue_tokens(services, key["secret"], "Claude Code")
    form_type = "application/x-www-form-urlencoded"
    assert oauth.authenticate_access(str(issued["access_token"])) is not None
    store.close()

    assert main(["grants", "list", "--json", *data]) == 0
    (grant,) = json.loads(capsys.readouterr().out)
    assert (grant["clientName"], grant["scopes"], grant["project"], grant["keyId"], grant["status"]) == (
        "Claude Code",
        ["notes:read", "notes:write"],
        "web",
        key["id"],
        "active",
    )
    assert grant["createdAt"] and grant["lastUsedAt"]
    assert main(["grants", "list", *data]) == 0
    assert re.search(
        rf"{grant['id']}  Claude Code  notes:read notes:write  project=web  active", capsys.readouterr().out
    )
    assert main(["grants", "revoke", grant["id"], *data]) == 0
    assert f"Ended grant {grant['id']} (Claude Code)." in capsys.readouterr().out
    assert main(["grants", "revoke", "fam_nope", *data]) == 2
    assert "No grant fam_nope" in capsys.readouterr().err
    store = SqliteStore(tmp_path / "notewell.db")
    services = bootstrap(Settings(data_dir=tmp_path, issuer="http://127.0.0.1:8765"), store=store)
    assert services.oauth is not None and services.oauth.authenticate_access(str(issued["access_token"])) is None
    refresh = {"grant_type": "refresh_token", "refresh_token": str(issued["refresh_token"]), "client_id": client}
    with pytest.raises(OAuthError, match="invalid_grant"):
        services.oauth.token(list(refresh.items()), form_type, False)
    store.close()
