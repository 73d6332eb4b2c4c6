"""remember's admission rules: is new content a duplicate, a restatement, a conflict, or new knowledge?

Verdicts are tried in this order for every candidate note:
  1. duplicate   — the same claim again (nothing to write): near-identical words, or (with an embedding model)
                   the same meaning in other words, with no value changed, added or swapped in place;
  2. restatement — the new text is similar, covers most of the old note and is longer, or repeats it with a verb
                   moved into the past ("expires" -> "expired"): update it in place;
  3. conflict    — same subject, a slot given another value: a name (product, person, place), a number or
                   version, a negation, an antonym, or the same words in reversed order: store nothing and ask
                   the caller to decide;
  4. unrelated.
A changed slot rules out 1 and 2 whatever the similarity: "…to Netlify" after "…to Vercel" is never a duplicate,
and "we do not use Redis" never updates "we use Redis". The restatement check runs before the conflict check: in
the other order every elaborated decision reads as a conflict and agents learn to send `force: true` by reflex.
`meaning` is the cosine of the two texts' embeddings when the store has a model (None: words alone decide).
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain import ranking, rules
from notewell.domain.similarity import PLAIN_NEGATIONS, STOPWORDS, Comparison, compare, content_words, tokens
from notewell.domain.slots import FUNCTION_WORDS, MAX_REPLACED_WORDS, SlotChange, changed_slots, state_put
from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from notewell.domain.model import Note

# Thresholds, tuned on the labelled pairs in tests/unit/test_admission_labels.py.
DUPLICATE_SIMILARITY = 0.8  # near-identical wording
DUPLICATE_MAX_NOVELTY = 0.1  # the new text adds (almost) no bigram the old one lacks, and is not longer
DUPLICATE_MAX_NEW_WORDS = 0.15  # or it swaps at most a word or so ("via" for "through")...
DUPLICATE_MIN_KEPT_WORDS = 0.85  # ...while keeping nearly every content word of the old note
DETAIL_WORDS = 2  # a longer text adding this many words of substance is no repeat ("per container" is one word)
RESTATEMENT_COVERAGE = 0.75  # the new text contains most of the old note's bigrams...
RESTATEMENT_SIMILARITY = 0.3  # ...and is still recognisably the same text
ALTERED_OVERLAP = 0.6  # a negation or number change only matters when both talk about the same things...
ALTERED_JACCARD = 0.4  # ...and neither text is mostly about something else (a short claim inside a long note)
REVERSAL_JACCARD = 0.75  # the same content words in another order: a reversal
OPENING_WORDS = 6  # "After the review," "In the new design,": a phrase before the first comma, this long at most
SWAP_OVERLAP = 0.6  # a swapped name or antonym matters when the texts share most words of the shorter one...
FRAME_KEPT = 0.5  # a short note's frame: half its content words kept, at least ("The migration" of "… succeeded.")
SWAP_JACCARD = 0.25  # ...and are not mostly about other things (looser than ALTERED_JACCARD: a name is one word)
# With an embedding model (cosine of all-MiniLM-L6-v2 vectors; tuned on the tune split of the public pairs and on
# the labelled pairs, tests/quality):
DUPLICATE_MEANING = 0.84  # the same claim in other words, when no value changed or was added
SYNONYM_MEANING = 0.97  # a word swapped in place leaves the claim this close only when it is a synonym
TOPIC_MEANING = 0.7  # about the same thing: a changed slot between such texts is a conflict even in other words
# A phrase put in place of another, weighed by the cosine of the two phrases alone: a synonym above the first,
# another value (yellow/red, bedroom/kitchen, near/far from) below the second; between them the model cannot
# tell, so the new text is neither a duplicate nor a conflict and is stored. Tuned on the tune split. A pair the
# lexicon holds alike (WordNet: the same sense, a broader one, a derived form) weighs 1.0 whatever the model says.
SYNONYM_REPLACEMENT = 0.75
VALUE_REPLACEMENT = 0.6

CANDIDATE_TERMS = 8  # words of the new content used to look up candidates in the search index


class Verdict(StrEnum):
    DUPLICATE = "duplicate"
    RESTATEMENT = "updated"
    CONFLICT = "conflict"
    UNRELATED = "created"


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    note: Note | None
    comparison: Comparison | None


def comparable_text(note: Note) -> str:
    return note.body if note.body.strip() else note.title


def judge(
    old: str,
    new: str,
    meaning: float | None = None,
    replacements: Mapping[tuple[str, str], float] | None = None,
    *,
    shortcut: bool = True,
) -> tuple[Verdict, Comparison]:
    """`meaning`: the cosine of the two texts' embeddings; `replacements`: how alike each phrase pair of
    replacements_of(old, new) is, where they were weighed (1.0 for a pair the lexicon holds alike, else the model's
    cosine: Meaning.pair_similarities). Without either, the word rules decide alone.
    `shortcut=False` runs every rule even for texts out of each other's reach (tests check it changes nothing)."""
    c = compare(old, new)
    near = _near(c, meaning)
    if shortcut and not near and not _same_frame(old, new, c) and state_put(old, new) is None:
        return Verdict.UNRELATED, c  # nothing below can fire: spare the slot analysis of a long unrelated note
    slots = changed_slots(old, new)
    swapped, unsure = _weigh_replacements(slots, meaning, replacements)
    if slots.names_swapped and replacements is not None and _renamed_alike(slots, replacements):
        slots = replace(slots, names_swapped=False)
    reversal = c.reordered and c.jaccard >= REVERSAL_JACCARD and (meaning is None or c.content_novelty == 0)
    if c.reordered and not reversal and (rest := _after_opening(old)) is not None:
        # the old text opens with a phrase the new one leaves out ("After the review, payments call the ledger." /
        # "The ledger calls payments."): the claim after it, reversed, is a reversal too
        after = compare(rest, new)
        reversal = after.reordered and after.jaccard >= REVERSAL_JACCARD and after.content_novelty == 0
    # A number changed, or a word negated in one text only; a negation that comes with a word's opposite ("open"
    # -> "not closed") alters nothing.
    altered = c.numbers_changed or (c.polarity_flipped and not slots.negated_opposite)
    same_claim = not altered and not slots.changed and not swapped and not unsure
    # A longer text that keeps every word of substance and adds two or more, or a name or number, adds a detail
    # ("… and on release tags", "… the login page on Safari"): it updates the note; as a repeat it would be dropped
    adds_detail = (
        c.longer
        and c.content_coverage == 1
        and (len(c.content_added - FUNCTION_WORDS) >= DETAIL_WORDS or slots.new_values)
    )
    if (
        same_claim
        and not c.reordered
        and (
            c.similarity >= DUPLICATE_SIMILARITY
            or (c.novelty <= DUPLICATE_MAX_NOVELTY and not c.longer)
            or (c.content_novelty <= DUPLICATE_MAX_NEW_WORDS and c.content_coverage >= DUPLICATE_MIN_KEPT_WORDS)
        )
    ):
        return (Verdict.RESTATEMENT if adds_detail else _repeat_verdict(old, new)), c
    if (
        same_claim and not c.reordered and c.longer and c.coverage >= RESTATEMENT_COVERAGE
        and c.similarity >= RESTATEMENT_SIMILARITY
    ):  # fmt: skip
        return Verdict.RESTATEMENT, c
    if same_claim and not reversal and meaning is not None and meaning >= DUPLICATE_MEANING and not slots.new_values:
        return _repeat_verdict(old, new), c  # the same claim in other words
    if same_claim and not reversal and slots.state_restated:
        return _repeat_verdict(old, new), c  # a state said otherwise, every other word kept ("off" / "disabled")
    # (a short note in the same frame is no repeat by the lexicon's word: it holds "component" / "section" alike,
    # and "the primary component" is not "the last section")
    if same_claim and not reversal and meaning is None and near and _reworded_alike(slots, replacements):
        return _repeat_verdict(old, new), c  # no model, but every word changed is one the lexicon holds for the same
    on_topic = meaning is not None and meaning >= TOPIC_MEANING
    if (altered or slots.numbers_swapped or slots.paths_swapped) and (
        (c.overlap >= ALTERED_OVERLAP and c.jaccard >= ALTERED_JACCARD) or on_topic
    ):
        return Verdict.CONFLICT, c
    if (slots.names_swapped or slots.antonym_flipped or slots.qualifier_dropped or slots.cut_rejoined or swapped) and (
        (c.overlap >= SWAP_OVERLAP and c.jaccard >= SWAP_JACCARD)
        or on_topic
        # a model weighs the short phrases of a short note as other values too readily ("did not change" / "stayed
        # the same"): with one, only an opposite, a name the lexicon's lists know, or one word put in place of one
        # ("pnpm" / "yarn") counts here
        or (
            _same_frame(old, new, c)
            and (meaning is None or slots.antonym_flipped or slots.names_swapped or _one_word_put(slots, swapped))
        )
    ):
        return Verdict.CONFLICT, c
    if reversal:
        return Verdict.CONFLICT, c
    return Verdict.UNRELATED, c


