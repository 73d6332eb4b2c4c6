"""The packaged local model, loaded from the installed packages (no download): what a vector is and how the
embedder fails."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.onnx_embedder import DIMENSIONS, TOKENS_PER_CALL, MiniLmEmbedder, load_local_embedder
from notewell.ports import EmbeddingUnavailableError


@pytest.fixture(scope="module")
def model() -> MiniLmEmbedder:
    embedder = load_local_embedder()
    assert embedder is not None, "the embed extra is part of the dev install: make .venv/.installed"
    return embedder


def dot(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_unit_length_384_floats_and_repeatable(model: MiniLmEmbedder) -> None:
    [first] = model.embed(["Deploys go through the SAM pipeline."])
    [again] = model.embed(["Deploys go through the SAM pipeline."])
    assert len(first) == DIMENSIONS == model.dimensions
    assert math.isclose(dot(first, first), 1.0, abs_tol=1e-5)
    assert first == pytest.approx(again, abs=1e-6)


def test_a_batch_gives_what_one_at_a_time_gives(model: MiniLmEmbedder) -> None:
    texts = ["We deploy the frontend to Vercel.", "Invoices are stored in cents, never floats.", "x"]
    together = model.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        assert vector == pytest.approx(model.embed([text])[0], abs=1e-4)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(model: MiniLmEmbedder) -> None:
    old, paraphrase, unrelated = model.embed(
        ["We deploy the frontend to Vercel.", "The web app is hosted on Vercel.", "Invoices are stored in cents."]
    )
    assert dot(old, paraphrase) > 0.5 > 0.2 > dot(old, unrelated)


def test_nothing_to_embed_is_no_work(model: MiniLmEmbedder) -> None:
    assert model.embed([]) == []


def test_a_spent_budget_fails_instead_of_running_late(model: MiniLmEmbedder) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="budget"):
        model.embed(["too late"], timeout=0.0)


def test_a_model_file_that_is_not_the_packaged_one_is_refused(tmp_path: Path, model: MiniLmEmbedder) -> None:
    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"not a model")
    embedder = MiniLmEmbedder(forged, Path(model._tokenizer_path), expected_sha256="0" * 64)
    with pytest.raises(EmbeddingUnavailableError, match="reinstall"):
        embedder.embed(["anything"])


def test_a_broken_model_file_fails_as_unavailable_not_with_a_crash(tmp_path: Path, model: MiniLmEmbedder) -> None:
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not a model")
    embedder = MiniLmEmbedder(broken, Path(model._tokenizer_path), expected_sha256=None)
    with pytest.raises(EmbeddingUnavailableError, match="could not be loaded"):
        embedder.embed(["anything"])


class RecordingSession:
    """The real onnxruntime session, noting the (texts, tokens) shape of every model call."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.shapes: list[tuple[int, int]] = []

    def run(self, names: list[str], feeds: dict[str, Any]) -> Any:
        self.shapes.append(feeds["input_ids"].shape)
        return self.session.run(names, feeds)


def test_long_notes_reach_the_model_a_few_at_a_time_so_a_backlog_does_not_balloon_memory(
    model: MiniLmEmbedder,
) -> None:
    # 32 notes of 256 tokens in one call took serve past 1.1 GB while it embedded its start-up backlog.
    embedder = MiniLmEmbedder(model._model_path, Path(model._tokenizer_path), expected_sha256=None)
    tokenizer, session = embedder._load()
    recording = RecordingSession(session)
    embedder._loaded = (tokenizer, recording)
    long_notes = [f"Note {n}: the billing service deploys through the SAM pipeline. " * 40 for n in range(6)]
    short_notes = ["Invoices are stored in cents.", "We deploy the frontend to Vercel."]
    texts = [long_notes[0], *short_notes, *long_notes[1:]]

    vectors = embedder.embed(texts)

    assert recording.shapes, "the model was called"
    assert all(rows * width <= TOKENS_PER_CALL for rows, width in recording.shapes)
    assert vectors[1] == pytest.approx(model.embed([short_notes[0]])[0], abs=1e-4)  # each text keeps its place
    assert vectors[0] == pytest.approx(model.embed([long_notes[0]])[0], abs=1e-4)


def test_the_model_is_prepared_once_into_the_cache_and_gives_the_same_vectors(
    tmp_path: Path, model: MiniLmEmbedder
) -> None:
    # The prepared graph keeps its weights in a file beside it (mapped, not copied onto the heap): what keeps a
    # serving process's memory down. It must change nothing a user sees.
    texts = ["Retries are capped at 5.", "Deploys go through the SAM pipeline. " * 30]
    tokenizer = Path(model._tokenizer_path)
    prepared = MiniLmEmbedder(model._model_path, tokenizer, model._expected_sha256, cache_dir=tmp_path)

    vectors = prepared.embed(texts)

    [entry] = [path for path in tmp_path.iterdir() if not path.name.startswith(".")]
    assert sorted(p.name for p in entry.iterdir()) == ["model.onnx", "weights.bin"]
    assert (entry / "weights.bin").stat().st_size > 50_000_000  # the folded float weights live in the file
    assert not list(tmp_path.glob(".preparing-*")), "no half-prepared directory is left behind"
    for mine, packaged in zip(vectors, model.embed(texts), strict=True):
        assert mine == pytest.approx(packaged, abs=1e-4)
    again = MiniLmEmbedder(model._model_path, Path(model._tokenizer_path), model._expected_sha256, cache_dir=tmp_path)
    before = (entry / "model.onnx").stat().st_mtime_ns
    assert again.embed(texts[:1])[0] == pytest.approx(vectors[0], abs=1e-6)
    assert (entry / "model.onnx").stat().st_mtime_ns == before, "a second process reuses the prepared model"


def test_a_cache_that_cannot_be_written_falls_back_to_the_packaged_model(tmp_path: Path, model: MiniLmEmbedder) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache should be")
    embedder = MiniLmEmbedder(model._model_path, Path(model._tokenizer_path), model._expected_sha256, cache_dir=blocked)

    [vector] = embedder.embed(["Invoices are stored in cents."])

    assert vector == pytest.approx(model.embed(["Invoices are stored in cents."])[0], abs=1e-6)
