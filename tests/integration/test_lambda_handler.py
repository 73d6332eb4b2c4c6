"""The MCP Lambda function, invoked like API Gateway does, many times in one process (cold, then warm)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from functions.mcp import app as mcp_function
from notewell.adapters.dynamodb import DynamoDBStore
from notewell.entrypoints.logs import configure_logging
from tests.support.dynamo import inject_faults, no_backoff, table_spec, throttled

EVENTS = Path(__file__).resolve().parents[2] / "events"
HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
TABLE = "notewell-lambda-test"


class FakeContext:
    function_name = "McpFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"

    def __init__(self, request_id: str) -> None:
        self.aws_request_id = request_id

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def load_event(name: str, api_key: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    if api_key is not None and "authorization" in event["headers"]:
        event["headers"]["authorization"] = f"Bearer {api_key}"
    return event


def body_of(response: dict[str, Any]) -> Any:
    raw = response.get("body") or ""
    if response.get("isBase64Encoded"):
        raw = base64.b64decode(raw).decode()
    return json.loads(raw) if raw else None


@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto DynamoDB table built from template.yaml, the function's environment, and a fresh container.

    botocore's backoff is zeroed, so a fault test that exhausts the retry budget never really sleeps."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "NOTEWELL_BACKEND": "dynamodb",
        "NOTEWELL_TABLE": TABLE,
        "NOTEWELL_ALLOWED_HOSTS": HOST,
        "LOG_LEVEL": "INFO",
        "NOTEWELL_CURSOR_SECRET": "lambda-test-cursor-key",
    }.items():
        monkeypatch.setenv(name, value)
    with no_backoff(), mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(TableName=TABLE, **table_spec())
        mcp_function._runtime.cache_clear()
        services = mcp_function._runtime()[1]
        workspace = services.auth.create_workspace("acme")
        yield services.auth.create_key(workspace.id, name="lambda").secret
        mcp_function._runtime.cache_clear()
        configure_logging("WARNING")
    # Mangum keeps one event loop per container on purpose (warm invocations reuse it); a test process closes it.
    asyncio.get_event_loop_policy().get_event_loop().close()
    asyncio.set_event_loop(None)


def invoke(name: str, api_key: str | None, n: int) -> dict[str, Any]:
    return mcp_function.handler(load_event(name, api_key), FakeContext(f"req-{name}-{n}"))


def test_the_handler_survives_warm_invocations_mixing_both_protocol_eras(lambda_env: str) -> None:
    sequence = [
        "mcp_legacy_initialize",
        "mcp_legacy_initialized",
        "mcp_modern_discover",
        "mcp_legacy_tools_list",
        "mcp_modern_tools_list",
        "mcp_legacy_create_note",
        "mcp_modern_search_notes",
        "mcp_modern_create_note_base64",
    ]
    for round_ in range(3):
        for n, name in enumerate(sequence):
            response = invoke(name, lambda_env, round_ * 100 + n)
            expected = 202 if name == "mcp_legacy_initialized" else 200
            assert response["statusCode"] == expected, (name, round_, response.get("body"))
            headers = {k.lower() for k in response.get("headers", {})}
            assert "mcp-session-id" not in headers, name

    init = body_of(invoke("mcp_legacy_initialize", lambda_env, 900))
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert init["result"]["serverInfo"]["name"] == "notewell"
    discover = body_of(invoke("mcp_modern_discover", lambda_env, 901))
    assert "2026-07-28" in discover["result"]["supportedVersions"]
    tools = body_of(invoke("mcp_modern_tools_list", lambda_env, 902))["result"]["tools"]
    assert {"create_note", "search_notes", "get_note"} <= {t["name"] for t in tools}

    found = body_of(invoke("mcp_modern_search_notes", lambda_env, 903))["result"]
    assert found["structuredContent"]["searchMode"] == "ranked_scan"
    titles = [r["title"] for r in found["structuredContent"]["results"]]
    assert titles.count("Use SAM for deploys") == 3  # one per round: warm invocations lose nothing


def test_get_is_answered_405_at_once(lambda_env: str) -> None:
    for n in range(3):
        response = invoke("mcp_get_not_allowed", lambda_env, n)
        assert response["statusCode"] == 405
        assert response["headers"].get("allow") == "POST"


def test_a_request_without_a_bearer_gets_401_with_a_challenge(lambda_env: str) -> None:
    for n in range(2):
        response = invoke("mcp_no_bearer", None, n)
        assert response["statusCode"] == 401
        assert response["headers"]["www-authenticate"].startswith("Bearer")
    assert invoke("mcp_modern_tools_list", "nwk_forged", 3)["statusCode"] == 401


def test_an_unknown_host_header_is_refused(lambda_env: str) -> None:
    event = load_event("mcp_modern_tools_list", lambda_env)
    event["headers"]["host"] = "evil.example.com"
    response = mcp_function.handler(event, FakeContext("req-host"))
    assert response["statusCode"] == 421


def test_logs_are_structured_and_never_carry_keys_or_bodies(lambda_env: str) -> None:
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    try:
        assert invoke("mcp_legacy_create_note", lambda_env, 1)["statusCode"] == 200
        assert invoke("mcp_modern_search_notes", lambda_env, 2)["statusCode"] == 200
    finally:
        logging.getLogger("notewell").handlers.clear()
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    calls = [line for line in lines if line.get("message") == "tool call"]
    assert [c["tool"] for c in calls] == ["create_note", "search_notes"]
    for call in calls:
        assert call["outcome"] == "ok" and call["workspace"].startswith("ws_")
        assert call["request_id"].startswith("req-") and isinstance(call["duration_ms"], float)
    text = stream.getvalue()
    assert lambda_env not in text and lambda_env[-12:] not in text
    assert "no console edits" not in text  # the note body


def test_each_tool_call_emits_its_metrics_in_embedded_metric_format(
    lambda_env: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As template.yaml configures the function (NOTEWELL_METRICS=emf): one EMF line per tool call on stdout, which
    CloudWatch turns into the Calls, Errors, Faults and Duration metrics by tool; an error answer counts as an
    error, and nothing names the workspace or carries the key."""
    monkeypatch.setenv("NOTEWELL_METRICS", "emf")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "NotewellTest")
    mcp_function._runtime.cache_clear()
    capsys.readouterr()
    assert invoke("mcp_legacy_create_note", lambda_env, 1)["statusCode"] == 200
    event = load_event("mcp_modern_search_notes", lambda_env)
    request = json.loads(event["body"]) if not event.get("isBase64Encoded") else None
    assert request is not None
    request["params"].update(name="get_note", arguments={"id": "n_00000000000000000000000000"})
    event["headers"]["mcp-name"] = "get_note"
    event["body"] = json.dumps(request)
    answer = body_of(mcp_function.handler(event, FakeContext("req-missing-note")))
    assert answer["result"]["isError"] is True  # not found: an error answer, not a failure
    out = capsys.readouterr().out
    metrics = [json.loads(line) for line in out.splitlines() if line.startswith('{"_aws"')]
    assert [(m["tool"], m["Calls"], m["Errors"], m["Faults"]) for m in metrics] == [
        ("create_note", [1.0], [0.0], [0.0]),
        ("get_note", [1.0], [1.0], [0.0]),
    ]
    for m in metrics:
        (directive,) = m["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "NotewellTest" and sorted(directive["Dimensions"][0]) == ["service", "tool"]
        assert {x["Name"] for x in directive["Metrics"]} == {"Calls", "Errors", "Faults", "Duration"}
        assert m["Duration"][0] >= 0
    assert lambda_env not in out and "ws_" not in json.dumps(metrics)


def test_each_invocation_stores_its_counts_before_it_ends(lambda_env: str) -> None:
    """Lambda freezes a container after each reply and may recycle it unannounced: the counts of a call are in
    the table when the invocation returns, not in a buffer that a recycled container loses."""
    assert invoke("mcp_legacy_create_note", lambda_env, 1)["statusCode"] == 200
    assert invoke("mcp_modern_search_notes", lambda_env, 2)["statusCode"] == 200
    services = mcp_function._runtime()[1]
    (workspace,) = services.deps.store.list_workspaces()
    mcp_function._runtime.cache_clear()  # the container is gone, and its memory with it
    fresh = mcp_function._runtime()[1]
    stored = fresh.deps.store.usage(workspace.id, [fresh.deps.clock.now().strftime("%Y-%m-%d")])
    (counters,) = stored.values()
    assert counters["calls:create_note"] == 1 and counters["calls:search_notes"] == 1
    assert counters["tokens:search_notes"] > 0


# ----- faults at the DynamoDB client -------------------------------------------------------------------------


def test_a_throttled_key_lookup_answers_503_with_retry_after_and_logs_one_line_without_the_key(
    lambda_env: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = mcp_function._runtime()[1].deps.store
    assert isinstance(store, DynamoDBStore)
    throttling = True
    sent = inject_faults(store.client, lambda op, n: throttled() if throttling and op == "GetItem" else None)
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    try:
        refused = invoke("mcp_modern_tools_list", lambda_env, 1)
        throttling = False
        served = invoke("mcp_modern_tools_list", lambda_env, 2)
    finally:
        logging.getLogger("notewell").handlers.clear()

    assert refused["statusCode"] == 503, refused.get("body")
    assert int(refused["headers"]["retry-after"]) >= 1
    assert "retry" in body_of(refused)["error_description"]
    assert sent["GetItem"] >= 3  # botocore spent its retry budget before the store gave up
    assert served["statusCode"] == 200  # the same key works once the table answers
    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    warnings = [line for line in lines if line["level"] == "WARNING"]
    assert [line["message"] for line in warnings] == ["key lookup unavailable"]
    assert warnings[0]["request_id"] == "req-mcp_modern_tools_list-1"
    assert "Traceback" not in stream.getvalue() and not any(r.exc_info for r in caplog.records)
    assert lambda_env not in stream.getvalue() and lambda_env not in caplog.text
