"""remember's detectors, one coding situation each: the verdict and the evidence an agent is shown."""

from __future__ import annotations

import pytest

from notewell.domain.admission import CALIBRATIONS, Evidence, Verdict, compare
from notewell.domain.admission.text import tokens_of

MINILM = CALIBRATIONS["all-MiniLM-L6-v2-int8"]


def evidence_of(old: str, new: str) -> tuple[Verdict, Evidence | None]:
    found = compare(old, new)
    return found.verdict, found.evidence


def left_to_review(old: str, new: str, cosine: float = 0.95) -> bool:
    """Stored beside the old note for the agent to read, by words alone and with a close cosine alike."""
    compared = [compare(old, new, meaning, MINILM if meaning else None) for meaning in (None, cosine)]
    return all(found.verdict is Verdict.UNRELATED and found.related for found in compared)


# ----- changed value: amounts, versions, names, identifiers, paths, URLs, environments, quantifiers ------------


@pytest.mark.parametrize(
    ("old", "new", "slot", "was", "now"),
    [
        ("Retries are capped at 3.", "Retries are capped at 5.", "Retries", "3", "5"),
        ("The upload limit is 10 MB.", "The upload limit is 25 MB.", "upload limit", "10 MB", "25 MB"),
        ("Sessions expire after 30 minutes.", "Sessions expire after 2 hours.", "Sessions expire", "30 minutes",
         "2 hours"),
        ("Node 18 is required to build the web app.", "Node 20 is required to build the web app.", "Node", "18", "20"),
        ("We pin the SDK at v2.3.1.", "We pin the SDK at v2.4.0.", "pin SDK", "v2.3.1", "v2.4.0"),
        ("We deploy the frontend to Vercel.", "We deploy the frontend to Netlify.", "deploy frontend", "Vercel",
         "Netlify"),
        ("We use pnpm for the monorepo.", "We use yarn for the monorepo.", "monorepo", "pnpm", "yarn"),
        ("The worker reads `QUEUE_URL` at start.", "The worker reads `JOBS_QUEUE_URL` at start.", "worker reads",
         "QUEUE_URL", "JOBS_QUEUE_URL"),
        ("Migrations live in db/migrations/.", "Migrations live in src/db/migrate/.", "Migrations live",
         "db/migrations/", "src/db/migrate/"),
        ("The status page is https://status.acme.io.", "The status page is https://acme.statuspage.io.",
         "status page", "https://status.acme.io", "https://acme.statuspage.io"),
        ("Load tests run against staging.", "Load tests run against production.", "Load tests run", "staging",
         "production"),
        ("All services use mTLS internally.", "Some services use mTLS internally.", "services use mTLS", "All",
         "Some"),
        ("The ETL runs nightly at 02:00 UTC.", "The ETL runs nightly at 04:00 UTC.", "ETL runs", "02:00", "04:00"),
    ],
)  # fmt: skip
def test_a_changed_value_is_a_conflict_naming_the_slot_and_both_values(
    old: str, new: str, slot: str, was: str, now: str
) -> None:
    verdict, evidence = evidence_of(old, new)
    assert verdict is Verdict.CONFLICT
    assert evidence is not None and evidence.detector == "changed value"
    assert (evidence.old, evidence.new) == (was, now)
    assert set(slot.casefold().split()) <= set(evidence.slot.casefold().split())


def test_a_changed_value_with_its_reason_added_is_still_a_conflict() -> None:
    verdict, evidence = evidence_of("Retries are capped at 3.", "Retries are capped at 5 since the provider got flaky.")
    assert verdict is Verdict.CONFLICT and evidence == Evidence("changed value", "Retries capped at", "3", "5")


def test_a_changed_value_with_a_reason_closing_the_sentence_is_a_conflict_wherever_the_value_stands() -> None:
    # the value mid-sentence, the reason after the rest of the claim: stored beside the old note before
    old, new = (
        "The cache TTL is 5 minutes for sessions.",
        "The cache TTL is 10 minutes for sessions since the Redis upgrade.",
    )
    verdict, evidence = evidence_of(old, new)
    assert (
        verdict is Verdict.CONFLICT
        and evidence is not None
        and (evidence.old, evidence.new) == ("5 minutes", "10 minutes")
    )


