"""The token estimate against real tokenizers (cl100k_base, o200k_base) on what Notewell actually returns."""

from __future__ import annotations

import json
from pathlib import Path

import bpe_openai
import pytest

from notewell.domain.rules import estimate_tokens
from tests.unit.admission_labels import LABELLED

ROOT = Path(__file__).resolve().parents[2]


def context_like_json() -> str:
    entries = [
        {"id": f"n_01M8V9KQZPA9V00N04TXS6T{n:03d}", "title": old[:60], "type": "decision", "status": "current",
         "updatedAt": f"2026-0{1 + n % 9}-1{n % 10}T09:{n % 60:02d}:00.000Z", "excerpt": new, "bodySize": len(new)}
        for n, (_, old, new, _) in enumerate(LABELLED)
    ]  # fmt: skip
    sections = [{"name": "decisions", "entries": entries[:30]}, {"name": "recent_changes", "entries": entries[30:]}]
    return json.dumps({"project": "api", "conflicts": [], "sections": sections}, separators=(",", ":"))


SAMPLES = {
    "prose": (ROOT / "README.md").read_text(),
    "notes": "\n".join(x for _, old, new, _ in LABELLED for x in (old, new)),
    "context_json": context_like_json(),
}


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_the_estimate_stays_close_to_real_tokenizers(encoding: str, sample: str) -> None:
    text = SAMPLES[sample]
    real = len(bpe_openai.get_encoding(encoding).encode(text))
    ratio = estimate_tokens(text) / real
    assert 0.9 <= ratio <= 1.25, f"{sample}: estimate/real = {ratio:.2f}"
