"""remember's admission rules against the labelled pairs, with the model's meaning and with words alone: every
pair at the verdict it has now, contradictions always conflicts (never absorbed, never an update)."""

from __future__ import annotations

from collections import Counter

import pytest

from notewell.domain.admission import Verdict, derive_title, judge, weighing_matters
from notewell.domain.slots import changed_slots
from tests.unit.admission_labels import COSINE, LABELLED, PHRASE_COSINE, replacements_of_pair

CONTRADICTIONS = ("reversal", "negation", "changed_number", "swapped_value")
# Where words alone (a store with no model) answer otherwise than with the model: paraphrases and a word swapped
# for a synonym are stored as new notes (never absorbed, never a conflict: a sentence turned around without
# its parts trading places across what relates them is no reversal).
WORDS_ONLY: dict[tuple[str, str], str] = {
    **{(old, new): "created" for label, old, new, _ in LABELLED if label == "paraphrase"},
    **{(old, new): "created" for label, old, new, _ in LABELLED if label == "synonym" and new in (
        "The nightly backup gets copied to a second region.", "Reviewers check each migration before it is merged.",
        "Uploads are stored in S3 via the uploads service.", "The mobile app talks to the API via the gateway.",
        "All money amounts get stored as integer cents.",
    )},
}  # fmt: skip
# Where even the model misses (kept visible, so a change that fixes or breaks them shows).
WITH_MODEL: dict[tuple[str, str], str] = {
    ("Use Python 3.12 for all Lambdas.", "All Lambda functions run on Python 3.12."): "created",
    # The phrases weigh 0.5 and 0.65: between a synonym and another value, so stored rather than judged.
    ("Invoices are stored as integer cents.", "Invoice amounts are kept in integer cents."): "created",
}


def judged(old: str, new: str, *, model: bool) -> Verdict:
    """The verdict remember gives: with the model, the texts' cosine and the cosine of each phrase it weighs."""
    if not model:
        return judge(old, new)[0]
    return judge(old, new, COSINE[(old, new)], {p: PHRASE_COSINE[p] for p in replacements_of_pair(old, new)})[0]


def expected(old: str, new: str, label_verdict: str, *, model: bool) -> str:
    overrides = WITH_MODEL if model else WORDS_ONLY
    return overrides.get((old, new), label_verdict)


def accuracy_by_class(*, model: bool) -> dict[str, tuple[int, int]]:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for label, old, new, label_verdict in LABELLED:
        verdict = judged(old, new, model=model)
        total[label] += 1
        right[label] += verdict.value == label_verdict
    return {label: (right[label], total[label]) for label in total}


def test_the_labelled_set_is_large_and_covers_every_class() -> None:
    classes = Counter(label for label, *_ in LABELLED)
    assert len(LABELLED) >= 64
    assert set(classes) == {
        "restatement", "elaboration", "exact_duplicate", "near_duplicate", "reversal", "negation",
        "changed_number", "swapped_value", "paraphrase", "synonym", "unrelated",
    }  # fmt: skip
    assert min(classes.values()) >= 8
    assert set(COSINE) == {(old, new) for _, old, new, _ in LABELLED}


@pytest.mark.parametrize("model", [True, False], ids=["with-model", "words-only"])
@pytest.mark.parametrize(("label", "old", "new", "verdict"), LABELLED)
def test_every_pair_keeps_its_verdict(label: str, old: str, new: str, verdict: str, model: bool) -> None:
    assert judged(old, new, model=model).value == expected(old, new, verdict, model=model)


@pytest.mark.parametrize("model", [True, False], ids=["with-model", "words-only"])
@pytest.mark.parametrize(("label", "old", "new", "verdict"), [p for p in LABELLED if p[0] in CONTRADICTIONS])
def test_a_contradiction_is_never_absorbed(label: str, old: str, new: str, verdict: str, model: bool) -> None:
    assert judged(old, new, model=model) not in (Verdict.DUPLICATE, Verdict.RESTATEMENT)


