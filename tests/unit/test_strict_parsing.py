"""Slugs, ids, tags and opaque page numbers are parsed strictly: a near-miss is refused, never half-accepted."""

from __future__ import annotations

import pytest

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError

NOTE_ID = "n_01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.mark.parametrize("slug", ["api\n", "api\r\n", " api", "api ", "Api", "-api", "a" * 65])
def test_a_slug_with_a_trailing_newline_or_other_near_miss_is_refused(slug: str) -> None:
    with pytest.raises(InvalidArgumentError, match="not a valid slug"):
        rules.check_project_slug(slug)


def test_a_plain_slug_is_accepted_unchanged() -> None:
    assert rules.check_project_slug("payments-api.v2") == "payments-api.v2"


@pytest.mark.parametrize("note_id", [NOTE_ID + "\n", "\n" + NOTE_ID, NOTE_ID.lower(), NOTE_ID[:-1]])
def test_a_note_id_with_a_trailing_newline_or_wrong_shape_is_refused(note_id: str) -> None:
    with pytest.raises(InvalidArgumentError, match="is not a note id"):
        rules.check_note_id(note_id)


def test_a_tag_with_surrounding_whitespace_is_the_same_tag_not_a_look_alike() -> None:
    assert rules.check_tags(["auth\n", " Auth"]) == ("auth",)
    with pytest.raises(InvalidArgumentError, match="not valid"):
        rules.check_tags(["au\nth"])


@pytest.mark.parametrize("text", ["²", "١٢", "1²", "", " 1", "1 ", "+1", "-1", "1.0", "9" * 19, "9" * 5000])
def test_page_numbers_are_ascii_digits_of_bounded_length_or_nothing(text: str) -> None:
    assert rules.parse_decimal(text) is None


def test_a_plain_page_number_parses() -> None:
    assert rules.parse_decimal("0") == 0
    assert rules.parse_decimal("42") == 42
