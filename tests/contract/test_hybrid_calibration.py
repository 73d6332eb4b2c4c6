"""Hybrid search weighs a model's cosines by its own entry of the calibration table, and fuses by rank a model that
has none (Titan V2 until it is calibrated): the local model's weights are never borrowed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from notewell.adapters.hash_embedder import HashEmbedder
from notewell.adapters.sqlite import SqliteFullTextIndex, SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.calibration import CALIBRATIONS, LOCAL_MODEL
from notewell.domain.hybrid import RANK_OFFSET, embedding_text
from notewell.domain.model import SearchFilters
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


def scores(store: SqliteStore, clock: FixedClock, model_id: str) -> tuple[dict[str, float], float]:
    """search_notes' hybrid score of each note by title, for "deploy frontend vercel", and the frontend
    note's keyword score as a share of the query's ceiling (domain/hybrid.py), read from the index itself."""
    services = bootstrap(Settings(), store=store, clock=clock, embedder=NamedEmbedder(model_id))
    workspace = services.auth.create_workspace(model_id)
    me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert me is not None
    titles = {}
    project_id = ""
    for title, body in [
        ("Frontend hosting", HOSTING),
        ("Billing", "Invoices are stored as integer cents."),
        ("Backend", "The API runs on Lambda behind API Gateway."),
    ]:
        note = services.notes.create(me, "p", title=title, body=body).note
        titles[note.id], project_id = title, note.project_id
    outcome = services.search.run(me, "p", "deploy frontend vercel", semantic=True)
    assert outcome.mode is SearchMode.HYBRID
    found = {titles[h.note.id]: h.score for h in outcome.hits}
    ranked, ceiling = SqliteFullTextIndex(store).ranked_with_ceiling(
        workspace.id, project_id, "deploy frontend vercel", SearchFilters(), 10
    )
    share = next(score for note_id, score in ranked if titles[note_id] == "Frontend hosting") / ceiling
    return found, share


def test_a_model_never_calibrated_is_fused_by_rank(sqlite: SqliteStore, clock: FixedClock) -> None:
    found, _ = scores(sqlite, clock, "amazon.titan-embed-text-v2:0/1024")
    # first in both legs: one over the offset plus one, twice; no weight tuned on another model's cosines enters
    assert found["Frontend hosting"] == round(2 / (RANK_OFFSET + 1), 4)
    assert max(found.values()) == found["Frontend hosting"]


def test_the_local_model_is_weighed_by_its_own_entry(sqlite: SqliteStore, clock: FixedClock) -> None:
    found, share = scores(sqlite, clock, LOCAL_MODEL)
    weights = CALIBRATIONS[LOCAL_MODEL].hybrid
    assert weights is not None
    query, note = HashEmbedder().embed(["deploy frontend vercel", embedding_text("Frontend hosting", HOSTING)])
    cosine = sum(q * n for q, n in zip(query, note, strict=True))
    # its keyword share of the query's ceiling, mixed with its cosine by the local model's own weight
    assert 0 < share < 1
    assert found["Frontend hosting"] == round(weights.vector * cosine + (1 - weights.vector) * share, 4)
    assert max(found.values()) == found["Frontend hosting"]
