"""What the slot rules read of a text is kept for texts read again, within a bound: a long note is read as a short
one is, and 1,024 of them are not kept (a 100k-character note's values are about 1 MB)."""

from __future__ import annotations

from notewell.domain import slots


def test_a_long_text_is_read_as_a_short_one_is() -> None:
    sentence = "We moved the Ledger service from Heroku to AWS in 2021 and kept 3 replicas. "
    long_text = sentence * (slots.LONG_TEXT // len(sentence) + 1)
    assert len(long_text) > slots.LONG_TEXT >= len(sentence)
    short, long = slots.values(sentence), slots.values(long_text)
    assert long.names == short.names == frozenset({"ledger", "heroku", "aws"})
    assert long.numbers == short.numbers
    assert long.words == short.words * (len(long_text) // len(sentence))


def test_long_texts_are_kept_few() -> None:
    short_kept = slots._short_values.cache_info().currsize
    for n in range(40):
        slots.values(f"Note {n}: " + "the ledger service calls the billing service. " * 400)
    assert slots._long_values.cache_info().currsize <= 16
    assert slots._short_values.cache_info().currsize == short_kept
