"""The console's Lambda function, invoked as API Gateway does with the events in events/: the sign-in page, a
sign-in that sets the session cookie (HTTP API payload 2.0 carries cookies apart from the headers), a project page
read with it from DynamoDB, and the counts stored at the end of each invocation. It never loads the MCP SDK."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import boto3
import pytest
from moto import mock_aws

from functions.console import app as console_function
from notewell.adapters.dynamodb import DynamoDBStore
from notewell.adapters.system import SystemClock
from notewell.domain.model import NoteStatus
from notewell.services.metering import Meter
from notewell.services.oauth import Consent
from tests.integration.test_lambda_oauth import TRANSACTION_ITEM_ACTIONS, granted_table_actions, template_resources
from tests.support.dynamo import no_backoff, table_spec

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
TABLE = "notewell-console-test"


class FakeContext:
    function_name = "ConsoleFunction"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:ConsoleFunction"
    aws_request_id = "req-console"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def event(name: str, **replacements: str) -> dict[str, Any]:
    text = (EVENTS / f"{name}.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    if loaded.get("isBase64Encoded"):
        body = base64.b64decode(loaded["body"]).decode()
        for placeholder, value in replacements.items():
            body = body.replace(placeholder, value)
        loaded["body"] = base64.b64encode(body.encode()).decode()
    cookies = loaded.get("cookies", [])
    for placeholder, value in replacements.items():
        cookies = [cookie.replace(placeholder, value) for cookie in cookies]
    if cookies:
        loaded["cookies"] = cookies
    return loaded


def cookie_value(response: dict[str, Any], name: str) -> str:
    for cookie in response.get("cookies", []):
        found = re.match(rf"{re.escape(name)}=([^;]*)", cookie)
        if found:
            return found.group(1)
    raise AssertionError(f"no {name} cookie in {response.get('cookies')}")


@pytest.fixture
def console_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "NOTEWELL_BACKEND": "dynamodb",
        "NOTEWELL_TABLE": TABLE, "NOTEWELL_ALLOWED_HOSTS": HOST, "LOG_LEVEL": "WARNING",
        "NOTEWELL_CURSOR_SECRET": "console-test-cursor-key", "NOTEWELL_ISSUER": f"https://{HOST}",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    with no_backoff(), mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(TableName=TABLE, **table_spec())
        console_function._runtime.cache_clear()
        services = console_function._runtime()[0]
        workspace = services.auth.create_workspace("acme")
        secret = services.auth.create_key(workspace.id, name="person").secret
        principal = services.auth.authenticate(secret)
        assert principal is not None
        services.notes.create(principal, "demo", title="Deploy with SAM", body="We deploy with SAM.")
        yield secret
        console_function._runtime.cache_clear()
    asyncio.get_event_loop_policy().get_event_loop().close()
    asyncio.set_event_loop(None)


def test_a_person_signs_in_and_reads_a_project_through_the_function(console_env: str) -> None:
    home = console_function.handler(event("console_home"), FakeContext())
    assert home["statusCode"] == 200 and "Sign in to the Notewell console" in home["body"]
    assert "frame-ancestors 'none'" in home["headers"]["content-security-policy"]
    csrf = cookie_value(home, "__Host-nw_console_csrf")  # https: the cookies are bound to the origin
    assert "Secure" in home["cookies"][0] and "HttpOnly" in home["cookies"][0]

    signed = console_function.handler(
        event("console_sign_in", REPLACE_WITH_CSRF=csrf, REPLACE_WITH_API_KEY=console_env), FakeContext()
    )
    assert signed["statusCode"] == 303 and signed["headers"]["location"] == "/"
    session = cookie_value(signed, "__Host-nw_console")

    page = console_function.handler(event("console_project", REPLACE_WITH_SESSION=session), FakeContext())
    assert page["statusCode"] == 200 and "Deploy with SAM" in page["body"]

    # The pages were counted and stored before each invocation ended: a fresh meter (another container) finds them.
    store = DynamoDBStore(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
    workspace = store.list_workspaces()[0]
    month = SystemClock().now().strftime("%Y-%m")
    report = Meter(store, SystemClock()).month_report(workspace.id, workspace.plan, month)
    assert report.calls_by_tool == {"console:project": 1}


def request(method: str, path: str, session: str, form: dict[str, str] | None = None) -> dict[str, Any]:
    """An API Gateway event for any console page or form, shaped like the ones in events/."""
    loaded = event("console_sign_in" if method == "POST" else "console_project")
    loaded["rawPath"] = loaded["requestContext"]["http"]["path"] = path
    loaded["pathParameters"] = {"proxy": path.removeprefix("/console/")}
    loaded["cookies"] = [f"__Host-nw_console={session}"]
    if form is not None:
        loaded["body"] = base64.b64encode(urlencode(form).encode()).decode()
    return loaded


def test_the_function_is_granted_every_table_request_a_persons_session_makes(
    console_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import botocore.client

    made: set[str] = set()
    original = botocore.client.BaseClient._make_api_call

    def recording(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if client.meta.service_model.service_name == "dynamodb":
            if operation == "TransactWriteItems":
                made.update(TRANSACTION_ITEM_ACTIONS[k] for item in params["TransactItems"] for k in item)
            else:
                made.add(operation)
        return original(client, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    home = console_function.handler(event("console_home"), FakeContext())
    csrf = cookie_value(home, "__Host-nw_console_csrf")
    signed = console_function.handler(
        event("console_sign_in", REPLACE_WITH_CSRF=csrf, REPLACE_WITH_API_KEY=console_env), FakeContext()
    )
    session = cookie_value(signed, "__Host-nw_console")
    services = console_function._runtime()[0]
    who = services.console.resume(session)
    assert who is not None
    note = services.notes.create(who.principal, "demo", title="Disputed", body="?", status=NoteStatus.DISPUTED).note
    pages = ["/", "/console/usage", "/console/p/demo", "/console/p/demo/changes", "/console/p/demo/conflicts",
             "/console/p/demo/search?q=sam", f"/console/n/{note.id}", f"/console/n/{note.id}/edit"]  # fmt: skip
    for path in pages:
        raw, _, query = path.partition("?")
        loaded = request("GET", raw, session)
        loaded["rawQueryString"] = query
        assert console_function.handler(loaded, FakeContext())["statusCode"] == 200, path
    csrf = who.session.csrf
    for form in ({"action": "confirm", "version": "1"}, {"action": "delete", "version": "2"},
                 {"action": "restore", "version": "3"}):  # fmt: skip
        answer = console_function.handler(
            request("POST", f"/console/n/{note.id}/resolve", session, {"csrf": csrf, **form}), FakeContext()
        )
        assert answer["statusCode"] == 303, answer.get("body")
    # Signing in through the authorization server: the console registers itself and exchanges the code itself.
    started = console_function.handler(request("GET", "/console/oauth/start", ""), FakeContext())
    flow = cookie_value(started, "__Host-nw_console_oauth")
    query = parse_qsl(urlsplit(started["headers"]["location"]).query)
    assert services.oauth is not None
    recording_on = made.copy()
    consent = services.oauth.begin_authorization(query)  # what the authorize function does, not this one
    assert isinstance(consent, Consent)
    approved = services.oauth.decide(
        {"txn": consent.txn, "csrf": consent.csrf, "api_key": console_env, "decision": "approve"}, consent.csrf, None
    )
    made.clear()
    made.update(recording_on)
    callback = request("GET", "/console/oauth/callback", "")
    callback["rawQueryString"] = urlsplit(approved.location).query
    callback["cookies"] = [f"__Host-nw_console_oauth={flow}"]
    landed = console_function.handler(callback, FakeContext())
    assert landed["statusCode"] == 303, landed.get("body")
    oauth_session = cookie_value(landed, "__Host-nw_console")
    home = console_function.handler(request("GET", "/console/usage", oauth_session), FakeContext())
    assert home["statusCode"] == 200 and "through OAuth" in home["body"]

    granted = granted_table_actions(template_resources()["ConsoleFunction"])
    assert made and made <= granted, made - granted
    assert not granted & {"Scan", "DescribeTable", "*"}


def test_a_forged_session_cookie_gets_the_sign_in_page_not_the_project(console_env: str) -> None:
    page = console_function.handler(event("console_project", REPLACE_WITH_SESSION="forged.value"), FakeContext())
    assert page["statusCode"] == 303 and page["headers"]["location"].startswith("/console/sign-in")


def test_the_console_function_never_imports_the_mcp_sdk() -> None:
    probe = (
        "import sys; sys.path.insert(0, 'functions/console'); import app; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'pydantic'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