def _same_frame(old: str, new: str, c: Comparison) -> bool:
    """The same sentence with a phrase or two put in place of others, however short: "The migration succeeded." /
    "… failed." share one content word of two, too few for a swap's overlap, and say the other thing."""
    if not c.content_added or len(c.content_added) > MAX_REPLACED_WORDS or c.content_coverage < FRAME_KEPT:
        return False  # most candidates: another note, whose words are mostly other words
    slots = changed_slots(old, new)
    return (
        # one phrase put in place: "Sticky sessions broke blue-green deploys." / "Write the session outage
        # runbook." share "session" and nothing else, two phrases put in place of the rest
        slots.only_replacements and len(slots.replacements) == 1
        # a phrase denied for another ("did not budge" / "moved") may say the same or the opposite: no frame to read
        and not any(_denied(gone) != _denied(came) for gone, came in slots.replacements)
    )  # fmt: skip


def _one_word_put(slots: SlotChange, swapped: bool) -> bool:
    return swapped and all(len(gone.split()) == len(came.split()) == 1 for gone, came in slots.replacements)


def _denied(phrase: str) -> bool:
    return sum(word in PLAIN_NEGATIONS for word in phrase.split()) % 2 == 1


def _after_opening(text: str) -> str | None:
    """`text` after an opening phrase set off by a comma ("After the review, payments call …"), if it has one."""
    head, comma, rest = text.partition(",")
    return rest if comma and rest.strip() and len(head.split()) <= OPENING_WORDS else None


