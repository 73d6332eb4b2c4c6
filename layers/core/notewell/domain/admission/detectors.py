"""Detectors: small pure functions that each find one kind of change between two aligned sentences, with evidence.

Two sentences are aligned when the new one shares most words with the old one. Their difference is read as spans:
what was put in place of what (`replaced`), what was added, what was removed; a word that only moved is no change.
A detector fires only when the old sentence's frame is kept (most of its plain words are still there), so "The API
timeout is 30s" / "The DB timeout is 5s" (subject and value both changed) is no conflict, while "Retries are capped
at 3" / "Retries are capped at 5 since the provider got flaky" is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from notewell.domain.admission.text import Sentence, Token, kind_of_value, same_value, tokens_of
from notewell.domain.admission.vocabulary import vocabulary

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

FRAME_KEPT = 0.6  # share of the old sentence's plain words the new one keeps, for a change in place to count
NEGATION_KEPT = 0.75  # a denial added or removed: the rest of the claim kept this much
SLOT_WORDS = 5  # words of the frame that name the slot in the evidence
_NOT_SUBJECTS = ("amount", "q", "status")  # kinds of value that, first in a sentence, still are no subject


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a detector saw: which `slot` changed from `old` to `new` ("retries capped", "3", "5")."""

    detector: str
    slot: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Span:
    old: Sentence
    new: Sentence
    at: int  # where it starts in the old sentence's tokens


@dataclass(frozen=True, slots=True)
class Alignment:
    old_text: str
    new_text: str
    old: Sentence  # negations left out: they are counted, not placed
    new: Sentence
    old_denials: int
    new_denials: int
    spans: tuple[Span, ...]

    @property
    def replaced(self) -> list[Span]:
        return [s for s in self.spans if s.old and s.new]

    @property
    def kept(self) -> float:
        """The share of the old sentence's plain words the new one still has (1.0 when it has none)."""
        plain = {t.key for t in self.old if not t.is_value}
        return len(plain & {t.key for t in self.new}) / len(plain) if plain else 1.0

    @property
    def frame(self) -> set[str]:
        """What both sentences say alike: their shared words and values."""
        return {t.key for t in self.old} & {t.key for t in self.new}


def align(old_sentences: Sequence[str], new_sentences: Sequence[str]) -> list[Alignment]:
    """Each new sentence with the old sentence it shares most words with (none shared: not aligned)."""
    olds = [(text, tokens_of(text)) for text in old_sentences]
    whole = {t.key for _, s in olds for t in s if t.kind == "word"} - {k for _, s in olds for k in _denied_keys(s)}
    found: list[Alignment] = []
    for new_text in new_sentences:
        new = tokens_of(new_text)
        keys = {t.key for t in new}
        best = max(olds, key=lambda o: len(keys & {t.key for t in o[1]}), default=None)
        if best is not None and keys & {t.key for t in best[1]} - {"not"}:
            found.append(_aligned(best[0], best[1], new_text, new, whole))
    return found


def _aligned(old_text: str, old_all: Sentence, new_text: str, new_all: Sentence, whole: set[str]) -> Alignment:
    """The two sentences' spans; a new denial counts when it denies a word of this sentence, or a plain word the old
    text says undenied anywhere (a reason denied: "because of cost" / "… not for cost reasons but because …")."""
    old = tuple(t for t in old_all if t.kind != "negation")
    new = tuple(t for t in new_all if t.kind != "negation")
    opcodes = SequenceMatcher(None, [t.key for t in old], [t.key for t in new], autojunk=False).get_opcodes()
    changed = [Span(_missing(old[i1:i2], new), _missing(new[j1:j2], old), i1) for tag, i1, i2, j1, j2 in opcodes
               if tag != "equal"]  # fmt: skip
    spans = tuple(s for s in changed if s.old or s.new)
    new_denials = _frame_denials(new_all, {t.key for t in old} | whole)
    return Alignment(old_text, new_text, old, new, _frame_denials(old_all, {t.key for t in new}), new_denials, spans)


def _frame_denials(sentence: Sentence, keys: set[str]) -> int:
    """Denials of the words both say: the word after a denial is one of the other text's `keys`. A denial inside
    added detail ("… has no imports from adapters/") denies the detail, not the old claim."""
    return sum(key in keys for key in _denied_keys(sentence))


