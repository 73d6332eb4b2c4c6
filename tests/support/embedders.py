"""Embedders for tests: the deterministic one, counting what it is asked to embed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from notewell.adapters.hash_embedder import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.ports import Vector


class CountingEmbedder(HashEmbedder):
    """The deterministic test embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        self.texts.extend(texts)
        return super().embed(texts, timeout=timeout)
