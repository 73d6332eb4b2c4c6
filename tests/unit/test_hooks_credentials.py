"""A hook sends the key (or OAuth token) the client itself sends to the same MCP URL, found where each client keeps
its MCP configuration; $NOTEWELL_API_KEY overrides; nothing is refreshed or invented."""

from __future__ import annotations

import json
from pathlib import Path

from notewell.domain.hooks import HookClient, bearer_in_claude_oauth, bearer_in_servers, same_endpoint
from notewell.entrypoints.hooks import find_bearer

URL = "http://127.0.0.1:8765/mcp"
NOW_MS = 1_790_000_000_000


def test_a_header_is_found_for_the_same_endpoint_written_another_way() -> None:
    servers = {
        "other": {"url": "https://elsewhere.example/mcp", "headers": {"Authorization": "Bearer nope"}},
        "notes": {"type": "http", "url": "HTTP://127.0.0.1:8765/mcp/", "headers": {"authorization": "Bearer k1"}},
    }

    assert bearer_in_servers(servers, URL, {}) == "k1"
    assert same_endpoint("https://Notes.Example.com/mcp", "https://notes.example.com/mcp/")
    assert not same_endpoint("https://notes.example.com/mcp", "https://notes.example.com/other")


def test_variables_in_headers_are_expanded_as_claude_code_and_cursor_write_them() -> None:
    environ = {"NOTEWELL_KEY": "k2"}

    assert (
        bearer_in_servers({"n": {"url": URL, "headers": {"Authorization": "Bearer ${NOTEWELL_KEY}"}}}, URL, environ)
        == "k2"
    )
    assert (
        bearer_in_servers({"n": {"url": URL, "headers": {"Authorization": "Bearer ${env:NOTEWELL_KEY}"}}}, URL, environ)
        == "k2"
    )


def test_codex_entries_give_their_token_through_a_variable_or_a_header() -> None:
    environ = {"NOTEWELL_API_KEY_CODEX": "k3", "AUTH_HEADER": "Bearer k4"}

    assert (
        bearer_in_servers({"n": {"url": URL, "bearer_token_env_var": "NOTEWELL_API_KEY_CODEX"}}, URL, environ) == "k3"
    )
    assert (
        bearer_in_servers({"n": {"url": URL, "env_http_headers": {"Authorization": "AUTH_HEADER"}}}, URL, environ)
        == "k4"
    )
    assert bearer_in_servers({"n": {"url": URL, "http_headers": {"Authorization": "Bearer k5"}}}, URL, {}) == "k5"


def test_an_entry_without_a_usable_token_gives_none() -> None:
    servers = {"n": {"url": URL, "headers": {"Authorization": "Basic abc"}, "bearer_token_env_var": "UNSET"}}

    assert bearer_in_servers(servers, URL, {}) is None
    assert bearer_in_servers(["not", "a", "map"], URL, {}) is None


def test_claude_codes_oauth_token_is_used_only_while_unexpired_and_only_for_its_server() -> None:
    credentials = {"mcpOAuth": {
        "notes|aHR0cDovL2xvY2FsaG9zdA": {"serverName": "notes", "serverUrl": URL, "accessToken": "nwt_live",
                                         "refreshToken": "r", "expiresAt": NOW_MS + 60_000},
        "old|eA": {"serverName": "old", "serverUrl": "https://old.example/mcp", "accessToken": "nwt_other",
                   "expiresAt": NOW_MS + 60_000},
    }}  # fmt: skip

    assert bearer_in_claude_oauth(credentials, URL, NOW_MS) == "nwt_live"
    assert bearer_in_claude_oauth(credentials, URL, NOW_MS + 120_000) is None


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_claude_codes_local_scope_for_the_repository_comes_before_its_user_scope(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(tmp_path / ".claude.json", {
        "mcpServers": {"notewell": {"type": "http", "url": URL, "headers": {"Authorization": "Bearer user-key"}}},
        "projects": {str(repo): {"mcpServers": {"nw": {"type": "http", "url": URL,
                                                        "headers": {"Authorization": "Bearer local-key"}}}}},
    })  # fmt: skip

    found = find_bearer(HookClient.CLAUDE_CODE, URL, repo / "src", {"HOME": str(tmp_path)}, NOW_MS)

    assert found is not None and found[0] == "local-key"
    assert find_bearer(HookClient.CLAUDE_CODE, URL, tmp_path / "elsewhere", {"HOME": str(tmp_path)}, NOW_MS) == (
        "user-key",
        str(tmp_path / ".claude.json"),
    )


def test_a_repositorys_mcp_json_is_read_and_the_environment_key_overrides_everything(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    entry = {"type": "http", "url": URL, "headers": {"Authorization": "Bearer ${TEAM_KEY}"}}
    _write(repo / ".mcp.json", {"mcpServers": {"nw": entry}})
    environ = {"HOME": str(tmp_path), "TEAM_KEY": "team-key"}

    assert find_bearer(HookClient.CLAUDE_CODE, URL, repo, environ, NOW_MS) == ("team-key", str(repo / ".mcp.json"))
    assert find_bearer(HookClient.CLAUDE_CODE, URL, repo, {**environ, "NOTEWELL_API_KEY": "env-key"}, NOW_MS) == (
        "env-key",
        "$NOTEWELL_API_KEY",
    )


def test_claude_codes_oauth_sign_in_is_the_last_resort(tmp_path: Path) -> None:
    _write(tmp_path / ".claude" / ".credentials.json",
           {"mcpOAuth": {"nw|x": {"serverUrl": URL, "accessToken": "nwt_1", "expiresAt": NOW_MS + 1}}})  # fmt: skip

    found = find_bearer(HookClient.CLAUDE_CODE, URL, tmp_path, {"HOME": str(tmp_path)}, NOW_MS)

    assert found is not None and found[0] == "nwt_1"


def test_codex_config_toml_and_cursor_mcp_json_are_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(tmp_path / ".codex" / "config.toml",
           f'[mcp_servers.notewell]\nurl = "{URL}"\nbearer_token_env_var = "NOTEWELL_CODEX_KEY"\n')  # fmt: skip
    entry = {"url": URL, "headers": {"Authorization": "Bearer cursor-key"}}
    _write(repo / ".cursor" / "mcp.json", {"mcpServers": {"notewell": entry}})
    environ = {"HOME": str(tmp_path), "NOTEWELL_CODEX_KEY": "codex-key"}

    assert find_bearer(HookClient.CODEX, URL, repo, environ, NOW_MS) == (
        "codex-key",
        str(tmp_path / ".codex/config.toml"),
    )
    assert find_bearer(HookClient.CURSOR, URL, repo, environ, NOW_MS) == ("cursor-key", str(repo / ".cursor/mcp.json"))


def test_no_configuration_means_no_token(tmp_path: Path) -> None:
    _write(tmp_path / ".claude.json", "{ not json")

    assert find_bearer(HookClient.CLAUDE_CODE, URL, tmp_path, {"HOME": str(tmp_path)}, NOW_MS) is None
