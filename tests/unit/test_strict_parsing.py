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


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00.000Z"),  # an hour before year 1: clamped, no overflow
        ("9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.999Z"),  # past year 9999: clamped, no overflow
        ("0999-06-01T00:00:00Z", "0999-06-01T00:00:00.000Z"),  # padded: sorts before every later year
        ("2026-03-01T12:00:00", "2026-03-01T12:00:00.000Z"),  # no offset: UTC
        ("2026-03-01", "2026-03-01T00:00:00.000Z"),
        ("2026-03-01T14:30+02:00", "2026-03-01T12:30:00.000Z"),
        ("2026-03-01T12:00:00.123456+00:00", "2026-03-01T12:00:00.123Z"),
    ],
)
def test_timestamps_normalise_to_fixed_width_utc_milliseconds(text: str, stored: str) -> None:
    assert rules.format_ts(rules.parse_ts(text)) == stored


def test_normalised_timestamps_sort_as_strings_in_time_order() -> None:
    texts = ["0001-01-01T00:00:00+01:00", "0999-06-01T00:00:00Z", "2026-03-01T14:30+02:00", "9999-12-31T23:59-01:00"]
    stored = [rules.format_ts(rules.parse_ts(t)) for t in texts]
    assert sorted(stored) == stored and [len(s) for s in stored] == [24] * 4


@pytest.mark.parametrize(
    "text",
    ["", "yesterday", "2026-3-1", "20260301T120000Z", "２０２６-03-01", "2026-02-30", "0000-01-01",
     "2026-03-01T24:00:00Z", "2026-03-01T12:00:00+24:00", "2026-03-01T12:00:00Z\n", "9" * 5000],
)  # fmt: skip
def test_a_malformed_or_impossible_timestamp_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="'2026-03-01T12:00:00Z'") as refused:
        rules.parse_ts(text)
    assert len(refused.value.message) < 200  # a huge input is not echoed back in full
