"""A reversal is two parts of a claim trading places across what relates them; other reorderings say the same
thing. Without a model (words alone), as a store with no embeddings judges."""

from __future__ import annotations

import pytest

from notewell.domain.admission import Verdict, judge

REVERSED = [
    ("Kingston replaced Port Royal as the commercial center of the island.",
     "Port Royal replaced Kingston as the commercial center of the island."),
    ("We use opaque tokens instead of JWTs.", "We use JWTs instead of opaque tokens."),
    ("Payments call the ledger.", "The ledger calls payments."),
    ("We deploy to staging before production.", "We deploy to production before staging."),
    ("Traffic moves from the blue fleet to the green fleet.", "Traffic moves from the green fleet to the blue fleet."),
    ("We keep the index of the archive.", "We keep the archive of the index."),
    # "X of" crosses "is" and takes the other part as its complement: who is the subsidiary of whom is swapped
    ("A subsidiary of the ledger team is the billing team.", "The ledger team is a subsidiary of the billing team."),
    ("The owner of the queue is the worker.", "The queue is the owner of the worker."),
    # the passive voice with subject and object where they stood: the roles are swapped
    ("Payments call the ledger service.", "Payments are called by the ledger service."),
    ("The worker chased the stale locks.", "The worker was chased by the stale locks."),
    ("The ledger is called from payments.", "The ledger calls payments."),  # "from" as the agent
    # "replace … with" orders what it takes ("with" pivots only after a verb of replacing)
    ("We replaced Jenkins with GitHub Actions.", "We replaced GitHub Actions with Jenkins."),
    ("We replaced the cron job with a queue worker.", "We replaced the queue worker with a cron job."),
    # a verb and its particle are the compound the other text writes as one word ("log in" / "login")
    ("Verify the email before login.", "Log in before verifying the email."),
    ("Take a backup before the rollback.", "Roll back before backing up."),
    # the old text says more around the two parts: the new one, made of its words only, still reverses it
    ("After the review, payments call the ledger service.", "The ledger service calls payments."),
    ("In the new design, the gateway sits in front of the load balancer.",
     "The load balancer sits in front of the gateway."),
]  # fmt: skip
SAID_AGAIN = [
    ("The worker chased the stale locks.", "The stale locks were chased by the worker."),  # passive voice
    ("The capital of France is Paris.", "Paris is the capital of France."),  # "is" relates both ways
    ("The owner of the queue is the worker.", "The worker is the owner of the queue."),
    ("Payments call the ledger service.", "The ledger service is called by payments."),
    ("Most requests are served from the cache.", "The cache serves most requests."),  # where they come from
    ("The ledger is called from payments.", "Payments call the ledger."),
    # the passive moves everything around its verb across each other: no other word is a pivot
    ("The gap separates the battery from terminal 1.", "Terminal 1 and the battery are separated by the gap."),
    # a word said twice has no one place to cross from
    ("Retry the upload; a failed upload gets one retry.", "A failed upload gets one retry."),
    ("Throttle writes; bursts of writes trigger the throttle.", "Bursts of writes trigger the throttle."),
    # "are standing by" has no verb in the passive voice ("by" is not its agent)
    ("Three children stand near the fence.", "The three children are standing by the fence."),
    ("Make builds faster or cheaper.", "Make builds cheaper or faster."),  # "or" too
    ("A marriage offer.", "An offer of marriage."),  # no shared word between the parts
    ("We paired Alice with Bob for the audit.", "We paired Bob with Alice for the audit."),  # "with" both ways
    ("Verify the email before login.", "Verify the email before logging in."),
    ("After the review, payments call the ledger service.", "The ledger service is called by payments."),
]


@pytest.mark.parametrize(("old", "new"), REVERSED)
def test_parts_trading_places_across_what_relates_them_is_a_conflict(old: str, new: str) -> None:
    assert judge(old, new)[0] is Verdict.CONFLICT


@pytest.mark.parametrize(("old", "new"), SAID_AGAIN)
def test_a_reordering_that_keeps_the_claim_is_never_a_conflict(old: str, new: str) -> None:
    verdict, comparison = judge(old, new)
    assert not comparison.reordered and verdict is not Verdict.CONFLICT
