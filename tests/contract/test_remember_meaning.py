"""The issue's examples of memory that keeps the truth, on every store, with and without an embedding model:
a changed fact is a conflict (never dropped as a duplicate, never stored beside the old one, never an update in
place), a paraphrase is a duplicate, and get_context never shows two contradicting current decisions."""

from __future__ import annotations

import json

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.hybrid import embedding_text
from notewell.domain.model import NoteType, Principal
from notewell.ports import Store, TextLookup
from notewell.services.memory import RememberRequest, RememberStatus
from tests.support.embedders import CountingEmbedder

POSTGRES = "We use PostgreSQL 16 as the primary database for orders; tests run against SQLite."


@pytest.fixture(params=["none", "local"])
def services(request: pytest.FixtureRequest, store: Store, clock: FixedClock) -> Services:
    choice: EmbedderChoice = request.param
    return bootstrap(Settings(embedder=choice), store=store, clock=clock)


def remember(services: Services, me: Principal, content: str, **extra: object) -> RememberStatus:
    outcome = services.memory.remember(me, RememberRequest("orders", content, type=NoteType.DECISION, **extra))  # type: ignore[arg-type]
    return outcome.status


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (POSTGRES, "We use MySQL 8 as the primary database for orders."),
        ("We deploy the frontend to Vercel.", "We deploy the frontend to Netlify."),
        ("Clients reach the orders service through the GraphQL gateway.",
         "Clients reach the orders service through the REST gateway."),
        ("Payments call the ledger service.", "The ledger service calls payments."),
        ("We use Redis for session storage.", "We do not use Redis for session storage."),
        ("We use Redis for session storage.", "We don\u2019t use Redis for session storage."),  # typed on a phone
        ("The retry count must be zero.", "The retry count must be non-zero."),
        ("The client uses blocking sockets.", "The client uses non-blocking sockets."),
        # rivals the model put as close as synonyms (duplicates with it): the lexicon knows them for rivals
        ("The on-call rotation starts on Monday.", "The on-call rotation starts on Tuesday."),
        ("We host the primary database in Brazil.", "We host the primary database in Argentina."),
        ("The load balancer sends traffic to the east region.", "The load balancer sends traffic to the west region."),
        ("The team bought the monitoring licence.", "The team sold the monitoring licence."),
        # what was advised, tried, proposed or once true stated as a fact; and halves of a contrast joined
        ("The team could adopt Terraform next quarter.", "The team adopts Terraform next quarter."),
        ("We tried to shard the users table.", "We sharded the users table."),
        ("The proposed schema adds a tenant column.", "The schema adds a tenant column."),
        ("Alice is the former team lead.", "Alice is the team lead."),
        ("Acme is one of the largest customers.", "Acme is the largest customer."),
        ("The API service is fast but the database is slow.", "The API service is slow."),
        ("We replaced Jenkins with GitHub Actions.", "We replaced GitHub Actions with Jenkins."),
        # another unit, an opposite inside a compound, a test result turned, an exception or a hedge dropped
        ("The API timeout is 30 seconds.", "The API timeout is 30 minutes."),
        ("Logs are kept for 7 days.", "Logs are kept for 7 years."),
        ("The API timeout is 30 seconds.", "The API timeout is 30 minutes, and retries are disabled."),
        ("The queue consumer is single-threaded.", "The queue consumer is multi-threaded."),
        ("The widget is rendered client-side.", "The widget is rendered server-side."),
        ("The e2e suite passed on main.", "The e2e suite failed on main."),
        ("The deploy to staging succeeded.", "The deploy to staging failed."),
        ("The cache is warm after deploys.", "The cache is cold after deploys."),
        ("We are evaluating Kafka for the event bus.", "We adopted Kafka for the event bus."),
        ("Deploys go to staging first.", "Deploys go to production first."),
        ("The auth service is upstream of the gateway.", "The auth service is downstream of the gateway."),
        ("All endpoints require authentication except /health.", "All endpoints require authentication."),
        ("There is little evidence that the leak comes from the pool.",
         "There is evidence that the leak comes from the pool."),
        # another amount, another file: values no model may call the same
        ("Some endpoints are cached.", "All endpoints are cached."),
        ("The config lives in src/config/settings.py.", "The config lives in src/settings.py."),
        ("The health check is served at /health.", "The health check is served at /healthz."),
        # a hedge or "former" put in, an act not done, a denial typed without its apostrophe, how often
        ("The nightly export job crashed.", "The nightly export job almost crashed."),
        ("Alice is the team lead.", "Alice is the former team lead."),
        ("The deploy updated the config.", "The deploy failed to update the config."),
        ("The login bug has yet to be fixed.", "The login bug has been fixed."),
        ("we had time to run the load test", "we didnt have time to run the load test"),
        ("Staging and production share the same database.", "Staging and production share different databases."),
        ("Backups always run before a deploy.", "Backups sometimes run before a deploy."),
        ("The migration to Aurora is done.", "The migration to Aurora is half done."),
        ("We are waiting on the vendor for the API key.", "We received the API key from the vendor."),
        ("The manager knew the engineer broke the build.", "The manager broke the build."),
        ("The manager broke the build.", "The manager knew the engineer broke the build."),  # the other way
        ("The API service is slow.", "The API service is fast but the database is slow."),  # was an update
        ("The deploy was anything but smooth.", "The deploy was smooth."),
        ("The team is against adopting GraphQL.", "The team is adopting GraphQL."),
        ("We deploy to all but one region.", "We deploy to one region."),
        ("The lack of integration tests slows down reviews.", "Integration tests slow down reviews."),
        ("The API uses a two-step login.", "The API uses a three-step login."),  # a number opening a compound
        ("The workers run on t3.large instances.", "The workers run on t3.xlarge instances."),  # an instance type
        ("Only the billing service may write to the ledger table.", "Any service may write to the ledger table."),
        ("Users cannot disable two-factor auth.", "Users can disable two-factor auth."),  # "not" + "disable"
        ("Don't stop the workers during a migration.", "Stop the workers during a migration."),
        ("Staging runs on ARM and production runs on x86.", "Staging runs on x86."),  # a cut across "and"
        ("The queue guarantees at-least-once delivery.", "The queue guarantees exactly-once delivery."),
        ("Verify the email before login.", "Log in before verifying the email."),  # "log in" is "login"
        ("Some endpoints require auth.", "All of the endpoints require auth."),
        ("After the review, payments call the ledger service.", "The ledger service calls payments."),  # reversed
        # a verb that denies what it takes, a comparative turned, an auxiliary's denial: duplicates with the model
        ("The v2 API is backwards compatible.", "The v2 API breaks backwards compatibility."),
        ("Uploads larger than 10 MB go to S3 directly.", "Uploads smaller than 10 MB go to S3 directly."),
        ("Requests longer than 30 seconds time out.", "Requests shorter than 30 seconds time out."),
        ("Should we use Redis for the job queue? We wouldn't.", "Should we use Redis for the job queue? We would."),
        # a question tag denies nothing; a short note's word turned; a past form the stemmer cuts short
        ("We deploy on Fridays, don't we?", "We don't deploy on Fridays."),
        ("The migration succeeded.", "The migration failed."),
        ("The API is fast.", "The API is slow."),
        ("We removed the Redis cache.", "We added the Redis cache."),
    ],
)  # fmt: skip
def test_a_changed_fact_is_a_conflict_with_both_resolutions(
    services: Services, me: Principal, old: str, new: str
) -> None:
    assert remember(services, me, old) is RememberStatus.CREATED
    outcome = services.memory.remember(me, RememberRequest("orders", new, type=NoteType.DECISION))
    assert outcome.status is RememberStatus.CONFLICT
    assert [r.arguments.get("force") or r.arguments.get("supersedes") for r in outcome.resolutions]
    assert outcome.existing is not None and outcome.existing.body == old
    project = services.deps.store.get_project(me.workspace_id, "orders")
    assert project is not None
    stored = services.deps.store.project_notes(me.workspace_id, project.id, limit=10)
    assert [n.body for n in stored] == [old]  # nothing stored beside it, nothing changed in place
    context = json.dumps(services.context.get_context(me, "orders").packed.sections)
    assert outcome.existing.id in context


