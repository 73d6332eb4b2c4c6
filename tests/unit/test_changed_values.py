"""A unit put in place of another, an opposite inside a compound word, a result turned around, another quantifier
and another path change the claim, whatever senses the words share ("second" and "minute" are both "a moment" in
WordNet; "passed" and "failed" meet at "died") and however close a model holds them ("/health" and "/healthz").
Judged by words alone, as a store without embeddings judges; the contract tests run the model too."""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge
from notewell.domain.slots import changed_slots

ANOTHER_UNIT = [
    ("The API timeout is 30 seconds.", "The API timeout is 30 minutes."),
    ("Logs are kept for 7 days.", "Logs are kept for 7 years."),
    ("The access token lives for 15 minutes.", "The access token lives for 15 hours."),
    ("The export job runs hourly.", "The export job runs daily."),
    ("The index is rebuilt nightly.", "The index is rebuilt weekly."),
    ("Uploads are limited to 10 MB.", "Uploads are limited to 10 GB."),
    ("The cable run is 20 meters.", "The cable run is 20 feet."),
    # a detail added too: not an update that overwrites the old figure
    ("The API timeout is 30 seconds.", "The API timeout is 30 minutes, and retries are disabled."),
]  # fmt: skip
SAME_UNIT = [
    ("The cron job runs every hour.", "The cron job runs hourly."),
    ("The API timeout is 30 seconds.", "The API timeout is 30 secs."),
    ("A year runs 365 days from January 1 to December 31.", "A year runs the year from January 1 to December 31."),
    ("The export job runs hourly.", "The export job runs every hour and writes to S3."),
    ("Backups run every 6 hours.", "Backups run every 6 hours and are kept 30 days."),
]  # fmt: skip
OPPOSITE_PART = [
    ("The queue consumer is single-threaded.", "The queue consumer is multi-threaded."),
    ("The widget is rendered client-side.", "The widget is rendered server-side."),
    ("Sign-up is opt-in.", "Sign-up is opt-out."),
    ("The reporting replica is read-only.", "The reporting replica is read-write."),
    ("We ship a pre-release build to beta users.", "We ship a post-release build to beta users."),
    ("Notes are soft-deleted.", "Notes are hard-deleted."),
]  # fmt: skip
SAME_PARTS = [
    ("The widget is rendered client-side.", "The widget is rendered on the client side."),
    ("The widget is rendered client-side.", "The widget is rendered client-side only."),
]  # fmt: skip
ANOTHER_AMOUNT = [
    ("We release every two weeks.", "We release every week."),  # a count left out, the unit kept
    ("The job runs every 5 minutes.", "The job runs every minute."),
    ("Some endpoints are cached.", "All endpoints are cached."),
    ("Most tests run in parallel.", "All tests run in parallel."),
    ("Some of the endpoints are cached.", "All of the endpoints are cached."),
    ("Few tests are flaky.", "Many tests are flaky."),
    ("Some endpoints require auth.", "All of the endpoints require auth."),  # "of the" with one of them only
    ("Some of the services use gRPC.", "All services use gRPC."),
    # "only" given up for "any": the claim opened to every one of a kind, either way round
    ("Only the billing service may write to the ledger table.", "Any service may write to the ledger table."),
    ("Any service may write to the ledger table.", "Only the billing service may write to the ledger table."),
]  # fmt: skip
SAME_AMOUNT = [
    ("After four years, Clinton learned it.", "After four long years, Clinton learned it."),  # the count kept
    ("She made $132,000 a year from a business she owned for 22 years.", "It made $132,000 each year."),
    ("Every service logs to CloudWatch.", "All services log to CloudWatch."),
    ("Each service logs to CloudWatch.", "Every service logs to CloudWatch."),
    ("A few tests are flaky.", "Some tests are flaky."),
    ("Some endpoints require auth.", "Some of the endpoints require auth."),
    ("All services log to CloudWatch.", "All of the services log to CloudWatch."),
]  # fmt: skip
ANOTHER_PATH = [
    ("The config lives in src/config/settings.py.", "The config lives in src/settings.py."),
    ("Edit settings.py to change the timeout.", "Edit config.py to change the timeout."),
    ("The health check is served at /health.", "The health check is served at /healthz."),
    ("The API base URL is https://api.example.com/orders.", "The API base URL is https://api.example.com/payments."),
    ("Run ./scripts/deploy.sh after the build.", "Run ./scripts/release.sh after the build."),
    # cloud identifiers: an instance type, a region
    ("The workers run on t3.large instances.", "The workers run on t3.xlarge instances."),
    ("The audit bucket and its replica live in us-east-1.", "The audit bucket and its replica live in eu-west-1."),
]  # fmt: skip
SAME_PATH = [
    ("The config lives in src/config/settings.py.", "The config is in src/config/settings.py."),
    ("The API base URL is https://api.example.com/orders.", "The base URL of the API is https://api.example.com/orders."),
    ("Use read/write access for the deploy role.", "Use read/write access for the release role."),  # no path
    ("The workers run on t3.large instances.", "The workers are t3.large instances."),
]  # fmt: skip
TURNED = [
    ("The export job is running.", "The export job is finished."),  # WordNet: both "run out"
    ("The e2e suite passed on main.", "The e2e suite failed on main."),
    ("The deploy to staging succeeded.", "The deploy to staging failed."),
    ("Search latency is high.", "Search latency is low."),
    ("The cache is warm after deploys.", "The cache is cold after deploys."),
    ("We are evaluating Kafka for the event bus.", "We adopted Kafka for the event bus."),  # the next step
    ("Deploys go to staging first.", "Deploys go to production first."),  # WordNet: both "a show"
    ("The dev environment uses SQLite.", "The prod environment uses SQLite."),
    ("The cleanup job runs on weekdays.", "The cleanup job runs on weekends."),
    ("The auth service is upstream of the gateway.", "The auth service is downstream of the gateway."),
    ("Alerts fire when latency is above 500 ms.", "Alerts fire when latency is below 500 ms."),
    ("IPs on the allowlist can reach the admin API.", "IPs on the blocklist can reach the admin API."),
    ("Staging and production share the same database.", "Staging and production share different databases."),
    ("Backups always run before a deploy.", "Backups sometimes run before a deploy."),
    ("The freeze starts on Friday.", "The freeze ends on Friday."),
    ("The incident review confirmed the root cause.", "The incident review denied the root cause."),
    ("The benchmark uses actual customer queries.", "The benchmark uses fictional customer queries."),
    ("The pool keeps at least 5 connections open.", "The pool keeps at most 5 connections open."),
    # a status and the next one
    ("We are waiting on the vendor for the API key.", "We received the API key from the vendor."),
    ("The PR for the schema change is pending.", "The PR for the schema change is merged."),
    ("The canary rollout is paused at 50%.", "The canary rollout is resumed at 50%."),
    ("The database sits near the app servers.", "The database sits far from the app servers."),
    ("The on-call phone goes to the founder's wife.", "The on-call phone goes to the founder's husband."),
]  # fmt: skip


