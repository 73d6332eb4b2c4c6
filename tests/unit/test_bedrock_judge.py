"""The Bedrock judge, against botocore's Stubber: the one short question it sends, what it makes of the answer,
and that a refusal, a slow model or an answer that is not the JSON asked for is JudgeUnavailableError (remember then
leaves the note to the agent's review)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from notewell.adapters.bedrock_judge import BedrockJudge, make_client, ruling_of
from notewell.bootstrap import _judge_for
from notewell.config import Settings
from notewell.ports import JudgeUnavailableError, Ruling

NOVA = "amazon.nova-micro-v1:0"


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")


def said(text: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 120, "outputTokens": 30, "totalTokens": 150},
        "metrics": {"latencyMs": 300},
    }


def test_one_short_question_names_both_notes_and_asks_for_json(client: Any) -> None:
    judge = BedrockJudge(client, NOVA)
    answer = '{"verdict": "contradicts", "slot": "default branch", "old": "main", "new": "master"}'
    with Stubber(client) as stubber:
        stubber.add_response(
            "converse", said(answer),
            {"modelId": NOVA, "system": ANY, "messages": ANY, "inferenceConfig": {"maxTokens": 120, "temperature": 0}},
        )  # fmt: skip
        ruling = judge.rule("The default branch is main.", "The default branch is master.", timeout=2)
    assert ruling == Ruling("contradicts", "default branch", "main", "master")
    assert judge.model_id == NOVA


def test_the_question_holds_the_two_notes_in_order(client: Any) -> None:
    judge = BedrockJudge(client, NOVA)
    sent: list[dict[str, Any]] = []
    event = "provide-client-params.bedrock-runtime.Converse"
    client.meta.events.register(event, lambda params, **_: sent.append(params))
    with Stubber(client) as stubber:
        stubber.add_response("converse", said('{"verdict": "independent"}'))
        assert judge.rule("old text", "new text", timeout=2) == Ruling("independent")
    question = sent[0]["messages"][0]["content"][0]["text"]
    assert question.index("old text") < question.index("new text")
    assert "contradicts" in sent[0]["system"][0]["text"]


@pytest.mark.parametrize(
    "text",
    [
        "The notes agree.",  # no JSON
        '{"verdict": "maybe"}',  # a verdict it may not give
        '{"verdict": "contradicts"',  # cut short
    ],
)
def test_an_answer_that_is_not_the_json_asked_for_is_no_ruling(text: str) -> None:
    with pytest.raises(JudgeUnavailableError):
        ruling_of(text)


def test_json_inside_prose_is_read_and_long_fields_are_cut() -> None:
    ruling = ruling_of('Here: {"verdict": "restates", "slot": "' + "x" * 500 + '"} done')
    assert ruling.verdict == "restates" and len(ruling.slot) == 200


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "ModelTimeoutException"])
def test_a_refusal_is_no_ruling(client: Any, code: str) -> None:
    judge = BedrockJudge(client, NOVA)
    with Stubber(client) as stubber:
        stubber.add_client_error("converse", service_error_code=code, http_status_code=429)
        with pytest.raises(JudgeUnavailableError, match="did not answer"):
            judge.rule("a", "b", timeout=2)


def test_no_time_left_asks_nothing(client: Any) -> None:
    with Stubber(client) as stubber, pytest.raises(JudgeUnavailableError):
        BedrockJudge(client, NOVA).rule("a", "b", timeout=0)
    stubber.assert_no_pending_responses()


def test_the_judge_is_built_only_when_a_model_is_named() -> None:
    assert _judge_for(Settings()) is None
    judge = _judge_for(Settings(judge_model=NOVA, aws_region="eu-west-1"))
    assert isinstance(judge, BedrockJudge) and judge.model_id == NOVA
    assert Settings.from_env({"NOTEWELL_JUDGE_MODEL": f" {NOVA} "}).judge_model == NOVA


def test_the_client_gives_up_quickly_and_never_retries() -> None:
    config = make_client("us-east-1").meta.config
    assert config.read_timeout == 2.0 and config.retries["total_max_attempts"] == 1
