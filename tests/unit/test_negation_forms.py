"""A claim negated in other words is the same claim; a word negated where the other text has it bare is a conflict.

Judged by words alone (no model), as a store without embeddings judges: "no" and "not" deny alike, a negating prefix
("unwilling", "non-blocking") is "not" said in the word, and a word's opposite under a negation ("not closed") is
the word itself ("open").
"""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge
from notewell.domain.similarity import plain
from notewell.domain.slots import changed_slots

SAID_AGAIN = [
    ("There is no closed path to the battery.", "The path to the battery is not closed."),  # "no" / "not"
    ("The soldier can't recall the order.", "The soldier doesn't recall the order."),
    ("The exporters are unwilling to submit their plans.", "The exporters are not willing to submit their plans."),
    ("The retry count must be non-zero.", "The retry count must not be zero."),
    ("It makes absolutely no difference.", "No, it makes no difference."),  # "No," answers: it denies nothing
    ("The integration tests run on SQLite.", "The integration tests run against SQLite."),  # a preposition
    ("Bulb C was in an open path.", "Bulb C was not in a closed path."),  # an opposite, negated
    ("Sharding the table is not a good idea.", "Sharding the table is a bad idea."),
    # "big" and "small" stand opposite each other in the first text: "large" for "big" flips nothing
    ("It raises the power of the big countries at the expense of the small countries.",
     "It raises the power of the large countries at the expense of the smaller countries."),
    ("We no longer use Celery for background jobs.", "We stopped using Celery for background jobs."),
    # the "over" of a choice sets aside what "rather than" does, and no further than its phrase
    ("We chose SQS over Kafka for the job queue.", "For the job queue we picked SQS rather than Kafka."),
    ("The build is rather slow.", "The build is slow."),  # "rather" denies only before "than"
    ("Except for billing, all services run on ECS.", "All services except billing run on ECS."),
    ("The team wants to keep Redis for sessions.", "The team would rather keep Redis for sessions."),
    ("The team wants to keep Redis for sessions.", "The team would like to keep Redis for sessions."),
    # an act not done said with a verb of its own, and a contraction typed without its apostrophe
    ("The deploy failed to update the config.", "The deploy did not update the config."),
    ("The vendor refused to sign the DPA.", "The vendor did not sign the DPA."),
    ("The login bug has yet to be fixed.", "The login bug has not been fixed yet."),
    # "yet" is no party to the claim: it trades places with none
    ("We are yet to migrate the billing service.", "The billing service is not migrated yet."),
    ("the nightly job doesnt retry", "The nightly job doesn't retry."),
    ("The logs contain nothing but noise.", "The logs contain only noise."),  # "nothing but" is "only"
    ("We deploy to all regions except eu-west-1.", "We deploy everywhere but eu-west-1."),  # "but" excepts
    # "or not" at the end denies nothing: "whether … or not" is "whether or not …"
    ("Tests run on every PR, whether they change code or not.",
     "Tests run on every PR whether or not they change code."),
    # a verb that denies, denied: the same two denials said in another order
    ("Never disable TLS on the load balancer.", "TLS must never be disabled on the load balancer."),
    ("We never drop tables in production.", "Tables are never dropped in production."),
    ("Uploads larger than 10 MB go to S3 directly.", "Uploads bigger than 10 MB go to S3 directly."),
    # one denial said two ways: "do not" / "never"
    ("Do not deploy without a review.", "Never deploy without a review."),
    ("The cache is not warm.", "The cache is never warm."),  # weighed by a model as two values (0.41)
    # a bound said with a denial is the bound
    ("There are at most 3 retries.", "There are no more than 3 retries."),
    ("Retries are capped at 3.", "Retries never exceed 3."),
    ("We keep at least two replicas.", "We keep no fewer than two replicas."),
    ("The upload limit is 10 MB.", "Uploads cannot exceed 10 MB."),  # a limit is a bound
    ("Batch size is limited to 500 items.", "Batches never exceed 500 items."),
    # a question tag is no denial, and a question that proposes keeps its own
    ("We deploy on Fridays, don't we?", "We deploy on Fridays."),
    ("Why don't we cache the tokens?", "Why don't we cache the tokens?"),
    ("The worker will not retry on a 404.", "The worker never retries on a 404."),
    # a verb that denies said with a denial
    ("The export endpoint lacks pagination.", "The export endpoint has no pagination."),
    ("The export endpoint lacks pagination.", "The export endpoint does not have pagination."),
    ("The v2 API breaks backwards compatibility.", "The v2 API is not backwards compatible."),
    # a verb that denies, denied: "does not break" keeps it
    ("The v2 API does not break backwards compatibility.", "The v2 API is backwards compatible."),
]  # fmt: skip
NEGATED = [
    ("They are willing to pay for support.", "They are unwilling to pay for support."),
    ("The client uses blocking sockets.", "The client uses non-blocking sockets."),
    ("The retry count must be zero.", "The retry count must be non-zero."),
    ("The migration is possible today.", "The migration is impossible today."),
    ("The token is valid for an hour.", "The token is invalid for an hour."),
    ("Sharding the table is a good idea.", "Sharding the table is a bad idea."),
    ("The port is open to the internet.", "The port is closed to the internet."),
    ("The port is open to the internet.", "The port is not open to the internet."),
    ("Yes, the port is open to the internet.", "No, the port is not open to the internet."),
    ("We chose Kafka for the event bus.", "We decided against Kafka for the event bus."),  # "against" a choice
    ("We use Redis for sessions.", "We don\u2019t use Redis for sessions."),  # a typographic apostrophe
    ("We no longer use Celery for background jobs.", "We use Celery for background jobs."),
    ("We chose SQS over Kafka for the job queue.", "We chose Kafka over SQS for the job queue."),
    ("We use Kafka rather than SQS for the job queue.", "We use SQS rather than Kafka for the job queue."),
    ("Use a managed queue instead of a self-hosted broker.", "Use a self-hosted broker instead of a managed queue."),
    ("the nightly job isnt running", "the nightly job is running"),  # typed without the apostrophe
    ("i dont know what broke the build", "i know what broke the build"),
    ("The deploy failed to update the config.", "The deploy updated the config."),
    ("The vendor refused to sign the DPA.", "The vendor signed the DPA."),
    ("The login bug has yet to be fixed.", "The login bug has been fixed."),
    ("Should the worker retry on a 404? Certainly not.", "Should the worker retry on a 404? Certainly."),  # at the end
    ("The deploy was anything but smooth.", "The deploy was smooth."),
    ("The team is against adopting GraphQL.", "The team is adopting GraphQL."),  # "against" after "be"
    # a plain negation before a verb that denies cancels it: "don't stop" keeps it going
    ("Don't stop the workers during a migration.", "Stop the workers during a migration."),
    ("Users cannot disable two-factor auth.", "Users can disable two-factor auth."),
    ("The build did not stop at the first error.", "The build stopped at the first error."),
    ("There were no dropped packets during the load test.", "There were dropped packets during the load test."),
    ("We don't avoid ORMs in the reporting service.", "We avoid ORMs in the reporting service."),
    ("The rollout is not without risk.", "The rollout is without risk."),
    # a part of a compound put in its opposite, a stopword among the parts aside
    ("The queue guarantees at-least-once delivery.", "The queue guarantees exactly-once delivery."),
    ("Backups are stored off-site.", "Backups are stored on-site."),  # two parts: "on" stays
    ("The disk is hard to replace.", "The disk is easy to replace."),
    ("The SDK supports Python 3.9 and later.", "The SDK supports Python 3.9 and earlier."),
    # comparatives: the stemmer keeps "larger" apart from "large"
    ("Uploads larger than 10 MB go to S3 directly.", "Uploads smaller than 10 MB go to S3 directly."),
    ("Requests longer than 30 seconds time out.", "Requests shorter than 30 seconds time out."),
    ("Alerts fire when latency is greater than 500 ms.", "Alerts fire when latency is less than 500 ms."),
    ("The new index is better for prefix queries.", "The new index is worse for prefix queries."),
    # verbs that deny what they take
    ("The v2 API is backwards compatible.", "The v2 API breaks backwards compatibility."),
    ("The new schema is backwards compatible with v1 clients.", "The new schema breaks v1 clients."),
    ("The v2 API breaks backwards compatibility.", "The v2 API does not break backwards compatibility."),
    ("The export API has pagination.", "The export API lacks pagination."),
    # a "not" ending the text after an auxiliary denies what the auxiliary stands for
    ("Should we use Redis? We wouldn't.", "Should we use Redis? We would."),
    ("Deploys and hotfixes are allowed on Fridays.", "Deploys are allowed on Fridays, but hotfixes are not."),
    # a question tag says the claim it ends: "…, don't we?" denies nothing
    ("We deploy on Fridays, don't we?", "We don't deploy on Fridays."),
    # a short note with one word turned: too few words shared for a swap's overlap
    ("The migration succeeded.", "The migration failed."),
    ("The API is fast.", "The API is slow."),
    # past forms the stemmer cuts short ("added" is "ad")
    ("We removed the Redis cache.", "We added the Redis cache."),
    ("The team won the contract.", "The team lost the contract."),
    ("The service went offline after we set up the proxy.", "The service went online after we set up the proxy."),
    ("There are no more than 3 retries.", "There are at least 3 retries."),  # the other bound
    ("The upload limit is 10 MB.", "Uploads must be at least 10 MB."),
    # another name of the other state of a flag, a service or a task, in the sentence kept word for word
    ("The flag is true.", "The flag is off."),
    ("The flag is on.", "The flag is false."),
    ("The account is active.", "The account is disabled."),
    ("The payments service is down.", "The payments service is running."),
    ("The migration is finished.", "The migration is blocked."),
    ("The login bug is fixed.", "The login bug is still open."),  # an adverb of time put in
    ("The login bug is open.", "The login bug is fixed now."),
]


