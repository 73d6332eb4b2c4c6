"""A claim a note only reports, supposes or asks about is another claim when stated outright, and the reverse.

Judged by words alone (no model), as a store without embeddings judges. The part of a note it states itself
("…; tests run against SQLite") is still a duplicate of it.
"""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge
from notewell.domain.slots import changed_slots

NOT_STATED = [
    ("Alice argued that we should drop the Redis cache.", "We should drop the Redis cache."),
    ("The vendor claims the API supports cursor pagination.", "The API supports cursor pagination."),
    ("We are wondering if the cache is the bottleneck.", "The cache is the bottleneck."),
    ("The team asked whether the backups restore cleanly.", "The backups restore cleanly."),
    ("If the deploy fails, the pipeline rolls back the release.", "The pipeline rolls back the release."),
    ("If the deploy fails, the pipeline rolls back the release.", "The deploy fails."),
    ("The pipeline rolls back the release if the deploy fails.", "The pipeline rolls back the release."),
    ("Unless the build is green, nothing ships to production.", "Nothing ships to production."),
    ("We should drop the Redis cache.", "Alice argued that we should drop the Redis cache."),  # the other way
    ("We use Kafka for the event bus.", "We think we use Kafka for the event bus."),
]  # fmt: skip
STATED = [
    ("We use PostgreSQL for orders; tests run against SQLite.", "Tests run against SQLite."),
    ("We use PostgreSQL for orders and tests run against SQLite.", "Tests run against SQLite."),
    ("We use PostgreSQL for orders because the reporting team needs SQL.", "The reporting team needs SQL."),
    ("We know that the cache is the bottleneck.", "The cache is the bottleneck."),  # "know" vouches for it
    ("We use Kafka. If the load grows, we add brokers.", "We use Kafka."),  # the "if" is another sentence's
]  # fmt: skip


@pytest.mark.parametrize(("old", "new"), NOT_STATED)
def test_a_claim_stated_outright_is_not_the_one_reported_or_supposed(old: str, new: str) -> None:
    assert changed_slots(old, new).unasserted
    verdict, _ = judge(old, new)
    assert verdict is Verdict.UNRELATED  # stored as the new claim it is: neither a duplicate nor a conflict


@pytest.mark.parametrize(("old", "new"), STATED)
def test_a_part_the_note_states_itself_is_a_duplicate(old: str, new: str) -> None:
    assert not changed_slots(old, new).unasserted
    verdict, _ = judge(old, new)
    assert verdict is Verdict.DUPLICATE
