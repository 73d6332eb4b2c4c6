"""Which words mean the same, from WordNet: the knowledge an embedding model lacks to tell a synonym from a rival.

A sentence model puts "a kid slices an onion" as close to "a child cuts an onion" as to "a child peels an
onion": it cannot tell another word for the same thing from another value in the same slot. WordNet can. Two
phrases are alike when they share a sense, when one names a broader sense of the other within BROADER_STEPS
("guardianship" / "protection", "slicing" / "cutting"), when one is a step from the other, derived from or pertaining
to it ("Syrian" / "Syria", "consider" / "consideration") or listed by WordNet as similar ("tiny" / "small"), or when
one is a misspelling of the other ("batery" / "battery"). Co-hyponyms (guitar / violin, kitchen / bedroom) and
antonyms are not alike: they are the values a conflict is about.

Pure: the text of the lexicon (scripts/build_lexicon.py) comes in, answers go out. Its sections are split into
lines on load and a line is read only when a word is looked up: loading is a few splits, not a parse.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from typing import TYPE_CHECKING

from notewell.domain.similarity import straight
from notewell.domain.slots import STATES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

ALIKE, RIVAL = "alike", "rival"
# How alike a pair the lexicon knows is, on the scale of a model's cosine that admission's thresholds read: a synonym
# weighs fully, a rival (guitar for violin) not at all.
WEIGHTS = {ALIKE: 1.0, RIVAL: 0.0}


def known_weights(
    pairs: Iterable[tuple[str, str]], relation: Callable[[str, str], str | None]
) -> dict[tuple[str, str], float]:
    """How alike each pair (old phrase, new phrase) is that the lexicon knows, alike or rival (WEIGHTS); the pairs it
    cannot say are left out, for a model to weigh or for the judge to leave unweighed."""
    relations = {pair: relation(*pair) for pair in dict.fromkeys(pairs)}
    return {pair: WEIGHTS[r] for pair, r in relations.items() if r in WEIGHTS}


BROADER_STEPS = 2  # "slicing" -> "cutting" is one step; three reach "change" from "amendment", and "room" from both
#                    "kitchen" and "bedroom"'s neighbours: tuned on the tune split (tests/quality)
RIVAL_STEPS = 2  # guitar and violin are one step below "stringed instrument"; kitchen and bedroom below "room"
# Inflections that WordNet's own lookup ("morphy") strips, by part of speech, before it looks a word up.
_ENDINGS = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip
# Words a phrase is made of that say nothing about what it names.
_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "or", "and", "is", "are", "was", "were", "be",
    "been", "being", "it", "its", "this", "that", "these", "those", "as", "from", "can", "may", "will", "would",
    "should", "could", "do", "does", "did", "has", "have", "had", "not", "no", "never",
})  # fmt: skip  # negations too: whether a claim is negated is the similarity rules' to say, not a sense of a word
# States said in words WordNet holds apart and a sentence model weighs as other values (slots.STATES).
_SAME_STATES = frozenset(pair for kind in STATES for words in kind for pair in itertools.permutations(words, 2))
# and the other states of a kind, rivals: WordNet gives "running" and "finished" a sense in common ("run out")
_OTHER_STATES = (
    frozenset(
        pair
        for kind in STATES
        for one, other in itertools.permutations(kind, 2)
        for pair in itertools.product(one, other)
    )
    - _SAME_STATES
)
_WORD = re.compile(r"[a-z][a-z'-]*|\S*\d\S*")
_DIGIT = re.compile(r"\d")
_POSSESSIVE = re.compile(r"'s?$")  # "France's" is France; WordNet's lookup does not strip it


class Lexicon:
    def __init__(self, text: str) -> None:
        body = "\n".join(line for line in text.split("\n", 8) if not line.startswith("#"))  # the header's comment
        sections = body.strip("\n").split("\n\n")
        if len(sections) != 4:
            raise ValueError("not a lexicon of scripts/build_lexicon.py: it has four sections, a blank line apart")
        self._words = sections[0].split("\n")  # "word part:senses...", sorted by word
        self._broader = sections[1].split("\n")  # line i: the broader senses of sense i ("-": none)
        self._near = sections[2].split("\n")  # line i: the senses a step from sense i that say the same
        self._forms: dict[tuple[str, str], tuple[str, ...]] = {}
        for line in sections[3].split("\n"):
            part, form, *bases = line.split()
            self._forms[(part, form)] = tuple(bases)

    def alike(self, old: str, new: str) -> bool:
        """Whether phrase `new` says what phrase `old` said (see the module's doc). Phrases that hold a number are
        never alike here: numbers are the slot rules' to compare. Unknown words are not alike."""
        return self.relation(old, new) == ALIKE

    def relation(self, old: str, new: str) -> str | None:
        """ALIKE (see alike()), RIVAL (two entries, neither alike nor unrelated: senses with a broader sense in
        common within RIVAL_STEPS, as guitar and violin have "stringed instrument"), or None (unknown words,
        numbers, or words with nothing in common)."""
        old_words, new_words = _content_words(old), _content_words(new)
        if not old_words or not new_words or any(_DIGIT.search(w) for w in (*old_words, *new_words)):
            return None
        old_whole, new_whole = "_".join(old_words), "_".join(new_words)  # WordNet writes "dining room" so
        if (old_whole, new_whole) in _SAME_STATES:
            return ALIKE
        if (old_whole, new_whole) in _OTHER_STATES:
            return RIVAL
        old_known, new_known = self.senses(old_whole), self.senses(new_whole)
        if old_known and new_known:  # both entries as they stand: "kitchen" / "dining room" is decided whole
            if self._related(old_known, new_known):
                return ALIKE
            kin = self._within(old_known, RIVAL_STEPS) & self._within(new_known, RIVAL_STEPS)
            return RIVAL if kin and old_whole != new_whole else None
        if _misspelt(old_whole, old_known, new_whole, new_known):
            return ALIKE
        old_parts = [(old_whole, old_known)] if old_known else [(w, self.senses(w)) for w in old_words]
        new_parts = [(new_whole, new_known)] if new_known else [(w, self.senses(w)) for w in new_words]
        if any(self._related(a, b) for x, a in old_parts if a for y, b in new_parts if b and x != y):
            return ALIKE  # a word both phrases keep says nothing of the ones they swap
        return None

    @functools.lru_cache(maxsize=4096)  # noqa: B019 -- the lexicon lives as long as the process
    def senses(self, word: str) -> frozenset[int]:
        """Every sense of `word` as written or inflected ("geese", "slicing"), in any part of speech."""
        found: set[int] = set()
        for part, endings in _ENDINGS.items():
            candidates = {word, *self._forms.get((part, word), ())}
            candidates.update(word[: len(word) - len(end)] + base for end, base in endings if _strips(word, end))
            for candidate in candidates:
                found.update(self._senses_of(candidate, part))
        return frozenset(found)

    def _senses_of(self, lemma: str, part: str) -> Iterable[int]:
        at = bisect.bisect_left(self._words, lemma + " ")  # " " sorts before every character of a word
        if at == len(self._words) or not self._words[at].startswith(lemma + " "):
            return ()
        for field in self._words[at].split()[1:]:
            if field.startswith(part + ":"):
                return map(int, field[2:].split(","))
        return ()

    def _related(self, old: frozenset[int], new: frozenset[int]) -> bool:
        if old & new:
            return True
        if any(self._neighbours(self._near, s) & new for s in old) or any(
            self._neighbours(self._near, s) & old for s in new
        ):
            return True
        return bool(self._within(old, BROADER_STEPS) & new) or bool(self._within(new, BROADER_STEPS) & old)

    def _within(self, senses: frozenset[int], steps: int) -> set[int]:
        reached, frontier = set(senses), set(senses)
        for _ in range(steps):
            frontier = {b for s in frontier for b in self._neighbours(self._broader, s)} - reached
            reached |= frontier
        return reached

    @staticmethod
    def _neighbours(table: list[str], sense: int) -> set[int]:
        value = table[sense] if sense < len(table) else "-"
        return set() if value == "-" else {int(x) for x in value.split()}


MIN_MISSPELT = 6  # "circut" for "circuit", "batery" for "battery"; a shorter unknown word is as often a name (Redis)


def _misspelt(old: str, known_old: frozenset[int], new: str, known_new: frozenset[int]) -> bool:
    """One word the lexicon does not know, a letter away from a word it knows on the other side: a typo, not another
    value ("positie" / "positive")."""
    if bool(known_old) == bool(known_new) or "_" in old or "_" in new:
        return False
    unknown = new if known_old else old
    return len(unknown) >= MIN_MISSPELT and _one_edit(old, new)


def _one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, dropped, replaced, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        return a[start + 1 :] == b[start + 1 :] or (
            a[start + 2 :] == b[start + 2 :] and a[start : start + 2] == b[start : start + 2][::-1]
        )
    shorter, longer = sorted((a, b), key=len)
    return shorter[start:] == longer[start + 1 :]


def _strips(word: str, ending: str) -> bool:
    return word.endswith(ending) and len(word) > len(ending) + 1


def _content_words(phrase: str) -> list[str]:
    words = (_POSSESSIVE.sub("", w) for w in _WORD.findall(straight(phrase).casefold()))
    return [w for w in words if w and w not in _FUNCTION_WORDS]
