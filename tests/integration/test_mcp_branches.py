"""The branch arguments through the real MCP client (both protocol eras, every store) and through the deployed
handler: notes written with `branch` are left out of get_context on another branch (and counted) until
update_project records the merge; allBranches shows them; a client that says no branch sees everything."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest

from functions.mcp import app as mcp_function
from tests.integration.test_lambda_handler import FakeContext, body_of, lambda_env, load_event  # noqa: F401
from tests.support.mcp_harness import MODES, connect, make_app, make_keys, ok, running

if TYPE_CHECKING:
    from notewell.bootstrap import Services

pytestmark = pytest.mark.anyio


def ids_in(context: dict[str, Any]) -> set[str]:
    return {entry["id"] for section in context["sections"] for entry in section["entries"]}


@pytest.mark.parametrize("mode", MODES)
async def test_get_context_on_a_branch_hides_other_unmerged_branches_until_the_merge_is_recorded(
    services: Services, mode: str
) -> None:
    keys = make_keys(services)
    async with running(make_app(services)) as app, connect(app, keys.full, mode) as client:
        on_main = ok(await client.call_tool("remember", {
            "project": "billing", "content": "Amounts are integers in minor units.", "type": "constraint",
        }))["note"]["id"]  # fmt: skip
        on_feature = ok(await client.call_tool("create_note", {
            "project": "billing", "title": "Refunds are async", "body": "Refunds go through a queue.",
            "type": "decision", "branch": "feature/refunds",
        }))["id"]  # fmt: skip
        main = ok(await client.call_tool("get_context", {"project": "billing", "branch": "main"}))
        assert on_main in ids_in(main) and on_feature not in ids_in(main)
        assert main["otherBranches"] == 1 and "allBranches: true shows them" in main["notice"]
        everything = ok(await client.call_tool("get_context", {"project": "billing", "branch": "main",
                                                               "allBranches": True}))  # fmt: skip
        assert on_feature in ids_in(everything) and "otherBranches" not in everything
        assert on_feature in ids_in(ok(await client.call_tool("get_context", {"project": "billing"})))
        ok(await client.call_tool("update_project", {"project": "billing", "mergedBranches": ["feature/refunds"]}))
        merged = ok(await client.call_tool("get_context", {"project": "billing", "branch": "main"}))
        assert on_feature in ids_in(merged) and "otherBranches" not in merged


def test_the_deployed_handler_takes_branch_in_both_eras(lambda_env: str) -> None:  # noqa: F811
    legacy = load_event("mcp_legacy_create_note", lambda_env)
    call = json.loads(legacy["body"])
    call["params"]["arguments"]["branch"] = "feature/lambda"
    legacy["body"] = json.dumps(call)
    modern = load_event("mcp_modern_create_note_base64", lambda_env)
    call = json.loads(base64.b64decode(modern["body"]))
    call["params"]["arguments"]["branch"] = "feature/lambda"
    modern["body"] = base64.b64encode(json.dumps(call).encode()).decode()
    services = mcp_function._runtime()[1]
    owner = services.auth.authenticate(lambda_env)
    assert owner is not None
    for n, event in enumerate((legacy, modern)):
        answer: dict[str, Any] = body_of(mcp_function.handler(event, FakeContext(f"req-branch-{n}")))["result"]
        assert not answer.get("isError"), answer
        assert services.notes.get(owner, answer["structuredContent"]["id"]).note.branch == "feature/lambda"