@pytest.mark.parametrize(
    ("label", "old", "new", "verdict"),
    [p for p in LABELLED if p[0] in CONTRADICTIONS and (p[1], p[2]) not in WORDS_ONLY],
)
def test_a_high_similarity_never_hides_a_changed_slot(label: str, old: str, new: str, verdict: str) -> None:
    """Even a model that calls the two claims identical does not turn a changed value into a duplicate (a lower-case
    word swapped in place, like a region, is told by the model's own figure: WORDS_ONLY)."""
    assert judge(old, new, 0.99)[0] is Verdict.CONFLICT


def test_the_original_classes_are_all_right_and_the_model_adds_paraphrases() -> None:
    with_model, words = accuracy_by_class(model=True), accuracy_by_class(model=False)
    original = {"restatement", "elaboration", "exact_duplicate", "near_duplicate", "reversal", "negation",
                "changed_number", "unrelated"}  # fmt: skip
    for label in original:
        assert with_model[label][0] == words[label][0] == with_model[label][1], label
    assert with_model["paraphrase"][0] >= 6 > words["paraphrase"][0]
    assert with_model["synonym"] == (8, 8)
    assert with_model["swapped_value"] == (9, 9)


def test_the_recorded_cosines_are_what_the_packaged_model_gives() -> None:
    from notewell.adapters.onnx_embedder import load_local_embedder

    model = load_local_embedder()
    assert model is not None
    pairs = list(COSINE.items())[::9]  # a sample: the whole set takes a second
    for (old, new), cosine in pairs:
        a, b = model.embed([old, new])
        assert sum(x * y for x, y in zip(a, b, strict=True)) == pytest.approx(cosine, abs=0.002)
    for (old, new), cosine in list(PHRASE_COSINE.items())[::5]:
        a, b = model.embed([old, new])
        assert sum(x * y for x, y in zip(a, b, strict=True)) == pytest.approx(cosine, abs=0.002)


# Every labelled pair against the new text of another: mostly texts about other things, some sharing words.
CROSSED = [(old, LABELLED[(i * 7 + 3) % len(LABELLED)][2]) for i, (_, old, _, _) in enumerate(LABELLED)]


@pytest.mark.parametrize("meaning", [None, 0.2, 0.5, 0.69, 0.75, 0.9])
def test_texts_out_of_reach_are_unrelated_whatever_their_phrases_weigh(meaning: float | None) -> None:
    """judge() stops early for texts out of each other's reach, and remember skips weighing their phrases
    (weighing_matters): neither may change a verdict, whatever the phrases weigh (a synonym, another value,
    between) or if they were never weighed."""
    out_of_reach = 0
    for old, new in [*((old, new) for _, old, new, _ in LABELLED), *CROSSED]:
        pairs = replacements_of_pair(old, new)
        for weights in ({}, *({p: weight for p in pairs} for weight in (0.1, 0.65, 0.9))):
            full = judge(old, new, meaning, weights, shortcut=False)[0]
            assert judge(old, new, meaning, weights)[0] is full, (old, new, weights)
            if not weighing_matters(old, new, meaning):
                assert full is judge(old, new, meaning, {}, shortcut=False)[0] is Verdict.UNRELATED, (old, new)
        out_of_reach += not weighing_matters(old, new, meaning)
    if meaning is None or meaning < 0.7:
        assert out_of_reach >= len(CROSSED) // 2  # most candidates about other things are spared the slot analysis


def test_the_labelled_pairs_that_need_their_phrases_weighed_get_them() -> None:
    for label, old, new, _ in LABELLED:
        if label in ("synonym", "swapped_value"):
            assert weighing_matters(old, new, COSINE[(old, new)]), (old, new)


def test_every_weighed_phrase_has_its_recorded_cosine() -> None:
    assert {p for _, old, new, _ in LABELLED for p in replacements_of_pair(old, new)} == set(PHRASE_COSINE)


