"""template.yaml's IAM, evaluated as IAM would: the indexer reads only its own table's stream, and the OAuth
functions reach only the partitions OAuth keeps its records in (never a note), while a whole sign-in through the
Lambda functions still gets every request it makes."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import re
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import anyio.to_thread
import boto3
import botocore.client
import httpx2
import pytest
import yaml
from moto import mock_aws

from functions.mcp import app as mcp_function
from functions.oauth import app as oauth_functions
from notewell.entrypoints.logs import configure_logging
from tests.integration.test_lambda_oauth import HOST, ISSUER, ROUTES, api_gateway_event, in_own_loop
from tests.integration.test_oauth_end_to_end import sign_in_and_work
from tests.support.dynamo import no_backoff, table_spec
from tests.unit.test_template_deploy import Stack
from tests.unit.test_template_operations import TEMPLATE, _Loader, of_type

TABLE = "notewell-template-access"

# What SAM attaches to a function with a DynamoDB stream event: the AWS managed policy
# AWSLambdaDynamoDBExecutionRole, which allows these on every resource (its CloudWatch Logs actions aside).
STREAM_EVENT_MANAGED_POLICY = {
    "Effect": "Allow",
    "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"],
    "Resource": "*",
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(TEMPLATE.read_text(), Loader=_Loader)
    return loaded


def statements(stack: Stack, function: str) -> list[dict[str, Any]]:
    """The IAM statements of a function's role: its Policies (conditions resolved for `stack`) and what SAM adds
    for its events. SAM policy templates (SQSSendMessagePolicy) grant no table or stream access and are skipped."""
    resource = stack.template["Resources"][function]["Properties"]
    found: list[dict[str, Any]] = []
    for policy in stack.resolve(resource.get("Policies", [])):
        if isinstance(policy, dict) and "Statement" in policy:
            found += policy["Statement"]
    if any(e["Type"] == "DynamoDB" for e in resource.get("Events", {}).values()):
        found.append(STREAM_EVENT_MANAGED_POLICY)
    return found


def _like(value: str, pattern: str) -> bool:
    """IAM's wildcard match: * any run of characters, ? one character."""
    regex = ".*".join(".".join(re.escape(piece) for piece in part.split("?")) for part in pattern.split("*"))
    return re.fullmatch(regex, value) is not None


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _conditions_hold(statement: dict[str, Any], leading_keys: list[str]) -> bool:
    for operator, tests in statement.get("Condition", {}).items():
        for key, patterns in tests.items():
            assert key == "dynamodb:LeadingKeys", key  # the only condition key the template uses on tables
            if operator == "ForAllValues:StringLike":
                ok = all(any(_like(v, p) for p in _listed(patterns)) for v in leading_keys)
            elif operator == "ForAllValues:StringNotLike":
                ok = all(not any(_like(v, p) for p in _listed(patterns)) for v in leading_keys)
            else:
                raise NotImplementedError(operator)
            if not ok:
                return False
    return True


def allowed(found: list[dict[str, Any]], action: str, resource: str, leading_keys: Sequence[str] = ()) -> bool:
    """IAM's decision for one request: an explicit Deny wins, else some Allow must match."""
    matching = [
        s for s in found
        if any(_like(action, a) for a in _listed(s["Action"]))
        and (any(_like(resource, r) for r in _listed(s["Resource"])) if "Resource" in s
             else not any(_like(resource, r) for r in _listed(s["NotResource"])))
        and _conditions_hold(s, list(leading_keys))
    ]  # fmt: skip
    return any(s["Effect"] == "Allow" for s in matching) and not any(s["Effect"] == "Deny" for s in matching)


# ----- the indexer and the stream --------------------------------------------------------------------------------


def test_the_indexer_reads_its_own_tables_stream_and_no_other(template: dict[str, Any]) -> None:
    stack = Stack(template)
    table = stack.resolve({"Fn::GetAtt": "NotesTable.Arn"})
    own = f"{table}/stream/2026-12-01T00:00:00.000"
    other = "arn:aws:dynamodb:us-east-1:123456789012:table/payroll/stream/2026-12-01T00:00:00.000"
    found = statements(stack, "IndexerFunction")
    for action in ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"):
        assert allowed(found, action, own), action  # what Lambda's event source mapping needs
        assert not allowed(found, action, other), action


# ----- OAuth and the notes table ---------------------------------------------------------------------------------

OAUTH_FUNCTIONS = ("OAuthRegisterFunction", "OAuthAuthorizeFunction", "OAuthTokenFunction")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the functions run Mangum's own asyncio loop, as on Lambda


@pytest.fixture
def oauth_stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The functions' environment as template.yaml sets it, a moto table, fresh containers; a workspace key."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "NOTEWELL_BACKEND": "dynamodb",
        "NOTEWELL_TABLE": TABLE, "NOTEWELL_ALLOWED_HOSTS": HOST, "NOTEWELL_ISSUER": ISSUER, "LOG_LEVEL": "WARNING",
        "NOTEWELL_CURSOR_SECRET": "template-access-cursor-key",
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


# A transaction is authorised item by item, each with the action of its kind.
TRANSACTION_ITEM_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                            "ConditionCheck": "ConditionCheckItem"}  # fmt: skip


