"""Hybrid retrieval: one ranking from a keyword list and a vector list, shared by every store and search index.

Each leg is scaled to [0, 1] before they are mixed: keyword scores (BM25, unbounded) by the leg's best score, vector
scores (cosine) as they are, clipped at 0. A min-max weighted sum beat reciprocal-rank fusion on dialogue memory
(RRF throws away how far ahead the best hits are, and lets the weaker leg's noise in at full weight); `VECTOR_WEIGHT`
is tuned on the tune split of the retrieval set (tests/quality).

One structural signal is added on top: the names a query gives (a person, a product, a service: capitals
mid-sentence, domain/admission/text.py) and the share of them a note mentions. "What did Lisa say about the exam"
is about Lisa's notes even where another note's words and meaning are closer. `ENTITY_WEIGHT` is tuned on the
same split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain.admission.text import sentences_of, tokens_of
from notewell.domain.rules import words

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

VECTOR_WEIGHT = 0.85
ENTITY_WEIGHT = 0.2


@dataclass(frozen=True, slots=True)
class Fused:
    note_id: str
    score: float
    keyword: float  # the note's keyword score scaled to [0, 1]; 0 when only the vector leg found it
    vector: float  # its cosine; 0 when only the keyword leg found it


def fuse(
    keyword: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    limit: int,
    *,
    vector_weight: float = VECTOR_WEIGHT,
    named: Mapping[str, float] | None = None,
    entity_weight: float = ENTITY_WEIGHT,
) -> list[Fused]:
    """The best `limit` notes of both legs, best first (ties: note id), each leg given as (note id, score).
    `named`: by note id, the share of the query's names the note mentions (named_share)."""
    best = max((score for _, score in keyword), default=0.0)
    scaled_keyword = {note_id: score / best for note_id, score in keyword} if best > 0 else {}
    cosine = {note_id: max(score, 0.0) for note_id, score in vector}
    named = named or {}
    fused = [
        Fused(
            note_id,
            vector_weight * cosine.get(note_id, 0.0)
            + (1 - vector_weight) * scaled_keyword.get(note_id, 0.0)
            + entity_weight * named.get(note_id, 0.0),
            scaled_keyword.get(note_id, 0.0),
            cosine.get(note_id, 0.0),
        )
        for note_id in dict.fromkeys([*(n for n, _ in keyword), *(n for n, _ in vector)])
    ]
    fused.sort(key=lambda f: (-f.score, f.note_id))
    return fused[:limit]


def query_names(query: str) -> frozenset[str]:
    """The names a query gives (casefolded): words capitalised mid-sentence or inside (Lisa, GraphQL, Postgres)."""
    return frozenset(
        t.text.casefold()
        for s in sentences_of(query)
        for t in tokens_of(s)
        if t.kind == "name" and not t.text.islower()
    )


def named_share(names: frozenset[str], text: str) -> float:
    """The share of `names` that `text` mentions, in any case (0 when there are no names)."""
    return len(names & set(words(text))) / len(names) if names else 0.0


# A note's vector sees its title and the start of its body: small models read a few hundred tokens at most, and the
# start of a note is where it says what it is about.
EMBEDDED_BODY_CHARS = 1_500


def embedding_text(title: str, body: str) -> str:
    """What a note's vector is computed from; remember embeds new content the same way before it is a note."""
    start = body[:EMBEDDED_BODY_CHARS].strip()
    if not start or start.startswith(title.strip()):
        return start or title
    return f"{title}\n{start}"
