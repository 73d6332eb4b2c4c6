"""Export pages read through the MCP Lambda function as API Gateway invokes it: every answer stays under Lambda's
6 MB response limit, however much the project's text grows when escaped, and the pages are the export."""

from __future__ import annotations

import json
from typing import Any

from functions.mcp import app as mcp_function
from notewell.domain.model import Plan
from notewell.services.portability import LAMBDA_RESPONSE_BYTES
from tests.integration.test_lambda_handler import FakeContext, body_of, lambda_env, load_event

__all__ = ["lambda_env"]  # the fixture: a moto table, the function's environment and an API key


def read_page(api_key: str, project: str, page: int) -> dict[str, Any]:
    event = load_event("mcp_legacy_create_note", api_key)
    uri = f"notewell://exports/{project}/{page}"
    event["body"] = json.dumps({"jsonrpc": "2.0", "id": page, "method": "resources/read", "params": {"uri": uri}})
    return mcp_function.handler(event, FakeContext(f"req-export-{page}"))


def test_each_export_page_answers_under_lambdas_response_limit(lambda_env: str) -> None:
    services = mcp_function._runtime()[1]
    me = services.auth.authenticate(lambda_env)
    assert me is not None
    services.workspaces.set_plan(me.workspace_id, Plan.ENTERPRISE)
    for n in range(10):  # 2 MB stored; 8 MB of Lambda response as one page, each quote escaped twice
        services.notes.create(me, "big", title=f"Quoted {n}", body=('"' * 99 + "🎉") * 1_000)

    text, sizes = "", []
    for page in range(1, 12):
        response = read_page(lambda_env, "big", page)
        assert response["statusCode"] == 200, response.get("body", "")[:300]
        sizes.append(len(json.dumps(response)))  # as the Lambda runtime writes the handler's answer
        [content] = body_of(response)["result"]["contents"]
        if not content["text"]:
            break
        text += content["text"]
    assert len(sizes) > 2 and max(sizes) <= LAMBDA_RESPONSE_BYTES
    assert text.splitlines()[1:] == list(services.portability.export_lines(me, "big"))[1:]  # exportedAt aside


def test_export_project_lists_every_page_and_they_read_back_as_the_export(lambda_env: str) -> None:
    services = mcp_function._runtime()[1]
    me = services.auth.authenticate(lambda_env)
    assert me is not None
    services.workspaces.set_plan(me.workspace_id, Plan.ENTERPRISE)
    for n in range(10):
        services.notes.create(me, "big", title=f"Quoted {n}", body=('"' * 99 + "🎉") * 1_000)
    event = load_event("mcp_legacy_create_note", lambda_env)
    call = {"name": "export_project", "arguments": {"project": "big"}}
    event["body"] = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    listed = body_of(mcp_function.handler(event, FakeContext("req-export-project")))["result"]["structuredContent"]
    assert listed["pages"] == len(listed["resources"]) == 2
    pages = [read_page(lambda_env, "big", n) for n in range(1, listed["pages"] + 1)]
    assert all(len(json.dumps(page)) <= LAMBDA_RESPONSE_BYTES for page in pages)
    text = "".join(body_of(page)["result"]["contents"][0]["text"] for page in pages)
    assert text.splitlines()[1:] == list(services.portability.export_lines(me, "big"))[1:]
