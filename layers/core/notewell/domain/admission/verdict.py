"""remember's verdict for new content against each note most like it, and across them.

Against one note: a detector's evidence is a `conflict`; a denial or a plain word put in place that no detector
can read leaves the pair to the agent; every new sentence already said by the old note is a `duplicate`; the old
note kept whole with detail added is `updated`; a close pair is `created` with the old note to review, a far one
just `created`. Across notes the strongest verdict wins, in the contract's order: duplicate, updated, conflict.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain.admission.detectors import FRAME_KEPT, Alignment, Evidence, align, contradiction, substituted
from notewell.domain.admission.text import Token, edited_copy, kind_of_value, same_value, set_apart, tokens_of, window
from notewell.domain.admission.vocabulary import vocabulary
from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from notewell.domain.calibration import Calibration
    from notewell.domain.model import Note

LONG_CLAIM = 8  # an old text with this many words may lose a few in an elaboration...
COVERED = 0.9  # ...keeping this share of them (a shorter one keeps all)
CLOSE_SHARED = 2  # texts sharing this many words...
CLOSE_SHARE = 0.5  # ...that are this share of the shorter text's words are close enough to review
SAME_VALUES_SHARE = 0.6  # without a model: the same values, and this share of the shorter text's words
RELATED_SHOWN = 3
_NARROW = ("q:only", "q:most", "q:some")  # quantifiers that take part of a claim back ("only prod", "most PRs")
SCOPES = ("amount", "env", "q")  # kinds of value that bound a claim: one more, one fewer or another is another claim


class Verdict(StrEnum):
    DUPLICATE = "duplicate"
    RESTATEMENT = "updated"
    CONFLICT = "conflict"
    UNRELATED = "created"


@dataclass(frozen=True, slots=True)
class Comparison:
    verdict: Verdict
    evidence: Evidence | None
    related: bool  # close enough to review (always true for duplicate, updated and conflict)
    closeness: float  # shared words over the shorter text's, or the cosine when calibrated: ranks candidates


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    note: Note | None
    evidence: Evidence | None = None
    related: tuple[Note, ...] = ()  # created: the close notes the agent should read (reviewRequired)


def comparable_text(note: Note) -> str:
    return note.body if note.body.strip() else note.title


def compare(old: str, new: str, meaning: float | None = None, calibration: Calibration | None = None) -> Comparison:
    """The verdict for `new` against one note's text `old`. `meaning`: the cosine of their embeddings, used only
    with the `calibration` of the model that gave it, and not for an edited copy (it says nothing of the edits)."""
    if _same_text(old, new):
        return Comparison(Verdict.DUPLICATE, Evidence("repeat", "", "", ""), True, 1.0)
    if set_apart(old, new):  # alike line by line, yet another list or procedure: the agent reads both
        return Comparison(Verdict.UNRELATED, None, True, 1.0)
    copy = edited_copy(old, new)
    cosine = meaning if calibration is not None and copy is None else None
    old_part, new_part = copy or (window(old, new), window(new, old))
    alignments = align(old_part, new_part)
    old_tokens, new_tokens = ([t for s in part for t in tokens_of(s)] for part in (old_part, new_part))
    old_keys, new_keys = _keys(old_tokens), _keys(new_tokens)
    shared = len(old_keys & new_keys)
    word_share = shared / max(1, min(len(old_keys), len(new_keys)))
    closeness = cosine if cosine is not None else word_share
    near = cosine is not None and calibration is not None and cosine >= calibration.related
    alike = cosine is not None and calibration is not None and cosine >= calibration.duplicate
    close = near or copy is not None or (shared >= CLOSE_SHARED and word_share >= CLOSE_SHARE)
    close = close or _same_thing_other_value(old_tokens, new_tokens)
    if (found := contradiction(alignments)) is not None:
        return Comparison(Verdict.CONFLICT, found, True, closeness)
    undecided = _unsure(alignments) or substituted(alignments)  # a denial or a plain word no detector can read
    if undecided or _announces_change(old_part, new_part) or _into_the_past(old_part, new_part):
        return Comparison(Verdict.UNRELATED, None, close, closeness)
    old_values, new_values = _value_tokens(old_tokens), _value_tokens(new_tokens)
    old_in_new = _contained(old_part, new_part)
    repeated = _restated(alignments, new_part, alike, exact=old_in_new, near=near)
    placed = {(t.clause, t.side, t.key) for t in old_tokens}
    added = [t for t in new_tokens if (t.clause, t.side, t.key) not in placed and t.kind != "negation"]
    if old_keys and repeated is not None and _denied(old_tokens) == _denied(new_tokens):
        detector = "reworded" if old_in_new or repeated == "reworded" else "contained"
        if detector == "reworded" and old_keys <= new_keys and added:  # every old word kept, more said: detail
            return Comparison(Verdict.RESTATEMENT, Evidence("elaboration", "", "", _added_text(added)), True, 1)
        return Comparison(Verdict.DUPLICATE, Evidence(detector, "", _values(old_tokens), _values(new_tokens)), True, 1)
    kept_values = _in_order(old_values, new_values)
    covered = old_in_new or (len(old_keys) >= LONG_CLAIM and len(old_keys & new_keys) >= COVERED * len(old_keys))
    if alike and old_values and kept_values and not covered:  # the same claim reworded, with more: no value added
        covered = not _new_rival(old_values, new_values) and not _replaced_words(alignments)
    novel = [t for t in added if t.key not in old_keys]  # words only moved may have traded sides ("to" / "from")
    reach_kept = not _rival(alignments) and not _new_scope(old_tokens, new_tokens, alignments)
    if novel and kept_values and covered and reach_kept:
        return Comparison(Verdict.RESTATEMENT, Evidence("elaboration", "", "", _added_text(novel)), True, closeness)
    return Comparison(Verdict.UNRELATED, None, close, closeness)


def _new_scope(old: Sequence[Token], new: Sequence[Token], alignments: Sequence[Alignment]) -> bool:
    """An exception or a narrowing the old text lacks ("every table except `audit_log`", "only prod"), or another
    environment or state anywhere ("runs in staging, but from today only in production"): the claim's reach moved,
    for the agent to read. Other kinds added elsewhere are mostly history ("on Rails 7.1, upgraded from 7.0")."""
    if _narrowed(alignments):
        return True
    kinds = {kind_of_value(o) for o in old if o.kind == "env" or o.kind.startswith("status")}
    return any(kind_of_value(n) in kinds and not any(same_value(n, o) for o in old) for n in new if n.is_value)


def _narrowed(alignments: Sequence[Alignment]) -> bool:
    """A sentence that keeps an old one says "only", "most", "except"… where the old one did not."""
    vocab = vocabulary()
    added = (w for a in alignments for w in _said(a.new_text) - _said(a.old_text))
    return any(word in vocab.exceptions or vocab.values.get(word) in _NARROW for word in added)


def _said(text: str) -> set[str]:
    return {t.text.casefold() for t in tokens_of(text)}


def _replaced_words(alignments: Sequence[Alignment]) -> bool:
    """A plain word of a kept sentence put in place ("exponential backoff" -> "linear backoff, capped at 5")."""
    return any(a.kept >= FRAME_KEPT and any(not t.is_value for s in a.replaced for t in s.old) for a in alignments)


def _new_rival(old_values: Sequence[Token], new_values: Sequence[Token]) -> bool:
    """A new amount, environment, status or quantifier of a kind the old text gives another value of."""
    kinds = {kind_of_value(o) for o in old_values if o.kind != "name" and o.kind != "identifier"}
    return any(kind_of_value(n) in kinds and not any(same_value(n, o) for o in old_values) for n in new_values)


def _same_thing_other_value(old: Sequence[Token], new: Sequence[Token]) -> bool:
    """Both name the same identifier, path or URL, or share a word and each gives a value of one kind the other
    does not ("Log retention is 30 days" / "We keep logs for 90 days"): the agent should read them together."""
    specific = {t.key for t in old if t.kind in ("identifier", "path", "url")}
    if specific & {t.key for t in new}:
        return True
    if not {t.key for t in old} & {t.key for t in new}:
        return False
    olds, news = [t for t in old if t.is_value and t.kind != "q"], [t for t in new if t.is_value and t.kind != "q"]
    lone_kinds = {kind_of_value(o) for o in olds if not any(same_value(o, n) for n in news)}  # none in new
    return any(kind_of_value(n) in lone_kinds and not any(same_value(n, o) for o in olds) for n in news)


def _same_text(old: str, new: str) -> bool:
    """The same words, spacing, capitals and a closing stop aside (texts of very different lengths never are)."""
    near = abs(len(old) - len(new)) <= max(len(old), len(new)) // 4 + 8
    return near and " ".join(old.casefold().split()).rstrip(".!") == " ".join(new.casefold().split()).rstrip(".!")


def _announces_change(old_part: Sequence[str], new_part: Sequence[str]) -> bool:
    """The new text says a change happened ("moved", "no longer", "now") where the old did not: the agent reads."""
    old_words, new_words = ({w for s in part for w in _WORD.findall(s.casefold())} for part in (old_part, new_part))
    return bool((new_words & vocabulary().change_words) - old_words) or bool(_shifted(new_part) - _shifted(old_part))


def _shifted(part: Sequence[str]) -> set[str]:
    """Words that move a time in `part` ("next Friday", "the Tuesday after next"; not "next to it"): data "shifts"."""
    (shifts, times), words = vocabulary().time_shifts, [w for s in part for w in _WORD.findall(s.casefold())]
    return {w for i, w in enumerate(words) if w in shifts and not times.isdisjoint(words[max(0, i - 2) : i + 3])}


_WORD = re.compile(r"[a-z]+")


def _into_the_past(old_part: Sequence[str], new_part: Sequence[str]) -> bool:
    """The new text puts the old claim in the past ("is" / "was", "uses" / "used", not "is used"): the agent reads."""
    vocab = vocabulary()
    old_words = {w for s in old_part for w in _WORD.findall(s.casefold())}
    pairs = [pair for s in new_part for pair in itertools.pairwise(["", *_WORD.findall(s.casefold())])]
    if old_words & vocab.present_be and not old_words & vocab.past_be and any(w in vocab.past_be for _, w in pairs):
        return True
    present = {stem(w) for w in old_words if not w.endswith("ed")} - {stem(w) for w in old_words if w.endswith("ed")}
    past = [w for b, w in pairs if w.endswith("ed") and w not in old_words and b not in vocab.passive_after]
    return any(stem(w) in present for w in past)


def _unsure(alignments: Sequence[Alignment]) -> bool:
    """A denial added or removed in a kept sentence that no detector read: neither a repeat nor an elaboration."""
    return any(a.old_denials % 2 != a.new_denials % 2 and a.kept >= FRAME_KEPT for a in alignments)


def _within(part: Sequence[Token], whole: Sequence[Token]) -> bool:
    """Each clause of `part` is within one clause of `whole`: every key after the same word of direction (one with
    none may stand anywhere), amounts by size ("1 GB" / "1024 MB"). Clauses may come in another order; what one
    clause says together must not be split over two ("REST for public and gRPC for internal" / "gRPC for …")."""
    part = [t for t in part if t.kind != "negation"]
    clauses = [[t for t in part if t.clause == c] for c in {t.clause for t in part}]
    wholes = [[t for t in whole if t.clause == c] for c in {t.clause for t in whole}]
    return all(any(_clause_within(c, w) for w in wholes) for c in clauses)


def _clause_within(part: Sequence[Token], whole: Sequence[Token]) -> bool:
    placed, anywhere = {(t.side, t.key) for t in whole}, {t.key for t in whole}
    amounts = [t for t in whole if t.kind == "amount"]
    return all(
        (t.side, t.key) in placed or (not t.side and t.key in anywhere)
        or (t.kind == "amount" and any(same_value(a, t) for a in amounts)) for t in part
    )  # fmt: skip


def _restated(alignments: Sequence[Alignment], new_part: Sequence[str], alike: bool, *, exact: bool,
              near: bool = False) -> str | None:  # fmt: skip
    """How every sentence of the new text is already said by the old sentence it aligns with: "contained" (its
    words and values stand there, none of the old sentence's values dropped) or "reworded" (the same values in the
    same order, the words close: a calibrated model says so, or most words are shared). None: something is new."""
    if len(alignments) != len(new_part) or not alignments or any(_dropped_member(a) for a in alignments):
        return None
    kinds = set()
    for a in alignments:
        olds, news = _value_tokens(a.old), _value_tokens(a.new)
        if _within(a.new, a.old) and _in_order(news, olds) and (exact or not _dropped_value([a])):
            kinds.add("contained")
        elif (
            olds and _in_order(olds, news) and _in_order(news, olds)
            and (alike or (_share(a) >= SAME_VALUES_SHARE and not _swapped_words(a)) or (near and len(olds) >= 2))
            and sorted(t.key for t in a.old) != sorted(t.key for t in a.new)  # same words, rearranged: a reversal's
        ):  # fmt: skip
            kinds.add("reworded")
        else:
            return None
    return "reworded" if "reworded" in kinds else "contained"


def _dropped_member(a: Alignment) -> bool:
    """An item the old sentence lists left out ("api, worker and cron" -> "api and worker"): another list."""
    clauses = [[t.key for t in a.old if t.clause == c] for c in {t.clause for t in a.old}]
    kept = {t.key for t in a.new}
    return len(clauses) > 1 and any(len(c) <= 2 and c[0] not in kept for c in clauses)


def _denied(tokens: Sequence[Token]) -> bool:
    """Whether a text denies (an odd number of denials): one that does never restates one that does not."""
    return sum(t.kind == "negation" for t in tokens) % 2 == 1


def _swapped_words(a: Alignment) -> bool:
    """A plain word put in place of another: by words alone "kept"/"retained" is no different from "logs"/"metrics"."""
    return any(not t.is_value for s in a.spans for t in s.old) and any(not t.is_value for s in a.spans for t in s.new)


def _share(a: Alignment) -> float:
    old, new = {t.key for t in a.old}, {t.key for t in a.new}
    return len(old & new) / max(1, min(len(old), len(new)))


def _contained(part: Sequence[str], whole: Sequence[str]) -> bool:
    """Each sentence of `part` is within the sentence of `whole` it shares most words with (see _within)."""
    wholes = [tokens_of(s) for s in whole]
    for tokens in (tokens_of(s) for s in part):
        keys = {t.key for t in tokens}
        best = max(wholes, key=lambda w: len(keys & {t.key for t in w}), default=())
        if not _within(tokens, best) or not _in_order(_value_tokens(tokens), _value_tokens(best)):
            return False
    return bool(part)


def _dropped_value(alignments: Sequence[Alignment]) -> bool:
    """An amount, environment, state or quantifier taken out of a kept sentence: another claim (a name: less)."""
    return any(
        a.kept >= FRAME_KEPT
        and any(t.kind in SCOPES or t.kind.startswith("status") for s in a.spans if not s.new for t in s.old)
        for a in alignments
    )


def _rival(alignments: Sequence[Alignment]) -> bool:
    """An amount, environment, status or quantifier added beside one of its kind on the same side of a kept
    sentence ("capped at 3" -> "capped at 3 for payments and 5 for search"), not on another ("on Rails 7.1, upgraded
    from 7.0"); or a denial of words both say added or taken away ("after approval" -> "with no approval")."""
    for a in alignments:
        if a.old_denials % 2 != a.new_denials % 2:
            return True
        if a.kept < FRAME_KEPT:
            continue
        slots = {(kind_of_value(t), t.side) for t in a.old if t.kind in SCOPES or t.kind.startswith("status")}
        added = [t for span in a.spans for t in span.new if t.is_value]
        bounded = a.old_denials or any(t.kind == "q" for t in a.old)  # "only A and B", "all but A": a closed list
        kinds = {kind_of_value(t) for t in a.old if t.is_value} if bounded else set()
        if any((kind_of_value(t), t.side) in slots or kind_of_value(t) in kinds for t in added):
            return True
    return False


def _in_order(values: Sequence[Token], among: Sequence[Token]) -> bool:
    """Each of `values` has the same value in `among`, those of one kind in order ("REST … gRPC" is not "gRPC …")."""
    for kind in {kind_of_value(v) for v in values}:
        at, others = 0, [t for t in among if kind_of_value(t) == kind]
        for value in (v for v in values if kind_of_value(v) == kind):
            found = next((i for i in range(at, len(others)) if same_value(value, others[i])), None)
            if found is None:
                return False
            at = found
    return True


def _keys(tokens: Sequence[Token]) -> set[str]:
    return {t.key for t in tokens if t.kind != "negation"}


def _value_tokens(tokens: Sequence[Token]) -> list[Token]:
    return list({t.key: t for t in tokens if t.is_value}.values())


def _values(tokens: Sequence[Token]) -> str:
    return ", ".join(t.text for t in _value_tokens(tokens))


def _added_text(added: Sequence[Token]) -> str:
    text = " ".join(dict.fromkeys(t.text for t in added))
    return text if len(text) <= 120 else text[:119].rsplit(" ", 1)[0] + "…"


def admit(content: str, candidates: Sequence[Note], *, allow_conflicts: bool = False,
          meaning: Mapping[str, float] | None = None, calibration: Calibration | None = None) -> Judgement:  # fmt: skip
    """The verdict for `content` against every candidate: the strongest one wins, in contract order. `meaning`:
    the cosine of the content's embedding with each candidate's, by note id, where a model gave one (the model's
    thresholds are its `calibration`, domain/calibration.py; without one, the detectors and shared words alone)."""
    cosines = meaning or {}
    compared = [(compare(comparable_text(n), content, cosines.get(n.id), calibration), n) for n in candidates]
    order = [Verdict.DUPLICATE, Verdict.RESTATEMENT] + ([] if allow_conflicts else [Verdict.CONFLICT])
    for verdict in order:
        matching = [(c, n) for c, n in compared if c.verdict is verdict]
        if matching:
            best, note = max(matching, key=lambda cn: cn[0].closeness)
            return Judgement(verdict, note, best.evidence)
    close = sorted(((c, n) for c, n in compared if c.related), key=lambda cn: -cn[0].closeness)
    return Judgement(Verdict.UNRELATED, None, None, tuple(n for _, n in close[:RELATED_SHOWN]))


def exact_repeat(content: str, candidates: Sequence[Note]) -> Note | None:
    """The first candidate whose text is `content` word for word (spacing aside), before any model runs."""
    wanted = content.split()
    return next((note for note in candidates if comparable_text(note).split() == wanted), None)
