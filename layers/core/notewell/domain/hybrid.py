"""Hybrid retrieval: one ranking from a keyword list and a vector list, shared by every store and search index.

With the model's weights (domain/calibration.py), each leg is put on an absolute scale of [0, 1] before they are
mixed, so that a leg with little to say for a query says little:

* the keyword leg (BM25, unbounded) as the share of the query's ceiling a note reaches, where the ceiling is what a
  note holding every query word the project holds would score at saturation (the sum of their idf times k1 + 1).
  A note holding the query's rare words scores near 1; the best note for a 500-character dialogue, which matches a
  tenth of its words, scores near 0.1, where scaling by the best hit made it 1 and let a weak leg's noise in at
  full weight. An index that cannot tell its ceiling (OpenSearch, the in-process scan) is scaled by its best hit.
* the vector leg as the cosine itself, clipped at 0: it is absolute already, on the model's own scale (why the
  weights are per model).

Each leg proposes a pool of candidates; a note one leg did not propose scores that leg's floor: 0 when the leg
listed everything it matched, else the lowest score it listed (the note ranks below it there), so a note deep in
one list but high in the other is fused on both legs' evidence, not on one.

One structural signal is added on top: the names a query gives (a person, a product, a service: capitals
mid-sentence, domain/admission/text.py) and the share of them a note mentions, each name weighed by how few of
the proposed notes mention it. "What did Lisa say about the exam"
is about Lisa's notes even where another note's words and meaning are closer.

A model without weights is fused by rank instead (reciprocal-rank fusion): weights measured on one model's cosines
would mix another model's at the wrong strength (a model whose cosines crowd near 0.3 would be drowned by the
keyword leg, one whose unrelated notes score 0.5 would drown it), while ranks mean the same for every model. The
names a query gives count there as a third ranked list: notes by the share of the names they mention.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain.admission.text import sentences_of, tokens_of
from notewell.domain.rules import words

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from notewell.domain.calibration import HybridWeights

# Reciprocal-rank fusion's constant (Cormack, Clarke and Buettcher, SIGIR 2009): a note at rank r of a list scores
# 1 / (RANK_OFFSET + r). It is a count of ranks, the same whatever model gave the list.
RANK_OFFSET = 60


@dataclass(frozen=True, slots=True)
class Fused:
    note_id: str
    score: float
    keyword: float  # the note's keyword score on the leg's [0, 1] scale; its floor when only the vector leg found it
    vector: float  # its cosine (clipped at 0); the leg's floor when only the keyword leg found it


def fuse(
    keyword: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    limit: int,
    *,
    weights: HybridWeights | None,
    named: Mapping[str, float] | None = None,
    keyword_ceiling: float | None = None,
    pool: int | None = None,
) -> list[Fused]:
    """The best `limit` notes of both legs, best first (ties: note id), each leg given as (note id, score), best
    first. `weights`: the embedding model's weights, None to fuse by rank. `named`: by note id, the share of the
    query's names the note mentions (named_shares). `keyword_ceiling`: the keyword score of a note holding every
    query word (None: unknown, the leg is scaled by its best). `pool`: how many each leg was asked for; a leg that
    listed that many stopped early."""
    ceiling = keyword_ceiling if keyword_ceiling else max((score for _, score in keyword), default=0.0)
    scaled_keyword = {note_id: min(score / ceiling, 1.0) for note_id, score in keyword} if ceiling > 0 else {}
    cosine = {note_id: max(score, 0.0) for note_id, score in vector}
    keyword_floor = _floor(scaled_keyword, pool)
    vector_floor = _floor(cosine, pool)
    named = named or {}
    note_ids = dict.fromkeys([*(n for n, _ in keyword), *(n for n, _ in vector)])
    if weights is None:
        naming = sorted(((note_id, share) for note_id, share in named.items() if share > 0), key=lambda n: -n[1])
        score = _reciprocal_ranks([keyword, vector, naming])
    else:
        score = {
            note_id: weights.vector * cosine.get(note_id, vector_floor)
            + (1 - weights.vector) * scaled_keyword.get(note_id, keyword_floor)
            + weights.entity * named.get(note_id, 0.0)
            for note_id in note_ids
        }
    fused = [
        Fused(
            note_id,
            score.get(note_id, 0.0),
            scaled_keyword.get(note_id, keyword_floor),
            cosine.get(note_id, vector_floor),
        )
        for note_id in note_ids
    ]
    fused.sort(key=lambda f: (-f.score, f.note_id))
    return fused[:limit]


def _floor(scores: Mapping[str, float], pool: int | None) -> float:
    """What a note a leg did not list scores on it: 0 when the leg listed all it found, its lowest listed score when
    it stopped at `pool` (the note ranks below that there)."""
    return min(scores.values()) if pool is not None and scores and len(scores) >= pool else 0.0


def _reciprocal_ranks(lists: Sequence[Sequence[tuple[str, float]]]) -> dict[str, float]:
    """Each note's sum over `lists` (each best first) of 1 / (RANK_OFFSET + its rank there). Notes with equal
    scores in a list share its rank: a tie there is no reason to put one first."""
    total: dict[str, float] = {}
    for ranked in lists:
        rank, previous = 0, None
        for position, (note_id, value) in enumerate(ranked, start=1):
            if value != previous:
                rank, previous = position, value
            total[note_id] = total.get(note_id, 0.0) + 1 / (RANK_OFFSET + rank)
    return total


def query_names(query: str) -> frozenset[str]:
    """The names a query gives (casefolded): words capitalised mid-sentence or inside (Lisa, GraphQL, Postgres)."""
    return frozenset(
        t.text.casefold()
        for s in sentences_of(query)
        for t in tokens_of(s)
        if t.kind == "name" and not t.text.islower()
    )


def named_shares(names: frozenset[str], texts: Mapping[str, str]) -> dict[str, float]:
    """By note id, the share of `names` each text mentions (in any case; 0 without names), each name counting by how
    few of `texts` (the notes proposed) mention it: one they all mention ("Kafka" in a Kafka shop) tells none of
    them apart, and must not lift them over a note that says "MSK"."""
    if not names:
        return dict.fromkeys(texts, 0.0)
    said = {note_id: names & set(words(text)) for note_id, text in texts.items()}
    found = Counter(name for mentioned in said.values() for name in mentioned)
    weight = {name: math.log1p(len(texts) / count) / math.log1p(len(texts)) for name, count in found.items()}
    return {note_id: sum(weight[n] for n in mentioned) / len(names) for note_id, mentioned in said.items()}


# A note's vector sees its title and the start of its body: small models read a few hundred tokens at most, and the
# start of a note is where it says what it is about.
EMBEDDED_BODY_CHARS = 1_500


def embedding_text(title: str, body: str) -> str:
    """What a note's vector is computed from; remember embeds new content the same way before it is a note."""
    start = body[:EMBEDDED_BODY_CHARS].strip()
    if not start or start.startswith(title.strip()):
        return start or title
    return f"{title}\n{start}"