def test_a_changed_value_with_an_environment_closing_the_sentence_is_left_to_review() -> None:
    # "in staging" bounds the new claim: both may hold, and only a reader can tell
    assert left_to_review("Retries are capped at 3 for payments.", "Retries are capped at 5 for payments in staging.")


def test_second_before_a_thing_it_counts_is_an_ordinal_not_a_duration() -> None:
    # "every second Wednesday" read as "every 1 second Wednesday" made "every other Wednesday" a conflict
    verdict, _ = evidence_of("Releases are cut every second Wednesday.", "Releases are cut every other Wednesday.")
    assert verdict is Verdict.DUPLICATE
    verdict, evidence = evidence_of("Releases are cut every second Wednesday.", "Releases are cut every Wednesday.")
    assert verdict is Verdict.CONFLICT and evidence is not None and evidence.old == "every second"
    assert not any(t.kind == "amount" for t in tokens_of("The rate limiter PR needs a second reviewer."))
    # alone, or before a function word, it is still a unit of time
    verdict, evidence = evidence_of(
        "The poller runs every second until the job ends.", "The poller runs every 5 seconds until the job ends."
    )
    assert (
        verdict is Verdict.CONFLICT
        and evidence is not None
        and (evidence.old, evidence.new) == ("1 second", "5 seconds")
    )


def test_a_changed_value_names_only_the_values_of_its_kind_not_the_names_in_the_added_reason() -> None:
    # "25 MB March" told the agent the new limit was a month; the reason's name is no part of the change
    verdict, evidence = evidence_of("Max upload size is 10 MB.", "Max upload size is 25 MB since the March release.")
    assert verdict is Verdict.CONFLICT and evidence is not None and (evidence.old, evidence.new) == ("10 MB", "25 MB")


def test_one_word_put_in_place_in_a_short_sentence_is_left_to_review_however_close_the_model_finds_them() -> None:
    found = compare("PRs are merged by the author.", "PRs are merged by the reviewer.", 0.95, MINILM)
    assert found.verdict is Verdict.UNRELATED and found.related


def test_a_rule_made_optional_is_a_conflict_naming_both_words() -> None:
    # "must" and "may" are obligations, not filler: read as the same words, the rule's loosening stored nothing
    found = compare("Migrations must run before the deploy.", "Migrations may run before the deploy.", 0.97, MINILM)
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None
    assert (found.evidence.detector, found.evidence.old, found.evidence.new) == ("status", "must", "may")


def test_a_value_left_for_another_is_a_conflict() -> None:
    verdict, evidence = evidence_of("Error tracking is Sentry.", "Error tracking moved from Sentry to Rollbar.")
    assert verdict is Verdict.CONFLICT
    assert evidence is not None and (evidence.old, evidence.new) == ("Sentry", "Rollbar")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Stripe webhooks are retried for 3 days.", "GitHub webhooks are retried for 3 days."),
        ("The `orders_db` backups run nightly.", "The `users_db` backups run nightly."),
        (
            "The read timeout for the storage client is 30 seconds.",
            "The write timeout for the storage client is 30 seconds.",
        ),
        ("Postgres is our primary database.", "MySQL is our primary database."),  # one of these is read together
    ],
)
def test_another_subject_with_the_same_predicate_is_no_conflict_but_read_together(old: str, new: str) -> None:
    for found in (compare(old, new), compare(old, new, 0.9, MINILM)):
        assert found.verdict is Verdict.UNRELATED and found.related


def test_half_an_hour_is_thirty_minutes_never_an_hour() -> None:
    old = "Tokens expire after half an hour."
    assert compare(old, "Tokens expire after 30 minutes.").verdict is Verdict.DUPLICATE
    verdict, evidence = evidence_of(old, "Tokens expire after an hour.")  # was a duplicate: nothing stored
    assert verdict is Verdict.CONFLICT and evidence is not None and evidence.new == "1 hour"
    assert compare("The build takes a minute and a half.", "The build takes 90 seconds.").verdict is Verdict.DUPLICATE


def test_a_bare_decimal_is_read_as_written() -> None:
    verdict, evidence = evidence_of("We pin Terraform 1.10.", "We pin Terraform 1.1.")
    assert verdict is Verdict.CONFLICT and evidence is not None
    assert (evidence.old, evidence.new) == ("1.10", "1.1")


