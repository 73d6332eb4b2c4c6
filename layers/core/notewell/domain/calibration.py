"""What one embedding model's cosines mean: one table, keyed by the embedder's model id, for admission and search.

A cosine is on its model's own scale: two models put the same pair of notes at different cosines, so a threshold
or a weight measured on one model's cosines says nothing about another's. A model missing here is not guessed at:

* remember's admission goes by the detectors and shared words alone, and leaves close pairs to the agent's review
  (domain/admission/verdict.py);
* hybrid search fuses its legs by rank, where no cosine scale enters (domain/hybrid.py), until the model's own
  weights are tuned.

Admission thresholds are measured on the labelled coding pairs (tests/quality/coding_pairs.jsonl); a new model's
come from `python -m tests.quality.calibrate`, which embeds the same pairs with it and prints the entry to paste.
Hybrid weights are tuned on the retrieval sets' tune split (`python -m tests.quality.retrieval`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class HybridWeights:
    """How a model's cosines are mixed with keyword scores, both on absolute [0, 1] scales (domain/hybrid.py);
    measured on the tune split of tests/quality/retrieval.py."""

    vector: float  # the vector leg's share of a note's score; the keyword leg (its share of the query) has the rest
    entity: float  # added for a note that mentions all the names the query gives (in proportion for some)


@dataclass(frozen=True, slots=True)
class Calibration:
    """One embedding model's numbers: admission's thresholds, measured on the labelled coding pairs, and its
    hybrid weights where they were tuned."""

    duplicate: float  # admission: same values, no change found, and at least this close: the same claim
    related: float  # admission: at least this close: worth the agent's review
    hybrid: HybridWeights | None = None  # None: not tuned for this model, so search fuses by rank


LOCAL_MODEL = "all-MiniLM-L6-v2-int8"

CALIBRATIONS: Mapping[str, Calibration] = {
    # vector=0.5: with both legs on absolute scales, equal shares (0.4 and 0.6 were both worse on the tune split).
    LOCAL_MODEL: Calibration(duplicate=0.8, related=0.55, hybrid=HybridWeights(vector=0.5, entity=0.2)),
}


def calibration_of(model_id: str) -> Calibration | None:
    """The model's entry, None for a model never calibrated (read at each call: the tuning runs swap the table)."""
    return CALIBRATIONS.get(model_id)


def hybrid_weights_of(model_id: str) -> HybridWeights | None:
    """The model's hybrid weights, None where they were never tuned (search then fuses by rank)."""
    entry = calibration_of(model_id)
    return entry.hybrid if entry is not None else None
