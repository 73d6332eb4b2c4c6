"""The issue's examples of memory that keeps the truth, on every store, with and without an embedding model:
a changed fact is a conflict (never dropped as a duplicate, never stored beside the old one, never an update in
place), a paraphrase is a duplicate, and get_context never shows two contradicting current decisions."""

from __future__ import annotations

import json

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import EmbedderChoice, Settings
from notewell.domain.model import NoteType, Principal
from notewell.ports import Store
from notewell.services.memory import RememberRequest, RememberStatus

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