def test_the_same_amount_in_other_units_is_no_change() -> None:
    assert compare("The API timeout is 30s.", "The API timeout is 30 seconds.").verdict is Verdict.DUPLICATE
    assert compare("Max upload size is 1 GB.", "Max upload size is 1024 MB.").verdict is Verdict.DUPLICATE
    assert compare("Backups run at 2am.", "Backups run at 02:00.").verdict is Verdict.DUPLICATE


# ----- status moved -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        ("The Postgres 16 migration is in progress.", "The Postgres 16 migration is done.", "in progress", "done"),
        ("The login bug is fixed.", "The login bug was reopened.", "fixed", "reopened"),
        ("The `new_checkout` flag is on.", "The `new_checkout` flag is off.", "on", "off"),
        ("PR 412 is in review.", "PR 412 is merged.", "in review", "merged"),
    ],
)
def test_a_status_moved_is_a_conflict_with_both_states(old: str, new: str, was: str, now: str) -> None:
    verdict, evidence = evidence_of(old, new)
    assert verdict is Verdict.CONFLICT
    assert evidence is not None and (evidence.detector, evidence.old, evidence.new) == ("status", was, now)


def test_a_state_said_with_another_of_its_names_is_the_same_state() -> None:
    assert compare("The `dark_mode` flag is off.", "The `dark_mode` flag is disabled.").verdict is Verdict.DUPLICATE
    # a denied state of two is the other one
    denied = compare("The data race in `cache.go` is still unfixed.", "Nobody has fixed the data race in cache.go.")
    assert denied.verdict is Verdict.DUPLICATE


# ----- negation, opposites, reversals ---------------------------------------------------------------------------


def test_a_denial_added_is_a_conflict() -> None:
    verdict, evidence = evidence_of("Run migrations on every deploy.", "Do not run migrations on deploy.")
    assert verdict is Verdict.CONFLICT
    assert evidence is not None and evidence.detector == "negation"
    assert evidence.new == "Do not run migrations on deploy."


def test_a_claim_said_again_for_everything_except_its_subject_is_a_denial() -> None:
    verdict, evidence = evidence_of(
        "We use Postgres for the ledger.", "We use Postgres for everything except the ledger."
    )
    assert verdict is Verdict.CONFLICT and evidence is not None and evidence.detector == "negation"
    # an exception added to a claim takes part of it back: never absorbed as detail, left to the agent's review
    found = compare("Deploys run every weekday.", "Deploys run every weekday except on release-freeze days.")
    assert found.verdict is Verdict.UNRELATED and found.related


def test_a_denial_of_what_the_old_claim_said_is_never_a_repeat() -> None:
    # "Sessions expire" is within the old sentence; the denial falls on words the old one has: not the same claim
    old, new = "Sessions expire after 30 minutes of inactivity.", "Sessions never expire."
    for found in (compare(old, new), compare(old, new, 0.95, MINILM)):
        assert found.verdict is Verdict.UNRELATED and found.related  # stored, for the agent to review


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Kafka consumers process events in order per partition.",
         "Kafka consumers process events out of order per partition."),
        ("Skip the smoke tests if the change only touches docs.",
         "Skip the smoke tests unless the change only touches docs."),
    ],
)  # fmt: skip
def test_out_of_and_unless_deny_what_follows(old: str, new: str) -> None:
    verdict, evidence = evidence_of(old, new)
    assert verdict is Verdict.CONFLICT and evidence is not None and evidence.detector == "negation"


def test_every_other_is_another_quantifier_than_every() -> None:
    verdict, evidence = evidence_of(
        "The cache is invalidated on every write.", "The cache is invalidated on every other write."
    )
    assert verdict is Verdict.CONFLICT and evidence is not None
    assert (evidence.old, evidence.new) == ("every", "every other")


def test_a_denial_of_the_kept_words_is_never_detail() -> None:
    old = "Staging deploys from the `develop` branch. Production deploys from `main` after a manual approval."
    new = "Staging deploys from the `develop` branch. Production deploys from `main` automatically with no approval."
    for found in (compare(old, new), compare(old, new, 0.93, MINILM)):
        assert found.verdict is Verdict.UNRELATED and found.related


def test_a_denial_inside_added_detail_denies_the_detail_not_the_claim() -> None:
    old = "The app uses a hexagonal architecture."
    new = "The app uses a hexagonal architecture: domain code has no imports from adapters/."
    assert compare(old, new).verdict is Verdict.RESTATEMENT