def authorisations(operation: str, params: dict[str, Any]) -> list[tuple[str, str | None, list[str]]]:
    """What IAM checks for one DynamoDB request: (action, index or None, the partition keys it touches)."""
    if operation == "TransactWriteItems":
        return [
            (TRANSACTION_ITEM_ACTIONS[kind], None, [(body.get("Key") or body["Item"])["pk"]["S"]])
            for item in params["TransactItems"] for kind, body in item.items()
        ]  # fmt: skip
    if operation == "Query":
        return [(operation, params.get("IndexName"), [params["ExpressionAttributeValues"][":pk"]["S"]])]
    if operation == "BatchGetItem":
        keys = [k["pk"]["S"] for request in params["RequestItems"].values() for k in request["Keys"]]
        return [(operation, None, keys)]
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
        return [(operation, None, [(params.get("Key") or params["Item"])["pk"]["S"]])]
    return [(operation, None, [])]


@pytest.mark.anyio
async def test_oauth_functions_reach_the_partitions_a_sign_in_uses_and_never_a_note(
    template: dict[str, Any], oauth_stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole OAuth sign-in and MCP session, each request in the function the API routes it to: every table
    request an OAuth function makes is allowed, keys included; reading, writing or deleting a note, its revisions,
    the feed or an idempotency record is not (those partitions are WS#<workspace>#...)."""
    stack = Stack(template)
    table = stack.resolve({"Fn::GetAtt": "NotesTable.Arn"})
    current: contextvars.ContextVar[str] = contextvars.ContextVar("function", default="")
    made: dict[str, list[tuple[str, str | None, list[str]]]] = {}
    original = botocore.client.BaseClient._make_api_call

    def recording(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if client.meta.service_model.service_name == "dynamodb" and current.get():
            made.setdefault(current.get(), []).extend(authorisations(operation, params))
        return original(client, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    by_path = {
        e["Properties"]["Path"]: name
        for name, f in of_type(template, "AWS::Serverless::Function").items()
        for e in f["Properties"].get("Events", {}).values() if e["Type"] == "HttpApi"
    }  # fmt: skip

    def run_as(function: str, request: httpx2.Request) -> dict[str, Any]:
        current.set(function)
        return in_own_loop(ROUTES[request.url.path], api_gateway_event(request))

    async def routed(request: httpx2.Request) -> httpx2.Response:
        if request.url.path not in ROUTES:
            return httpx2.Response(404, json={"message": "Not Found"})
        answer = await anyio.to_thread.run_sync(run_as, by_path[request.url.path], request)
        raw = answer.get("body") or ""
        body = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
        headers = list(answer.get("headers", {}).items()) + [("set-cookie", c) for c in answer.get("cookies", [])]
        return httpx2.Response(answer["statusCode"], headers=headers, content=body)

    await sign_in_and_work(ISSUER, oauth_stack, httpx2.MockTransport(routed))

    assert set(OAUTH_FUNCTIONS) <= set(made)
    for function in OAUTH_FUNCTIONS:
        found = statements(stack, function)
        for action, index, keys in made[function]:
            resource = f"{table}/index/{index}" if index else table
            assert allowed(found, f"dynamodb:{action}", resource, keys), (function, action, keys)

    workspace = f"ws_{uuid.uuid4().hex[:26]}"
    tenant_data = [f"WS#{workspace}#N#note_1", f"WS#{workspace}#IDEM#{'0' * 64}", f"WS#{workspace}#P#prj_1",
                   f"WS#{workspace}#P#prj_1#SEQ"]  # fmt: skip
    for function in OAUTH_FUNCTIONS:
        found = statements(stack, function)
        for action in ("GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem", "BatchGetItem", "Scan"):
            for pk in tenant_data:
                assert not allowed(found, f"dynamodb:{action}", table, [pk]), (function, action, pk)
    # Only the consent page reads the workspace partition, where the key a person signs in with is kept.
    reading = [
        f for f in OAUTH_FUNCTIONS if allowed(statements(stack, f), "dynamodb:GetItem", table, [f"WS#{workspace}"])
    ]
    assert reading == ["OAuthAuthorizeFunction"]


def test_the_collections_writers_may_drop_an_old_index_and_its_readers_may_not(template: dict[str, Any]) -> None:
    # reindex --stack fills a new index, moves the alias, then deletes the old one: without aoss:DeleteIndex the
    # old index (and what it costs) stays behind after every model change.
    body, _ = template["Resources"]["SearchDataPolicy"]["Properties"]["Policy"]["Fn::Sub"]
    readers, writers = (rule["Permission"] for rule in _data_rules(body))
    assert "aoss:DeleteIndex" in writers
    assert "aoss:DeleteIndex" not in readers and "aoss:WriteDocument" not in readers


def _data_rules(body: str) -> list[dict[str, Any]]:
    """The index rules of the data policy, readers' first, with the ${...} placeholders filled with strings."""
    statements = json.loads(re.sub(r"\$\{[^}]+\}", "x", body.replace("[${Writers}]", '["x"]')))
    return [rule for statement in statements for rule in statement["Rules"] if rule["ResourceType"] == "index"]
