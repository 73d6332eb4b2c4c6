"""remember on every store, with and without the embedding model: a changed fact is a conflict that names its
evidence (never dropped as a duplicate, never an update in place), what no detector can settle is stored beside the
close note for the agent to review, and a judge, where one is configured, settles that band."""

from __future__ import annotations

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.hybrid import embedding_text
from notewell.domain.model import NoteStatus, NoteType, Principal
from notewell.ports import Store, TextLookup
from notewell.services.memory import RememberOutcome, RememberRequest, RememberStatus
from notewell.services.notes import NoteChanges
from tests.support.embedders import CountingEmbedder
from tests.support.judges import ScriptedJudge

POSTGRES = "We use PostgreSQL 16 as the primary database for orders; tests run against SQLite."


@pytest.fixture(params=["none", "local"])
def services(request: pytest.FixtureRequest, store: Store, clock: FixedClock) -> Services:
    choice: EmbedderChoice = request.param
    return bootstrap(Settings(embedder=choice), store=store, clock=clock)


def remember(services: Services, me: Principal, content: str, **extra: object) -> RememberStatus:
    return remembered(services, me, content, **extra).status


def remembered(services: Services, me: Principal, content: str, **extra: object) -> RememberOutcome:
    return services.memory.remember(me, RememberRequest("orders", content, **extra))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("old", "new", "slot", "was", "now"),
    [
        (POSTGRES, "We use MySQL 8 as the primary database for orders; tests run against SQLite.",
         "primary database orders", "PostgreSQL 16", "MySQL 8"),
        ("We deploy the frontend to Vercel.", "We deploy the frontend to Netlify.", "deploy frontend", "Vercel",
         "Netlify"),
        ("Retries are capped at 3.", "Retries are capped at 5 since the provider got flaky.", "Retries capped", "3",
         "5"),
        ("The `new_checkout` flag is on in staging.", "The `new_checkout` flag is off in staging.", "flag", "on",
         "off"),
        ("The Postgres 16 upgrade is in progress.", "The Postgres 16 upgrade is done.", "upgrade", "in progress",
         "done"),
    ],
)  # fmt: skip
def test_a_changed_fact_is_a_conflict_naming_its_evidence_and_both_resolutions(
    services: Services, me: Principal, old: str, new: str, slot: str, was: str, now: str
) -> None:
    first = remembered(services, me, old)
    assert first.status is RememberStatus.CREATED and first.note is not None
    outcome = remembered(services, me, new)
    assert outcome.status is RememberStatus.CONFLICT and outcome.note is None
    assert outcome.existing is not None and outcome.existing.id == first.note.note.id
    assert outcome.evidence is not None and (outcome.evidence.old, outcome.evidence.new) == (was, now)
    assert set(slot.casefold().split()) <= set(outcome.evidence.slot.casefold().split())
    assert f"{was!r} -> {now!r}" in outcome.message
    supersede, force = outcome.resolutions
    assert supersede.arguments["supersedes"] == [first.note.note.id] and force.arguments["force"] is True
    arguments = {**supersede.arguments, "type": NoteType(str(supersede.arguments["type"]))}
    replaced = services.memory.remember(me, RememberRequest(**arguments))  # type: ignore[arg-type]
    assert replaced.status is RememberStatus.CREATED
    assert services.notes.get(me, first.note.note.id).note.status is NoteStatus.SUPERSEDED


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The default branch is main.", "The default branch is master."),
        ("Logs are shipped to Datadog.", "Metrics are shipped to Datadog."),
        ("Log retention is 30 days.", "We keep logs for 90 days."),
        ("Sessions are stored in Redis.", "We no longer use Redis for sessions; they live in Postgres now."),
        ("The `features.search.provider` key is set to `algolia`.",
         "`features.search.provider` is `typesense` in all environments."),
    ],
)  # fmt: skip
def test_what_no_detector_settles_is_stored_beside_the_close_note_for_review(
    services: Services, me: Principal, old: str, new: str
) -> None:
    first = remembered(services, me, old)
    assert first.note is not None
    outcome = remembered(services, me, new)
    assert outcome.status is RememberStatus.CREATED and outcome.note is not None  # a fact is never lost
    assert outcome.review_required is True
    assert [n.id for n in outcome.related] == [first.note.note.id]
    (resolve,) = outcome.resolutions
    assert (resolve.tool, resolve.arguments) == (
        "update_note",
        {"id": outcome.note.note.id, "supersedes": [first.note.note.id]},
    )
    services.notes.update(me, outcome.note.note.id, NoteChanges(supersedes=[first.note.note.id]))  # works as sent
    assert services.notes.get(me, first.note.note.id).note.status is NoteStatus.SUPERSEDED


def test_a_note_about_something_else_is_created_without_review(services: Services, me: Principal) -> None:
    remember(services, me, "The release checklist lives in docs/release.md.")
    outcome = remembered(services, me, "Invoices are generated on the first day of the month.")
    assert outcome.status is RememberStatus.CREATED and outcome.related == [] and outcome.review_required is False