def test_an_opposite_put_in_place_is_a_conflict() -> None:
    verdict, evidence = evidence_of("Webhooks are processed synchronously.", "Webhooks are processed asynchronously.")
    assert verdict is Verdict.CONFLICT
    assert evidence == Evidence("opposite", "Webhooks processed", "synchronously", "asynchronously")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Use opaque tokens instead of JWTs.", "Use JWTs instead of opaque tokens."),
        ("Migrate the orders table from MySQL to Postgres.", "Migrate the orders table from Postgres to MySQL."),
        ("The billing service calls the ledger.", "The ledger calls the billing service."),
    ],
)
def test_the_same_words_with_their_sides_traded_are_a_reversal(old: str, new: str) -> None:
    verdict, evidence = evidence_of(old, new)
    assert verdict is Verdict.CONFLICT and evidence is not None and evidence.detector == "reversal"


def test_a_clause_moved_to_the_front_is_no_reversal() -> None:
    old = "Until the reindex finishes, reads still go to Elasticsearch."
    found = compare(old, "Reads still go to Elasticsearch until the reindex finishes.")
    assert found.verdict is not Verdict.CONFLICT


def test_a_passive_keeps_the_order() -> None:
    found = compare("The billing service calls the ledger.", "The ledger is called by the billing service.")
    assert found.verdict is Verdict.DUPLICATE


# ----- repeats and elaborations ---------------------------------------------------------------------------------


def test_the_same_words_in_another_order_are_a_duplicate_whatever_the_capitals() -> None:
    assert evidence_of("We ship logs to Datadog.", "Logs are shipped to Datadog.")[1] == Evidence(
        "reworded", "", "Datadog", "Datadog"
    )
    assert compare("retries are capped at 3.", "Retries are capped at 3.").verdict is Verdict.DUPLICATE
    assert compare("Retries are capped at 3.", "retries are capped at 5.").verdict is Verdict.CONFLICT


def test_a_sentence_of_a_long_note_said_again_is_contained() -> None:
    handoff = (
        "Handoff, week 32. Frontend deploys to Vercel. Workers are deployed on Fly.io as the `acme-workers` app. "
        "They consume from the `jobs` queue in Upstash Redis. The invoice PDF job times out on large accounts."
    )
    found = compare(handoff, "Workers are deployed on Fly.io as the `acme-workers` app.")
    assert found.verdict is Verdict.DUPLICATE and found.evidence is not None
    assert found.evidence.detector in ("contained", "reworded")


RUNBOOK = (
    "Deploys are manual and go through the release captain. The state bucket lives in the shared account and is "
    "locked with DynamoDB. Applying is done by the on-call engineer after review. Drift detection runs weekly and "
    "posts to the infra channel. Modules are versioned with git tags and consumers pin them. Secrets come from the "
    "parameter store, never from files, and each stage has its own prefix in the store."
)


CONFIG_REFERENCE = """# worker-service configuration reference

The worker reads `config/worker.yaml` at start; environment variables override any key (upper-case, dots to
underscores).

```yaml
queue:
  name: jobs-default
  visibility_timeout: 300s
  max_receive_count: 5
concurrency:
  workers: 16
  prefetch: 4
storage:
  bucket: acme-worker-artifacts
  region: eu-west-1
logging:
  level: info
```

| service | owner | on-call |
|---|---|---|
| search-api | Discovery | discovery-oncall |
| ledger | Payments | payments-oncall |

Notes:
- `visibility_timeout` must be longer than the slowest job; the image-resize job takes up to 4 minutes.
- In production we set `logging.level` to `warn` through `LOGGING_LEVEL`.
"""


@pytest.mark.parametrize(
    ("edited", "gone"),
    [
        (CONFIG_REFERENCE.replace("workers: 16", "workers: 24"), "16"),
        (CONFIG_REFERENCE.replace("| Discovery | discovery-oncall |", "| Growth | growth-oncall |"), "Discovery"),
    ],
)
def test_an_edited_copy_of_a_long_note_is_judged_on_its_edit_never_a_duplicate(edited: str, gone: str) -> None:
    # The rest of the note is the same, so its cosine is near 1: it says nothing of the one line that changed.
    for found in (compare(CONFIG_REFERENCE, edited), compare(CONFIG_REFERENCE, edited, 0.99, MINILM)):
        assert found.verdict in (Verdict.CONFLICT, Verdict.UNRELATED) and found.related
    assert compare(CONFIG_REFERENCE, CONFIG_REFERENCE.replace("Notes:", "Notes :"), 0.99, MINILM).verdict is (
        Verdict.DUPLICATE
    )


