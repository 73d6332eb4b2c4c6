"""A deterministic embedder for tests and for stores with no model: hashed word and word-pair features.

Texts that share words get similar vectors, texts that share none are orthogonal. It knows no meaning (Postgres and
MySQL are as far apart as Postgres and lunch), so it stands in for a model in tests of the plumbing, never of quality.
"""

from __future__ import annotations

import hashlib
import math
import struct
from typing import TYPE_CHECKING

from notewell.domain.ranking import tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.ports import Vector


class HashEmbedder:
    def __init__(self, dimensions: int = 64, model_id: str = "notewell-hash-v1") -> None:
        self._dimensions = dimensions
        self._model_id = f"{model_id}-{dimensions}"
        self.calls = 0  # batches embedded, so tests can see what was computed

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        self.calls += 1
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> Vector:
        words = tokens(text)
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        vector = [0.0] * self._dimensions
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            (bucket,) = struct.unpack("<Q", digest)
            vector[bucket % self._dimensions] += 1.0 if bucket >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return tuple(x / norm for x in vector) if norm else tuple(vector)
