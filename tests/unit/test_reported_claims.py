"""A claim a note only reports, supposes or asks about is another claim when stated outright, and the reverse;
and a hedge, an intent, "used to" or an exception dropped from a claim changes it.

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
    ("It is a myth that Redis loses data on restart.", "Redis loses data on restart."),
    ("It is false that Redis loses data on restart.", "Redis loses data on restart."),
    ("According to the vendor, the API supports cursor pagination.", "The API supports cursor pagination."),
    ("The API supports cursor pagination, the vendor says.", "The API supports cursor pagination."),
    ("The API supports cursor pagination, says the vendor.", "The API supports cursor pagination."),
    # a question asks what the statement states, either way round
    ("Is the cache shared between tenants?", "The cache is shared between tenants."),
    ("The cache is shared between tenants.", "Is the cache shared between tenants?"),
    # "when" that states a condition, as "if" does; and a claim there is little evidence for
    ("When the queue is full, new requests are rejected.", "New requests are rejected."),
    ("Whenever the cache is cold, search takes two seconds.", "Search takes two seconds."),
    ("Once the flag is on, users see the new checkout.", "Users see the new checkout."),
    ("New requests are rejected when the queue is full.", "New requests are rejected."),
    ("There is little evidence that the leak comes from the pool.", "The leak comes from the pool."),
    # what only seems so
    ("It seems the leak comes from the connection pool.", "The leak comes from the connection pool."),
    ("It appears that the search index is stale.", "The search index is stale."),
    # in another tense: a wish for what is not so, a belief about what was
    ("We use Redis for sessions.", "I wish we used Redis for sessions."),
    ("Alice thinks the job failed on Friday.", "The job fails on Friday."),
]  # fmt: skip
STATED = [
    ("We use PostgreSQL for orders; tests run against SQLite.", "Tests run against SQLite."),
    ("We use PostgreSQL for orders and tests run against SQLite.", "Tests run against SQLite."),
    ("We use PostgreSQL for orders because the reporting team needs SQL.", "The reporting team needs SQL."),
    ("We know that the cache is the bottleneck.", "The cache is the bottleneck."),  # "know" vouches for it
    ("We use Kafka. If the load grows, we add brokers.", "We use Kafka."),  # the "if" is another sentence's
    ("When the deploy finished, we rolled back the flag.", "We rolled back the flag."),  # tells when it happened
    ("We rolled back the flag when the error rate was rising.", "We rolled back the flag."),
]  # fmt: skip
# A word that says how much or how long a claim holds, or that it is only meant, tried, advised or planned, dropped
# while what it qualified stays: another claim.
QUALIFIER_DROPPED = [
    ("Few customers use the export feature.", "Customers use the export feature."),
    ("The payment service used to call the ledger directly.", "The payment service calls the ledger directly."),
    ("We used to deploy on Fridays.", "We deploy on Fridays."),
    ("The team could adopt Terraform next quarter.", "The team adopts Terraform next quarter."),
    ("The change would break the public API.", "The change breaks the public API."),
    ("We tried to shard the users table.", "We sharded the users table."),
    ("We wanted to use GraphQL for the public API.", "We use GraphQL for the public API."),
    ("The team hopes to ship the console in March.", "The team ships the console in March."),
    ("The cache was supposed to expire after an hour.", "The cache expires after an hour."),
    ("We planned to migrate to Aurora in May.", "We migrated to Aurora in May."),  # "May" is no modal
    ("Acme is one of the largest customers.", "Acme is the largest customer."),
    ("Alice is the former team lead.", "Alice is the team lead."),
    ("The proposed schema adds a tenant column.", "The schema adds a tenant column."),
    ("Ideally the nightly job finishes within an hour.", "The nightly job finishes within an hour."),
    ("There is little evidence of a leak in the pool.", "There is evidence of a leak in the pool."),
    ("The migration to Aurora is half done.", "The migration to Aurora is done."),
    ("The alert was a false positive from the canary.", "The alert was a positive from the canary."),
    ("The lack of integration tests slows down reviews.", "Integration tests slow down reviews."),
    # an exception dropped: the claim now covers what it left out
    ("All endpoints require authentication except /health.", "All endpoints require authentication."),
    ("Every service other than billing runs on ECS.", "Every service runs on ECS."),
    ("All tables apart from audit_log are replicated.", "All tables are replicated."),
    ("The cron host runs everything but the billing jobs.", "The cron host runs the billing jobs."),
    ("We deploy to all but one region.", "We deploy to one region."),
]  # fmt: skip
QUALIFIER_KEPT = [
    ("A few customers use the export feature.", "Customers use the export feature."),  # some do
    ("We used to deploy on Fridays.", "We deployed on Fridays."),  # still said of the past
    ("The payment service is used to call the ledger.", "The payment service calls the ledger."),  # a purpose
    ("Maybe the cache could work for you.", "Maybe the cache can work for you."),  # a modal for a modal
    ("Most plants needing to install scrubbers did so.", "Most plants need to install scrubbers."),  # still needed
    ("We could encrypt the backups; we encrypt the logs.", "We encrypt the logs."),  # that verb is stated too
    ("Agents should call get_context first.", "Agents call get_context first."),  # one convention
    ("We need to rotate the signing keys monthly.", "We rotate the signing keys monthly."),  # one rule
    ("We should always run migrations before deploying.", "Always run migrations before deploying."),
    ("Could you check whether the cache is warm?", "Check whether the cache is warm."),  # asked for, then bid
    ("The deploy would fail without the migration step.", "Without the migration step the deploy fails."),
    ("The search service is a little slow.", "The search service is slow."),  # "a little" is some
    ("The little service on port 9000 proxies uploads.", "The service on port 9000 proxies uploads."),
    # a size put in another word's place, not left out (that word said elsewhere in the note too)
    ("The small API has one little worker.", "The small API has one small worker."),
    ("All endpoints except /health require a key.", "All endpoints except /health need a key."),
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


@pytest.mark.parametrize(("old", "new"), QUALIFIER_DROPPED)
def test_dropping_a_hedge_or_an_intent_changes_the_claim(old: str, new: str) -> None:
    assert changed_slots(old, new).qualifier_dropped
    verdict, _ = judge(old, new)
    assert verdict is Verdict.CONFLICT


# The other way: the note's claim with a hedge, an intent or "former" put in is another claim ("Alice is the team
# lead" / "Alice is the former team lead"), not the same one said with a word more. Exceptions aside: one put in
# narrows the claim, and is a detail.
EXCEPTING = {"except", "other", "apart", "but"}
QUALIFIER_PUT_IN = [(new, old) for old, new in QUALIFIER_DROPPED if not EXCEPTING & set(old.split())]
# A word that stresses or narrows a claim more than it changes it ("only three options", "at least 15").
STRESSED = [
    ("There are three deploy targets.", "There are only three deploy targets."),
    ("The import created 15 tables.", "The import created at least 15 tables."),
    ("A burden, real or metaphorical.", "A burden, either real or metaphorical."),
]


@pytest.mark.parametrize(("old", "new"), QUALIFIER_PUT_IN)
def test_putting_in_a_hedge_or_an_intent_changes_the_claim(old: str, new: str) -> None:
    assert changed_slots(old, new).qualifier_dropped
    verdict, _ = judge(old, new)
    assert verdict is Verdict.CONFLICT


def test_a_sentence_added_with_a_hedge_in_it_updates_the_note() -> None:
    """A qualifier put in is another claim only where it is all the new text adds: a sentence added is a detail."""
    old = "The API is rate limited per user."
    new = "The API is rate limited per user. Admins are usually rate limited too, by IP."
    assert not changed_slots(old, new).qualifier_dropped
    assert judge(old, new)[0] is Verdict.RESTATEMENT


@pytest.mark.parametrize(("old", "new"), STRESSED)
def test_a_word_put_in_for_stress_keeps_the_claim(old: str, new: str) -> None:
    assert not changed_slots(old, new).qualifier_dropped
    verdict, _ = judge(old, new)
    assert verdict is not Verdict.CONFLICT


@pytest.mark.parametrize(("old", "new"), QUALIFIER_KEPT)
def test_a_qualifier_said_again_or_said_otherwise_is_not_dropped(old: str, new: str) -> None:
    assert not changed_slots(old, new).qualifier_dropped
    verdict, _ = judge(old, new)
    assert verdict is not Verdict.CONFLICT
