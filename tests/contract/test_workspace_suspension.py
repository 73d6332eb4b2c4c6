"""An operator suspends a workspace: on every store, each of its calls through MCP is refused with 403 and a
message that says what happened and that nothing is lost; other workspaces are untouched; resuming serves it again
with its notes intact."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.ports import Store
from notewell.services.metering import FLUSH_SECONDS
from tests.support.mcp_harness import connect, err, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


async def test_a_suspended_workspace_is_refused_and_served_again_once_resumed(
    services: Services, clock: FixedClock
) -> None:
    keys = make_keys(services)
    rival = services.auth.create_key(services.deps.store.list_workspaces()[1].id).secret
    async with running(make_app(services)) as app:
        async with connect(app, keys.full, "auto") as client:
            note = ok(await client.call_tool("create_note", {"project": "api", "title": "Auth", "body": "OAuth."}))
        suspended = services.workspaces.suspend(keys.workspace)
        assert suspended.suspended_at is not None
        assert services.workspaces.suspend(keys.workspace).suspended_at == suspended.suspended_at  # first date kept
        async with connect(app, keys.full, "auto") as client:
            refused = err(await client.call_tool("get_note", {"id": note["id"]}))
            assert refused["status"] == 403 and "suspended by its operator" in refused["message"]
            assert "notes are kept" in refused["message"]
            with pytest.raises(Exception, match="suspended"):
                await client.read_resource(f"notewell://notes/{note['id']}")
        async with connect(app, rival, "auto") as client:  # another tenant: untouched
            ok(await client.call_tool("list_projects", {}))

        resumed = services.workspaces.resume(keys.workspace)
        assert resumed.suspended_at is None
        clock.advance(seconds=FLUSH_SECONDS)  # what another container cached runs out as quickly
        async with connect(app, keys.full, "auto") as client:
            assert ok(await client.call_tool("get_note", {"id": note["id"]}))["body"] == "OAuth."
    listed = {w.id: w.suspended_at for w in services.deps.store.list_workspaces()}
    assert listed[keys.workspace] is None


def test_suspending_a_workspace_that_does_not_exist_says_so(services: Services) -> None:
    from notewell.domain.errors import NotFoundError

    with pytest.raises(NotFoundError, match="workspace list"):
        services.workspaces.suspend("ws_nope")


def test_an_embedded_store_from_before_suspension_opens_with_its_workspaces_intact(tmp_path: Path) -> None:
    path = tmp_path / "notewell.db"
    store = SqliteStore(path)
    bootstrap(Settings(data_dir=tmp_path), store=store).auth.create_workspace("old")
    store.close()
    with sqlite3.connect(path) as raw:  # the file as schema version 5 left it
        raw.execute("ALTER TABLE workspaces DROP COLUMN suspended_at")
        raw.execute("PRAGMA user_version = 5")
    reopened = SqliteStore(path)
    (workspace,) = reopened.list_workspaces()
    assert workspace.name == "old" and workspace.suspended_at is None
    assert reopened.set_suspended(workspace.id, "2026-12-04T12:00:00.000Z") is not None
    reopened.close()
