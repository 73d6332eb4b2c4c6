"""One amount written several ways reads as one amount to admission: amounts() and what judge() makes of it."""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge
from notewell.domain.similarity import amounts, compare, tokens


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("sold for $1.0 bn", "sold for $1000000000"),
        ("sold for $1 billion", "sold for $1000000000"),
        ("US$38b in 2012", "US$38000000000 in 2012"),
        ("$6.6B record", "$6600000000 record"),
        ("for $250-M, or $250 million", "for $250000000, or $250000000"),
        ("5m rows, 16k context", "5000000 rows, 16000 context"),
        ("2.5 trillion tokens", "2500000000000 tokens"),
        ("5,000 users; 12,345,678 rows; 1,234.5 ms", "5000 users; 12345678 rows; 1234.5 ms"),
        ("at 5.30 p.m.", "at 17:30"),
        ("at 5:30pm, or 17h30", "at 17:30, or 17:30"),
        ("at 10 AM sharp, 12 a.m. or 12pm", "at 10:00 sharp, 0:00 or 12:00"),
        ("three replicas, Twenty-five nodes, two million users", "3 replicas, 25 nodes, 2000000 users"),
        ("acquitted on one count; one service calls another", "acquitted on 1 count; 1 service calls another"),
        # a number word opening a compound is that number; "one" there makes a word ("one-off")
        ("a three-node cluster, a thirty-day window", "a 3-node cluster, a 30-day window"),
        ("a one-off job and a one-time token", "a one-off job and a one-time token"),
    ],
)
def test_amounts_are_written_one_way(written: str, read: str) -> None:
    assert amounts(written) == read


@pytest.mark.parametrize(
    "text", ["one of the many", "the new one", "No one knows", "each one of them", "This is one.", "someone", "ones"]
)
def test_one_as_a_pronoun_is_no_number(text: str) -> None:
    assert amounts(text) == text


@pytest.mark.parametrize(
    "text",
    ["2 m tall", "100ms", "16GB", "v1.2 beta", "Python 3.11", "terminals 4,5, and 6", "1,000,5", "I am 5", "m b k"],
)
def test_what_is_no_scaled_amount_is_left_alone(text: str) -> None:
    """A lone letter after a space may be a unit ("2 m"); "4,5" is no thousands separator; units stay."""
    assert amounts(text) == text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Revenue hit $38 bn in 2012.", "Revenue hit US$38b in 2012."),
        ("We sold the patents for $1.0 bn.", "We sold the patents for $1 billion."),
        ("The rate limit is 5,000 requests per minute.", "The rate limit is 5000 requests per minute."),
        ("The deploy window opens at 5.30 p.m.", "The deploy window opens at 5.30pm."),
        ("The deploy window opens at 5.30 p.m.", "The deploy window opens at 17h30."),
        ("Terminals 4,5 and 6 share the bus.", "Terminals 4, 5 and 6 share the bus."),  # a list, not a number
        ("We run a three-node Kafka cluster.", "We run a 3-node Kafka cluster."),
    ],
)
def test_the_same_amount_written_otherwise_is_a_duplicate(old: str, new: str) -> None:
    assert judge(old, new)[0] is Verdict.DUPLICATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We sold the patents for $1.0 bn.", "We sold the patents for $1.5 bn."),
        ("The rate limit is 5,000 requests per minute.", "The rate limit is 6,000 requests per minute."),
        ("The table holds 5m rows.", "The table holds 50 million rows."),
        ("The deploy window opens at 5.30 p.m.", "The deploy window opens at 6.30 p.m."),
        ("Terminals 4,5 and 6 share the bus.", "Terminals 4, 7 and 6 share the bus."),
        ("We run a three-node Kafka cluster.", "We run a five-node Kafka cluster."),
        ("The API uses a two-step login.", "The API uses a three-step login."),
    ],
)
def test_another_amount_is_still_a_conflict(old: str, new: str) -> None:
    assert judge(old, new)[0] is Verdict.CONFLICT


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Amendment No 7 changes the references.", ["amendment", "number", "7", "changes", "the", "references"]),
        ("See ticket no. 42 first.", ["see", "ticket", "number", "42", "first"]),
        ("No 2 services share a table.", ["no", "2", "services", "share", "a", "table"]),  # opens a sentence
        ("There is no 7th replica.", ["there", "is", "no", "7th", "replica"]),
        ("We keep no 3 copies alike.", ["we", "keep", "no", "3", "copies", "alike"]),
    ],
)
def test_no_before_a_number_is_a_number_only_when_written_as_one(text: str, read: list[str]) -> None:
    assert tokens(text) == read


def test_a_numbered_item_named_otherwise_negates_nothing() -> None:
    old, new = "Amendment No 7 drops the retry limit.", "Amendment 7 drops the retry limit."
    comparison = compare(old, new)
    assert not comparison.numbers_changed and not comparison.polarity_flipped
    assert judge(old, new)[0] is not Verdict.CONFLICT
    assert judge("Service 2 keeps a replica.", "No 2 services keep a replica.")[0] is Verdict.CONFLICT
