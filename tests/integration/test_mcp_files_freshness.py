"""`files` and `checkFreshness` through the real MCP client (every protocol era, every store) and through the deployed
handler (API Gateway events, both eras): notes anchored to the files in hand lead get_context and search_notes, stale
ones are marked in the text a model reads and judged in the structured answer, and search_notes on a branch counts
what it left out."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest

from functions.mcp import app as mcp_function
from notewell.domain import rules
from notewell.domain.model import Anchor
from notewell.domain.refs import name_of
from tests.integration.test_lambda_handler import FakeContext, body_of, lambda_env, load_event  # noqa: F401
from tests.support.mcp_harness import MODES, connect, err, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
THEN, NOW = "1" * 64, "2" * 64  # the fileHash of src/retry.py when anchored, and in the caller's tree now
RETRY = Anchor("github.com/acme/billing", "src/retry.py", COMMIT, "3" * 64, THEN, "backoff", None)


def relevant(context: dict[str, Any]) -> list[dict[str, Any]]:
    return next((s["entries"] for s in context["sections"] if s["name"] == "relevant"), [])


def text_of(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", MODES)
async def test_files_lead_and_check_freshness_marks_what_changed_in_every_era(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        anchored = ok(await client.call_tool("create_note", {
            "project": "billing", "title": "Webhook retries back off", "body": "Backoff doubles, capped at 30 s.",
            "type": "decision", "anchors": [rules.anchor_json(RETRY)],
        }))["id"]  # fmt: skip
        for n in range(30):  # newer decisions: the anchored one is no longer among those get_context weighs
            ok(await client.call_tool("create_note", {
                "project": "billing", "title": f"Decision {n}", "body": f"Decision {n} holds.", "type": "decision",
            }))  # fmt: skip

        arguments = {"project": "billing", "detail": "lean", "files": ["src/"], "checkFreshness": {"src/retry.py": NOW}}
        result = await client.call_tool("get_context", arguments)
        context = ok(result)
        (entry,) = relevant(context)
        assert entry["id"] == anchored and entry["freshness"] == "changed"
        assert (
            f"- {name_of(anchored)} [changed: src/retry.py, re-check] [decision] Webhook retries back off"
            in text_of(result)
        )
        assert context["meta"]["anchoredPaths"] == ["src/retry.py"]
        assert context["meta"]["spent"] <= context["meta"]["budget"]

        same = ok(await client.call_tool("get_context", {**arguments, "checkFreshness": {"src/retry.py": THEN}}))
        assert relevant(same)[0]["freshness"] == "fresh"
        plain = ok(await client.call_tool("get_context", {"project": "billing", "detail": "lean"}))
        assert anchored not in json.dumps(plain) and "anchoredPaths" not in plain["meta"]

        found = await client.call_tool("search_notes", {"project": "billing", "files": ["src/retry.py"]})
        listed = ok(found)
        assert listed["searchMode"] == "anchors" and [r["id"] for r in listed["results"]] == [anchored]
        assert f"- {name_of(anchored)} " in text_of(found)  # named by ref, as get_context names it


@pytest.mark.parametrize("mode", MODES)
async def test_search_notes_on_a_branch_counts_what_it_left_out(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        for branch in ("feature/refunds", "feature/approvals"):
            ok(await client.call_tool("create_note", {
                "project": "billing", "title": f"Refunds on {branch}", "body": "Refunds are queued.", "branch": branch,
            }))  # fmt: skip
        result = await client.call_tool("search_notes", {"project": "billing", "query": "refunds",
                                                          "branch": "feature/refunds"})  # fmt: skip
        found = ok(result)
        assert [r["title"] for r in found["results"]] == ["Refunds on feature/refunds"]
        assert found["otherBranches"] == 1
        assert "1 note of other unmerged branches left out; allBranches: true shows them." in text_of(result)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_bad_files_and_hashes_are_refused_with_what_to_send(services: Services, mode: str) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        bad_hash = err(await client.call_tool("get_context", {"project": "billing",
                                                              "checkFreshness": {"src/a.py": "md5:0"}}))  # fmt: skip
        assert bad_hash["status"] == 400 and "not a fileHash" in bad_hash["message"]
        not_text = err(await client.call_tool("get_context", {"project": "billing", "checkFreshness": {"a.py": 5}}))
        assert not_text["status"] == 400 and "checkFreshness.a.py must be a string" in not_text["message"]
        outside = err(await client.call_tool("search_notes", {"project": "billing", "files": ["../x"]}))
        assert outside["status"] == 400 and "files[0]: Anchor path '../x' uses '..'" in outside["message"]
        nothing = err(await client.call_tool("search_notes", {"project": "billing"}))
        assert nothing["status"] == 400 and "Give query" in nothing["message"]


def tool_event(template: str, api_key: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An API Gateway event from events/ calling another tool, its body in the event's own encoding."""
    event = load_event(template, api_key)
    encoded = event.get("isBase64Encoded", False)
    call = json.loads(base64.b64decode(event["body"]) if encoded else event["body"])
    call["params"]["name"], call["params"]["arguments"] = name, arguments
    body = json.dumps(call)
    event["body"] = base64.b64encode(body.encode()).decode() if encoded else body
    if "mcp-name" in event["headers"]:
        event["headers"]["mcp-name"] = name
    return event


def test_the_deployed_handler_takes_files_and_check_freshness_in_both_eras(lambda_env: str) -> None:  # noqa: F811
    services = mcp_function._runtime()[1]
    owner = services.auth.authenticate(lambda_env)
    assert owner is not None
    note = services.notes.create(owner, "demo", title="Webhook retries back off", body="Capped at 30 s.",
                                 anchors=[RETRY]).note  # fmt: skip
    arguments = {"project": "demo", "files": ["src/retry.py"], "checkFreshness": {"src/retry.py": None}}
    for n, template in enumerate(("mcp_legacy_create_note", "mcp_modern_search_notes")):
        event = tool_event(template, lambda_env, "get_context", arguments)
        answer: dict[str, Any] = body_of(mcp_function.handler(event, FakeContext(f"req-files-{n}")))["result"]
        assert not answer.get("isError"), answer
        (entry,) = relevant(answer["structuredContent"])
        assert (entry["id"], entry["freshness"]) == (note.id, "gone")
        assert f"- {name_of(note.id)} [gone: src/retry.py, re-check]" in answer["content"][0]["text"]
        search = tool_event(template, lambda_env, "search_notes", {"project": "demo", "files": ["src"]})
        found = body_of(mcp_function.handler(search, FakeContext(f"req-files-search-{n}")))["result"]
        assert [r["id"] for r in found["structuredContent"]["results"]] == [note.id]
