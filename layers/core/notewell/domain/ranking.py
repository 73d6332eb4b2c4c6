"""In-process ranking for stores without a full-text index: Okapi BM25 and a casefolded substring match."""

from __future__ import annotations

import functools
import heapq
import math
from collections import Counter
from typing import TYPE_CHECKING

from notewell.domain.admission.vocabulary import vocabulary
from notewell.domain.model import Note, SearchHit
from notewell.domain.rules import excerpt, word_matches, words
from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Sequence

K1 = 1.2  # Lucene defaults
B = 0.75
SNIPPET_CHARS = 200


def tokens(text: str) -> list[str]:
    """The full-text index's words (rules.words), each reduced to its Porter stem as SQLite's index does: both
    search modes and remember agree on what a word is."""
    return [stem(word) for word in words(text)]


# Only the start of a long body is ranked in process: enough to judge relevance, bounded in cost.
RANKED_BODY_CHARS = 4_000


def _document(note: Note) -> Counter[str]:
    """The note's stemmed terms with their counts (read-only: shared between calls)."""
    return _term_counts(note.title, " ".join(note.tags), note.body[:RANKED_BODY_CHARS])


# get_context ranks much the same candidates on every call: their term counts are kept (bounded, thread-safe).
@functools.lru_cache(maxsize=8_192)
def _term_counts(title: str, tags: str, body: str) -> Counter[str]:
    # The title counts twice: a title hit says more about a note than a body hit.
    return Counter(tokens(title) * 2 + tokens(tags) + tokens(body))


SNIPPET_SCAN_CHARS = 4_000  # how far a snippet looks for a query word by its stem: ~600 words, a fraction of a ms


def snippet_around(body: str, terms: Sequence[str], limit: int = SNIPPET_CHARS) -> str:
    """`limit` characters of `body` from just before the first of `terms` (stems, or a substring), else its start.
    A stem is looked for as written, then as the stem of the body's words: "retry" stems to "retri", which the
    word itself does not contain."""
    lowered = body.casefold()
    positions = [at for term in terms if (at := lowered.find(term)) >= 0]
    scanned = lowered[:SNIPPET_SCAN_CHARS]
    if not positions and any(term[:-1] in scanned for term in terms if len(term) > 3):  # a word there may fit
        wanted = frozenset(terms)
        matched = (m.start() for m in word_matches(scanned) if stem(m[0]) in wanted)
        positions = [at] if (at := next(matched, -1)) >= 0 else []
    if not positions:
        return excerpt(body, limit)
    start = max(0, min(positions) - limit // 4)
    text = excerpt(body[start:], limit)
    return ("…" + text) if start > 0 else text


def bm25(notes: Sequence[Note], query: str, limit: int) -> list[SearchHit]:
    """Rank `notes` against `query`; notes sharing no term with the query are left out."""
    terms = list(dict.fromkeys(tokens(query)))
    if not terms or not notes:
        return []
    documents = [_document(note) for note in notes]
    lengths = [sum(doc.values()) for doc in documents]
    average = (sum(lengths) / len(lengths)) or 1.0
    count = len(notes)
    frequency = {term: sum(1 for doc in documents if term in doc) for term in terms}
    scored: list[tuple[float, int]] = []
    for index, doc in enumerate(documents):
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if not tf:
                continue
            df = frequency[term]
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[index] / average))
        if score > 0:
            scored.append((score, index))
    scored.sort(key=lambda item: (-item[0], notes[item[1]].id))
    return [
        SearchHit(notes[index], round(score, 4), snippet_around(notes[index].body, terms))
        for score, index in scored[:limit]
    ]


def substring(notes: Sequence[Note], query: str, limit: int) -> list[SearchHit]:
    """Last-resort match: the whole query, casefolded, inside title, tags or body; newest first."""
    needle = query.casefold().strip()
    hits: list[SearchHit] = []
    for note in notes:
        haystack = f"{note.title}\n{' '.join(note.tags)}\n{note.body}".casefold()
        if needle and needle in haystack:
            hits.append(SearchHit(note, 1.0, snippet_around(note.body, [needle])))
            if len(hits) >= limit:
                break
    return hits


CANDIDATE_TERMS = 8  # words of the new content used to look up candidates in the search index


def candidate_query(content: str) -> str:
    """A few distinctive words of the content to find candidates in the search index (never the whole text).

    Longer words are rarer, and every word in the query widens the index's match set, so a handful of the longest
    content words finds the notes that restate or contradict this one at a fraction of the cost of all of them.
    They are the index's own words (words: 'alpha123' whole, 'foo_bar' two). Half come from the start of the
    content, the part every search mode ranks, so content stored before always finds the note that holds it; the
    rest from the whole, so a long text that restates a note further down still finds it.
    """
    start = _longest(words(content[:RANKED_BODY_CHARS]), CANDIDATE_TERMS // 2)
    whole = words(content)
    chosen = list(dict.fromkeys([*start, *_longest(whole, CANDIDATE_TERMS)]))[:CANDIDATE_TERMS]
    return " ".join(chosen) or " ".join(whole[:CANDIDATE_TERMS])


def _longest(words: list[str], count: int) -> list[str]:
    function = vocabulary().function_words
    # two letters are a word of substance too ("The PR is pending." / "… merged." share only "PR")
    distinct = dict.fromkeys(w for w in words if w not in function and len(w) > 1)
    return heapq.nlargest(count, distinct, key=len)  # ties keep text order, in linear time on long content
