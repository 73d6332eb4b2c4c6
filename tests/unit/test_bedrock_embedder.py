"""The Bedrock (Titan V2) embedder, against botocore's Stubber: what it sends, what it makes of the answers, and that
a slow or refusing provider fails the call as a whole (the caller then searches by keywords)."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from notewell.adapters.bedrock_embedder import TITAN_V2, TitanEmbedder, make_client
from notewell.ports import EmbeddingUnavailableError


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")


def answer(values: list[float]) -> dict[str, Any]:
    raw = json.dumps({"embedding": values, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def expect(stubber: Stubber, text: str, dimensions: int, values: list[float]) -> None:
    body = json.dumps({"inputText": text, "dimensions": dimensions, "normalize": True})
    params = {"modelId": TITAN_V2, "contentType": "application/json", "accept": "application/json", "body": body}
    stubber.add_response("invoke_model", answer(values), params)


def test_each_text_is_one_call_and_comes_back_a_unit_vector_in_order(client: Any) -> None:
    embedder = TitanEmbedder(client, dimensions=256)
    with Stubber(client) as stubber:
        expect(stubber, "first", 256, [3.0] + [0.0] * 254 + [4.0])
        expect(stubber, "second", 256, [0.0] * 255 + [1.0])
        first, second = embedder.embed(["first", "second"])
        stubber.assert_no_pending_responses()
    assert math.isclose(first[0], 0.6) and math.isclose(first[-1], 0.8) and second[-1] == 1.0
    assert embedder.model_id == f"{TITAN_V2}/256" and embedder.dimensions == 256  # sizes do not compare


def test_a_long_note_is_cut_to_its_start_and_cut_again_when_titan_counts_too_many_tokens(client: Any) -> None:
    embedder = TitanEmbedder(client, dimensions=512)
    long_text = "token " * 5_000
    with Stubber(client) as stubber:
        stubber.add_client_error("invoke_model", "ValidationException", "Too many input tokens. Max input tokens: 8192",
                                 expected_params={"modelId": TITAN_V2, "contentType": ANY, "accept": ANY,
                                                  "body": json.dumps({"inputText": long_text[:6_000], "dimensions": 512,
                                                                      "normalize": True})})  # fmt: skip
        expect(stubber, long_text[:2_000], 512, [1.0] + [0.0] * 511)
        (vector,) = embedder.embed([long_text])
    assert vector[0] == 1.0


@pytest.mark.parametrize("code", ["ThrottlingException", "ServiceUnavailableException", "AccessDeniedException"])
def test_a_refusing_provider_fails_the_whole_call(client: Any, code: str) -> None:
    with Stubber(client) as stubber:
        stubber.add_client_error("invoke_model", code, "no")
        with pytest.raises(EmbeddingUnavailableError, match=code):
            TitanEmbedder(client).embed(["anything"])


def test_an_answer_of_the_wrong_size_is_no_embedding(client: Any) -> None:
    with Stubber(client) as stubber:
        stubber.add_response("invoke_model", answer([1.0, 0.0]))
        with pytest.raises(EmbeddingUnavailableError, match="1024-dimension"):
            TitanEmbedder(client).embed(["short answer"])


def test_past_its_deadline_the_batch_fails_instead_of_holding_the_call(client: Any) -> None:
    now = [0.0]
    embedder = TitanEmbedder(client, dimensions=256, monotonic=lambda: now[0])
    with Stubber(client) as stubber:
        expect(stubber, "one", 256, [1.0] + [0.0] * 255)

        def slow(*args: Any, **kwargs: Any) -> None:
            now[0] += 0.9  # the first call took 0.9 s of a 0.5 s budget

        client.meta.events.register("after-call.bedrock-runtime.InvokeModel", slow)
        with pytest.raises(EmbeddingUnavailableError, match="budget"):
            embedder.embed(["one", "two"], timeout=0.5)


def test_the_query_path_client_waits_a_second_and_never_retries() -> None:
    client = make_client("us-east-1")
    config = client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (1, 1.0)
    assert config.retries["total_max_attempts"] == 1
    with pytest.raises(ValueError, match="256, 512, 1024"):
        TitanEmbedder(client, dimensions=384)
