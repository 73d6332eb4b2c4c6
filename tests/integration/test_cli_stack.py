"""Every CLI verb against a deployed stack found by name, as an operator runs them after `sam deploy`: moto holds
the stack (its outputs), the cursor secret and the table built from template.yaml. Region handling and missing
pieces end in one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from notewell.entrypoints.cli import KEY_PLACEHOLDER, main
from tests.support.dynamo import table_spec

STACK = "notewell-prod"
TABLE = "notewell-prod-NotesTable-1A2B3C"
URL = "https://abc123defg.execute-api.eu-west-1.amazonaws.com/mcp"
REGION = "eu-west-1"


def deploy(outputs: dict[str, str], name: str = STACK) -> None:
    template = {
        "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName=name, TemplateBody=json.dumps(template))


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A stack with the outputs template.yaml gives, no Notewell variables in the environment, no region set."""
    for name in ("NOTEWELL_BACKEND", "NOTEWELL_TABLE", "NOTEWELL_CURSOR_SECRET", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_PROFILE", "NOTEWELL_SEARCH_ENDPOINT", "NOTEWELL_ISSUER"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "NOTEWELL_HOME": str(tmp_path / "home")}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    config = tmp_path / "aws-config"
    config.write_text("[default]\n")  # a profile without a region: the operator's machine as it often is
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    with mock_aws():
        boto3.client("dynamodb", region_name=REGION).create_table(TableName=TABLE, **table_spec())
        secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="CursorSecret-abc", SecretString="a-generated-48-character-secret"
        )
        outputs = {"TableName": TABLE, "CursorSecretArn": secret["ARN"], "McpUrl": URL, "Issuer": URL[:-4]}
        deploy(outputs)
        yield outputs


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("notewell: ") and "Traceback" not in err, err
    return lines[0]


def test_the_first_key_and_plan_are_one_step_and_print_how_to_connect(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "keys", "create", "--stack", STACK, "--region", REGION, "--plan", "team")
    assert code == 0, err
    assert "team plan" in out
    secret = next(word for word in out.split() if word.startswith("nwk_"))
    assert f"claude mcp add --transport http notewell {URL}" in out and f"Bearer {secret}" in out
    assert "Created workspace" in err and "team plan" in err  # said, not silent

    code, out, _ = run(capsys, "workspace", "plan", "--stack", STACK, "--region", REGION, "--json")
    assert code == 0 and json.loads(out)["plan"] == "team"
    code, out, _ = run(capsys, "keys", "list", "--stack", STACK, "--region", REGION, "--json")
    (listed,) = json.loads(out)
    assert code == 0 and secret not in out and listed["hint"]