@pytest.mark.parametrize(("old", "new"), SAID_AGAIN)
def test_a_claim_negated_in_other_words_is_no_conflict(old: str, new: str) -> None:
    assert judge(old, new)[0] is not Verdict.CONFLICT
    assert not changed_slots(old, new).antonym_flipped


@pytest.mark.parametrize(("old", "new"), NEGATED)
def test_a_claim_negated_by_a_prefix_or_an_opposite_is_a_conflict(old: str, new: str) -> None:
    assert judge(old, new)[0] is Verdict.CONFLICT
    assert judge(new, old)[0] is Verdict.CONFLICT


def test_a_denial_ending_a_sentence_added_denies_only_its_own_word() -> None:
    """A "Probably not." ending the text denies the word before it, not the note's claim before that."""
    old = "We use Redis for sessions."
    assert judge(old, "We use Redis for sessions. Memcached? Probably not.")[0] is Verdict.RESTATEMENT
    assert judge("Of course.", "Of course not.")[0] is Verdict.CONFLICT


def test_the_same_denial_in_other_words_is_a_duplicate() -> None:
    assert judge(*SAID_AGAIN[2])[0] is Verdict.DUPLICATE
    assert judge("We don't log tokens.", "We don\u2019t log tokens.")[0] is Verdict.DUPLICATE
    assert judge("We don\u2019t log tokens.", "We don?t log tokens.")[0] is Verdict.DUPLICATE  # an encoding lost it
    assert judge("We dont log tokens.", "We don't log tokens.")[0] is Verdict.DUPLICATE  # typed without it
    # a contraction written out is the same denial ("do not", "can not", "will not")
    assert judge("We don't log tokens.", "We do not log tokens.")[0] is Verdict.DUPLICATE
    assert (
        judge("Users cannot disable two-factor auth.", "Users can't disable two-factor auth.")[0] is Verdict.DUPLICATE
    )
    assert judge("The worker won't retry on a 404.", "The worker will not retry on a 404.")[0] is Verdict.DUPLICATE
    # "not" / "never" is no phrase a model weighs (it put them at 0.41, another value)
    old, new = "The cache is not warm.", "The cache is never warm."
    assert judge(old, new, 0.9, {("not", "never"): 0.41})[0] is Verdict.DUPLICATE


