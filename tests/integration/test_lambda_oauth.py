"""The MCP SDK's OAuth client against the Lambda functions, as API Gateway invokes them (HTTP API v2 events
through Mangum) on a moto table built from template.yaml: each request goes to the function template.yaml routes
its path to, and the walk is the one `notewell serve` passes (tests/integration/test_oauth_end_to_end.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio.to_thread
import boto3
import httpx2
import pytest
from moto import mock_aws

from functions.mcp import app as mcp_function
from functions.oauth import app as oauth_functions
from notewell.entrypoints.http import OAUTH_FUNCTIONS
from notewell.entrypoints.logs import configure_logging
from tests.integration.test_oauth_end_to_end import sign_in_and_work
from tests.support.dynamo import no_backoff, table_spec

pytestmark = pytest.mark.anyio

HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
ISSUER = f"https://{HOST}"
TABLE = "notewell-oauth-lambda-test"


class FakeContext:
    function_name = "fn"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fn"

    def __init__(self) -> None:
        self.aws_request_id = uuid.uuid4().hex

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The functions' environment (as template.yaml sets it), a moto table, fresh containers; a workspace key."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "NOTEWELL_BACKEND": "dynamodb",
        "NOTEWELL_TABLE": TABLE, "NOTEWELL_ALLOWED_HOSTS": HOST, "NOTEWELL_ISSUER": ISSUER, "LOG_LEVEL": "WARNING",
        "NOTEWELL_CURSOR_SECRET": "lambda-test-cursor-key",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    with no_backoff(), mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(TableName=TABLE, **table_spec())
        mcp_function._runtime.cache_clear()
        oauth_functions._runtime.cache_clear()
        services = oauth_functions._runtime()[0]
        workspace = services.auth.create_workspace("acme")
        yield services.auth.create_key(workspace.id, name="person").secret
        mcp_function._runtime.cache_clear()
        oauth_functions._runtime.cache_clear()
        configure_logging("WARNING")
    asyncio.set_event_loop(None)


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
ROUTES: dict[str, Handler] = {"/mcp": mcp_function.handler}
for _function, _paths in OAUTH_FUNCTIONS.items():
    ROUTES.update({path: getattr(oauth_functions, _function) for path in _paths})


def api_gateway_event(request: httpx2.Request) -> dict[str, Any]:
    """The HTTP API v2 event API Gateway would send for `request` (cookies in their own list, as it does)."""
    headers = {k.lower(): v for k, v in request.headers.items() if k.lower() != "cookie"}
    cookies = [c.strip() for c in request.headers.get("cookie", "").split(";") if c.strip()]
    event: dict[str, Any] = {
        "version": "2.0", "routeKey": "$default", "rawPath": request.url.path,
        "rawQueryString": request.url.query.decode() if isinstance(request.url.query, bytes) else request.url.query,
        "headers": {**headers, "host": HOST},
        "requestContext": {
            "accountId": "123456789012", "apiId": "abc123defg", "domainName": HOST, "domainPrefix": "abc123defg",
            "http": {"method": request.method, "path": request.url.path, "protocol": "HTTP/1.1",
                     "sourceIp": "203.0.113.7", "userAgent": "e2e"},
            "requestId": uuid.uuid4().hex, "routeKey": "$default", "stage": "$default",
            "time": "04/Dec/2026:06:00:00 +0000", "timeEpoch": 1796364000000,
        },
        "isBase64Encoded": True, "body": base64.b64encode(request.content).decode(),
    }  # fmt: skip
    if cookies:
        event["cookies"] = cookies
    return event


def in_own_loop(handler: Handler, event: dict[str, Any]) -> dict[str, Any]:
    """One invocation in a worker thread with an event loop of its own, closed after (Mangum uses the thread's)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return handler(event, FakeContext())
    finally:
        loop.close()
        asyncio.set_event_loop(None)


async def invoke(request: httpx2.Request) -> httpx2.Response:
    handler = ROUTES.get(request.url.path)
    if handler is None:  # API Gateway answers routes it does not have itself
        return httpx2.Response(404, json={"message": "Not Found"})
    event = api_gateway_event(request)
    # Mangum runs its own event loop; a worker thread keeps it off the test's.
    answer = await anyio.to_thread.run_sync(in_own_loop, handler, event)
    raw = answer.get("body") or ""
    body = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
    headers = list(answer.get("headers", {}).items()) + [("set-cookie", c) for c in answer.get("cookies", [])]
    return httpx2.Response(answer["statusCode"], headers=headers, content=body)


async def test_the_sdk_client_signs_in_through_the_lambda_functions(stack: str) -> None:
    await sign_in_and_work(ISSUER, stack, httpx2.MockTransport(invoke))


async def test_each_function_answers_only_its_own_routes(stack: str) -> None:
    event = api_gateway_event(httpx2.Request("GET", f"{ISSUER}/.well-known/oauth-authorization-server"))
    metadata = await anyio.to_thread.run_sync(in_own_loop, oauth_functions.metadata, event)
    assert metadata["statusCode"] == 200 and json.loads(metadata["body"])["issuer"] == ISSUER
    wrong = await anyio.to_thread.run_sync(in_own_loop, oauth_functions.token, event)
    assert wrong["statusCode"] == 404


def test_template_routes_each_oauth_path_to_the_function_that_serves_it() -> None:
    """template.yaml and OAUTH_FUNCTIONS must agree: every path a function serves is routed to that function (in
    the HTTP API's integrations and in the function's own events, which grant API Gateway the invoke), and the
    function runs the handler of that name."""
    from pathlib import Path

    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # yaml ships no types
        pass

    # Keep a !Sub's text (the integration URIs name the function); other tags read as None.
    Loader.add_constructor(
        "!Sub",
        lambda loader, node: loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else None,
    )
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    template = yaml.load((Path(__file__).resolve().parents[2] / "template.yaml").read_text(), Loader=Loader)
    resources = template["Resources"]
    paths = resources["HttpApi"]["Properties"]["DefinitionBody"]["paths"]
    for function, served in OAUTH_FUNCTIONS.items():
        (name,) = [n for n, r in resources.items() if r["Properties"].get("Handler") == f"app.{function}"]
        properties = resources[name]["Properties"]
        assert properties["CodeUri"] == "functions/oauth/" and properties["FunctionName"].endswith(f"-oauth-{function}")
        routed = {(e["Properties"]["Path"], e["Properties"]["Method"].lower()) for e in properties["Events"].values()}
        for path in served:
            for method, operation in paths[path].items():
                assert operation["x-amazon-apigateway-integration"]["uri"].endswith(f"-oauth-{function}/invocations")
                assert (path, method) in routed, (function, path, method)
        assert ("Policies" in properties) == (function != "metadata")  # the documents need no table


def template_resources() -> dict[str, Any]:
    from pathlib import Path

    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # yaml ships no types
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    template = yaml.load((Path(__file__).resolve().parents[2] / "template.yaml").read_text(), Loader=Loader)
    resources: dict[str, Any] = template["Resources"]
    return resources


def granted_table_actions(function: dict[str, Any]) -> set[str]:
    """The dynamodb: actions a function's policies allow, by name (SAM's policy templates are not used)."""
    actions: set[str] = set()
    for policy in function["Properties"].get("Policies", []):
        if policy is None:  # an !If (the search statements): no table actions in it
            continue
        assert not (set(policy) & {"DynamoDBCrudPolicy", "DynamoDBReadPolicy", "DynamoDBWritePolicy"}), policy
        for statement in policy.get("Statement", []):
            listed = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            actions |= {a.removeprefix("dynamodb:") for a in listed if a.startswith("dynamodb:")}
    return actions


# A transaction is authorised by the action of each item it holds.
TRANSACTION_ITEM_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                            "ConditionCheck": "ConditionCheckItem"}  # fmt: skip


