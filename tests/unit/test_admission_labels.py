"""remember's admission rules against the labelled pairs: accuracy per class, reversals always conflicts."""

from __future__ import annotations

from collections import Counter

import pytest

from notewell.domain.admission import Verdict, derive_title, judge
from tests.unit.admission_labels import LABELLED


def accuracy_by_class() -> dict[str, tuple[int, int]]:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for label, old, new, expected in LABELLED:
        verdict, _ = judge(old, new)
        total[label] += 1
        right[label] += verdict.value == expected
    return {label: (right[label], total[label]) for label in total}


def test_the_labelled_set_is_large_and_covers_every_class() -> None:
    classes = Counter(label for label, *_ in LABELLED)
    assert len(LABELLED) >= 60
    assert set(classes) == {
        "restatement", "elaboration", "exact_duplicate", "near_duplicate", "reversal", "negation",
        "changed_number", "unrelated",
    }  # fmt: skip
    assert min(classes.values()) >= 8


@pytest.mark.parametrize(("label", "old", "new", "expected"), [p for p in LABELLED if p[0] == "reversal"])
def test_every_reversal_is_a_conflict_never_an_update(label: str, old: str, new: str, expected: str) -> None:
    assert judge(old, new)[0] is Verdict.CONFLICT


@pytest.mark.parametrize(
    ("label", "old", "new", "expected"), [p for p in LABELLED if p[0] in ("negation", "changed_number")]
)
def test_no_contradiction_ever_updates_the_old_note(label: str, old: str, new: str, expected: str) -> None:
    assert judge(old, new)[0] is not Verdict.RESTATEMENT


def test_accuracy_per_class() -> None:
    scores = accuracy_by_class()
    report = ", ".join(f"{label} {ok}/{n}" for label, (ok, n) in sorted(scores.items()))
    overall = sum(ok for ok, _ in scores.values()) / sum(n for _, n in scores.values())
    assert overall >= 0.9, report
    for label, (ok, n) in scores.items():
        assert ok / n >= 0.75, f"{label}: {report}"


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