@pytest.mark.parametrize(
    ("content", "title"),
    [
        ("Use opaque tokens for API sessions. JWTs cannot be revoked.", "Use opaque tokens for API sessions"),
        ("## Decision\n\nWe deploy with **SAM** only.", "Decision"),
        ("- retry webhooks 5 times", "Retry webhooks 5 times"),
        (
            "The billing service is the only writer to the invoices table, and every other service reads it "
            "through the billing API with a service token",
            "The billing service is the only writer to the invoices table",
        ),
        (
            "Sessions are stored server side in Redis with a sliding expiry that is refreshed on every request "
            "from the mobile and web clients",
            "Sessions are stored server side in Redis with a sliding expiry",
        ),
    ],
)
def test_titles_are_short_and_never_end_in_a_fragment(content: str, title: str) -> None:
    derived = derive_title(content)
    assert derived == title
    assert len(derived) <= 80


@pytest.mark.parametrize("content", [",-", "...", "# \n\n- ", "!!!"])
def test_content_without_words_gets_a_placeholder_title(content: str) -> None:
    assert derive_title(content) == "Untitled note"


@pytest.mark.parametrize("meaning", [None, 0.97], ids=["words-only", "model-calls-them-alike"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("This scheme is far from perfect.", "This scheme is perfect."),
        ("Results may be cached for a day.", "Results are cached for a day."),
        ("The queue is mostly idle at night.", "The queue is idle at night."),
        ("Only admins can rotate the signing key.", "Admins can rotate the signing key."),
    ],
)
def test_a_claim_repeated_without_its_qualifier_is_not_absorbed(old: str, new: str, meaning: float | None) -> None:
    """A shortened repeat that leaves out what bounded or hedged the claim says something else: a conflict, never a
    duplicate (the model scores such pairs as near-identical)."""
    assert judge(old, new, meaning)[0] is Verdict.CONFLICT


def test_a_claim_shortened_without_losing_a_qualifier_is_still_a_duplicate() -> None:
    old = "We deploy the frontend to Vercel from the main branch."
    assert judge(old, "We deploy the frontend to Vercel.")[0] is Verdict.DUPLICATE
    assert judge(old, "We deploy the frontend to Vercel.", 0.9)[0] is Verdict.DUPLICATE
    aside = "We deploy the frontend, built with Vite, to Vercel."  # a cut that ends on what it said
    assert judge(aside, "We deploy the frontend to Vercel.", 0.9)[0] is Verdict.DUPLICATE
    # a clause dropped whole, even one that holds a contrast
    clause = "The API, built in 2023 but rewritten since, runs on ECS."
    assert judge(clause, "The API runs on ECS.", 0.9)[0] is Verdict.DUPLICATE
    # a relative clause dropped whole, and a clause the note vouches for said alone, keep their subjects
    assert judge("The engineer who wrote the parser left the team.", "The engineer left the team.", 0.9)[0] is (
        Verdict.DUPLICATE
    )
    assert not changed_slots("The manager knew the engineer broke the build.", "The engineer broke the build.").changed
    # what was decided is what is done: the "to" of "decided to" hands its verb to no other phrase
    decided = "We decided to keep Redis for sessions."
    assert judge(decided, "We keep Redis for sessions.", 0.9)[0] is Verdict.DUPLICATE
    assert judge(decided, "We keep Redis for sessions.")[0] is not Verdict.CONFLICT


@pytest.mark.parametrize("meaning", [None, 0.95], ids=["words-only", "model-calls-them-alike"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The facade is made of fiberglass aged to look like real brick.", "The facade is made of real brick."),
        ("The top curve holds the base wage and the bottom curve nets out the overhead.",
         "The top curve holds the overhead."),
        # a cut from inside one clause to inside the one set against it joins halves that say the opposite
        ("The API service is fast but the database is slow.", "The API service is slow."),
        ("The staging cluster runs Kubernetes, while production runs on ECS.", "The staging cluster runs on ECS."),
        # and across an "and" that joins two clauses
        ("Staging runs on ARM and production runs on x86.", "Staging runs on x86."),
        ("Reads go to the replica and writes go to the primary.", "Reads go to the primary."),
        # a clause's subject cut away with the verb or the noun it hung on: its verb now tells of another subject
        ("The manager knew the engineer broke the build.", "The manager broke the build."),
        ("Alice thinks the intern deleted the bucket.", "Alice deleted the bucket."),
        ("The lawyer who the client called approved the contract.", "The client approved the contract."),
        ("The service which the team owns handles billing.", "The team handles billing."),
    ],
)  # fmt: skip
def test_a_cut_that_hands_what_follows_to_another_word_is_not_absorbed(
    old: str, new: str, meaning: float | None
) -> None:
    """Words cut out up to a word that took what follows ("like real brick"): what is left says another thing."""
    assert judge(old, new, meaning)[0] is Verdict.CONFLICT


