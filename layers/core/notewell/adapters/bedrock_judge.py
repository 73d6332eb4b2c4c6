"""The judge on AWS: a small Bedrock text model (Claude Haiku or Amazon Nova Micro class) through the Converse API.

remember asks it about a pair of notes only when no detector could settle them and they are close: one short
question, a few dozen tokens back, under a deadline. Any failure (throttling, a timeout, an answer that is not the
JSON asked for) is JudgeUnavailableError, and remember stores the note for the agent's review as it would without
a judge.
"""

from __future__ import annotations

import json
import re
from typing import Any

from botocore import exceptions as botocore_errors
from botocore.config import Config

from notewell.ports import JudgeUnavailableError, Ruling

VERDICTS = ("contradicts", "restates", "independent")
NOTE_CHARS = 1_500  # the part of each note the judge reads (admission passes the sentences that matter)
SYSTEM = (
    "You compare two notes from a software project's memory. Answer with one JSON object and nothing else: "
    '{"verdict": "contradicts" | "restates" | "independent", "slot": "...", "old": "...", "new": "..."}. '
    "contradicts: both cannot be true now about the same thing (a value, a choice, a state changed). "
    "restates: the new note says the old note's claim, perhaps with more detail, and changes none of it. "
    "independent: both can be true. For contradicts, slot names what changed in a few words, old and new give "
    "its two values; otherwise leave them empty."
)
_JSON = re.compile(r"\{.*\}", re.DOTALL)


def make_client(region: str | None, *, read_timeout: float = 2.0) -> Any:
    """A bedrock-runtime client that gives up quickly and never retries: remember has its own fallback."""
    import boto3

    config = Config(connect_timeout=1, read_timeout=read_timeout, retries={"mode": "standard", "total_max_attempts": 1})
    return boto3.client("bedrock-runtime", region_name=region, config=config)


class BedrockJudge:
    def __init__(self, client: Any, model: str) -> None:
        self._client = client
        self._model = model

    @property
    def model_id(self) -> str:
        return self._model

    def rule(self, old: str, new: str, *, timeout: float) -> Ruling:
        if timeout <= 0:
            raise JudgeUnavailableError("No time left to ask the judge.")
        question = f"Old note:\n{old[:NOTE_CHARS]}\n\nNew note:\n{new[:NOTE_CHARS]}"
        try:
            answer = self._client.converse(
                modelId=self._model,
                system=[{"text": SYSTEM}],
                messages=[{"role": "user", "content": [{"text": question}]}],
                inferenceConfig={"maxTokens": 120, "temperature": 0},
            )
        except (botocore_errors.ClientError, botocore_errors.BotoCoreError) as exc:
            raise JudgeUnavailableError(f"The judge did not answer: {type(exc).__name__}") from exc
        return ruling_of(_text_of(answer))


def _text_of(answer: Any) -> str:
    try:
        return "".join(part.get("text", "") for part in answer["output"]["message"]["content"])
    except (KeyError, TypeError) as exc:
        raise JudgeUnavailableError("The judge's answer has no text.") from exc


def ruling_of(text: str) -> Ruling:
    """The ruling in a model's answer: the first JSON object in it, with a verdict it was allowed to give."""
    found = _JSON.search(text)
    try:
        data = json.loads(found[0]) if found else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or data.get("verdict") not in VERDICTS:
        raise JudgeUnavailableError("The judge's answer is not the JSON asked for.")
    fields = {key: str(data.get(key) or "")[:200] for key in ("slot", "old", "new")}
    return Ruling(str(data["verdict"]), **fields)