def test_every_verb_works_against_the_stack_with_the_region_from_the_environment(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_REGION", REGION)
    on_stack = ("--stack", STACK)
    code, out, err = run(capsys, "keys", "create", *on_stack, "--json")
    assert code == 0, err
    created = json.loads(out)
    assert created["url"] == URL and created["plan"] == "free"

    memory = tmp_path / "memory.jsonl"
    memory.write_text(json.dumps({"type": "entity", "name": "Billing", "entityType": "service",
                                  "observations": ["Invoices are sent on the 1st."]}) + "\n")  # fmt: skip
    code, out, err = run(capsys, "import", str(memory), "--project", "billing", *on_stack, "--json")
    assert code == 0, err
    assert json.loads(out)["notesWritten"] >= 1
    exported = tmp_path / "billing.jsonl"
    code, _, err = run(capsys, "export", "--project", "billing", "--out", str(exported), *on_stack)
    assert code == 0, err
    assert "Invoices are sent on the 1st." in exported.read_text()

    code, out, _ = run(capsys, "grants", "list", *on_stack, "--json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = run(capsys, "workspace", "plan", "--set", "enterprise", *on_stack, "--json")
    assert code == 0 and json.loads(out)["plan"] == "enterprise"
    code, out, err = run(capsys, "reindex", "--stack", STACK, "--json")
    assert code == 0, err
    assert json.loads(out)["upgrade"]["projects"] == 0  # made by this version: nothing to move
    code, out, _ = run(capsys, "keys", "revoke", created["id"], *on_stack, "--json")
    assert code == 0 and json.loads(out)["revokedAt"]


def test_without_a_region_the_cli_says_which_flag_to_pass(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["keys", "list", "--stack", STACK], ["keys", "list", "--backend", "dynamodb", "--table", TABLE],
                 ["connect", "--stack", STACK]):  # fmt: skip
        code, _, err = run(capsys, *argv)
        assert "No AWS region: pass --region" in one_line_error(code, err)


def test_a_stack_that_is_not_there_or_lacks_an_output_is_one_clear_line(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "keys", "list", "--stack", "notewell-typo", "--region", REGION)
    line = one_line_error(code, err)
    assert "'notewell-typo' does not exist in eu-west-1" in line

    deploy({"TableName": TABLE, "McpUrl": URL}, name="notewell-old")  # deployed from an older template
    code, _, err = run(capsys, "keys", "list", "--stack", "notewell-old", "--region", REGION)
    assert "has no CursorSecretArn output" in one_line_error(code, err)


def test_a_missing_cursor_secret_is_one_line_naming_where_to_find_it(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "keys", "list", "--backend", "dynamodb", "--table", TABLE, "--region", REGION)
    line = one_line_error(code, err)
    assert "NOTEWELL_CURSOR_SECRET is missing" in line and "--stack" in line

    boto3.client("secretsmanager", region_name=REGION).delete_secret(
        SecretId=stack["CursorSecretArn"], ForceDeleteWithoutRecovery=True
    )
    code, _, err = run(capsys, "keys", "list", "--stack", STACK, "--region", REGION)
    assert "cursor secret" in one_line_error(code, err)


def test_connect_prints_each_clients_configuration_for_the_stacks_url(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "connect", "--stack", STACK, "--region", REGION)
    assert code == 0
    for heading in ("Claude Code", "Cursor", "VS Code", "Codex", "Other MCP clients"):
        assert heading in out
    assert out.count(URL) >= 5 and KEY_PLACEHOLDER in out

    code, out, _ = run(capsys, "connect", "--url", URL, "--key", "nwk_example", "--client", "codex")
    assert code == 0
    toml = "\n".join(line[2:] for line in out.splitlines() if line.startswith("  ") and "export" not in line)
    server: dict[str, Any] = tomllib.loads(toml)["mcp_servers"]["notewell"]
    assert server == {"url": URL, "bearer_token_env_var": "NOTEWELL_API_KEY"}
    assert "export NOTEWELL_API_KEY='nwk_example'" in out

    code, out, _ = run(capsys, "connect", "--url", URL, "--key", "nwk_example", "--client", "vscode")
    body = json.loads(out[out.index("{") : out.rindex("}") + 1])
    assert body["servers"]["notewell"]["url"] == URL and "nwk_example" not in out  # VS Code asks for it instead

    code, _, err = run(capsys, "connect")
    assert "--stack" in one_line_error(code, err)


def test_an_operator_adds_tenants_and_invoices_each_from_a_monthly_usage_report(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import csv
    import io

    from notewell.bootstrap import bootstrap
    from notewell.config import Settings

    monkeypatch.setenv("AWS_REGION", REGION)
    on_stack = ("--stack", STACK)
    code, out, err = run(capsys, "workspace", "create", "--name", "Acme", "--plan", "team", *on_stack, "--json")
    assert code == 0, err
    acme = json.loads(out)
    code, out, _ = run(capsys, "workspace", "create", "--name", "Globex", *on_stack, "--json")
    globex = json.loads(out)
    code, out, _ = run(capsys, "workspace", "list", *on_stack, "--json")
    assert {(w["name"], w["plan"]) for w in json.loads(out)} == {("Acme", "team"), ("Globex", "free")}
    code, out, err = run(capsys, "keys", "create", "--workspace", acme["id"], *on_stack, "--json")
    assert code == 0 and json.loads(out)["workspace"] == acme["id"], err

    # Calls as the MCP function meters them, into the stack's table.
    services = bootstrap(Settings(backend="dynamodb", table_name=TABLE, cursor_secret="x", aws_region=REGION))
    for _ in range(3):
        services.meter.record_call(acme["id"], "get_context", 900)
    services.meter.record_call(acme["id"], "resource:export", 4000)
    services.meter.record_call(globex["id"], "search_notes", 200)
    services.meter.flush()

    month = services.deps.clock.now().strftime("%Y-%m")
    code, out, err = run(capsys, "workspace", "usage", "--month", month, "--format", "csv", *on_stack)
    assert code == 0, err
    rows = {r["workspace_name"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rows["Acme"]["calls"] == "4" and rows["Acme"]["tokens_returned"] == "6700"
    assert rows["Acme"]["calls_by_tool"] == "get_context=3;resource:export=1" and rows["Acme"]["plan"] == "team"
    assert rows["Globex"]["calls"] == "1" and rows["Globex"]["month"] == month
    code, out, _ = run(capsys, "workspace", "usage", "--month", "2020-01", "--format", "json", *on_stack)
    assert all(r["calls"] == 0 for r in json.loads(out))
    code, _, err = run(capsys, "workspace", "usage", "--month", "12/2026", *on_stack)
    assert "YYYY-MM" in one_line_error(code, err)

    code, out, _ = run(capsys, "workspace", "suspend", globex["id"], *on_stack, "--json")
    assert code == 0 and json.loads(out)["suspendedAt"]
    code, out, _ = run(capsys, "workspace", "list", *on_stack)
    assert "suspended" in next(line for line in out.splitlines() if "Globex" in line)
    code, out, _ = run(capsys, "workspace", "resume", globex["id"], *on_stack)
    assert code == 0 and "served again" in out
    code, _, err = run(capsys, "workspace", "suspend", "ws_nope", *on_stack)
    assert "No workspace ws_nope" in one_line_error(code, err)
