"""The test embedder: deterministic, unit length, and closer for texts that share words."""

from __future__ import annotations

import math

from notewell.adapters.hash_embedder import HashEmbedder


def dot(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_unit_length_and_the_same_every_time() -> None:
    first, second = HashEmbedder(), HashEmbedder()
    [a] = first.embed(["Deploys go through the SAM pipeline."])
    [b] = second.embed(["Deploys go through the SAM pipeline."])
    assert a == b
    assert len(a) == first.dimensions == 64
    assert math.isclose(dot(a, a), 1.0)


def test_shared_words_make_vectors_closer() -> None:
    old, near, far = HashEmbedder().embed(
        ["We deploy the frontend to Vercel.", "The frontend deploys to Vercel.", "Invoices are stored as cents."]
    )
    assert dot(old, near) > 0.5 > dot(old, far)


def test_the_model_id_names_the_dimension() -> None:
    assert HashEmbedder(32).model_id != HashEmbedder(64).model_id
