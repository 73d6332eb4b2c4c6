"""remember's invariants on 90 labelled pairs of coding notes, words only: a changed claim is never absorbed, an
unrelated note is never a conflict, and a repeat word for word is always a duplicate."""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, compare
from tests.unit.admission_labels import LABELLED

CHANGED = ("reversal", "negation", "changed_number", "swapped_value")
SAME = ("restatement", "elaboration", "exact_duplicate", "near_duplicate", "synonym", "paraphrase")


@pytest.mark.parametrize(("kind", "old", "new"), [(k, o, n) for k, o, n, _ in LABELLED if k in CHANGED])
def test_a_changed_claim_is_never_absorbed_and_always_caught(kind: str, old: str, new: str) -> None:
    found = compare(old, new)
    assert found.verdict not in (Verdict.DUPLICATE, Verdict.RESTATEMENT)
    assert found.verdict is Verdict.CONFLICT or found.related  # a conflict, or stored beside the old note to review


@pytest.mark.parametrize(("old", "new"), [(o, n) for k, o, n, _ in LABELLED if k == "unrelated"])
def test_an_unrelated_note_is_never_a_conflict(old: str, new: str) -> None:
    assert compare(old, new).verdict is not Verdict.CONFLICT


@pytest.mark.parametrize(("old", "new"), [(o, n) for k, o, n, _ in LABELLED if k == "exact_duplicate"])
def test_a_repeat_is_a_duplicate(old: str, new: str) -> None:
    assert compare(old, new).verdict is Verdict.DUPLICATE


def test_most_restatements_are_recognised_by_words_alone() -> None:
    same = [(o, n) for k, o, n, _ in LABELLED if k in SAME]
    recognised = sum(compare(o, n).verdict in (Verdict.DUPLICATE, Verdict.RESTATEMENT) for o, n in same)
    flagged = sum(compare(o, n).verdict is Verdict.CONFLICT for o, n in same)
    assert recognised >= 0.8 * len(same) and flagged <= 1