@pytest.mark.parametrize(
    ("old", "same", "other"),
    [
        ("The API's rate limit is 5,000 requests per minute.", "The API's rate limit is 5000 requests per minute.",
         "The API's rate limit is 6,000 requests per minute."),
        ("The orders table holds 5m rows.", "The orders table holds 5 million rows.",
         "The orders table holds 50 million rows."),
        ("The nightly deploy window opens at 5.30 p.m.", "The nightly deploy window opens at 5.30pm.",
         "The nightly deploy window opens at 6.30 p.m."),
        ("We keep three replicas of the orders table.", "We keep 3 replicas of the orders table.",
         "We keep five replicas of the orders table."),
    ],
)  # fmt: skip
def test_a_figure_written_another_way_is_the_same_figure(
    services: Services, me: Principal, old: str, same: str, other: str
) -> None:
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, same) is RememberStatus.DUPLICATE  # not another value, not a conflict
    assert remember(services, me, other) is RememberStatus.CONFLICT


def test_a_paraphrase_is_a_duplicate_by_meaning(services: Services, me: Principal) -> None:
    if services.meaning is None:
        # Words alone cannot tell that "stored in Postgres (v16)" is "PostgreSQL 16 as the primary database":
        # without a model the paraphrase is stored as a new note, never dropped and never a conflict.
        assert remember(services, me, POSTGRES) is RememberStatus.CREATED
        assert remember(services, me, "Orders are stored in Postgres (v16); tests run against SQLite.") is (
            RememberStatus.CREATED
        )
        return
    assert remember(services, me, POSTGRES) is RememberStatus.CREATED
    assert remember(services, me, "Orders are stored in Postgres (v16); tests run against SQLite.") is (
        RememberStatus.DUPLICATE
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The deploy job builds the container image.", "The deploy job constructs the container image."),
        ("The importer ignores rows with a blank email.", "The importer disregards rows with a blank email."),
        ("The gateway rejects a request without a token.", "The gateway refuses a request without a token."),
        ("The cache keeps entries for an hour.", "The cache retains entries for an hour."),
    ],
)  # fmt: skip
def test_a_word_swapped_for_a_synonym_is_a_duplicate_and_for_a_rival_a_conflict(
    store: Store, clock: FixedClock, old: str, new: str
) -> None:
    """The sentence model alone flagged the first two as conflicts and stored the others beside the old note: it
    cannot tell another word for a thing from another value. The lexicon (WordNet) can."""
    services = bootstrap(Settings(embedder="local"), store=store, clock=clock)
    me = services.auth.authenticate(services.auth.create_key(services.auth.create_workspace("acme").id).secret)
    assert me is not None
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.DUPLICATE
    rival = "A guitar teacher books lessons through the app.", "A violin teacher books lessons through the app."
    assert remember(services, me, rival[0]) is RememberStatus.CREATED
    assert remember(services, me, rival[1]) is RememberStatus.CONFLICT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The exporters are unwilling to submit their plans.", "The exporters are not willing to submit their plans."),
        ("We don't log session tokens.", "We don\u2019t log session tokens."),
        ("We don't log session tokens.", "We do not log session tokens."),  # was stored as a new note
        ("Users cannot disable two-factor auth.", "Users can't disable two-factor auth."),
        ("The admin port is open to the VPN.", "The admin port is not closed to the VPN."),
        ("Do not deploy without a review.", "Never deploy without a review."),  # a conflict with the model
        ("The export endpoint lacks pagination.", "The export endpoint has no pagination."),  # a conflict before
    ],
)
def test_a_denial_said_otherwise_is_a_duplicate(services: Services, me: Principal, old: str, new: str) -> None:
    """With the model, "unwilling" -> "not willing" was weighed as another value (a conflict); the denial is one."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.DUPLICATE


def test_without_a_model_the_lexicon_still_tells_a_rival_value_from_another_word_for_the_same(
    store: Store, clock: FixedClock
) -> None:
    """By words alone the violin was stored beside the guitar (created), "Children" read as a name swapped for
    "Kids" (conflict) and "constructs" as new wording (created)."""
    services = bootstrap(Settings(embedder="none"), store=store, clock=clock)
    me = services.auth.authenticate(services.auth.create_key(services.auth.create_workspace("acme").id).secret)
    assert me is not None and services.meaning is None
    assert remember(services, me, "A guitar teacher books lessons through the app.") is RememberStatus.CREATED
    assert remember(services, me, "A violin teacher books lessons through the app.") is RememberStatus.CONFLICT
    assert remember(services, me, "Kids use the mobile app to book lessons.") is RememberStatus.CREATED
    assert remember(services, me, "Children use the mobile app to book lessons.") is RememberStatus.DUPLICATE
    assert remember(services, me, "The deploy job builds the container image.") is RememberStatus.CREATED
    assert remember(services, me, "The deploy job constructs the container image.") is RememberStatus.DUPLICATE


def test_an_exact_repeat_is_a_duplicate_before_the_model_runs(store: Store, clock: FixedClock) -> None:
    embedder = CountingEmbedder()
    services = bootstrap(Settings(), store=store, clock=clock, embedder=embedder)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    first = services.memory.remember(me, RememberRequest("orders", POSTGRES))
    assert first.status is RememberStatus.CREATED and embedder.texts
    embedder.texts.clear()
    again = services.memory.remember(me, RememberRequest("orders", POSTGRES.replace(" ", "  ") + "\n"))
    assert again.status is RememberStatus.DUPLICATE
    assert again.note is not None and first.note is not None and again.note.note.id == first.note.note.id
    assert embedder.texts == []  # a repeat word for word costs no embedding
    changed = services.memory.remember(me, RememberRequest("orders", POSTGRES.replace("16", "17")))
    assert changed.status is RememberStatus.CONFLICT and embedder.texts  # anything else is weighed by the model


def test_an_exact_repeat_is_found_by_its_opening_before_any_full_text_lookup(
    services: Services, me: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that looks notes up by their opening text answers an exact repeat from that index, whatever the size of
    the full-text index; one that cannot (DynamoDB) finds it through the keyword leg."""
    assert remember(services, me, POSTGRES) is RememberStatus.CREATED
    lookups: list[str] = []
    keyword_leg = services.search.related_keyword

    def counted(*args: object, **kwargs: object) -> object:
        lookups.append("keyword")
        return keyword_leg(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(services.search, "related_keyword", counted)
    assert remember(services, me, POSTGRES) is RememberStatus.DUPLICATE
    assert lookups == ([] if isinstance(services.deps.store, TextLookup) else ["keyword"])
    assert remember(services, me, POSTGRES.replace("16", "17")) is RememberStatus.CONFLICT
    assert lookups[-1:] == ["keyword"]  # anything else is looked up as before


def test_a_restatement_keeps_the_vector_remember_computed_for_it(store: Store, clock: FixedClock) -> None:
    embedder = CountingEmbedder()
    services = bootstrap(Settings(), store=store, clock=clock, embedder=embedder)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None and services.meaning is not None
    first = services.memory.remember(me, RememberRequest("orders", POSTGRES))
    restated = POSTGRES + " Nightly dumps go to the backup bucket for 30 days."
    embedder.texts.clear()
    outcome = services.memory.remember(me, RememberRequest("orders", restated))
    assert outcome.status is RememberStatus.UPDATED and outcome.note is not None and first.note is not None
    note = outcome.note.note
    assert (note.id, note.version) == (first.note.note.id, 2)
    text = embedding_text(note.title, note.body)
    assert embedder.texts.count(text) == 1  # embedded once, to judge it, and that vector is the one kept
    if services.meaning.searchable:  # the kept vector is of version 2 (else it would be embedded again here)
        vector = embedder.embed([text])[0]
        embedder.texts.clear()
        assert services.meaning.similarities(me.workspace_id, vector, [note]) == {note.id: pytest.approx(1.0)}
        assert embedder.texts == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("If the migration fails, we roll back to the v2 schema.", "We roll back to the v2 schema."),
        ("The vendor claims the API supports cursor pagination.", "The API supports cursor pagination."),
        ("Is the order cache shared between tenants?", "The order cache is shared between tenants."),  # asked
        ("When the queue is full, new requests are rejected.", "New requests are rejected."),
        ("New requests are rejected when the queue is full.", "New requests are rejected."),
        ("There is little evidence that the leak comes from the pool.", "The leak comes from the pool."),
        ("It seems the leak comes from the connection pool.", "The leak comes from the connection pool."),
    ],
)
def test_a_claim_the_note_only_supposed_is_stored_when_stated_outright(
    services: Services, me: Principal, old: str, new: str
) -> None:
    """It was a duplicate: the rollback that happened, or the fact checked, was dropped as already known."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.CREATED
    assert remember(services, me, "Tests run against SQLite.") is RememberStatus.CREATED
    assert remember(services, me, POSTGRES) is not RememberStatus.CREATED  # the part it states is known


def test_what_was_decided_said_as_done_is_no_conflict(services: Services, me: Principal) -> None:
    """It was a conflict with the model: "decided to" was read as a phrase cut out up to a word that hands what
    follows to another phrase, and the agent had to resolve its own decision restated."""
    assert remember(services, me, "We decided to keep Redis for sessions.") is RememberStatus.CREATED
    assert remember(services, me, "We keep Redis for sessions.") is not RememberStatus.CONFLICT


def test_a_practice_given_up_said_otherwise_is_no_conflict(services: Services, me: Principal) -> None:
    """It was a conflict: "no longer use" and "stopped using" were weighed as two values, and the scope of "no"
    took "longer" for a word it denied."""
    assert remember(services, me, "We no longer use Celery for background jobs.") is RememberStatus.CREATED
    assert remember(services, me, "We stopped using Celery for background jobs.") is not RememberStatus.CONFLICT
    assert remember(services, me, "We use Celery for background jobs.") is RememberStatus.CONFLICT


def test_a_choice_said_otherwise_is_no_conflict(services: Services, me: Principal) -> None:
    """It was a conflict: "rather than Kafka" denied Kafka where "over Kafka" denied nothing, and the denial ran on
    to "the job queue"."""
    assert remember(services, me, "We chose SQS over Kafka for the job queue.") is RememberStatus.CREATED
    new = "For the job queue we picked SQS rather than Kafka."
    assert remember(services, me, new) is not RememberStatus.CONFLICT
    assert remember(services, me, "We chose Kafka over SQS for the job queue.") is RememberStatus.CONFLICT


def test_another_frequency_with_a_detail_added_is_never_an_update(services: Services, me: Principal) -> None:
    """It was `updated`, with the model and without: the longer note overwrote "weekly" with "daily" in place."""
    assert remember(services, me, "The search index is rebuilt weekly.") is RememberStatus.CREATED
    status = remember(services, me, "The search index is rebuilt daily, after the import finishes.")
    # words alone cannot tie the two sentences closely enough to flag them: stored beside it, the old kept
    assert status is (RememberStatus.CONFLICT if services.meaning is not None else RememberStatus.CREATED)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Most requests are served from the cache.", "The cache serves most requests."),  # a passive with "from"
        ("The build is rather slow.", "The build is slow."),  # "rather" denies only before "than"
        ("Auth signs JWT access tokens with RS256.", "Auth signs JWTs as access tokens with RS256."),  # a plural
        ("Never disable TLS on the load balancer.", "TLS must never be disabled on the load balancer."),
        ("Retries are capped at 3.", "Retries never exceed 3."),  # a bound said with a denial
        ("The PR is waiting for review.", "The PR is pending review."),  # a state said two ways
        ("The upload limit is 10 MB.", "Uploads cannot exceed 10 MB."),  # a limit is a bound
        ("The upload limit is 10 MB.", "Uploads are limited to 10 MB."),
        ("The flag is false.", "The flag is off."),  # one state, two names
        ("We are yet to migrate the billing service.", "The billing service is not migrated yet."),  # a reversal
        ("The cache is not warm.", "The cache is never warm."),  # "not" / "never": a conflict with the model
        ("The login bug is fixed.", "The login bug is resolved."),  # a conflict, with the model and without
        ("The feature is done.", "The feature is complete."),
    ],
)
def test_a_claim_said_again_otherwise_is_a_duplicate(services: Services, me: Principal, old: str, new: str) -> None:
    """Each was a conflict, with the model and without ("Never disable TLS" by words alone, "pending review" with the
    model alone)."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.DUPLICATE


