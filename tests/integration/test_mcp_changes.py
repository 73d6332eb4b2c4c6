"""get_changes_since through the real MCP client, both eras."""

from __future__ import annotations

from pathlib import Path

import bpe_openai
import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.refs import note_ref
from notewell.ports import Store
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def feed_services(store: Store, tmp_path: Path, clock: FixedClock) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


@pytest.mark.parametrize("mode", MODES)
async def test_a_change_is_in_the_next_read_of_another_agent_as_soon_as_it_is_acknowledged(
    feed_services: Services, mode: str
) -> None:
    keys = make_keys(feed_services)
    async with (
        running(make_app(feed_services)) as app,
        connect(app, keys.full, mode) as writer,
        connect(app, keys.scoped, mode) as follower,  # another agent, with a key of its own (project 'alpha')
    ):
        start = ok(await follower.call_tool("get_changes_since", {"project": "alpha"}))
        claim = {"project": "alpha", "content": "I am taking the payments module.", "type": "status"}
        taken = ok(await writer.call_tool("remember", claim))
        page = ok(await follower.call_tool("get_changes_since", {"project": "alpha", "cursor": start["cursor"]}))
    assert [(c["id"], c["change"]) for c in page["changes"]] == [(taken["note"]["id"], "created")]
    assert page.get("retryAfter") is None


@pytest.mark.parametrize("mode", MODES)
async def test_an_agent_resumes_from_its_cursor_after_another_agent_worked(
    feed_services: Services, clock: FixedClock, mode: str
) -> None:
    key = make_keys(feed_services).full
    async with running(make_app(feed_services)) as app, connect(app, key, mode) as client:
        ids = [
            ok(await client.call_tool("create_note", {"project": "api", "title": f"N{n}", "body": f"b{n}"}))["id"]
            for n in range(5)
        ]
        first = ok(await client.call_tool("get_changes_since", {"project": "api", "limit": 3}))
        assert [c["id"] for c in first["changes"]] == ids[:3] and first["hasMore"] is True
        assert set(first["changes"][0]) == {
            "id", "change", "title", "type", "status", "version", "updatedAt", "excerpt", "bodySize"
        }  # fmt: skip
        second = ok(await client.call_tool("get_changes_since", {"project": "api", "cursor": first["cursor"]}))
        assert [c["id"] for c in second["changes"]] == ids[3:] and second["hasMore"] is False

        ok(await client.call_tool("delete_note", {"id": ids[0]}))
        ok(await client.call_tool("patch_note", {"id": ids[1], "mode": "append", "text": "more"}))
        later = ok(await client.call_tool("get_changes_since", {"project": "api", "cursor": second["cursor"]}))
        assert [(c["id"], c["change"]) for c in later["changes"]] == [(ids[0], "deleted"), (ids[1], "updated")]

        forged = err(await client.call_tool("get_changes_since", {"project": "api", "cursor": "x" + first["cursor"]}))
        assert forged["status"] == 400 and forged["code"] == "invalid_cursor"
        locked = err(await client.call_tool("get_changes_since", {
            "project": "api", "cursor": first["cursor"], "types": ["decision"],
        }))  # fmt: skip
        assert locked["status"] == 400
        both = err(await client.call_tool("get_changes_since", {
            "project": "api", "cursor": first["cursor"], "since": "2026-01-01T00:00:00Z",
        }))  # fmt: skip
        assert both["status"] == 400
        bad_time = err(await client.call_tool("get_changes_since", {"project": "api", "since": "yesterday"}))
        assert bad_time["status"] == 400


async def test_the_description_starts_with_the_contract_words(feed_services: Services) -> None:
    key = make_keys(feed_services).full
    async with running(make_app(feed_services)) as app, connect(app, key, "auto") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    description = tools["get_changes_since"].description or ""
    assert description.startswith("RESUME AFTER ANOTHER AGENT OR HUMAN MAY HAVE CHANGED THE PROJECT")


async def test_a_page_as_sent_fits_its_budget_and_its_cursor_is_short(
    feed_services: Services, clock: FixedClock
) -> None:
    encoding = bpe_openai.get_encoding("cl100k_base")
    owner = feed_services.auth.authenticate(make_keys(feed_services).full)
    assert owner is not None
    for n in range(60):
        body = f"Decision {n}: the retry budget of the ingest worker is {n} attempts, spread over a minute. " * 2
        feed_services.notes.create(owner, "api", title=f"Retry budget {n}", body=body)
        clock.advance(milliseconds=3)
    clock.advance(seconds=60)
    key = feed_services.auth.create_key(owner.workspace_id, name="agent").secret
    async with running(make_app(feed_services)) as app, connect(app, key, "auto") as client:
        for budget in (300, 1_000, 4_000):
            result = await client.call_tool("get_changes_since", {"project": "api", "maxTokens": budget})
            page, text = ok(result), result.content[0].text  # type: ignore[union-attr]
            assert len(encoding.encode(text)) <= budget
            assert page["hasMore"] and f"cursor: {page['cursor']}\n" in text and len(page["cursor"]) <= 24
            named = [line.split(" ", 2)[1] for line in text.splitlines() if line.startswith("- ")]
            assert named == [note_ref(c["id"]) for c in page["changes"]] and len(named) > 1  # each by its ref