@pytest.mark.parametrize(
    ("old", "new", "status"),
    [
        ("We ship logs to Datadog.", "Logs are shipped to Datadog.", RememberStatus.DUPLICATE),
        ("The API timeout is 30s.", "The API timeout is 30 seconds.", RememberStatus.DUPLICATE),
        ("We deploy the web app to Vercel.",
         "We deploy the web app to Vercel through its GitHub integration; previews are built per PR.",
         RememberStatus.UPDATED),
    ],
)  # fmt: skip
def test_a_repeat_or_an_elaboration_says_what_it_rests_on(
    services: Services, me: Principal, old: str, new: str, status: RememberStatus
) -> None:
    first = remembered(services, me, old)
    outcome = remembered(services, me, new)
    assert outcome.status is status and outcome.evidence is not None
    assert first.note is not None and outcome.existing is not None and outcome.existing.id == first.note.note.id
    if status is RememberStatus.UPDATED:
        assert outcome.evidence.detector == "elaboration" and "GitHub" in outcome.evidence.new
        assert services.notes.get(me, first.note.note.id).note.body == new


def test_a_contradiction_is_never_absorbed_whatever_the_capitals(services: Services, me: Principal) -> None:
    remember(services, me, "retries are capped at 3.")
    assert remember(services, me, "Retries are capped at 3.") is RememberStatus.DUPLICATE
    assert remember(services, me, "RETRIES are capped at 5.") is RememberStatus.CONFLICT


def test_force_stores_a_conflicting_note_beside_the_old_one(services: Services, me: Principal) -> None:
    remember(services, me, "We deploy the frontend to Vercel.")
    outcome = remembered(services, me, "We deploy the frontend to Netlify.", force=True)
    assert outcome.status is RememberStatus.CREATED


# ----- the judge: the review band only, with a fallback ---------------------------------------------------------


def judged(store: Store, clock: FixedClock, judge: ScriptedJudge) -> tuple[Services, Principal]:
    services = bootstrap(Settings(), store=store, clock=clock, judge=judge)
    workspace = services.auth.create_workspace("acme")
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    return services, me


def test_a_judge_turns_a_review_into_a_conflict_with_its_evidence(store: Store, clock: FixedClock) -> None:
    judge = ScriptedJudge("contradicts", slot="default branch", old="main", new="master")
    services, me = judged(store, clock, judge)
    first = remembered(services, me, "The default branch is main.")
    outcome = remembered(services, me, "The default branch is master.")
    assert outcome.status is RememberStatus.CONFLICT and first.note is not None
    assert outcome.existing is not None and outcome.existing.id == first.note.note.id
    assert outcome.evidence is not None and outcome.evidence.detector == "judge (scripted-judge)"
    assert (outcome.evidence.slot, outcome.evidence.old, outcome.evidence.new) == ("default branch", "main", "master")
    assert judge.asked == [("The default branch is main.", "The default branch is master.")]


def test_a_judge_is_never_asked_where_a_detector_decided(store: Store, clock: FixedClock) -> None:
    judge = ScriptedJudge("independent")
    services, me = judged(store, clock, judge)
    remember(services, me, "Retries are capped at 3.")
    assert remember(services, me, "Retries are capped at 5.") is RememberStatus.CONFLICT
    assert remember(services, me, "Retries are capped at 3.") is RememberStatus.DUPLICATE
    assert judge.asked == []


def test_a_judge_that_says_independent_leaves_no_review(store: Store, clock: FixedClock) -> None:
    services, me = judged(store, clock, ScriptedJudge("independent"))
    remember(services, me, "Logs are shipped to Datadog.")
    outcome = remembered(services, me, "Metrics are shipped to Datadog.")
    assert outcome.status is RememberStatus.CREATED and outcome.related == [] and outcome.review_required is False


def test_a_judge_that_says_restates_updates_the_note_with_the_longer_text(store: Store, clock: FixedClock) -> None:
    services, me = judged(store, clock, ScriptedJudge("restates"))
    first = remembered(services, me, "Playwright is our e2e test framework.")
    longer = "We use Playwright for e2e tests, with Chromium and WebKit in CI; traces are kept on failure."
    outcome = remembered(services, me, longer)
    assert outcome.status is RememberStatus.UPDATED and first.note is not None
    assert services.notes.get(me, first.note.note.id).note.body == longer


def test_a_judge_that_does_not_answer_leaves_the_review_to_the_agent(store: Store, clock: FixedClock) -> None:
    judge = ScriptedJudge(None)
    services, me = judged(store, clock, judge)
    first = remembered(services, me, "The default branch is main.")
    outcome = remembered(services, me, "The default branch is master.")
    assert outcome.status is RememberStatus.CREATED and outcome.review_required is True
    assert first.note is not None and [n.id for n in outcome.related] == [first.note.note.id]
    assert len(judge.asked) == 1


def test_force_skips_the_judges_conflict(store: Store, clock: FixedClock) -> None:
    services, me = judged(store, clock, ScriptedJudge("contradicts", slot="branch", old="main", new="master"))
    remember(services, me, "The default branch is main.")
    assert remember(services, me, "The default branch is master.", force=True) is RememberStatus.CREATED


def test_a_checkpoint_item_carries_its_evidence(services: Services, me: Principal) -> None:
    remember(services, me, "Retries are capped at 3.", type=NoteType.DECISION)
    outcome = services.memory.checkpoint(
        me, "orders", summary="Tuned the client.", decisions=["Retries are capped at 5."]
    )
    (item,) = outcome.items
    assert item.outcome.status is RememberStatus.CONFLICT and item.outcome.evidence is not None
    assert (item.outcome.evidence.old, item.outcome.evidence.new) == ("3", "5")


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