@pytest.mark.parametrize(
    ("old", "new", "turned"),
    [
        ("Caching is off.", "Caching is disabled.", "Caching is on."),
        ("The payments service is down.", "The payments service is offline.", "The payments service is up."),
        ("The deploy is blocked on the security review.", "The deploy is waiting on the security review.",
         "The deploy is unblocked."),
    ],
)  # fmt: skip
def test_a_state_said_in_other_words_is_no_conflict(
    services: Services, me: Principal, old: str, new: str, turned: str
) -> None:
    """Each was a conflict with the model, which weighs "off" / "disabled" as two values; the state turned is one."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is not RememberStatus.CONFLICT
    assert remember(services, me, turned) is RememberStatus.CONFLICT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The flag is true.", "The flag is off."),  # another name of the other state: stored beside it, both modes
        ("The flag is on.", "The flag is false."),  # a conflict with the model, stored beside it by words
        ("The PR is pending.", "The PR is merged."),  # "PR" alone shared: by words no candidate was found
        ("The DB is Postgres.", "The DB is MySQL."),
        ("The job is running.", "The job is finished."),  # stored beside it: WordNet's "run out" is "finish"
        ("The nightly export job is running.", "The nightly export job has finished."),  # it was a duplicate
        ("We store sessions in Redis.", "Sessions are stored in Memcached."),  # read as a headline: no names
        ("The login bug is fixed.", "The login bug was reopened."),  # stored beside it by words
        ("We release every two weeks.", "We release every week."),  # a duplicate with the model
    ],
)
def test_a_short_note_turned_is_a_conflict(services: Services, me: Principal, old: str, new: str) -> None:
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.CONFLICT


def test_a_tool_put_in_place_of_another_is_flagged_with_the_model(services: Services, me: Principal) -> None:
    """It was stored beside the old note with the model too; by words alone "pnpm" / "yarn" is a pair no list
    knows, and the note is stored (never absorbed)."""
    assert remember(services, me, "We use pnpm for the frontend.") is RememberStatus.CREATED
    status = remember(services, me, "We use yarn for the frontend.")
    assert status is (RememberStatus.CONFLICT if services.meaning is not None else RememberStatus.CREATED)


def test_a_note_that_shares_only_a_common_word_of_a_small_project_is_found(services: Services, me: Principal) -> None:
    """The full-text lookup ranked by the rarer words only, and "flag" stood in half the notes: "The flag is
    false." met the linter's note and not the flag's, and was stored beside "The flag is on." by words alone."""
    assert remember(services, me, "The flag is on.") is RememberStatus.CREATED
    assert remember(services, me, "The linter reports false positives.") is RememberStatus.CREATED
    assert remember(services, me, "The flag is false.") is RememberStatus.CONFLICT


