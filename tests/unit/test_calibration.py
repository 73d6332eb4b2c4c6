"""Each embedding model's numbers in one table: admission and hybrid search read the same entry, a model without one
is not guessed at, and a new model's thresholds are carried over from the labelled pairs, not copied."""

from __future__ import annotations

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.system import FixedClock
from notewell.domain import admission
from notewell.domain.calibration import CALIBRATIONS, LOCAL_MODEL, Calibration, HybridWeights, hybrid_weights_of
from notewell.services.meaning import Meaning
from tests.quality.calibrate import carried_over, share_at_or_above

TITAN_V2 = "amazon.titan-embed-text-v2:0/1024"


class NamedEmbedder(HashEmbedder):
    """The hash embedder's vectors under another model's id."""

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self._model_id = model_id


def test_admission_and_search_read_one_table_keyed_by_model_id() -> None:
    assert admission.CALIBRATIONS is CALIBRATIONS
    local = CALIBRATIONS[LOCAL_MODEL]
    assert (local.duplicate, local.related) == (0.8, 0.55)
    assert local.hybrid == HybridWeights(vector=0.5, entity=0.2)
    assert Meaning(NamedEmbedder(LOCAL_MODEL), None, FixedClock()).hybrid_weights == local.hybrid


def test_titan_cosines_get_no_numbers_tuned_on_the_local_model() -> None:
    """Without its own entry a model has no admission thresholds (detectors and review only) and no hybrid weights
    (search fuses by rank)."""
    assert TITAN_V2 not in CALIBRATIONS and hybrid_weights_of(TITAN_V2) is None
    assert Meaning(NamedEmbedder(TITAN_V2), None, FixedClock()).hybrid_weights is None
    assert Meaning(HashEmbedder(), None, FixedClock()).hybrid_weights is None


def test_an_entry_without_hybrid_weights_still_fuses_by_rank() -> None:
    assert Calibration(duplicate=0.5, related=0.3).hybrid is None


REFERENCE = [0.95, 0.9, 0.86, 0.81, 0.78, 0.7, 0.62, 0.57, 0.53, 0.41, 0.3, 0.12]


@pytest.mark.parametrize("threshold", [0.8, 0.55])
def test_a_threshold_is_carried_over_by_the_share_of_pairs_it_lets_through_not_by_its_value(threshold: float) -> None:
    crowded = [0.2 + c / 5 for c in REFERENCE]  # the same order, on a scale where everything sits near 0.3
    carried = carried_over(threshold, REFERENCE, crowded)
    assert share_at_or_above(carried, crowded) == share_at_or_above(threshold, REFERENCE)
    assert carried < threshold  # the local model's value would have let through almost nothing here
    assert share_at_or_above(threshold, crowded) < share_at_or_above(threshold, REFERENCE)


def test_the_reference_carried_over_to_itself_lets_through_the_same_pairs() -> None:
    for threshold in (0.8, 0.55):
        carried = carried_over(threshold, REFERENCE, REFERENCE)
        assert share_at_or_above(carried, REFERENCE) == share_at_or_above(threshold, REFERENCE)


def test_nothing_or_everything_let_through_stays_so() -> None:
    assert share_at_or_above(carried_over(0.99, REFERENCE, REFERENCE), REFERENCE) == 0
    assert share_at_or_above(carried_over(0.0, REFERENCE, REFERENCE), REFERENCE) == 1
    with pytest.raises(ValueError, match="same pairs"):
        carried_over(0.5, REFERENCE, REFERENCE[1:])