def test_the_opening_sentence_of_a_long_runbook_is_read_whole() -> None:
    # the window of a long note starts at the note's first character: "Deploys", not "eploys"
    assert len(RUNBOOK) > 400
    said_again = compare(RUNBOOK, "Deploys are manual and go through the release captain.")
    assert said_again.verdict is Verdict.DUPLICATE
    changed = compare(RUNBOOK, "Deploys are automatic and go through the release captain.")
    assert changed.verdict is Verdict.CONFLICT and changed.evidence is not None
    assert (changed.evidence.old, changed.evidence.new) == ("manual", "automatic")


def test_an_elaboration_updates_the_note_and_names_what_it_adds() -> None:
    verdict, evidence = evidence_of(
        "We deploy the web app to Vercel.",
        "We deploy the web app to Vercel through its GitHub integration; previews are built per PR.",
    )
    assert verdict is Verdict.RESTATEMENT
    assert evidence is not None and evidence.detector == "elaboration" and "GitHub" in evidence.new


def test_detail_added_to_a_claim_said_again_is_an_update_never_a_duplicate() -> None:
    # a duplicate stores nothing: the load balancer would be lost
    found = compare("The payments worker is deployed to us-east-1.",
                    "The payments worker is deployed to us-east-1, behind the internal ALB.")  # fmt: skip
    assert found.verdict is Verdict.RESTATEMENT
    assert found.evidence == Evidence("elaboration", "", "", "behind internal ALB")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The search reindex job runs in staging.",
         "The search reindex job runs in staging, but from today it runs only in production."),  # another environment
        ("The billing migration to Postgres 16 is in progress.",
         "The billing migration to Postgres 16 is in progress for reads only; writes were rolled back after the "
         "replication lag incident."),  # another state
    ],
)  # fmt: skip
def test_a_claim_said_again_with_another_environment_or_state_is_left_to_review(old: str, new: str) -> None:
    found = compare(old, new)
    assert found.verdict is Verdict.UNRELATED and found.related


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Kafka is our event bus.", "Kafka was our event bus."),
        ("Staging uses the t3.medium instance type.", "Staging used the t3.medium instance type."),
        ("Marta owns the billing service.", "Marta owned the billing service until October; Jon owns it now."),
    ],
)
def test_a_claim_said_again_in_the_past_is_left_to_review_never_absorbed(old: str, new: str) -> None:
    found = compare(old, new, 0.95, MINILM)  # however close the model finds them
    assert found.verdict is Verdict.UNRELATED and found.related


def test_a_past_form_the_old_claim_already_had_is_no_change() -> None:
    found = compare("The flag was enabled for beta users.", "The flag was enabled for beta users in March.")
    assert found.verdict is Verdict.RESTATEMENT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The search service uses OpenSearch.", "The search service will use OpenSearch after the Q3 migration."),
        ("The orders backfill is complete.", "The orders backfill is partially complete."),
        ("Billing reads from the replica.", "Billing might read from the replica."),
    ],
)
def test_a_claim_put_in_the_future_in_doubt_or_in_part_is_left_to_review(old: str, new: str) -> None:
    for found in (compare(old, new), compare(old, new, 0.93, MINILM)):
        assert found.verdict is Verdict.UNRELATED and found.related


def test_words_that_only_moved_are_no_elaboration() -> None:
    # "to" -> "from": the same words, one of them on the other side; nothing was added
    old, new = "The orders table is replicated to eu-west-1.", "The orders table is replicated from eu-west-1."
    for found in (compare(old, new), compare(old, new, 0.93, MINILM)):
        assert found.verdict is Verdict.UNRELATED and found.related
    found = compare("The nightly export runs at 02:00 UTC.", "The nightly export runs at 02:00 UTC and writes Parquet.")
    assert found.verdict is Verdict.RESTATEMENT and found.evidence is not None
    assert found.evidence.new == "writes Parquet"  # what it adds, not the words it kept


def test_a_second_value_beside_the_first_is_no_elaboration() -> None:
    found = compare("Retries are capped at 3.", "Retries are capped at 3 for payments and 5 for search.")
    assert found.verdict is Verdict.UNRELATED and found.related


