"""Embeddings on AWS: Amazon Titan Text Embeddings V2 through Bedrock, for the same Embedder port as the local model.

Titan takes one text per call, so a batch is a loop under one deadline: past it, the call fails as a whole and the
caller falls back to keywords (a slow provider never holds a tool call). The client has a short timeout and no
retry of its own on the query path (`make_client`); the indexer may pass a patient one. Texts are cut to the start
Titan reads well (6,000 characters), and cut once more if Titan still counts too many tokens.
"""

from __future__ import annotations

import json
import math
import time
from typing import TYPE_CHECKING, Any

from botocore import exceptions as botocore_errors
from botocore.config import Config

from notewell.ports import EmbeddingUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from notewell.ports import Vector

TITAN_V2 = "amazon.titan-embed-text-v2:0"
DIMENSIONS = (256, 512, 1024)  # what Titan V2 offers; 512 keeps about 99 % of 1024's accuracy (AWS)
MAX_CHARS = 6_000  # title and the start of the body: Titan's limits are 50,000 characters and 8,192 tokens
SHRUNK_CHARS = 2_000  # the second try after a token-count refusal


def make_client(region: str | None, *, read_timeout: float = 1.0, attempts: int = 1) -> Any:
    """A bedrock-runtime client for the query path: 1 s to connect and to read, no retry (the caller falls back)."""
    import boto3

    config = Config(
        connect_timeout=1, read_timeout=read_timeout, retries={"mode": "standard", "total_max_attempts": attempts}
    )
    return boto3.client("bedrock-runtime", region_name=region, config=config)


class TitanEmbedder:
    def __init__(
        self, client: Any, *, model: str = TITAN_V2, dimensions: int = 1024,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        if dimensions not in DIMENSIONS:
            raise ValueError(f"Titan V2 embeds in {', '.join(map(str, DIMENSIONS))} dimensions, not {dimensions}.")
        self._client = client
        self._model = model
        self._dimensions = dimensions
        self._monotonic = monotonic

    @property
    def model_id(self) -> str:
        return f"{self._model}/{self._dimensions}"  # the size is part of the model: 512 and 1024 do not compare

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        deadline = None if timeout is None else self._monotonic() + timeout
        vectors: list[Vector] = []
        for text in texts:
            if deadline is not None and self._monotonic() >= deadline:
                raise EmbeddingUnavailableError(f"Bedrock embedding ran past its {timeout} s budget")
            vectors.append(self._embed_one(text))
        return vectors

    def _embed_one(self, text: str) -> Vector:
        try:
            return self._invoke(text[:MAX_CHARS])
        except botocore_errors.ClientError as exc:
            if _is_too_many_tokens(exc):
                try:
                    return self._invoke(text[:SHRUNK_CHARS])
                except (botocore_errors.ClientError, botocore_errors.BotoCoreError) as again:
                    raise EmbeddingUnavailableError(f"Bedrock refused the text: {_code(again)}") from again
            raise EmbeddingUnavailableError(f"Bedrock refused the call: {_code(exc)}") from exc
        except botocore_errors.BotoCoreError as exc:  # timeouts, connection errors
            raise EmbeddingUnavailableError(f"Bedrock did not answer: {type(exc).__name__}") from exc

    def _invoke(self, text: str) -> Vector:
        body = json.dumps({"inputText": text or " ", "dimensions": self._dimensions, "normalize": True})
        response = self._client.invoke_model(
            modelId=self._model, contentType="application/json", accept="application/json", body=body
        )
        payload = json.loads(response["body"].read())
        values = payload.get("embedding")
        if not isinstance(values, list) or len(values) != self._dimensions:
            raise EmbeddingUnavailableError(f"Bedrock answered no {self._dimensions}-dimension embedding")
        norm = math.sqrt(sum(v * v for v in values)) or 1.0  # normalize=True already; kept exact for dot products
        return tuple(float(v) / norm for v in values)


def _code(exc: Exception) -> str:
    if isinstance(exc, botocore_errors.ClientError):
        return str(exc.response.get("Error", {}).get("Code", "error"))
    return type(exc).__name__


def _is_too_many_tokens(exc: botocore_errors.ClientError) -> bool:
    error = exc.response.get("Error", {})
    return error.get("Code") == "ValidationException" and "input tokens" in str(error.get("Message", "")).lower()
