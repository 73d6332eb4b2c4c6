"""Hybrid search weighs a model's cosines by its own entry of the calibration table, and fuses by rank a model that
has none (Titan V2 until it is calibrated): the local model's weights are never borrowed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.calibration import CALIBRATIONS, LOCAL_MODEL
from notewell.domain.hybrid import RANK_OFFSET, embedding_text
from notewell.services.search import SearchMode

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from notewell.adapters.system import FixedClock


HOSTING = "We deploy the frontend to Vercel from the main branch."


class NamedEmbedder(HashEmbedder):
    """The hash embedder's vectors under another model's id."""

    def __init__(self, model_id: str) -> None:
        super().__init__()
        self._model_id = model_id


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "notewell.db")
    yield store
    store.close()


def scores(store: SqliteStore, clock: FixedClock, model_id: str) -> dict[str, float]:
    services = bootstrap(Settings(), store=store, clock=clock, embedder=NamedEmbedder(model_id))
    workspace = services.auth.create_workspace(model_id)
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    titles = {}
    for title, body in [
        ("Frontend hosting", HOSTING),
        ("Billing", "Invoices are stored as integer cents."),
        ("Backend", "The API runs on Lambda behind API Gateway."),
    ]:
        titles[services.notes.create(me, "p", title=title, body=body).note.id] = title
    outcome = services.search.run(me, "p", "deploy frontend vercel", semantic=True)
    assert outcome.mode is SearchMode.HYBRID
    return {titles[h.note.id]: h.score for h in outcome.hits}


def test_a_model_never_calibrated_is_fused_by_rank(sqlite: SqliteStore, clock: FixedClock) -> None:
    found = scores(sqlite, clock, "amazon.titan-embed-text-v2:0/1024")
    # first in both legs: one over the offset plus one, twice; no weight tuned on another model's cosines enters
    assert found["Frontend hosting"] == round(2 / (RANK_OFFSET + 1), 4)
    assert max(found.values()) == found["Frontend hosting"]


def test_the_local_model_is_weighed_by_its_own_entry(sqlite: SqliteStore, clock: FixedClock) -> None:
    found = scores(sqlite, clock, LOCAL_MODEL)
    weights = CALIBRATIONS[LOCAL_MODEL].hybrid
    assert weights is not None
    query, note = HashEmbedder().embed(["deploy frontend vercel", embedding_text("Frontend hosting", HOSTING)])
    cosine = sum(q * n for q, n in zip(query, note, strict=True))
    # the best keyword score, scaled to 1, mixed with the note's cosine by the local model's own weight
    assert found["Frontend hosting"] == round(weights.vector * cosine + (1 - weights.vector), 4)
    assert max(found.values()) == found["Frontend hosting"]