@pytest.mark.parametrize("meaning", [None, 0.95], ids=["words-only", "model-calls-them-alike"])
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The API service is slow.", "The API service is fast but the database is slow."),
        ("Staging runs on x86.", "Staging runs on ARM and production runs on x86."),
        ("The manager broke the build.", "The manager knew the engineer broke the build."),
        ("The client approved the contract.", "The lawyer who the client called approved the contract."),
    ],
)  # fmt: skip
def test_the_same_words_put_in_are_no_update(old: str, new: str, meaning: float | None) -> None:
    """They were `updated`: the longer text overwrote the note with a claim that says its opposite."""
    assert judge(old, new, meaning)[0] is Verdict.CONFLICT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We deploy the frontend to Vercel.", "We deploy the frontend, built with Vite, to Vercel."),
        ("The API runs on ECS.", "The API, built in 2023 but rewritten since, runs on ECS."),
        ("Logs go to S3.", "Logs go to Kinesis and then to S3."),
    ],
)  # fmt: skip
def test_an_aside_or_a_step_put_in_updates_the_note(old: str, new: str) -> None:
    assert judge(old, new)[0] is Verdict.RESTATEMENT


@pytest.mark.parametrize("meaning", [None, 0.95], ids=["words-only", "model"])
def test_a_status_said_in_the_past_updates_the_note(meaning: float | None) -> None:
    """As a duplicate the news that it happened was dropped and the note still said it would."""
    assert judge("The cert expires in March.", "The cert expired in March.", meaning)[0] is Verdict.RESTATEMENT
    assert judge("The migration will finish on Friday.", "The migration finished on Friday.", meaning)[0] is (
        Verdict.RESTATEMENT
    )
    # a participle is no past: "is directly connected" / "are connected", "camouflaged" / "camouflage"
    assert judge("Terminal 6 is directly connected to the battery.", "Terminal 6 and the battery are connected.",
                 meaning)[0] is not Verdict.RESTATEMENT  # fmt: skip
    assert judge("A camouflage plane on a field.", "A camouflaged plane on a field.", meaning)[0] is Verdict.DUPLICATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We use Postgres for storage and Redis for caching.", "We use Redis for caching."),
        ("The API and the worker run on ECS.", "The worker runs on ECS."),
        ("The team reviewed the design and approved it on Monday.", "The team approved it on Monday."),
        ("The job reads events from Kafka and writes them to S3.", "The job writes them to S3."),
    ],
)  # fmt: skip
def test_one_of_two_things_joined_by_and_left_out_says_less_not_otherwise(old: str, new: str) -> None:
    """A cut across "and" changes the claim only where it joins the start of one clause to the end of the next."""
    assert judge(old, new, 0.95)[0] is Verdict.DUPLICATE
    assert judge(old, new)[0] is not Verdict.CONFLICT


@pytest.mark.parametrize("meaning", [None, 0.95], ids=["words-only", "model"])
def test_a_qualifier_left_out_with_what_it_qualified_leaves_the_claim_as_it_was(meaning: float | None) -> None:
    """Only a qualifier dropped from words that stay bounds the claim otherwise ("mostly idle" -> "idle")."""
    old = "Rotate the signing keys every month, usually before the release."
    assert judge(old, "Rotate the signing keys every month.", meaning)[0] is Verdict.DUPLICATE