def _repeat_verdict(old: str, new: str) -> Verdict:
    """A repeat is a duplicate, unless a verb both say is in the past in one and in the present or future in the
    other ("the cert expires in March" / "… expired in March", "will finish" / "finished"): a status moved on,
    which updates the note rather than being dropped."""
    old_past, old_now = _tenses(tokens(old))
    new_past, new_now = _tenses(tokens(new))
    return Verdict.RESTATEMENT if (old_now & new_past) or (old_past & new_now) else Verdict.DUPLICATE


# After these an "-ed" word is a participle, not the past: "requests are served", "TLS must never be disabled".
_PARTICIPLE_AFTER = frozenset({"is", "are", "am", "be", "been", "being", "get", "gets", "got"})
_FUTURE = frozenset({"will", "shall"})


def _tenses(words: list[str]) -> tuple[set[str], set[str]]:
    """(stems of verbs in the regular past, stems of verbs in the present's "-s" form or after "will"):
    "expired"; "expires", "will expire". Not "need" or "speed" (no "-ed" ending), nor the participle of "are
    served"; words either way in the text count as neither."""
    past: set[str] = set()
    now: set[str] = set()
    for at, word in enumerate(words):
        base = stem(word)
        before = words[at - 1] if at else ""
        if word.endswith("ed") and base != word and before not in _PARTICIPLE_AFTER:
            past.add(base)
        elif (word.endswith("s") and base != word and before not in STOPWORDS) or before in _FUTURE:
            now.add(base)
    return past - now, now - past