def test_a_preference_said_otherwise_is_no_conflict(services: Services, me: Principal) -> None:
    """It was a conflict with the model: "wants to" and "would rather" were weighed as two values (0.33)."""
    assert remember(services, me, "The team wants to keep Redis for sessions.") is RememberStatus.CREATED
    assert remember(services, me, "The team would rather keep Redis for sessions.") is not RememberStatus.CONFLICT
    assert remember(services, me, "The team wants to drop Redis for sessions.") is RememberStatus.CONFLICT


def test_a_status_said_in_the_past_updates_the_note(services: Services, me: Principal) -> None:
    assert remember(services, me, "The signing cert expires in March.") is RememberStatus.CREATED
    assert remember(services, me, "The signing cert expired in March.") is RememberStatus.UPDATED


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The deploy pipeline runs the integration tests on every merge to main.",
         "The deploy pipeline runs the integration tests on every merge to main and on release tags."),
        ("The upgrade breaks the login page.", "The upgrade breaks the login page on Safari."),  # a name added
    ],
)  # fmt: skip
def test_a_repeat_that_adds_a_detail_updates_the_note(services: Services, me: Principal, old: str, new: str) -> None:
    """Each was a duplicate (most words the same): the detail was dropped and the agent told it was known."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) is RememberStatus.UPDATED
    project = services.deps.store.get_project(me.workspace_id, "orders")
    assert project is not None
    assert [n.body for n in services.deps.store.project_notes(me.workspace_id, project.id, limit=10)] == [new]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The session cookie is marked strict.", "The session cookie is marked lax."),
        ("The billing job runs near the end of the month.", "The billing job runs far from the end of the month."),
    ],
)
def test_a_word_swapped_for_one_nothing_can_weigh_is_never_absorbed(
    services: Services, me: Principal, old: str, new: str
) -> None:
    """Without a model these were a duplicate and an update (the old fact overwritten): a phrase put in place of
    another that the lexicon does not know may be another value, so the text is stored or flagged, never absorbed."""
    assert remember(services, me, old) is RememberStatus.CREATED
    assert remember(services, me, new) in (RememberStatus.CREATED, RememberStatus.CONFLICT)
    project = services.deps.store.get_project(me.workspace_id, "orders")
    assert project is not None
    assert old in [n.body for n in services.deps.store.project_notes(me.workspace_id, project.id, limit=10)]