CHANGED = [
    *(("numbers_swapped", old, new) for old, new in ANOTHER_UNIT + ANOTHER_AMOUNT),
    *(("antonym_flipped", old, new) for old, new in OPPOSITE_PART + TURNED),
    *(("paths_swapped", old, new) for old, new in ANOTHER_PATH),
]
UNCHANGED = [
    *(("numbers_swapped", old, new) for old, new in SAME_UNIT + SAME_AMOUNT),
    *(("antonym_flipped", old, new) for old, new in SAME_PARTS),
    *(("paths_swapped", old, new) for old, new in SAME_PATH),
]


@pytest.mark.parametrize(("slot", "old", "new"), CHANGED)
def test_a_changed_value_is_a_conflict_even_where_a_model_holds_the_texts_alike(slot: str, old: str, new: str) -> None:
    slots = changed_slots(old, new)
    assert getattr(slots, slot)
    assert judge(old, new)[0] is Verdict.CONFLICT
    held_alike = {pair: 1.0 for pair in (*slots.replacements, *slots.renamed)}
    assert judge(old, new, 0.99, held_alike)[0] is Verdict.CONFLICT


@pytest.mark.parametrize(("slot", "old", "new"), UNCHANGED)
def test_the_same_value_said_otherwise_is_no_change(slot: str, old: str, new: str) -> None:
    assert not getattr(changed_slots(old, new), slot)
    assert judge(old, new)[0] is not Verdict.CONFLICT


def test_another_frequency_with_a_detail_added_is_no_update() -> None:
    """It was `updated`: the new note, longer, overwrote "weekly" with "daily" in place."""
    old, new = "The search index is rebuilt weekly.", "The search index is rebuilt daily, after the import finishes."
    assert changed_slots(old, new).numbers_swapped
    verdict, _ = judge(old, new)
    assert verdict not in (Verdict.DUPLICATE, Verdict.RESTATEMENT)


def test_a_name_and_its_plural_are_one_name() -> None:
    old, new = "Auth signs JWT access tokens with RS256.", "Auth signs JWTs as access tokens with RS256."
    assert not changed_slots(old, new).names_swapped
    assert not changed_slots("We call two APIs.", "We call two API endpoints.").names_swapped
    assert changed_slots("We deploy with the AWS CDK.", "We deploy with the AWS SDK.").names_swapped


def test_a_sentence_with_two_longer_words_after_its_first_is_no_headline() -> None:
    """Two capitals of three longer words read as a headline, whose capitals name nothing: "Memcached" was no name."""
    assert changed_slots("We store sessions in Redis.", "Sessions are stored in Memcached.").names_swapped
    headline, other = "Gatekeepers and the Social Control of Research", "Gatekeepers and the Social Control of Science"
    assert not changed_slots(headline, other).names_swapped
