"""The `anchors` argument through the real MCP client (both protocol eras, every store) and through the deployed
handler: anchors made from a real git checkout are written by create_note, update_note and remember, read back by
get_note, get_notes and search_notes with bodies, and checked against the checkout by `notewell check`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from functions.mcp import app as mcp_function
from notewell.adapters.git_tree import GitTree
from notewell.domain import rules
from notewell.entrypoints import anchors_cli
from notewell.services.notes import NoteChanges
from tests.integration.test_lambda_handler import FakeContext, body_of, lambda_env, load_event  # noqa: F401
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio

RETRY = "def backoff(attempt):\n    return min(2**attempt, 30)\n\n\ndef jitter():\n    return 0.1\n"


@pytest.fixture
def checkout(tmp_path: Path) -> GitTree:
    root = tmp_path / "billing-api"
    root.mkdir()
    (root / "retry.py").write_text(RETRY)
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **identity})
    return GitTree.around(root)


def printed(tree: GitTree, *specs: str) -> list[dict[str, object]]:
    """What `notewell anchor --print SPEC...` prints, as a client passes it on."""
    head = tree.head()
    return [rules.anchor_json(anchors_cli.anchor_of(tree, spec, tree.top, head)) for spec in specs]


@pytest.mark.parametrize("mode", MODES)
async def test_anchors_are_written_read_back_and_checked_against_the_checkout(
    services: Services, checkout: GitTree, mode: str
) -> None:
    keys = make_keys(services)
    anchors = printed(checkout, "retry.py#backoff", "retry.py:5-6")
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        created = ok(await client.call_tool("create_note", {
            "project": "billing", "title": "Backoff cap", "body": "Webhook backoff caps at 30 s.", "anchors": anchors,
        }))  # fmt: skip
        assert "anchors" not in created  # writes answer lean
        full = ok(await client.call_tool("get_note", {"id": created["id"]}))
        assert full["anchors"] == anchors
        text = (await client.call_tool("get_note", {"id": created["id"]})).content[0].text  # type: ignore[union-attr]
        assert "anchored to retry.py#backoff (lines 1-2) at" in text and "anchored to retry.py:5-6 at" in text
        assert ok(await client.call_tool("get_notes", {"ids": [created["id"]]}))["notes"][0]["anchors"] == anchors
        whole = ok(
            await client.call_tool("search_notes", {"project": "billing", "query": "backoff", "includeBody": True})
        )
        lean = ok(await client.call_tool("search_notes", {"project": "billing", "query": "backoff"}))
        assert whole["results"][0]["anchors"] == anchors and "anchors" not in lean["results"][0]

        jitter = printed(checkout, "retry.py#jitter")
        remembered = ok(await client.call_tool("remember", {
            "project": "billing", "content": "Jitter adds 0.1 s to each retry.", "anchors": jitter,
        }))  # fmt: skip
        assert remembered["status"] == "created"
        plain = ok(await client.call_tool("create_note", {"project": "billing", "title": "Plain", "body": "No code."}))
        assert "anchors" not in ok(await client.call_tool("get_note", {"id": plain["id"]}))

    (checkout.top / "retry.py").write_text(RETRY.replace("30", "60"))
    owner = services.auth.authenticate(keys.full)
    assert owner is not None
    report = anchors_cli.check(services, owner, GitTree.around(checkout.top), ["billing"])
    assert {c.view.note.title: c.verdict.freshness.value for c in report.notes} == {
        "Backoff cap": "changed", "Jitter adds 0.1 s to each retry": "fresh",
    }  # fmt: skip


async def test_update_note_replaces_or_clears_anchors_and_a_bad_anchor_writes_nothing(
    services: Services, checkout: GitTree
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, "2026-07-28") as client:
        note = ok(await client.call_tool("create_note", {"project": "billing", "title": "T", "body": "b"}))
        anchors = printed(checkout, "retry.py")
        updated = ok(
            await client.call_tool("update_note", {"id": note["id"], "anchors": anchors, "expectedVersion": 1})
        )
        assert updated["version"] == 2
        assert ok(await client.call_tool("get_note", {"id": note["id"]}))["anchors"] == anchors

        bad = {**anchors[0], "path": "../../etc/passwd"}
        refused = err(await client.call_tool("update_note", {"id": note["id"], "anchors": [anchors[0], bad]}))
        assert refused["status"] == 400 and refused["message"].startswith("anchors[1]: Anchor path")
        shaped = err(
            await client.call_tool("remember", {"project": "billing", "content": "x y z", "anchors": ["retry.py"]})
        )
        assert shaped["status"] == 400 and shaped["message"].startswith("anchors[0] must be an object")

        cleared = ok(await client.call_tool("update_note", {"id": note["id"], "anchors": []}))
        assert cleared["version"] == 3
        assert "anchors" not in ok(await client.call_tool("get_note", {"id": note["id"]}))
    owner = services.auth.authenticate(keys.full)
    assert owner is not None
    assert services.notes.revision(owner, note["id"], 2).anchors == rules.anchors_of_json(anchors)
    assert services.notes.update(owner, note["id"], NoteChanges(body="c")).note.anchors == ()


def test_the_deployed_handler_takes_anchors_in_both_eras(lambda_env: str, checkout: GitTree) -> None:  # noqa: F811
    anchors = printed(checkout, "retry.py#backoff")
    legacy = load_event("mcp_legacy_create_note", lambda_env)
    call = json.loads(legacy["body"])
    call["params"]["arguments"]["anchors"] = anchors
    legacy["body"] = json.dumps(call)
    modern = load_event("mcp_modern_create_note_base64", lambda_env)
    call = json.loads(base64.b64decode(modern["body"]))
    call["params"]["arguments"]["anchors"] = anchors
    modern["body"] = base64.b64encode(json.dumps(call).encode()).decode()
    services = mcp_function._runtime()[1]
    for n, event in enumerate((legacy, modern)):
        answer: dict[str, Any] = body_of(mcp_function.handler(event, FakeContext(f"req-anchors-{n}")))["result"]
        assert not answer.get("isError"), answer
        note_id = answer["structuredContent"]["id"]
        owner = services.auth.authenticate(lambda_env)
        assert owner is not None
        assert [rules.anchor_json(a) for a in services.notes.get(owner, note_id).note.anchors] == anchors