def _weigh_replacements(
    slots: SlotChange, meaning: float | None, replacements: Mapping[tuple[str, str], float] | None
) -> tuple[bool, bool]:
    """(another value swapped in, cannot tell): a phrase put in place of another is a synonym only if a model
    says so. Weighed phrase by phrase when the model weighed them; else by the whole texts' cosine."""
    weights = [replacements[r] for r in slots.replacements if r in replacements] if replacements else []
    if weights and len(weights) == len(slots.replacements):
        lowest = min(weights)
        if lowest >= SYNONYM_REPLACEMENT:
            return False, False
        # Another value takes one slot of an otherwise unchanged sentence; a sentence reworded in several places
        # is a paraphrase as often as not, and is stored rather than flagged.
        if lowest < VALUE_REPLACEMENT and slots.only_replacements and len(slots.replacements) == 1:
            return True, False
        return False, True
    if replacements is not None and meaning is None and slots.replacements:
        return False, True  # no model, and a phrase put in place of another the lexicon does not know: cannot tell
    if replacements is not None:  # weighed, and no phrase stands in place of another: words moved around
        return False, slots.word_swapped and meaning is not None and meaning < SYNONYM_MEANING
    return slots.word_swapped and meaning is not None and meaning < SYNONYM_MEANING, False


def _reworded_alike(slots: SlotChange, weights: Mapping[tuple[str, str], float] | None) -> bool:
    """The only change is phrases put in place of others, each weighed a synonym ("builds" -> "constructs")."""
    return (
        weights is not None and slots.only_replacements and not slots.new_values
        and all(weights.get(r, 0.0) >= SYNONYM_REPLACEMENT for r in slots.replacements)
    )  # fmt: skip


def _renamed_alike(slots: SlotChange, weights: Mapping[tuple[str, str], float]) -> bool:
    """Every name gone has a new name the model holds for the same one (a respelling, another word for it)."""
    gone = {g for g, _ in slots.renamed}
    return bool(gone) and all(
        any(weights.get((g, c), 0.0) >= SYNONYM_REPLACEMENT for g2, c in slots.renamed if g2 == g) for g in gone
    )


def replacements_of(
    content: str, candidates: Sequence[Note], meaning: Mapping[str, float] | None = None
) -> set[tuple[str, str]]:
    """The phrase and name pairs a model should weigh before admit() judges `content` against `candidates`: only
    those of candidates whose verdict they can change (see weighing_matters)."""
    pairs: set[tuple[str, str]] = set()
    for note in candidates:
        old = comparable_text(note)
        if weighing_matters(old, content, (meaning or {}).get(note.id)):
            slots = changed_slots(old, content)
            pairs.update(slots.replacements, slots.renamed)
    return pairs


def weighing_matters(old: str, new: str, meaning: float | None) -> bool:
    """Whether judge(old, new, meaning, replacements) can depend on `replacements`: only when the two texts pass
    one of its gates (a duplicate or restatement by words, a swap between texts that share their words or a short
    note's frame, or texts on the same topic). Elsewhere the verdict is 'unrelated' whatever the weights, so
    remember does not pay the model for phrases of notes about something else."""
    c = compare(old, new)
    return _near(c, meaning) or _same_frame(old, new, c)


def _near(c: Comparison, meaning: float | None) -> bool:
    """Whether the texts pass a gate of judge() beyond 'unrelated' (but a short note's frame, _same_frame): the same
    topic by meaning, a swap's shared words (looser than an altered claim's and a reversal's), or a duplicate's or
    restatement's wording."""
    return (
        (meaning is not None and meaning >= TOPIC_MEANING)
        or (c.overlap >= SWAP_OVERLAP and c.jaccard >= SWAP_JACCARD)
        or c.similarity >= DUPLICATE_SIMILARITY
        or (c.novelty <= DUPLICATE_MAX_NOVELTY and not c.longer)
        or (c.content_novelty <= DUPLICATE_MAX_NEW_WORDS and c.content_coverage >= DUPLICATE_MIN_KEPT_WORDS)
        or (c.longer and c.coverage >= RESTATEMENT_COVERAGE and c.similarity >= RESTATEMENT_SIMILARITY)
    )


def exact_repeat(content: str, candidates: Sequence[Note]) -> Note | None:
    """The first candidate whose text is `content` word for word (spacing aside): a duplicate before any model
    or comparison runs."""
    wanted = content.split()
    return next((note for note in candidates if comparable_text(note).split() == wanted), None)


