"""Meaning: note vectors computed on write, and the vector leg of search and of remember's comparisons.

Vectors are derived data. A write never fails because the embedder did: the note is stored, the failure is logged,
and `notewell reindex` (or the next write of the note) fills the gap; until then the keyword leg still finds it.
"""

from __future__ import annotations

import logging
import operator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from notewell.domain.calibration import hybrid_weights_of
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.hybrid import embedding_text
from notewell.ports import EmbeddingUnavailableError, NoteVector, SearchUnavailableError, VectorIndex

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime

    from notewell.domain.calibration import HybridWeights
    from notewell.domain.model import Note
    from notewell.ports import Clock, Embedder, Vector, VectorSearch

logger = logging.getLogger(__name__)

QUERY_TIMEOUT_SECONDS = 1.0  # a read waits this long for its query vector, then goes by keywords
WRITE_TIMEOUT_SECONDS = 10.0  # a write's vectors (after the commit: the note is safe whatever happens)
# After a failure the vector leg rests this long, so a broken or slow model does not cost every call its timeout.
BREAKER = timedelta(seconds=30)
BATCH = 64
WARM_UP_TIMEOUT_SECONDS = 120.0


class Meaning:
    def __init__(self, embedder: Embedder, vectors: VectorSearch | None, clock: Clock) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._clock = clock
        self._resting_until: datetime | None = None

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def hybrid_weights(self) -> HybridWeights | None:
        """The weights that mix this model's cosines with keyword scores; None: search fuses the legs by rank."""
        return hybrid_weights_of(self.model_id)

    @property
    def searchable(self) -> bool:
        """Whether stored vectors can be searched (a store with a vector index), not only compared."""
        return self._vectors is not None

    def embed(self, texts: Sequence[str], *, timeout: float = QUERY_TIMEOUT_SECONDS) -> list[Vector]:
        """Vectors for `texts`, or EmbeddingUnavailableError (also while resting after a failure)."""
        now = self._clock.now()
        if self._resting_until is not None and now < self._resting_until:
            raise EmbeddingUnavailableError("The embedding model failed a moment ago; searching by keywords.")
        try:
            vectors = self._embedder.embed(texts, timeout=timeout)
        except EmbeddingUnavailableError:
            self._resting_until = now + BREAKER
            raise
        self._resting_until = None
        return vectors

    def embed_one(self, text: str) -> Vector:
        return self.embed([text])[0]

    def nearest(self, workspace_id: str, project_id: str, vector: Vector, limit: int) -> list[tuple[str, float]]:
        if self._vectors is None:
            raise SearchUnavailableError("This store keeps no note vectors.")
        return self._vectors.nearest(workspace_id, project_id, self.model_id, vector, limit)

    def similarities(self, workspace_id: str, vector: Vector, notes: Sequence[Note]) -> dict[str, float]:
        """Cosine of `vector` with each note's own: the stored one when it is of the note's current version,
        else computed now. Notes whose vector cannot be had are left out (the caller judges them by words)."""
        stored = self._vectors.vectors_of(workspace_id, [n.id for n in notes], self.model_id) if self._vectors else {}
        known = {n.id: stored[n.id].vector for n in notes if n.id in stored and stored[n.id].version == n.version}
        missing = [n for n in notes if n.id not in known]
        if missing:
            try:
                computed = self.embed([embedding_text(n.title, n.body) for n in missing])
            except EmbeddingUnavailableError:
                logger.warning("could not embed %d candidate notes; judging them by words", len(missing))
                computed = []
            known.update((n.id, v) for n, v in zip(missing, computed, strict=False))
        return {note_id: _dot(vector, other) for note_id, other in known.items()}

    def index(self, workspace_id: str, notes: Sequence[Note], known: Mapping[str, Vector] | None = None) -> int:
        """Compute and store the vectors of `notes` (live ones), reusing `known` ones; returns how many were stored.
        Failures are logged, never raised: the notes are already committed."""
        if not isinstance(self._vectors, VectorIndex):
            return 0  # none kept, or a stream-fed index whose indexer embeds the notes itself
        vectors_index = self._vectors
        known = known or {}
        live = [n for n in notes if not n.is_deleted]
        stored = 0
        for start in range(0, len(live), BATCH):
            batch = live[start : start + BATCH]
            todo = [n for n in batch if n.id not in known]
            try:
                computed = self._embed_in_time([embedding_text(n.title, n.body) for n in todo])
                vectors = {n.id: known[n.id] for n in batch if n.id in known}
                vectors.update(zip((n.id for n in todo), computed, strict=True))
                vectors_index.save_vectors(
                    workspace_id,
                    [NoteVector(n.id, n.project_id, n.version, self.model_id, vectors[n.id]) for n in batch],
                )
                stored += len(batch)
            except Exception as exc:  # derived data: the notes are committed whatever happens here
                left = len(live) - start
                logger.warning("could not store %d note vectors (%s); notewell reindex fills them", left, exc)
                break  # the model cannot embed even one note in time: the rest would wait for it in vain
        return stored

    def _embed_in_time(self, texts: Sequence[str]) -> list[Vector]:
        """Vectors for `texts`, each call within the write budget: a batch that runs past it is embedded again in
        halves, so a busy machine embeds fewer notes a call instead of leaving a whole batch without vectors (an
        import of 10k notes on two busy cores left 5 batches, 320 notes, without one: search could not find them
        by meaning until a reindex). Raises EmbeddingUnavailableError when a single text cannot be embedded in time."""
        if not texts:
            return []
        try:
            return self._embedder.embed(texts, timeout=WRITE_TIMEOUT_SECONDS)
        except EmbeddingUnavailableError:
            if len(texts) == 1:
                raise
            half = len(texts) // 2
            return self._embed_in_time(texts[:half]) + self._embed_in_time(texts[half:])

    def backlog(self) -> int:
        """Live notes with no vector of this model at their current version (0 where no vectors are kept)."""
        return self._vectors.count_without_vectors(self.model_id) if isinstance(self._vectors, VectorIndex) else 0

    def prepare(self) -> None:
        """Load the model and embed what has no vector yet: `serve` runs this in the background at start, so the
        first search does not wait for the model and notes from before it (or from another model) become
        findable by meaning without a manual reindex."""
        try:
            self._embedder.embed(["warm up"], timeout=WARM_UP_TIMEOUT_SECONDS)
            if self.backlog():
                report = self.reindex()
                logger.info("embedded %d notes in the background (%d failed)", report.embedded, report.failed)
        except Exception:  # a background convenience: searches fall back to keywords and say so
            logger.exception("could not prepare the embedding model")

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> ReindexReport:
        """Give every live note a vector of the current model at its current version, and drop other models'."""
        if self._vectors is not None and not isinstance(self._vectors, VectorIndex):
            raise InvalidArgumentError(
                "This stack's search index is written by its stream indexer; run notewell reindex --stack instead."
            )
        if not isinstance(self._vectors, VectorIndex):
            raise InvalidArgumentError("This store keeps no note vectors, so there is nothing to reindex.")
        vectors_index = self._vectors
        dropped = vectors_index.drop_other_models(self.model_id)
        total = vectors_index.count_without_vectors(self.model_id)
        after, done, stored = "", 0, 0
        if progress is not None:
            progress(0, total)
        while batch := vectors_index.notes_without_vectors(self.model_id, after=after, limit=BATCH):
            for workspace_id in dict.fromkeys(n.workspace_id for n in batch):
                stored += self.index(workspace_id, [n for n in batch if n.workspace_id == workspace_id])
            done += len(batch)
            after = f"{batch[-1].workspace_id}/{batch[-1].id}"
            if progress is not None:
                progress(done, max(total, done))  # notes written meanwhile may add to the total
        return ReindexReport(self.model_id, stored, done - stored, dropped)


@dataclass(frozen=True, slots=True)
class ReindexReport:
    model_id: str
    embedded: int  # notes given a vector
    failed: int  # notes the model could not embed (run reindex again)
    dropped: int  # vectors of other models deleted


def _dot(a: Vector, b: Vector) -> float:
    dot: float = sum(map(operator.mul, a, b))  # the sum a generator of products gave, in its order, without its frames
    return dot