def _denied_keys(sentence: Sentence) -> list[str]:
    """The key of the word after each denial."""
    return [next((t.key for t in sentence[at + 1 :] if t.kind != "negation"), "not")
            for at, token in enumerate(sentence) if token.kind == "negation"]  # fmt: skip


def _missing(tokens: Sentence, other: Sentence) -> Sentence:
    """The tokens `other` does not have, by key or by value: a word that only moved is still there."""
    return tuple(
        t for t in tokens if not any(o.key == t.key or (t.is_value and o.is_value and same_value(o, t)) for o in other)
    )


# ----- the detectors: each takes an alignment and returns its evidence, or None ------------------------------


def changed_value(a: Alignment) -> Evidence | None:
    """One slot of a kept frame holds another value of the same kind: an amount, version, name, identifier, path,
    URL, environment, quantifier or status. Only the values changed in it: a plain word put in place too means the
    sentence is about another thing ("cache TTL 5 minutes" / "session TTL 30 minutes"). Words may follow the new
    value, or end the sentence ("capped at 5 for payments since the provider got flaky"), with no value but names."""
    tail = a.spans[-1] if len(a.spans) == 2 and not a.spans[-1].old and a.spans[-1].at == len(a.old) else None
    spans = a.spans[:-1] if tail and all(t.kind in ("word", "name") for t in tail.new) else a.spans
    if len(spans) != 1 or not a.replaced or a.kept < FRAME_KEPT or not a.frame or _adds(a):
        return None  # changes in two places (another subject, another scope), or a thing added beside ("also")
    span = a.replaced[0]
    gone, came = {t.key for t in span.old if not t.is_value}, {t.key for t in span.new if not t.is_value}
    if not gone <= came or (came - gone and len(a.frame) < 2):
        return None  # a plain word of the slot put in place too, or words added to a frame of one: another thing
    if span.at == 0 and len(span.old) == len(span.new) == 1 and span.old[0].kind.split(":")[0] not in _NOT_SUBJECTS:
        return None  # the first word of substance ("Stripe webhooks …" / "GitHub webhooks …"): another subject
    places = sorted(t.at for t in span.old if t.is_value)
    if any(b - a_ > 1 for a_, b in zip(places, places[1:], strict=False)):
        return None  # values apart in the sentence ("Bug #231 is fixed" / "Bug #232 is open"): another subject
    if _keyed_value(span.old) and _keyed_value(span.new):
        return None  # a key with its value, both put in place ("pins rails 7.1.3" / "pins puma 6.4.2"): another key
    for old in (t for t in span.old if t.is_value):
        for new in (t for t in span.new if t.is_value):
            if kind_of_value(old) == kind_of_value(new) and not same_value(old, new):
                detector = "status" if old.kind.startswith("status") else "changed value"
                kinds = {kind_of_value(t) for t in span.old if t.is_value}  # not the names of a reason added
                news = [t for t in span.new if kind_of_value(t) in kinds]
                return Evidence(detector, _slot(a, span), _text(span.old), _text(news))
    return None


def _keyed_value(tokens: Sentence) -> bool:
    """A key followed by its value: a word, name or path with a version or an amount with a unit ("rails 7.1.3",
    "work_mem 64MB"), an identifier with any amount ("worker_processes 4"); not a name with a bare number ("June
    30", "Node 18": one thing named and counted)."""
    return any(
        value.kind == "amount" and key.kind in ("word", "name", "path", "identifier")
        and (key.kind == "identifier" or kind_of_value(value) != "amount:number")
        for key, value in zip(tokens, tokens[1:], strict=False)
    )  # fmt: skip


def departed(a: Alignment) -> Evidence | None:
    """An old value now stands after a word of departure ("is Sentry" / "moved from Sentry to Rollbar"): left."""
    away = vocabulary().departure
    shared_values = {t.key for t in a.old if t.is_value} & {t.key for t in a.new if t.is_value}
    if (a.kept < FRAME_KEPT or not a.frame) and len(shared_values) < 2:
        return None  # two values said again in other words still show which one was left
    for old in (t for t in a.old if t.is_value and t.side not in away):
        if any(t.is_value and t.side in away and same_value(t, old) for t in a.new):  # left behind
            rivals = (t for t in a.new if t.is_value and t.side not in away and kind_of_value(t) == kind_of_value(old))
            rival = next((t for t in rivals if not any(same_value(t, o) for o in a.old)), None)
            if rival is not None:  # "apart from X, …" leaves nothing behind: a value must come in its place
                return Evidence("changed value", _slot(a, None), old.text, rival.text)
    return None