# ----- what only a reader can decide: stored, with the old note to review --------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Logs are shipped to Datadog.", "Metrics are shipped to Datadog."),  # another subject, same words
        ("The default branch is main.", "The default branch is master."),  # a word put in place: no list knows
        ("The API timeout is 30s.", "The DB timeout is 5s."),  # subject and value both changed
        ("Log retention is 30 days.", "We keep logs for 90 days."),  # same thing, other words, other value
        ("We enabled `streaming_responses` for the chat UI.", "We also turned on `markdown_tables` for the chat UI."),
    ],
)
def test_close_notes_no_detector_settles_are_stored_for_review(old: str, new: str) -> None:
    found = compare(old, new)
    assert found.verdict is Verdict.UNRELATED
    assert found.related


def test_unrelated_notes_sharing_a_word_are_not_sent_to_review() -> None:
    found = compare("The release checklist lives in docs/release.md.", "The mobile release uses fastlane lanes.")
    assert found.verdict is Verdict.UNRELATED and not found.related


def test_a_model_says_two_texts_are_one_claim_only_with_the_same_values() -> None:
    old, new = "Backups are kept for 14 days.", "We retain backups for two weeks."
    assert compare(old, new).verdict is Verdict.UNRELATED  # words alone: "kept" / "retain" is a swap
    assert compare(old, new, 0.9, MINILM).verdict is Verdict.DUPLICATE
    assert compare(old, "We retain backups for 30 days.", 0.95, MINILM).verdict is not Verdict.DUPLICATE
    # an uncalibrated model's cosine is never used
    assert compare(old, new, 0.99, None).verdict is Verdict.UNRELATED


def test_two_values_said_again_in_order_by_a_close_text_are_one_claim() -> None:
    old, new = "Backups of `orders_db` are kept for 14 days.", "We retain `orders_db` backups for two weeks."
    assert compare(old, new, MINILM.related + 0.01, MINILM).verdict is Verdict.DUPLICATE
    assert compare(old, new, MINILM.related - 0.01, MINILM).verdict is Verdict.UNRELATED
    # one value alone says too little: "Deploys use Vercel" / "Vercel hosts the docs"
    assert compare("Deploys go to Vercel.", "Vercel hosts the docs.", MINILM.related + 0.01, MINILM).verdict is (
        Verdict.UNRELATED
    )


def test_a_text_that_announces_a_change_is_never_absorbed() -> None:
    old = "Sessions are stored in Redis."
    moved = "Sessions are stored in Redis until the cutover; after that they moved to Postgres."
    found = compare(old, moved)
    assert found.verdict is Verdict.UNRELATED and found.related  # stored, for the agent to review
    # the same words without the change are an elaboration
    assert compare(old, "Sessions are stored in Redis with a 30 minute sliding expiry.").verdict is Verdict.RESTATEMENT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("1. Run `make migrate`. 2. Deploy the API. 3. Flush the CDN cache.",
         "1. Deploy the API. 2. Run `make migrate`. 3. Flush the CDN cache."),
        ("Node upgrade:\n- drain the node\n- upgrade kubelet\n- uncordon it",
         "Node upgrade:\n- upgrade kubelet\n- drain the node\n- uncordon it"),
    ],
)  # fmt: skip
def test_steps_said_in_another_order_are_left_to_review_never_a_duplicate(old: str, new: str) -> None:
    assert left_to_review(old, new)


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        ("The SDK supports Python >=3.10.", "The SDK supports Python <3.10.", "at least", "less than"),
        ("The plugin requires Node <= 18.", "The plugin requires Node > 18.", "at most", "more than"),
    ],
)  # fmt: skip
def test_a_version_bound_turned_around_is_a_conflict(old: str, new: str, was: str, now: str) -> None:
    for meaning in (None, 0.97):  # with or without the model
        found = compare(old, new, meaning, MINILM if meaning else None)
        assert found.verdict is Verdict.CONFLICT and found.evidence is not None
        assert (found.evidence.old, found.evidence.new) == (was, now)
    # said in words on either side of the version: not read as one slot, so stored for review, never a duplicate
    found = compare("The CLI needs Go 1.21 or newer.", "The CLI needs Go older than 1.21.", 0.97, MINILM)
    assert found.verdict is Verdict.UNRELATED and found.related


