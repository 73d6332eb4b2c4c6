"""template.yaml's operations: logs that expire, access logs without secrets, throttling, alarms that can notify,
a dashboard that renders, and an explicit fate for every stateful resource. cfn-lint checks the rest."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # yaml ships no types
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    """A short-form intrinsic (!Ref X, !GetAtt A.B, !Sub ...) as its long form, so tests can follow references."""
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_Loader.add_multi_constructor("!", _tag)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(TEMPLATE.read_text(), Loader=_Loader)
    return loaded


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def test_cfn_lint_passes() -> None:
    lint = Path(sys.executable).with_name("cfn-lint")
    result = subprocess.run([str(lint), str(TEMPLATE)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_function_logs_to_a_group_of_the_stack_that_expires(template: dict[str, Any]) -> None:
    groups = of_type(template, "AWS::Logs::LogGroup")
    functions = of_type(template, "AWS::Serverless::Function")
    assert functions
    for name, function in functions.items():
        group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert group in groups, name
        assert groups[group].get("Condition") == function.get("Condition"), name  # exists exactly when it does
    for name, group in groups.items():
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, name


def test_the_access_log_records_requests_without_headers_or_bodies(template: dict[str, Any]) -> None:
    api = template["Resources"]["HttpApi"]["Properties"]
    access = api["AccessLogSettings"]
    assert access["DestinationArn"] == {"Fn::GetAtt": "ApiAccessLogs.Arn"}
    fields = json.loads(access["Format"])  # one JSON object per line
    assert {"requestId", "status", "path", "latencyMs"} <= set(fields)
    variables = " ".join(fields.values())
    assert not re.search(r"header|authorization|requestBody|\$input", variables, re.IGNORECASE)
    throttle = api["DefaultRouteSettings"]
    assert throttle == {
        "ThrottlingRateLimit": {"Ref": "ApiRateLimit"},
        "ThrottlingBurstLimit": {"Ref": "ApiBurstLimit"},
    }


def test_alarms_cover_the_failures_an_operator_must_hear_of_and_notify_the_topic(template: dict[str, Any]) -> None:
    alarms = of_type(template, "AWS::CloudWatch::Alarm")

    def watched(alarm: dict[str, Any]) -> set[tuple[str, str]]:
        props = alarm["Properties"]
        if "MetricName" in props:
            return {(props["Namespace"], props["MetricName"])}
        return {
            (m["MetricStat"]["Metric"]["Namespace"], m["MetricStat"]["Metric"]["MetricName"])
            for m in props["Metrics"] if "MetricStat" in m
        }  # fmt: skip

    covered = set().union(*(watched(a) for a in alarms.values()))
    assert {
        ("AWS/Lambda", "Errors"), ("AWS/Lambda", "Throttles"), ("AWS/ApiGateway", "5xx"),
        ("AWS/DynamoDB", "ReadThrottleEvents"), ("AWS/DynamoDB", "WriteThrottleEvents"),
        ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    } <= covered  # fmt: skip
    for name, alarm in alarms.items():
        actions = alarm["Properties"]["AlarmActions"]
        assert actions == {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}, name
    errors = [a for a in alarms.values() if ("AWS/Lambda", "Errors") in watched(a)]
    functions = {
        f"{name}"
        for a in errors
        for d in [a["Properties"].get("Dimensions", [])]
        + [m["MetricStat"]["Metric"]["Dimensions"] for m in a["Properties"].get("Metrics", []) if "MetricStat" in m]
        for x in d
        for name in [x["Value"]["Ref"]]
    }
    http_functions = {
        n for n, f in of_type(template, "AWS::Serverless::Function").items()
        if any(e["Type"] == "HttpApi" for e in f["Properties"].get("Events", {}).values())
    }  # fmt: skip
    assert http_functions <= functions  # every function behind the API has its errors watched


def test_the_dashboard_is_valid_json_and_shows_every_alarm(template: dict[str, Any]) -> None:
    body, variables = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    rendered = re.sub(r"\$\{([A-Za-z0-9:.]+)\}", lambda m: f"X{m.group(1)}", body)
    rendered = rendered.replace("X" + "Alarms", '"arn:alarm"')  # the list of alarm ARNs the Join builds
    dashboard = json.loads(rendered)
    kinds = [w["type"] for w in dashboard["widgets"]]
    assert kinds.count("metric") >= 5 and "alarm" in kinds
    listed = {
        item["Fn::Sub"].strip('"').removeprefix("${").removesuffix(".Arn}")
        for item in variables["Alarms"]["Fn::Join"][1]
        if "Fn::Sub" in item
    } | {
        item["Fn::If"][1]["Fn::Sub"].strip('"').removeprefix("${").removesuffix(".Arn}")
        for item in variables["Alarms"]["Fn::Join"][1]
        if "Fn::If" in item
    }
    assert listed == set(of_type(template, "AWS::CloudWatch::Alarm"))
    expressions = " ".join(
        item["expression"]
        for w in dashboard["widgets"]
        for row in w["properties"].get("metrics", [])
        for item in row
        if isinstance(item, dict) and "expression" in item
    )
    for metric in ("Calls", "Errors", "Duration"):  # what the MCP function emits per tool (adapters/emf_metrics.py)
        assert f'{{Notewell,service,tool}} MetricName="{metric}"' in expressions


STATEFUL = ("AWS::DynamoDB::Table", "AWS::SecretsManager::Secret", "AWS::SQS::Queue",
            "AWS::OpenSearchServerless::Collection", "AWS::Logs::LogGroup")  # fmt: skip


def test_every_stateful_resource_says_what_happens_to_it_on_delete_and_replace(template: dict[str, Any]) -> None:
    stateful = {n: r for n, r in template["Resources"].items() if r["Type"] in STATEFUL}
    assert len(stateful) >= 10
    for name, resource in stateful.items():
        assert resource.get("DeletionPolicy") in ("Delete", "Retain", "Snapshot"), name
        assert resource.get("UpdateReplacePolicy") == resource["DeletionPolicy"], name
    assert template["Resources"]["NotesTable"]["DeletionPolicy"] == "Retain"  # the notes outlive the stack


def test_functions_run_traced_and_emit_tool_metrics(template: dict[str, Any]) -> None:
    function = template["Globals"]["Function"]
    assert function["Tracing"] == "Active"
    assert function["Environment"]["Variables"]["NOTEWELL_METRICS"] == "emf"


def test_the_judge_is_off_unless_a_model_is_named_and_may_call_only_that_model(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["JudgeModelId"]
    assert parameter["Default"] == ""
    mcp = template["Resources"]["McpFunction"]["Properties"]
    assert mcp["Environment"]["Variables"]["NOTEWELL_JUDGE_MODEL"] == {"Ref": "JudgeModelId"}
    granted = [p for p in mcp["Policies"] if isinstance(p, dict) and "Fn::If" in p and p["Fn::If"][0] == "HasJudge"]
    (judge,) = granted
    (statement,) = judge["Fn::If"][1]["Statement"]
    assert statement["Action"] == "bedrock:InvokeModel"
    assert all("${JudgeModelId}" in r["Fn::Sub"] for r in statement["Resource"])
    assert judge["Fn::If"][2] == {"Ref": "AWS::NoValue"}


def metric_ids(expression: str) -> set[str]:
    """The metric and expression ids an alarm expression names (ids start lower-case; functions are upper-case)."""
    return set(re.findall(r"\b[a-z][A-Za-z0-9_]*\b", expression))


def test_alarms_over_several_metrics_fire_when_only_one_of_them_has_data(template: dict[str, Any]) -> None:
    """A metric with nothing to report (no throttles, a function not invoked) has no data point, and `m1 + m2` can
    be left without a value by it: the alarm would wait for every metric to report at once. Every expression over
    two or more metrics adds them with SUM(METRICS()) or fills each gap with FILL(m, 0)."""
    expressions = {
        f"{name}.{m['Id']}": m["Expression"]
        for name, alarm in of_type(template, "AWS::CloudWatch::Alarm").items()
        for m in alarm["Properties"].get("Metrics", [])
        if "Expression" in m
    }
    assert expressions  # the alarms over several metrics have one each
    for where, expression in expressions.items():
        compact = expression.replace(" ", "")
        if re.fullmatch(r"SUM\(METRICS\(\)\)", compact):
            continue
        filled = set(re.findall(r"FILL\(([a-z][A-Za-z0-9_]*),0\)", compact))
        named = metric_ids(compact)
        assert len(named) < 2 or named <= filled, (where, expression)


def event_source(template: dict[str, Any]) -> dict[str, Any]:
    (source,) = [e["Properties"] for e in template["Resources"]["IndexerFunction"]["Properties"]["Events"].values()]
    return source  # type: ignore[no-any-return]


def test_an_indexer_falling_behind_its_stream_raises_an_alarm_before_records_are_given_up(
    template: dict[str, Any],
) -> None:
    (alarm,) = [
        a for a in of_type(template, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "IteratorAge"
    ]  # fmt: skip
    props = alarm["Properties"]
    assert alarm.get("Condition") == "HasSearch"  # exactly when the indexer exists
    assert props["Namespace"] == "AWS/Lambda" and props["Statistic"] == "Maximum"
    assert props["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "IndexerFunction"}}]
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    # Milliseconds behind the stream, at most half the age at which the event source gives records up, and
    # noticed within a quarter of an hour.
    given_up_ms = event_source(template)["MaximumRecordAgeInSeconds"] * 1000
    assert 0 < props["Threshold"] <= given_up_ms / 2
    assert props["Period"] * props["EvaluationPeriods"] <= 900


def test_notes_indexed_without_vectors_raise_an_alarm_on_the_metric_the_indexer_emits(
    template: dict[str, Any],
) -> None:
    """The indexer counts notes it stored without a vector (Bedrock down) as NotesIndexedWithoutVector, in the
    embedded metric format: its POWERTOOLS_METRICS_NAMESPACE, one dimension, service=indexer."""
    indexer_env = template["Resources"]["IndexerFunction"]["Properties"]["Environment"]["Variables"]
    global_env = template["Globals"]["Function"]["Environment"]["Variables"]
    namespace = indexer_env.get("POWERTOOLS_METRICS_NAMESPACE", global_env["POWERTOOLS_METRICS_NAMESPACE"])
    (alarm,) = [
        a for a in of_type(template, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "NotesIndexedWithoutVector"
    ]  # fmt: skip
    props = alarm["Properties"]
    assert alarm.get("Condition") == "HasSearch"
    assert props["Namespace"] == namespace == "Notewell"
    assert props["Dimensions"] == [{"Name": "service", "Value": "indexer"}]
    assert props["Statistic"] == "Sum" and props["Threshold"] == 1  # the first such note
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert props["TreatMissingData"] == "notBreaching"  # no line is emitted while every note gets its vector


def test_the_stack_outputs_what_a_replay_of_the_failure_queue_needs(template: dict[str, Any]) -> None:
    """The queue holds stream positions, not records: a replay reads them back from the stream and hands them to
    the indexer function, which the operator finds by the stack's outputs (README "Records the indexer gave up
    on")."""
    outputs = template["Outputs"]
    assert outputs["IndexerFailureQueue"]["Value"] == {"Ref": "IndexerFailures"}
    assert outputs["IndexerFunctionName"]["Value"] == {"Ref": "IndexerFunction"}
    assert outputs["IndexerFunctionName"]["Condition"] == template["Resources"]["IndexerFunction"]["Condition"]
