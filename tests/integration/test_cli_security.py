"""Issue 38, the command line: a data directory with several workspaces is served whole, a port outside 1-65535
is refused, and text arguments that are not printable UTF-8 are refused with a message, before anything is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from notewell.entrypoints.cli import main
from tests.support.mcp_harness import err, ok
from tests.support.serve import READY_SECONDS, serve

pytestmark = pytest.mark.anyio


def run_cli(*args: str | bytes) -> subprocess.CompletedProcess[str]:
    """`notewell ARGS` as a process, so argv goes through the OS's own decoding; bounded, never left running."""
    return subprocess.run(
        [sys.executable, "-m", "notewell.entrypoints.cli", *args],
        capture_output=True, text=True, timeout=READY_SECONDS, env=dict(os.environ),
    )  # fmt: skip


def created(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, str]:
    assert main([*args, "--json"]) == 0
    result: dict[str, str] = json.loads(capsys.readouterr().out)
    return result


async def test_serve_serves_every_workspace_of_the_data_dir_each_key_seeing_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    laptop = created(capsys, "keys", "create", "--name", "laptop", *data)  # the local workspace, as serve makes it
    beta = created(capsys, "workspace", "create", "--name", "beta", *data)
    ci = created(capsys, "keys", "create", "--workspace", beta["id"], "--name", "ci", *data)
    empty = created(capsys, "workspace", "create", "--name", "gamma", *data)

    with serve(tmp_path / "data", env={"NOTEWELL_HOME": str(tmp_path / "home")}) as server:
        # The banner names each workspace's keys (never a secret) and says how to give one a key.
        assert "Workspaces (each key sees its own workspace only):" in server.printed
        assert f"  {laptop['workspace']} (local): keys laptop\n" in server.printed
        assert f"  {beta['id']} (beta): keys ci\n" in server.printed
        assert f"  {empty['id']} (gamma): no key yet; notewell keys create --workspace {empty['id']}" in server.printed
        assert laptop["secret"] not in server.printed and ci["secret"] not in server.printed

        url = f"{server.base}/mcp"
        notes: dict[str, str] = {}
        for name, key in (("laptop", laptop["secret"]), ("ci", ci["secret"])):
            async with (
                httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                note = {"project": "shared", "title": f"Written with {name}", "body": "Side by side."}
                notes[name] = ok(await client.call_tool("create_note", note))["id"]
        for name, key, other in (("laptop", laptop["secret"], "ci"), ("ci", ci["secret"], "laptop")):
            async with (
                httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                own = ok(await client.call_tool("get_note", {"id": notes[name]}))
                assert own["title"] == f"Written with {name}"
                hidden = err(await client.call_tool("get_note", {"id": notes[other]}))
                assert hidden["status"] == 404


def test_serve_refuses_a_port_outside_1_to_65535_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A real process: before the check the OS wrapped 99999 to 34463 and served there (the timeout ends that run).
    refused = run_cli("serve", "--port", "99999", "--data-dir", str(tmp_path / "data"))
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1] == (
        "notewell serve: error: argument --port: '99999' is not a port; give a number from 1 to 65535 "
        "(0 picks a free one)."
    )
    assert "Notewell serving" not in refused.stdout and not (tmp_path / "data").exists()
    for port in ("65536", "-1", "http"):
        with pytest.raises(SystemExit) as stopped:
            main(["serve", "--port", port, "--data-dir", str(tmp_path / "data")])
        assert stopped.value.code == 2
        assert f"argument --port: '{port}' is not a port" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["keys", "create", "--name", "\udcff"], "--name has the byte \\xff, which is not UTF-8 text;"),
        (["keys", "create", "--project", "web\udcc3"], "--project has the byte \\xc3, which is not UTF-8 text;"),
        (["workspace", "create", "--name", "\udcff"], "--name has the byte \\xff, which is not UTF-8 text;"),
        (["keys", "create", "--name", "a\x1b[2Jb"], "--name has the control character U+001B; pass printable text."),
        (["keys", "revoke", "key_\udcff"], "ID has the byte \\xff, which is not UTF-8 text;"),
    ],
    ids=["key name", "project slug", "workspace name", "escape sequence", "key id"],
)
def test_text_arguments_that_are_not_printable_utf8_are_refused_clearly_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    data = tmp_path / "data"
    assert main([*args, "--data-dir", str(data)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"notewell: {message}") and error.count("\n") == 1, error
    assert "unexpected" not in error and not data.exists()  # refused before the store is opened


def test_a_non_utf8_key_name_from_the_shell_is_refused_clearly(tmp_path: Path) -> None:
    # What `notewell keys create --name $'\xff'` passes: the raw byte, decoded by the OS with surrogateescape.
    refused = run_cli("keys", "create", "--name", b"\xff", "--data-dir", str(tmp_path / "data"))
    assert (refused.returncode, refused.stderr) == (
        2,
        "notewell: --name has the byte \\xff, which is not UTF-8 text; pass it as UTF-8.\n",
    )
    assert not (tmp_path / "data").exists()