def _adds(a: Alignment) -> bool:
    return any(t.text.casefold() in vocabulary().additive for t in a.new)


def negation(a: Alignment) -> Evidence | None:
    """A denial added or taken away ("Migrations run on deploy" / "Do not run migrations on deploy"), the rest of
    the claim kept and nothing put in place of anything. A bound that moved with it may say the same thing ("not
    older than 3.9" / "3.9 or newer": data/quantifiers.json "signs"): the agent reads those."""
    bounds = {f"q:{bound}" for bound in vocabulary().signs.values()}
    moved = any(t.key in bounds for s in a.spans for t in (*s.old, *s.new))
    if a.old_denials % 2 == a.new_denials % 2 or a.replaced or moved or a.kept < NEGATION_KEPT or not a.frame:
        return None
    return Evidence("negation", _slot(a, None), _clip(a.old_text), _clip(a.new_text))


def opposite(a: Alignment) -> Evidence | None:
    """One word of a kept frame put in place by its opposite (data/opposites.json: sync/async, public/private), past
    its first word of substance: "Read timeouts are 30 s" / "Write timeouts are 30 s" are about two things."""
    if len(a.spans) != 1 or not a.replaced or a.kept < FRAME_KEPT or not a.frame:
        return None
    span = a.replaced[0]
    gone, came = [t for t in span.old if not t.is_value], [t for t in span.new if not t.is_value]
    if span.at and len(gone) == len(came) == 1 and came[0].key in vocabulary().opposites.get(gone[0].key, ()):
        return Evidence("opposite", _slot(a, span), gone[0].text, came[0].text)
    return None


def reversal(a: Alignment) -> Evidence | None:
    """The same words with what stands on each side of a word of direction traded both ways: "opaque tokens instead
    of JWTs" / "JWTs instead of …", "billing calls the ledger" / "the ledger calls billing" (not "is called by")."""
    if sorted(t.key for t in a.old) != sorted(t.key for t in a.new) or a.old_denials != a.new_denials:
        return None
    old_sides, new_sides = sided(a.old), sided(a.new)
    directions = {side for side, _ in old_sides if side}
    moves = {(was, now) for was, key in old_sides - new_sides for now, moved in new_sides - old_sides if key == moved}
    if not any((now, was) in moves for was, now in moves) or directions != {side for side, _ in new_sides if side}:
        return None  # nothing traded both ways (a clause moved to the front), or other words of direction
    passive = _PASSIVE.search(a.old_text) or _PASSIVE.search(a.new_text)
    return None if passive else Evidence("reversal", "order", _clip(a.old_text), _clip(a.new_text))


def sided(tokens: Sequence[Token]) -> set[tuple[str, str]]:
    """The tokens' keys, each with the word of direction it stands after."""
    return {(t.side, t.key) for t in tokens if t.kind != "negation"}


_PASSIVE = re.compile(r"\bby\b", re.IGNORECASE)


DETECTORS: tuple[Callable[[Alignment], Evidence | None], ...] = (changed_value, departed, negation, opposite, reversal)


def contradiction(alignments: Sequence[Alignment]) -> Evidence | None:
    """The first evidence any detector finds in any aligned pair."""
    return next((found for a in alignments for detector in DETECTORS if (found := detector(a)) is not None), None)


def substituted(alignments: Sequence[Alignment]) -> bool:
    """A plain word of a kept frame, or all a short sentence changed, put in place of another ("branch is main" /
    "… master"; "merged by the author" / "… the reviewer"): only a reader tells a synonym from another thing."""
    return any(
        len(a.replaced) == 1 and a.frame and any(not t.is_value for t in a.replaced[0].old)
        and (a.kept >= FRAME_KEPT or (len(a.spans) == 1 and len(a.replaced[0].old) == len(a.replaced[0].new) == 1))
        for a in alignments
    )  # fmt: skip


def _slot(a: Alignment, span: Span | None) -> str:
    """The slot in the old sentence's words: what both keep around the change ("Retries capped at")."""
    changed = set(span.old) if span is not None else set()
    return " ".join([t.text for t in a.old if t.key in a.frame and t not in changed][:SLOT_WORDS])


def _text(tokens: Sequence[Token]) -> str:
    return " ".join([t.text for t in tokens if t.is_value] or [t.text for t in tokens])


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
