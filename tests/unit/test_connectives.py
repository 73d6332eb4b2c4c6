"""A capitalised word that opens a sentence and names nothing ("Yet", "However") is no name swapped for another;
a name at the start of a sentence still is."""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge
from notewell.domain.slots import changed_slots


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Yet we deploy on Fridays.", "However, we deploy on Fridays."),
        ("Moreover, the cache is rebuilt nightly.", "Besides, the cache is rebuilt nightly."),
        ("Today the cache is rebuilt nightly.", "Now the cache is rebuilt nightly."),
    ],
)
def test_a_connective_put_in_place_of_another_is_no_name_swapped(old: str, new: str) -> None:
    assert not changed_slots(old, new).names_swapped
    assert judge(old, new)[0] is not Verdict.CONFLICT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Alice owns billing.", "Bob owns billing."),
        ("However, Alice owns billing.", "However, Bob owns billing."),
        ("Yet Alice owns billing.", "Yet Bob owns billing."),
    ],
)
def test_a_name_opening_a_sentence_is_still_a_name(old: str, new: str) -> None:
    assert changed_slots(old, new).names_swapped
    assert judge(old, new)[0] is Verdict.CONFLICT