def test_a_question_tag_denies_nothing_and_a_proposal_keeps_its_denial() -> None:
    assert plain("We use Redis for sessions, don't we?") == "We use Redis for sessions?"
    assert plain("but we do don't we") == "but we do"
    assert plain("So why don't we?") == "So why do not we?"  # a proposal, not a tag
    assert plain("Can't we?") == "can not we?"  # opens its sentence: no claim before it to tag
    assert judge("We don't deploy on Fridays.", "We deploy on Fridays, don't we?")[0] is Verdict.CONFLICT


def test_a_bound_said_with_a_denial_is_the_bound_before_a_number_only() -> None:
    assert plain("Uploads cannot exceed 10 MB.") == "Uploads at most 10 MB."
    assert plain("We keep a minimum of two replicas.") == "We keep at least two replicas."
    assert plain("This is no more than a guess.") == "This is no more than a guess."  # no number: no bound
    assert plain("It is up to you.") == "It is up to you."


def test_a_short_note_sharing_one_word_with_another_is_no_frame() -> None:
    """It was a conflict: two phrases put in place of all but "session" were read as one sentence's frame."""
    assert judge("Sticky sessions broke blue-green deploys.", "Write the session outage runbook.")[0] is (
        Verdict.UNRELATED
    )


@pytest.mark.parametrize(
    ("old", "new", "put"),
    [
        ("The flag is false.", "The flag is off.", ("false", "off")),
        ("The flag is on.", "The flag is enabled.", ("on", "enabled")),
        ("The feature is done.", "The feature is complete.", ("done", "complete")),
        ("The payments service is up.", "The payments service is online.", ("up", "online")),
        ("The PR is waiting on review.", "The PR is blocked on review.", ("waiting", "blocked")),
        ("The login bug is fixed.", "The login bug is resolved.", ("fixed", "resolved")),
    ],
)
def test_a_state_said_with_another_of_its_names_is_a_duplicate(old: str, new: str, put: tuple[str, str]) -> None:
    """Short notes, one word put in place: too few words shared to be a repeat by their wording, and a model weighs
    "false" / "off" as other values (0.30). Every other word kept, the same state is the same claim, with or without
    a model (its cosine of the two texts here: 0.70)."""
    assert judge(old, new)[0] is Verdict.DUPLICATE
    assert judge(old, new, 0.70, {put: 1.0})[0] is Verdict.DUPLICATE