def admit(
    content: str,
    candidates: Sequence[Note],
    *,
    allow_conflicts: bool = False,
    meaning: Mapping[str, float] | None = None,
    replacements: Mapping[tuple[str, str], float] | None = None,
) -> Judgement:
    """The verdict for `content` against every candidate: the strongest one wins, in contract order. `meaning`:
    the cosine of the content's embedding with each candidate's, by note id, where a model gave one;
    `replacements`: how alike each phrase pair of replacements_of() is (Meaning.pair_similarities)."""
    best: dict[Verdict, tuple[float, Note, Comparison]] = {}
    for note in candidates:
        verdict, comparison = judge(comparable_text(note), content, (meaning or {}).get(note.id), replacements)
        strength = {
            Verdict.DUPLICATE: comparison.similarity,
            Verdict.RESTATEMENT: comparison.coverage,
            Verdict.CONFLICT: comparison.overlap,
            Verdict.UNRELATED: 0.0,
        }[verdict]
        if verdict not in best or strength > best[verdict][0]:
            best[verdict] = (strength, note, comparison)
    order = [Verdict.DUPLICATE, Verdict.RESTATEMENT] + ([] if allow_conflicts else [Verdict.CONFLICT])
    for verdict in order:
        if verdict in best:
            _, note, comparison = best[verdict]
            return Judgement(verdict, note, comparison)
    return Judgement(Verdict.UNRELATED, None, None)


def candidate_query(content: str) -> str:
    """A few distinctive words of the content to find candidates in the search index (never the whole text).

    Longer words are rarer, and every word in the query widens the index's match set, so a handful of the longest
    content words finds the notes that restate or contradict this one at a fraction of the cost of all of them.
    They are the index's own words (rules.words: 'alpha123' whole, 'foo_bar' two). Half come from the start of the
    content, the part every search mode ranks, so content stored before always finds the note that holds it; the
    rest from the whole, so a long text that restates a note further down still finds it.
    """
    start = _longest(rules.words(content[: ranking.RANKED_BODY_CHARS]), CANDIDATE_TERMS // 2)
    whole = rules.words(content)
    chosen = list(dict.fromkeys([*start, *_longest(whole, CANDIDATE_TERMS)]))[:CANDIDATE_TERMS]
    return " ".join(chosen) or " ".join(whole[:CANDIDATE_TERMS])


def _longest(words: list[str], count: int) -> list[str]:
    keep = content_words(words)
    # two letters are a word of substance too when they are no stopword: "The PR is pending." / "… merged." share
    # only "PR", "The DB is Postgres." / "… MySQL." only "DB"
    distinct = dict.fromkeys(w for w in words if w in keep and len(w) > 1)
    return heapq.nlargest(count, distinct, key=len)  # ties keep text order, in linear time on long content


# ----- titles ------------------------------------------------------------------------------------------------

TITLE_LIMIT = 80
_MARKDOWN = re.compile(r"^[#>*+\-\s`\d.)]+|[*_`]+|\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TRAILING = STOPWORDS | {"because", "since", "while", "if", "via", "per", "not", "no", "instead", "than"}


def derive_title(content: str, limit: int = TITLE_LIMIT) -> str:
    """A short title from the content's first sentence, cut at a clause or word boundary, never mid-phrase."""
    line = next((x for x in (_MARKDOWN.sub(r"\1", raw).strip() for raw in content.splitlines()) if x), "")
    sentence = _SENTENCE_END.split(line, maxsplit=1)[0].strip().rstrip(".!?;:, ")
    if not sentence:
        return "Untitled note"
    if len(sentence) > limit:
        cut = sentence[:limit]
        clause = max(cut.rfind(sep) for sep in (";", ":", " — ", " - ", ",", " ("))
        if clause >= 25:
            sentence = cut[:clause]
        else:
            words = cut[: cut.rfind(" ")].split() if " " in cut else [cut]
            while len(words) > 2 and words[-1].casefold().strip(",;:") in _TRAILING:
                words.pop()
            sentence = " ".join(words)
    sentence = sentence.rstrip(".!?;:,- ")
    if not sentence:
        return "Untitled note"
    return sentence[0].upper() + sentence[1:]