def test_a_dozen_is_twelve_and_two_dozen_twenty_four() -> None:
    found = compare("The ingest cluster runs a dozen worker pods.", "The ingest cluster runs two dozen worker pods.")
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None
    assert compare("Keep three hundred connections.", "Keep 300 connections.").verdict is Verdict.DUPLICATE


def test_a_word_of_the_claim_replaced_under_added_detail_is_no_elaboration() -> None:
    old = "The retry policy uses exponential backoff with a base of 200 ms."
    new = "The retry policy uses linear backoff with a step of 200 ms, capped at 5 attempts, with full jitter."
    assert compare(old, new, 0.9, MINILM).verdict is Verdict.UNRELATED  # stored beside it, for the agent to read


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Every table has a `created_at` column.", "Every table except `audit_log` has a `created_at` column."),
        ("Both Kubernetes clusters run Istio.", "Only the prod Kubernetes cluster runs Istio."),
        ("Feature work targets the `develop` branch.", "Most feature work targets the `develop` branch."),
        ("Only Priya and Tomasz have admin on prod.", "Only Priya, Tomasz and Wei have admin on prod."),
        ("The `shared-config` package is consumed by the api, worker and cron services.",
         "The `shared-config` package is consumed by the api and worker services."),
        ("We accept payments in USD, EUR and GBP.", "We accept payments in USD and EUR."),
        ("CORS allows app.acme.com and admin.acme.com.", "CORS allows app.acme.com."),
        ("Allowed regions:\n- us-east-1\n- eu-west-1\n- ap-south-1", "Allowed regions:\n- us-east-1\n- ap-south-1"),
    ],
)  # fmt: skip
def test_a_claim_narrowed_or_a_list_with_an_item_more_or_less_is_left_to_review(old: str, new: str) -> None:
    assert left_to_review(old, new)


def test_a_checklist_box_is_a_status() -> None:
    old = "Release checklist:\n- [x] changelog written\n- [x] migrations tested on staging\n- [ ] tag pushed"
    new = "Release checklist:\n- [x] changelog written\n- [ ] migrations tested on staging\n- [ ] tag pushed"
    found = compare(old, new)
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None
    assert (found.evidence.detector, found.evidence.slot) == ("status", "migrations tested staging")


@pytest.mark.parametrize("word", ["outdated", "stale"])
def test_a_text_that_calls_the_old_claim_outdated_is_never_absorbed(word: str) -> None:
    old = "Search uses Elasticsearch."
    new = f"Search uses Elasticsearch, per the old docs. That is {word}: search runs on OpenSearch now."
    assert compare(old, new, 0.9, MINILM).verdict is Verdict.UNRELATED


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Staging upgrade to Postgres 16:\n- [x] snapshot\n- [x] pg_upgrade\n- [x] smoke tests",
         "Production upgrade to Postgres 16:\n- [x] snapshot\n- [ ] pg_upgrade\n- [ ] smoke tests"),
        ("Release 2.4:\n- [x] changelog\n- [x] tag", "Release 2.5:\n- [ ] changelog\n- [ ] tag"),
    ],
)  # fmt: skip
def test_lists_under_other_headings_are_two_things_never_a_conflict(old: str, new: str) -> None:
    assert left_to_review(old, new)


@pytest.mark.parametrize(
    ("old", "new", "was", "now"),
    [
        ("The sensor calibration offset is -2.5 degrees.", "The sensor calibration offset is +2.5 degrees.", "-2.5",
         "+2.5"),
        ('package.json pins "react": "18.2.0".', 'package.json pins "react": "^18.2.0".', "18.2.0", "^18.2.0"),
    ],
)  # fmt: skip
def test_a_sign_or_a_range_mark_is_part_of_its_value(old: str, new: str, was: str, now: str) -> None:
    found = compare(old, new)
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None
    assert (found.evidence.old, found.evidence.new) == (was, now)
    assert compare("Retries 1-5 use backoff.", "Retries 1-5 use backoff with jitter.").verdict is Verdict.RESTATEMENT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("requirements.txt pins `requests==2.31.0`.", "requirements.txt pins `urllib3==2.0.7`."),
        ("In values.yaml, `replicaCount: 3`.", "In values.yaml, `image.tag: 1.4.2`."),
        ("The staging .env sets `DB_HOST=db1.internal`.", "The staging .env sets `DB_PORT=5432`."),
        ("Gemfile pins rails 7.1.3.", "Gemfile pins puma 6.4.2."),
        ("package.json pins react 18.2.0.", "package.json pins lodash 4.17.21."),
        ("nginx.conf: client_max_body_size 20m;", "nginx.conf: proxy_read_timeout 60s;"),
        ("nginx.conf: worker_processes 4;", "nginx.conf: worker_connections 1024;"),
    ],
)  # fmt: skip
def test_two_keys_of_one_config_file_are_two_settings_never_a_conflict(old: str, new: str) -> None:
    assert left_to_review(old, new)


