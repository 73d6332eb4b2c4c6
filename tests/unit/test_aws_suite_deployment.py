"""`pytest tests/aws -m aws --stack NAME` finds the stack's MCP URL and search endpoint in its CloudFormation
outputs (moto here), and without --stack reads the environment variables the suite has always read."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from tests.aws.deployment import Deployment, deployment_of

REGION = "eu-west-1"
URL = "https://abc123.execute-api.eu-west-1.amazonaws.com/mcp"
ENDPOINT = "https://xyz789.eu-west-1.aoss.amazonaws.com"


def make_stack(name: str, outputs: dict[str, str]) -> None:
    template = {
        "Resources": {"Failures": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName=name, TemplateBody=json.dumps(template))


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    return {"AWS_REGION": REGION, "NOTEWELL_AWS_API_KEY": "nw_scratch"}


def test_a_named_stack_gives_its_outputs(environ: dict[str, str]) -> None:
    with mock_aws():
        make_stack("notewell-test", {"McpUrl": URL, "SearchEndpoint": ENDPOINT, "TableName": "t"})
        stale = environ | {"NOTEWELL_AWS_MCP_URL": "https://old.example/mcp"}  # the stack's own output wins
        assert deployment_of("notewell-test", stale) == Deployment(URL, ENDPOINT, REGION, "nw_scratch")


def test_without_a_stack_the_environment_gives_the_deployment(environ: dict[str, str]) -> None:
    given = environ | {"NOTEWELL_AWS_MCP_URL": URL, "NOTEWELL_SEARCH_ENDPOINT": ENDPOINT}
    assert deployment_of(None, given) == Deployment(URL, ENDPOINT, REGION, "nw_scratch")


def test_a_stack_without_a_collection_says_where_the_endpoint_may_come_from(environ: dict[str, str]) -> None:
    with mock_aws():
        make_stack("keyword-only", {"McpUrl": URL})  # SearchBackend none: no SearchEndpoint output
        with pytest.raises(RuntimeError, match=r"SearchEndpoint output of stack 'keyword-only', or NOTEWELL_SEARCH"):
            deployment_of("keyword-only", environ)