def test_one_word_put_in_place_of_one_in_a_short_note_is_another_value_when_a_model_weighs_it_so() -> None:
    """It was stored beside the old note with the model ("We use pnpm …" / "We use yarn …"): a short note's frame
    counted only an opposite or a name, and "yarn" is neither (the model weighs the pair 0.22, the texts 0.53)."""
    old, new = "We use pnpm for the frontend.", "We use yarn for the frontend."
    assert judge(old, new, 0.53, {("pnpm", "yarn"): 0.22})[0] is Verdict.CONFLICT
    assert judge(old, new, 0.53, {("pnpm", "yarn"): 0.9})[0] is not Verdict.CONFLICT  # a synonym
    # a model weighs phrases of several words low as readily for a synonym
    old, new, put = "The build did not change.", "The build stayed the same.", ("did not change", "stayed the same")
    assert judge(old, new, 0.6, {put: 0.3})[0] is not Verdict.CONFLICT


def test_a_state_is_read_only_where_every_other_word_is_kept() -> None:
    """A state is read in a sentence kept word for word: "on" and "up" are in most notes."""
    assert judge("The worker is up.", "The worker is on.")[0] is not Verdict.CONFLICT  # two kinds of state
    assert not changed_slots("The proxy is up and running.", "The proxy is up and online now.").antonym_flipped