@pytest.mark.parametrize(
    ("old", "new", "slot", "was", "now"),
    [
        ("requirements.txt pins `requests==2.31.0`.", "requirements.txt pins `requests==2.32.3`.", "requests",
         "2.31.0", "2.32.3"),
        ("In values.yaml, `replicaCount: 3`.", "In values.yaml, `replicaCount: 5`.", "replicaCount", "3", "5"),
        ("The staging .env sets `DB_HOST=db1.internal`.", "The staging .env sets `DB_HOST=db2.internal`.", "DB_HOST",
         "db1.internal", "db2.internal"),
        ("Gemfile pins rails 7.1.3.", "Gemfile pins rails 7.2.0.", "rails", "7.1.3", "7.2.0"),
        ("nginx.conf: worker_processes 4;", "nginx.conf: worker_processes 8;", "worker_processes", "4", "8"),
    ],
)  # fmt: skip
def test_one_key_given_another_value_is_a_conflict_that_names_the_key(
    old: str, new: str, slot: str, was: str, now: str
) -> None:
    found = compare(old, new)
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None
    assert slot in found.evidence.slot and (found.evidence.old, found.evidence.new) == (was, now)


def test_kubernetes_binary_sizes_compare_by_size() -> None:
    assert compare("The ingest pod requests 512Mi of memory.", "The ingest pod requests 0.5Gi of memory.").verdict in (
        Verdict.DUPLICATE, Verdict.RESTATEMENT)  # fmt: skip
    found = compare("The ingest pod requests 512Mi of memory.", "The ingest pod requests 1Gi of memory.")
    assert found.verdict is Verdict.CONFLICT and found.evidence is not None and found.evidence.new == "1Gi"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The importer accepts CSV/JSON/XML uploads.", "The importer accepts CSV/JSON uploads."),
        ("Supported databases: Postgres / MySQL / SQLite.", "Supported databases: Postgres / MySQL."),
    ],
)
def test_a_list_joined_by_slashes_with_an_item_left_out_is_left_to_review(old: str, new: str) -> None:
    assert left_to_review(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We don't support Python older than 3.9.", "We support Python 3.9 or newer."),
        ("Payloads may not be larger than 1 MB.", "Payloads are at most 1 MB."),
    ],
)
def test_a_denial_taken_away_with_its_bound_turned_around_is_left_to_review_never_a_conflict(
    old: str, new: str
) -> None:
    assert left_to_review(old, new)


def test_a_reason_denied_in_the_new_text_is_never_absorbed_as_detail() -> None:
    old, new = "We moved off Heroku because of cost.", "We moved off Heroku not for cost reasons but for VPC peering."
    assert compare(old, new).verdict is Verdict.CONFLICT
    # a denial both texts say is no change, whichever sentence says it
    old = "Every service owns its own database; no shared tables."
    assert compare(old, "There are no shared tables: each service has a database of its own.").verdict in (
        Verdict.DUPLICATE, Verdict.RESTATEMENT)  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The deploy freeze lasts until Friday.", "The deploy freeze lasts until next Friday."),
        ("The API v2 launch is this week.", "The API v2 launch is next week."),
        ("Staging is reserved for QA until Tuesday.", "Staging is reserved for QA until the Tuesday after next."),
        ("Trial accounts expire at the end of the month.", "Trial accounts expire at the end of next month."),
    ],
)
def test_a_time_moved_by_next_is_left_to_review_never_absorbed_as_detail(old: str, new: str) -> None:
    assert left_to_review(old, new)


def test_next_that_moves_no_time_still_adds_detail() -> None:
    old = "`packages/ui/src/` holds the shared React components."
    new = "`packages/ui/src/` holds the shared React components, each with its story next to it. Next steps: docs."
    assert compare(old, new).verdict is Verdict.RESTATEMENT
