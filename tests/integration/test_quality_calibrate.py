"""The offline calibration command: embeds labelled coding pairs with a model, carries the local model's thresholds
over to it, and prints the table entry to paste; its saved cosines print the same entry again without the model."""

from __future__ import annotations

import io
import json
import re
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from notewell.adapters import bedrock_embedder
from notewell.adapters.hash_embedder import HashEmbedder
from notewell.domain.calibration import CALIBRATIONS, LOCAL_MODEL, Calibration
from tests.quality import calibrate
from tests.quality.coding import PAIRS, read_pairs
from tests.quality.harness import quality_embedder

if TYPE_CHECKING:
    from pathlib import Path

PAIRS_USED = 48  # of the tune split: enough of each label, quick with the local model


@pytest.fixture
def subset(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    pairs = read_pairs(PAIRS, "tune")[:PAIRS_USED]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path, pairs


def entry_of(printed: str) -> tuple[str, Calibration]:
    """The pasted line, read as the table reads it."""
    line = next(line for line in printed.splitlines() if "Calibration(" in line)
    table = eval("{" + line + "}", {"Calibration": Calibration})  # noqa: S307 - the command's own output
    [(model_id, entry)] = table.items()
    return model_id, entry


def test_the_command_prints_an_entry_for_the_model_at_the_local_models_operating_points(
    tmp_path: Path, subset: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, pairs = subset
    saved = tmp_path / "hash-cosines.json"
    common = ["--pairs", str(path), "--split", "all"]

    assert calibrate.main(["--embedder", "hash", "--save-cosines", str(saved), *common]) == 0
    printed = capsys.readouterr().out
    model_id, entry = entry_of(printed)
    assert model_id == HashEmbedder().model_id and entry.hybrid is None  # weights are not measured on these pairs

    # each threshold lets through the share of contradiction pairs the local model's does
    local_model = quality_embedder("local")
    assert local_model is not None
    local = calibrate.pair_cosines(pairs, local_model)
    hashed = calibrate.load(saved, pairs)
    reference = CALIBRATIONS[LOCAL_MODEL]
    for mine, theirs in ((entry.duplicate, reference.duplicate), (entry.related, reference.related)):
        assert calibrate.share_at_or_above(mine, hashed.of(pairs, "contradiction")) == calibrate.share_at_or_above(
            theirs, local.of(pairs, "contradiction")
        )
    assert entry.related < entry.duplicate

    # later, without the model: the saved cosines give the same entry
    assert calibrate.main(["--cosines", str(saved), *common]) == 0
    assert entry_of(capsys.readouterr().out) == (model_id, entry)
    assert re.search(r"tests\.quality\.coding --split report", printed)


def test_with_aws_access_it_embeds_each_pair_with_titan_v2_once_and_prints_titans_entry(
    subset: tuple[Path, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bedrock as botocore's Stubber plays it, in the region and size the stack's environment names: one
    invoke_model per distinct text, each answered with the text's hash vector padded to 512 dimensions."""
    path, pairs = subset
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("NOTEWELL_EMBED_DIMENSIONS", "512")
    client = boto3.client("bedrock-runtime", region_name="eu-west-1", aws_access_key_id="t", aws_secret_access_key="t")
    monkeypatch.setattr(bedrock_embedder, "make_client", lambda region, **patience: client)
    texts = list(dict.fromkeys(calibrate.embedded_text(p[side]) for p in pairs for side in ("a", "b")))
    with Stubber(client) as stubber:
        for text, vector in zip(texts, HashEmbedder().embed(texts), strict=True):
            raw = json.dumps({"embedding": [*vector, *[0.0] * (512 - len(vector))], "inputTextTokenCount": 9}).encode()
            body = json.dumps({"inputText": text, "dimensions": 512, "normalize": True})
            stubber.add_response(
                "invoke_model", {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"},
                {"modelId": bedrock_embedder.TITAN_V2, "contentType": "application/json",
                 "accept": "application/json", "body": body},
            )  # fmt: skip
        assert calibrate.main(["--embedder", "bedrock", "--pairs", str(path), "--split", "all"]) == 0
        stubber.assert_no_pending_responses()
    model_id, entry = entry_of(capsys.readouterr().out)
    assert model_id == "amazon.titan-embed-text-v2:0/512" and -1 < entry.related < entry.duplicate < 1