async def test_each_function_is_granted_exactly_the_table_requests_a_sign_in_and_a_session_make(
    stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole OAuth walk and MCP session, each request in the function template.yaml routes it to: every
    DynamoDB request a function makes is granted to it, and none is granted a Scan or DescribeTable."""
    import contextvars

    import botocore.client

    current: contextvars.ContextVar[str] = contextvars.ContextVar("function", default="")
    made: dict[str, set[str]] = {}
    original = botocore.client.BaseClient._make_api_call

    def recording(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if client.meta.service_model.service_name == "dynamodb" and current.get():
            actions = made.setdefault(current.get(), set())
            if operation == "TransactWriteItems":
                actions |= {TRANSACTION_ITEM_ACTIONS[k] for item in params["TransactItems"] for k in item}
            else:
                actions.add(operation)
        return original(client, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    resources = template_resources()
    by_path = {path: name for name, r in resources.items() if r.get("Type") == "AWS::Serverless::Function"
               for e in r["Properties"].get("Events", {}).values() if e["Type"] == "HttpApi"
               for path in [e["Properties"]["Path"]]}  # fmt: skip

    def run_as(name: str, handler: Handler, event: dict[str, Any]) -> dict[str, Any]:
        current.set(name)
        return in_own_loop(handler, event)

    async def recorded(request: httpx2.Request) -> httpx2.Response:
        handler = ROUTES.get(request.url.path)
        if handler is None:
            return httpx2.Response(404, json={"message": "Not Found"})
        answer = await anyio.to_thread.run_sync(run_as, by_path[request.url.path], handler, api_gateway_event(request))
        raw = answer.get("body") or ""
        body = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
        headers = list(answer.get("headers", {}).items()) + [("set-cookie", c) for c in answer.get("cookies", [])]
        return httpx2.Response(answer["statusCode"], headers=headers, content=body)

    await sign_in_and_work(ISSUER, stack, httpx2.MockTransport(recorded))
    assert {"McpFunction", "OAuthRegisterFunction", "OAuthAuthorizeFunction", "OAuthTokenFunction"} <= set(made)
    for name, actions in made.items():
        granted = granted_table_actions(resources[name])
        assert actions <= granted, (name, actions - granted)
    for name, resource in resources.items():
        if resource.get("Type") == "AWS::Serverless::Function":
            assert not granted_table_actions(resource) & {"Scan", "DescribeTable", "*"}, name
