"""Text comparison for admission: word-order aware bigram measures plus the two signals bigrams miss.

Word overlap cannot tell "opaque tokens instead of JWTs" from "JWTs instead of opaque tokens"; bigrams can.
Two bigram measures answer two questions:
  * similarity (Dice over bigram sets): "is this the same text?"
  * coverage of the old note's bigrams by the new text: "is the old claim contained in the new one?"
Bigrams are blind to a negation or a changed number inside an otherwise identical sentence, so
`numbers_changed` and `polarity_flipped` report those explicitly.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Callable

# Numbers and versions stay whole ("3.11", "v2", "100ms"); digits joined by a comma are a list ("terminals 4,5 and 6":
# thousands separators are gone by then, see amounts()).
_TOKEN = re.compile(r"v?\d+(?:[.:]\d+)*[a-z%]*|[^\W\d_]+(?:'[a-z]+)?", re.IGNORECASE)
_NUMBER = re.compile(r"\d")
# "Amendment No 7", "ticket no. 42": the abbreviation of "number", not a negation. Only written so: a capital mid-
# sentence or a dot ("No 2 services share a table" opens a sentence and is a negation).
_NUMERO = re.compile(r"(?:(?<=[^\W\d_] )No|\b[Nn]o\.)\s*(?=\d+\b)")
# "No, it makes no difference": an answer opening a sentence, not a negation of what follows it.
_ANSWER = re.compile(r"(^|[.!?]\s+)no\s*[,!]", re.IGNORECASE | re.MULTILINE)
_ANSWER_HINT = re.compile(r"no\s*[,!]", re.IGNORECASE)  # a quick look first: most texts hold no answer

# Verbs that deny what they take, no further than its phrase: "breaks backwards compatibility" is not backwards
# compatible, "lacks pagination" has none; "it broke his heart and haunted him" denies no haunting, "a fire breaks
# out in the metro" and "a lunch break in China" deny nothing.
VERB_DENIALS = frozenset({"break", "breaks", "broke", "lacks", "lacked", "lacking"})
NEGATIONS = frozenset(
    {
        "not", "no", "never", "none", "nothing", "without", "cannot", "can't", "don't",
        "doesn't", "didn't", "won't", "isn't", "aren't", "wasn't", "shouldn't", "mustn't", "avoid", "stop",
        "stopped", "drop", "dropped", "disable", "disabled", "forbid", "forbidden", "ban", "banned", "instead",
        "rather", "unlike", "except", "nor", "neither", "hardly", "barely", "scarcely", "nobody", "nowhere", "non",
        *VERB_DENIALS,
    }
)  # fmt: skip
# Negations that only deny what follows them: one claim negated with "no" is the same claim negated with "not"
# ("there is no closed path" / "the path is not closed", "can't recall" / "doesn't recall"). The others keep their
# own word: "avoid X" or "X instead of Y" is not "not X".
PLAIN_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nothing", "cannot", "nor", "neither", "hardly", "barely", "scarcely", "nobody",
     "nowhere", "non"}
)  # fmt: skip
# A prefix that negates the word it is put on ("unwilling", "inactive", "non-blocking"): said of a word the other
# text has bare, it is that word negated ("unwilling" / "not willing", "willing" / "unwilling").
NEGATING_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis")
MIN_NEGATED_STEM = 4

STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as",
        "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "we",
        "our", "us", "you", "your", "they", "their", "i", "he", "she", "will", "would", "should", "must",
        "can", "could", "may", "might", "do", "does", "did", "has", "have", "had", "so", "than", "then",
        "also", "all", "any", "some", "into", "about", "which", "who", "what", "when", "where", "why", "how",
        "use", "uses", "using", "used", "against",
    }
)  # fmt: skip
# "Against" is a preposition ("tests run against SQLite", "sanctions against Iran"); it denies what follows only
# after a verb of choosing ("we decided against Kafka") or "be" ("the team is against adopting GraphQL"), where it
# is read as "not".
_CHOSE_AGAINST = re.compile(
    r"\b(decide[sd]?|deciding|vote[sd]?|voting|argue[sd]?|arguing|advise[sd]?|advising|recommend(?:s|ed|ing)?"
    r"|rule[sd]?|ruling|cho(?:se|ose|oses|osing)|warn(?:s|ed|ing)?|opt(?:s|ed|ing)?|lean(?:s|ed|ing)?"
    r"|is|are|am|was|were)\s+against\b",
    re.IGNORECASE,
)

# How far after a negation word its scope reaches: this many content words, within NEGATION_REACH tokens
# ("is not the be-all" reaches past the stopwords to "be-all").
NEGATION_WINDOW = 3
NEGATION_REACH = 6
# Function words that order what stands around them ("from A to B", "A before B", "A rather than B", "the report
# of the submission"): they can be the pivot of a reversal, as any content word or negation can. "and", "or", "is"
# and the like cannot: "A or B" is "B or A", and "the capital of France is Paris" is "Paris is the capital of
# France".
ORDERING_WORDS = frozenset({"to", "from", "of", "than", "then", "before", "after", "over", "under", "into", "onto",
                            "above", "below", "behind", "ahead", "towards", "toward", "via", "against"})  # fmt: skip
BE_FORMS = frozenset({"is", "are", "was", "were", "be", "been", "being", "gets", "got", "get"})
# Adverbs of time: a claim said with them or without is the same claim ("The flag is now off.").
TIME_ADVERBS = frozenset({"yet", "still", "already", "now", "again"})
# They, and adverbs of degree, by stem: no party to a claim, they trade places with none ("we are yet to migrate the
# billing service" / "the billing service is not migrated yet" reverses nothing).
_NO_ARGUMENTS = frozenset(stem(w) for w in TIME_ADVERBS | {"ever", "just", "soon"})
# Verbs that make "with" an ordering word: "replaced Jenkins with Travis" is not "replaced Travis with Jenkins", where
# "paired Alice with Bob" is "paired Bob with Alice".
_REPLACING = frozenset({stem(w) for w in ("replace", "replaced", "substitute", "substituted", "supersede")})


# One amount written several ways: "$1.0 bn", "$1 billion" and "US$1b" say the same, "5.30 p.m.", "5:30pm" and
# "17h30" are "17:30", and "5,000" is "5000". Rewritten to one form before comparing, or a note restating a figure
# reads as another figure. A lone letter counts as a scale only glued to the number ("38b", "5k"): "2 m" may be metres.
_THOUSANDS = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?=\.\d|(?!\w|,\d))")
_SCALED = re.compile(
    r"(?<![\w.,])(\d+(?:\.\d+)?)(?:[\s-]?(thousand|million|mn|billion|bn|trillion|tn)|-?(k|m|b))(?!\w)", re.IGNORECASE
)
_CLOCK = re.compile(r"(?<![\w.,])(1[0-2]|0?[1-9])(?:[.:]([0-5]\d))?\s?([ap])\.?\s?m(?!\w)\.?", re.IGNORECASE)
_CLOCK_H = re.compile(r"(?<![\w.,])([01]?\d|2[0-3])h([0-5]\d)(?!\w)", re.IGNORECASE)  # 17h30
_SCALES = {"k": 3, "thousand": 3, "m": 6, "mn": 6, "million": 6, "b": 9, "bn": 9, "billion": 9, "tn": 12,
           "trillion": 12}  # fmt: skip


def _scaled(match: re.Match[str]) -> str:
    amount = Decimal(match.group(1)).scaleb(_SCALES[(match.group(2) or match.group(3)).casefold()])
    return format(amount.normalize(), "f")


_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")  # fmt: skip
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# A number written as a word is that number ("three replicas" is "3 replicas", and not "5 replicas"). "One" is a
# number only before a word that is not "of"/"another"/..., after none of the words that make it a pronoun ("the
# new one", "one of them", "no one", "each one"). A hyphen makes a word of "one" ("one-off", "one-time"), except
# after "non-"; any other number stays one before it ("a three-node cluster" is "a 3-node cluster", not a 5-node one).
_SPELLED = (
    rf"(?:(?P<tens>{'|'.join(_TENS)})(?:-(?P<unit>{'|'.join(_UNITS[1:10])}))?|(?P<small>{'|'.join(_UNITS)}))(?!\w)"
)
_NUMBER_WORD = re.compile(rf"(?<![\w-]){_SPELLED}", re.IGNORECASE)
_NON_NUMBER_WORD = re.compile(rf"(?<=\bnon-){_SPELLED}", re.IGNORECASE)  # a lookbehind choice slows every text
_PRONOUN_ONE_BEFORE = frozenset({"the", "no", "each", "every", "any", "this", "that", "which", "a", "an", "some",
                                 "such", "another", "only", "last", "next", "someone", "anyone"})  # fmt: skip
_PRONOUN_ONE_AFTER = re.compile(r"\s+(?!(?:of|another|by|or|and|at|in|on|to)\b)[^\W\d_]")


def _number_word(match: re.Match[str]) -> str:
    if match.group("tens"):
        unit = match.group("unit")
        tens = 10 * (_TENS.index(match.group("tens").casefold()) + 2)
        return str(tens + (_UNITS.index(unit.casefold()) if unit else 0))
    word = match.group("small").casefold()
    if word == "one":
        if match.string[match.end() : match.end() + 1] == "-" and not match.string[: match.start()].endswith("non-"):
            return match.group()  # "one-off"
        # The word before, from a short window: every pronoun-making word fits in it, and a longer word's tail
        # matches none of them (slicing the whole text before each "one" made a long note quadratic).
        before = match.string[max(0, match.start() - 16) : match.start()].split()
        if (before and before[-1].casefold() in _PRONOUN_ONE_BEFORE) or not _PRONOUN_ONE_AFTER.match(
            match.string, match.end()
        ):
            return match.group()
    return str(_UNITS.index(word))


def amounts(text: str) -> str:
    """`text` with each amount written one way: a number word as digits ("three" -> "3"), thousands separators
    dropped, a scale word or suffix multiplied out ("$1.0 bn" -> "$1000000000"), a clock time on the 24-hour clock
    ("5.30 p.m." -> "17:30")."""
    text = _NUMBER_WORD.sub(_number_word, text)
    if "non-" in text.casefold():
        text = _NON_NUMBER_WORD.sub(_number_word, text)
    if not _NUMBER.search(text):
        return text
    text = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    text = _SCALED.sub(_scaled, text)
    text = _CLOCK.sub(_clock, text)
    return _CLOCK_H.sub(lambda m: f"{int(m.group(1))}:{m.group(2)}", text)


def _clock(match: re.Match[str]) -> str:
    hour = int(match.group(1)) % 12 + (12 if match.group(3).casefold() == "p" else 0)
    return f"{hour}:{match.group(2) or '00'}"


def number(token: str) -> str:
    """A number as written, casefolded, without a version's leading "v" ("v16" and "16" are one number)."""
    token = token.casefold()
    return token[1:] if token.startswith("v") and token[1:2].isdigit() else token


# A typographic apostrophe is an apostrophe: "don’t" is "don't", a negation (typed on a phone or pasted from a page).
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# And so is the "?" that a lossy encoding leaves in its place inside a contraction ("Don?t", "it?s").
_LOST_APOSTROPHE = re.compile(r"(?<=[^\W\d_])\?(?=(?:t|s|re|ve|ll|d|m)\b)", re.IGNORECASE)


def straight(text: str) -> str:
    """`text` with its apostrophes written one way."""
    text = text.translate(_APOSTROPHES)
    return _LOST_APOSTROPHE.sub("'", text) if "?" in text else text


# A contraction typed without its apostrophe is that contraction ("dont", "isnt", "cant" in chat and call notes):
# the part before its "nt".
_BARE_NOT_HEADS = frozenset(
    {"do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "could", "would", "should", "must",
     "need", "ai", "ca", "wo"}
)  # fmt: skip
# Verbs that say an act was not done ("failed to update", "refused to sign", "has yet to ship"): each denies the
# act as "not" does, and is read with one, so "failed to update" and "did not update" deny alike.
_NOT_DONE = frozenset(
    f"{stem}{end}"
    for stem, ends in (("fail", ("", "s", "ed", "ing")), ("refus", ("e", "es", "ed", "ing")),
                       ("declin", ("e", "es", "ed", "ing")), ("neglect", ("", "s", "ed", "ing")),
                       ("forg", ("et", "ets", "ot", "etting")), ("pretend", ("", "s", "ed", "ing")))
    for end in ends
)  # fmt: skip
_YET_AFTER = frozenset({"has", "have", "had", "is", "are", "was", "were", "am"})  # "has yet to ship"
# "was anything but smooth" is "was not smooth" ("for anything but small boats" is "except", and left as it is);
# "nothing but noise" is "only noise", no denial; "all but one region", "everywhere but eu-west-1", "everything but
# the billing jobs" make an exception ("all but finished" is almost finished: as changed when the words go).
_BE_BEFORE_BUT = frozenset({"is", "are", "was", "were", "be", "been", "am"})
_EXCEPT_BUT = frozenset({"all", "everywhere", "everyone", "everybody", "everything"})
# Each rewrite is found from a literal ("nt", "to", "but") and checked against the word before it: a regular
# expression that tries every word of a long note against a list of words made reading a note several times slower.
_NT = re.compile(r"nt\b", re.IGNORECASE)
_TO = re.compile(r"to\b", re.IGNORECASE)
_BUT = re.compile(r"but\b", re.IGNORECASE)


def _word_before(text: str, end: int) -> int:
    """Where the word of letters ending at `end` starts (`end` itself when none does), if a word boundary is there."""
    start = end
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return end  # inside a word with digits in it: no word of its own
    return start


def _spaces_before(text: str, end: int) -> int:
    """Where the run of whitespace ending at `end` starts."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def _previous_word(text: str, end: int) -> tuple[int, str] | None:
    """The word before `end` across one run of whitespace, and where it starts; None without whitespace there."""
    gap = _spaces_before(text, end)
    if gap == end:
        return None
    start = _word_before(text, gap)
    return start, text[start:gap].casefold()


def _rewritten(text: str, pattern: re.Pattern[str], rewrite: Callable[[str, int, int], tuple[int, str] | None]) -> str:
    """`text` with each match of `pattern` (where the word before it allows, `rewrite` says from where, and with
    what) replaced."""
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        if match.start() < last:
            continue
        done = rewrite(text, match.start(), match.end())
        if done is not None:
            start, replacement = done
            parts += [text[last:start], replacement]
            last = match.end()
    return "".join([*parts, text[last:]]) if parts else text


def _apostrophe(text: str, start: int, end: int) -> tuple[int, str] | None:
    head = _word_before(text, start)
    return (start, "n't") if head < start and text[head:start].casefold() in _BARE_NOT_HEADS else None


def _not_to(text: str, start: int, end: int) -> tuple[int, str] | None:
    if _word_before(text, start) != start:
        return None  # "into", "auto"
    gap = _spaces_before(text, start)
    if gap == start:
        return None
    verb_end = gap - 1 if gap > 0 and text[gap - 1] == "," else gap
    verb = _word_before(text, verb_end)
    word = text[verb:verb_end].casefold()
    if word in _NOT_DONE:
        return verb_end, " not to"
    if word == "yet" and (aux := _previous_word(text, verb)) is not None and aux[1] in _YET_AFTER:
        return verb_end, " not to"
    return None


def _but(text: str, start: int, end: int) -> tuple[int, str] | None:
    if _word_before(text, start) != start or (before := _previous_word(text, start)) is None:
        return None
    head, word = before
    if word in _EXCEPT_BUT:
        return start, "except"
    if word == "nothing":
        return head, "only"
    if word == "anything" and (be := _previous_word(text, head)) is not None and be[1] in _BE_BEFORE_BUT:
        return head, "not"
    return None


# A denial contracted is the same denial written out: "don't" is "do not", "cannot" and "can't" are "can not".
_CONTRACTED = re.compile(r"\b([^\W\d_]+)n't\b|\b(can)not\b", re.IGNORECASE)
_CONTRACTED_HEADS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}


def _written_out(match: re.Match[str]) -> str:
    head = match.group(1) or match.group(2)
    return f"{_CONTRACTED_HEADS.get(head.casefold(), head)} not"


# A question tag ends a statement and denies nothing: "We deploy on Fridays, don't we?" says we do. Not after a
# question word ("So why don't we?" proposes) nor opening its sentence ("Can't we?").
_TAG = re.compile(
    r"(?<=[^\W\d_])(,?\s+)(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should|must|wo|ca|ai)"
    r"n't\s+(?:i|we|you|they|he|she|it|there)(?=\s*(?:[?.!]|$))",
    re.IGNORECASE | re.MULTILINE,
)
_TAG_NOT_AFTER = frozenset({"why", "what", "how", "where", "when", "who", "which"})


def _untagged(match: re.Match[str]) -> str:
    before = _word_before(match.string, match.start())
    return match.group() if match.string[before : match.start()].casefold() in _TAG_NOT_AFTER else ""


# A bound said with a denial is the bound: "no more than 3 retries", "retries never exceed 3", "capped at 3" are
# "at most 3" (and no denial of anything), and so is "a limit of 3"; "no fewer than 2 replicas" is "at least 2".
# Before a number only.
_NUMBER_AHEAD = r"(?=\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|hundred)\b)"
_AT_MOST = re.compile(
    r"(?:\b(?:no|not) (?:more|greater|higher|larger|longer|bigger) than|\bup to|\bcapped at|\b(?:a )?maximum of"
    r"|\blimit (?:is|of)|\blimited to"
    r"|\b(?:never|(?:can|must|does|do|will|should) not) exceeds?)\s+" + _NUMBER_AHEAD,
    re.IGNORECASE,
)
_AT_LEAST = re.compile(
    r"(?:\b(?:no|not) (?:less|fewer|lower|smaller|shorter) than|\b(?:a )?minimum of)\s+" + _NUMBER_AHEAD,
    re.IGNORECASE,
)
_BOUND_HINT = re.compile(r"than|up to|capped|imum of|exceed|limit", re.IGNORECASE)


def plain(text: str) -> str:
    """`text` as straight() writes it, with each denial said with "not" and each exception with "except": a
    contraction's lost apostrophe restored ("dont" -> "don't") and the contraction written out ("do not") once
    question tags are gone ("…, don't we?"), "not" read after a verb of an act not done ("failed to" -> "failed
    not to") and for "anything but" after "be", "except" for the "but" of "all but", a bound said with a denial
    said as one ("no more than 3" -> "at most 3")."""
    text = _rewritten(straight(text), _NT, _apostrophe)
    if "n't" in text:
        text = _TAG.sub(_untagged, text)
    if "n't" in text or "nnot" in text:
        text = _CONTRACTED.sub(_written_out, text)
    if _BOUND_HINT.search(text):
        text = _AT_LEAST.sub("at least ", _AT_MOST.sub("at most ", text))
    text = _rewritten(text, _TO, _not_to)
    return _rewritten(text, _BUT, _but) if " but" in text else text


def tokens(text: str) -> list[str]:
    return list(_read(text))


# remember compares its content with every candidate: it is read once. A few entries are enough for that, and a
# long note read into tokens weighs hundreds of kB.
@functools.lru_cache(maxsize=16)
def _read(text: str) -> tuple[str, ...]:
    text = _NUMERO.sub("number ", plain(text))
    if _ANSWER_HINT.search(text):
        text = _ANSWER.sub(r"\1", text)
    if "against" in text.casefold():
        text = _CHOSE_AGAINST.sub(r"\1 not", text)
    return tuple(number(t) for t in _TOKEN.findall(amounts(text)))


def bigrams(words: list[str]) -> set[tuple[str, str]]:
    if len(words) == 1:
        return {(words[0], "")}
    return set(zip(words, words[1:], strict=False))


def content_words(words: list[str]) -> set[str]:
    # a verb that denies is a word of the claim too: "lunch break in China" / "… in Thailand" share "break"
    return {w for w in words if w not in STOPWORDS and (w not in NEGATIONS or w in VERB_DENIALS)}


def numbers(words: list[str]) -> set[str]:
    return {w for w in words if _NUMBER.search(w)}


def crossed_pivot(
    old_words: list[str],
    new_words: list[str],
    arguments: set[str],
    old_passive: frozenset[int] = frozenset(),
    new_passive: frozenset[int] = frozenset(),
) -> bool:
    """Whether two of the `arguments` trade places across a word both texts share between them: "A calls B" and
    "B calls A", "Kingston replaced Port Royal" and "Port Royal replaced Kingston". The pivot is a content word, a
    negation or an ordering word (ORDERING_WORDS), never a symmetric one ("A or B", "X is Y"). A word either text
    repeats has no one place, and is neither. A verb one text puts in the passive voice moves its subject and object
    across it and everything around them across each other: there the claim is reversed only when both keep their
    side ("payments call the ledger" / "payments are called by the ledger"; "the ledger is called by payments" says
    the same). `old_passive`/`new_passive`: where each text has a verb in the passive (passive_verbs)."""
    old_count, new_count = Counter(old_words), Counter(new_words)
    old_at = {w: i for i, w in enumerate(old_words) if old_count[w] == 1}
    new_at = {w: i for i, w in enumerate(new_words) if new_count[w] == 1}
    # The arguments by their place in the old text, with the latest new place of those before each point and the
    # earliest new place of those after it: each pivot is then one lookup (long notes have hundreds of words).
    placed = sorted((old_at[w], new_at[w]) for w in arguments - _NO_ARGUMENTS if w in old_at and w in new_at)
    if len(placed) < 2:
        return False
    ordering = ORDERING_WORDS | {"with"} if _REPLACING & old_count.keys() & new_count.keys() else ORDERING_WORDS
    pivots = [
        (old_place, new_place)
        for pivot, old_place in old_at.items()
        if (new_place := new_at.get(pivot)) is not None
        and not (pivot in STOPWORDS and pivot not in ordering)
        and not _NUMBER.search(pivot)
    ]
    voiced = [(o, n) for o, n in pivots if (o in old_passive) != (n in new_passive)]
    if voiced:
        return any(_roles_kept(placed, o, n) for o, n in voiced)
    olds = [o for o, _ in placed]
    latest_before = list(itertools.accumulate((n for _, n in placed), max))
    earliest_after = list(itertools.accumulate((n for _, n in reversed(placed)), min))[::-1]
    for old_place, new_place in pivots:
        before, after = bisect.bisect_left(olds, old_place), bisect.bisect_right(olds, old_place)
        if before and after < len(placed) and latest_before[before - 1] > new_place > earliest_after[after]:
            return True
    return False


def _roles_kept(placed: list[tuple[int, int]], old_verb: int, new_verb: int) -> bool:
    """Whether the arguments nearest a verb on either side in the old text (its subject and object) are on the same
    sides of it in the new text, where the verb changed voice."""
    before = [p for p in placed if p[0] < old_verb]
    after = [p for p in placed if p[0] > old_verb]
    return bool(before and after) and before[-1][1] < new_verb < after[0][1]


_COPULAS = frozenset({"is", "are", "was", "were"})


def complement_moved(old_words: list[str], new_words: list[str]) -> bool:
    """Whether a relation "X of Y" crosses the verb "be" and takes another of the old text's words as its Y: "a
    subcategory of accuracy is consistency" / "accuracy is a subcategory of consistency". Crossing with its Y ("the
    capital of France is Paris" / "Paris is the capital of France") says the same thing."""
    old, new = _relations(old_words), _relations(new_words)
    present = set(old_words)
    return any(
        relation in new and new[relation][0] != before and new[relation][1] != of and new[relation][1] in present
        for relation, (before, of) in old.items()
    )


def _relations(words: list[str]) -> dict[str, tuple[bool, str]]:
    """Each content word followed by "of" in a text with "be": whether it stands before the verb, and the first
    content word after its "of"."""
    verb = next((i for i, w in enumerate(words) if w in _COPULAS), None)
    if verb is None:
        return {}
    found: dict[str, tuple[bool, str]] = {}
    for at, (word, following) in enumerate(itertools.pairwise(words)):
        if following == "of" and word not in STOPWORDS:
            of = next((w for w in words[at + 2 :] if w not in STOPWORDS), None)
            if of is not None:
                found.setdefault(word, (at < verb, of))
    return found


# Past participles that end in none of "-ed", "-en", "-wn".
_IRREGULAR_PARTICIPLES = frozenset(
    {"done", "gone", "made", "built", "run", "sent", "held", "kept", "led", "paid", "read", "set", "put", "cut",
     "hit", "shut", "split", "spread", "bought", "brought", "caught", "taught", "thought", "found", "left", "lost",
     "met", "sold", "told", "won", "hung", "struck", "stuck", "fed", "shot", "spent", "lent", "bent", "dealt", "felt",
     "heard", "laid", "meant", "sought", "swept", "understood", "bound", "ground", "spun", "dug", "fought", "sung",
     "drunk", "begun", "come", "become", "overcome", "born", "worn", "torn", "sworn", "let", "hurt", "cast", "cost"}
)  # fmt: skip


_AGENTS = frozenset({"by", "from"})


def passive_verbs(words: list[str]) -> frozenset[int]:
    """Where `words` (as written, not stemmed) has a verb in the passive voice: a past participle with a form of "be"
    just before it and its agent after ("is called by"; "are standing by the fence" is not one), or where it comes
    from ("requests are served from the cache" is "the cache serves requests")."""
    if "by" not in words and "from" not in words:
        return frozenset()
    return frozenset(at for at in _be_participles(words) if not _AGENTS.isdisjoint(words[at + 1 : at + 5]))


def _be_participles(words: list[str]) -> frozenset[int]:
    """Where `words` has a past participle with a form of "be" just before it, its agent said or not."""
    return frozenset(
        at
        for at, word in enumerate(words)
        if (word.endswith(("ed", "en", "wn")) or word in _IRREGULAR_PARTICIPLES)
        and any(w in BE_FORMS for w in words[max(0, at - 2) : at])
    )


def _voices(old_words: list[str], new_words: list[str]) -> tuple[frozenset[int], frozenset[int]]:
    """passive_verbs of each text, with a verb both put in the passive counted so in both where only one names where
    the act comes from ("emails are sent through SES" / "… sent through SES from the worker": one voice)."""
    old_passive, new_passive = passive_verbs(old_words), passive_verbs(new_words)
    old_voiced, new_voiced = {old_words[i] for i in old_passive}, {new_words[j] for j in new_passive}
    return (
        old_passive | {i for i in _be_participles(old_words) if old_words[i] in new_voiced},
        new_passive | {j for j in _be_participles(new_words) if new_words[j] in old_voiced},
    )


def negated_words(words: list[str], named_first: frozenset[str] = frozenset()) -> set[str]:
    """Content words in the scope of a negation ("we do not use Redis" → {redis}). What a contrast sets aside ends
    with its phrase: "picked SQS rather than Kafka for the job queue" denies Kafka, not the job queue. After the
    contrasts in `named_first` only the first content word counts: where both texts set a thing aside with the same
    word, it is the one named first ("except billing run on ECS" / "except for billing, all services …")."""
    scoped: set[str] = set()
    cancelled: set[int] = set()
    for index, word in enumerate(words):
        if index in cancelled:
            continue
        if (denial := _denied_denial(words, index)) is not None:
            cancelled.add(denial)
            continue
        if _negating(words, index):
            reach = words[index + 1 : index + 1 + NEGATION_REACH]
            if reach[:1] == ["longer"]:  # "no longer" is one negation: "longer" is none of what it denies
                reach = words[index + 2 : index + 2 + NEGATION_REACH]
            if word in CONTRASTS or word in VERB_DENIALS:
                reach = _phrase(reach)
            followers = [w for w in reach if w not in STOPWORDS and w not in NEGATIONS]
            if not reach and word in ("not", "no") and index and words[index - 1] != "or":
                # the last word: "of course not", "I hope not" deny the word before ("whether … or not" does not);
                # "Should we use Redis? We would not." denies what the auxiliary stands for, told by the word before
                # it. One word: the sentence before may end just there.
                scoped.update([w for w in words[:index] if w not in STOPWORDS and w not in NEGATIONS][-1:])
                continue
            scoped.update(followers[: 1 if word in named_first else NEGATION_WINDOW])
    return scoped


# Negations that are verbs or prepositions: a plain negation before one denies it ("don't stop the backups" keeps
# them running, "not without risk" is with risk), and the two cancel.
DENYING_WORDS = frozenset({"avoid", "stop", "stopped", "drop", "dropped", "disable", "disabled", "forbid", "forbidden",
                           "ban", "banned", "without", "break", "broke", "lack", "lacked"})  # fmt: skip


def _denied_denial(words: list[str], at: int) -> int | None:
    """Where the word at `at` is a plain negation whose first content word is one of DENYING_WORDS, that word's
    index ("do not [stop] the workers")."""
    word = words[at]
    if word not in PLAIN_NEGATIONS and not word.endswith("n't"):
        return None
    for index in range(at + 1, min(len(words), at + 1 + NEGATION_REACH)):
        if words[index] not in STOPWORDS:
            return index if words[index] in DENYING_WORDS else None
    return None


def _negating(words: list[str], at: int) -> bool:
    """Whether the word at `at` denies what follows: "rather" only before "than" ("would rather keep", "rather slow"
    deny nothing)."""
    word = words[at]
    if word == "rather":
        return words[at + 1 : at + 2] == ["than"]
    return word in NEGATIONS or word.endswith("n't")


# Where the phrase a contrast sets aside ends: at a word that opens the next phrase or clause.
_PHRASE_ENDS = frozenset({"for", "in", "on", "at", "to", "with", "from", "by", "because", "since", "as", "and", "but",
                          "or", "so", "when", "if", "while", "which", "that"})  # fmt: skip


def _phrase(reach: list[str]) -> list[str]:
    """`reach` up to the first _PHRASE_ENDS word after a word of substance."""
    for at, word in enumerate(reach):
        if word in _PHRASE_ENDS and any(w not in STOPWORDS and w not in NEGATIONS for w in reach[:at]):
            return reach[:at]
    return reach


# Verbs of choice: "chose SQS over Kafka" sets Kafka aside as "SQS instead of Kafka" does.
_CHOOSING = frozenset({
    "chose", "choose", "chosen", "chooses", "picked", "pick", "picks", "prefer", "prefers", "preferred", "favor",
    "favored", "favour", "favoured", "selected", "select", "selects",
})  # fmt: skip
CHOICE_REACH = 3  # "chose SQS over", "picked the managed queue over"


def _choices(words: list[str]) -> list[str]:
    """`words` with the "over" of a choice written "instead" (a contrast, as "instead of" is)."""
    if "over" not in words:
        return words
    return [
        "instead" if w == "over" and any(x in _CHOOSING for x in words[max(0, at - CHOICE_REACH - 1) : at]) else w
        for at, w in enumerate(words)
    ]


@dataclass(frozen=True, slots=True)
class Comparison:
    similarity: float  # Dice coefficient of the two bigram sets
    coverage: float  # share of the old text's bigrams found in the new text
    novelty: float  # share of the new text's bigrams not found in the old text
    overlap: float  # shared content words / content words of the shorter text
    jaccard: float  # shared content words / all content words
    content_coverage: float  # shared content words / content words of the old text
    content_novelty: float  # content words only the new text has / content words of the new text
    content_added: frozenset[str]  # content words only the new text has
    crossed: bool  # two shared words trade places across a shared pivot (crossed_pivot, complement_moved)
    numbers_changed: bool  # a number of the old text is gone and a new one appeared
    polarity_flipped: bool  # a shared word is negated in one text and not in the other
    longer: bool  # the new text has more words

    @property
    def reordered(self) -> bool:
        """The claim's parts trade places around what relates them: "A calls B" against "B calls A". Other
        reorderings say the same thing ("a marriage offer", "an offer of marriage"; "lighter or brighter")."""
        return self.crossed


CONTRASTS = frozenset({"instead", "rather", "unlike", "except"})


def _negations(words: list[str]) -> Counter[str]:
    return Counter(
        "not" if w in PLAIN_NEGATIONS or w.endswith("n't") else w for at, w in enumerate(words) if _negating(words, at)
    )


def _prefix_negations(words: list[str], other: list[str]) -> list[str]:
    """`words` with each word made of a negating prefix and a word only `other` has written as "not" and that word
    ("unwilling" -> "not willing" against a text that says "willing")."""
    prefixed = [w for w in words if w.startswith(NEGATING_PREFIXES)]
    if not prefixed:
        return words
    own, theirs = set(words), set(other)
    negated = {
        word: bare
        for word in prefixed
        if len(bare := _without_prefix(word)) >= MIN_NEGATED_STEM
        and bare in theirs
        and bare not in own
        and word not in theirs
    }
    if not negated:
        return words
    return [part for word in words for part in (("not", negated[word]) if word in negated else (word,))]


# The particles of verbs that are written as one word too: "log in" / "login", "rolled back" / "rollback".
PARTICLES = frozenset({"in", "out", "up", "down", "back", "off", "over", "around"})


def _particles_joined(words: list[str], other: list[str]) -> list[str]:
    """`words` with a verb and its particle written as one word where only `other` has that word ("log in before
    verifying" against "verify before login"): by stem, so "logged in" is "login" too."""
    if PARTICLES.isdisjoint(words):
        return words
    joined = {w for w in other if w.endswith(tuple(PARTICLES))} - set(words)
    if not joined:
        return words
    merged: list[str] = []
    for word in words:
        if merged and word in PARTICLES and (compound := stem(merged[-1]) + word) in joined:
            merged[-1] = compound
        else:
            merged.append(word)
    return merged


def _without_prefix(word: str) -> str:
    prefix = next(p for p in NEGATING_PREFIXES if word.startswith(p))
    return word[len(prefix) :].lstrip("-")


def denied_alike(one: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """Whether two phrases deny the same word, one with a negating prefix, one with a negation: ("unwilling",) and
    ("not", "willing"), ("non-blocking",) and ("no", "blocking")."""
    for prefixed, negated in ((one, other), (other, one)):
        if (
            len(prefixed) == 1 and len(negated) == 2 and negated[0] in PLAIN_NEGATIONS
            and prefixed[0].startswith(NEGATING_PREFIXES) and _without_prefix(prefixed[0]) == negated[1]
        ):  # fmt: skip
            return True
    return False


def _stems(words: list[str]) -> list[str]:
    """Content words by stem; stopwords, negations and numbers as they are (the lists name their surface forms)."""
    return [w if w in STOPWORDS or w in NEGATIONS or _NUMBER.search(w) else _stem_kept(w) for w in words]


def _stem_kept(word: str) -> str:
    """The word's stem, unless the stem is a verb that denies and the word is not: "breaking changes" deny nothing."""
    base = stem(word)
    return word if base in VERB_DENIALS else base


@functools.lru_cache(maxsize=256)  # admission gates a pair before it judges it
def compare(old: str, new: str) -> Comparison:
    old_words, new_words = tokens(old), tokens(new)
    if not old_words or not new_words:
        return Comparison(
            0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, frozenset(content_words(_stems(new_words))), False, False, False,
            len(new_words) > len(old_words),
        )  # fmt: skip
    old_words, new_words = _choices(old_words), _choices(new_words)
    old_words, new_words = _prefix_negations(old_words, new_words), _prefix_negations(new_words, old_words)
    old_words, new_words = _particles_joined(old_words, new_words), _particles_joined(new_words, old_words)
    old_bigrams, new_bigrams = bigrams(old_words), bigrams(new_words)
    shared = len(old_bigrams & new_bigrams)
    old_passive, new_passive = _voices(old_words, new_words)
    # Content is compared by stem: "Payments call the ledger" and "the ledger calls payments" share every word.
    old_words, new_words = _stems(old_words), _stems(new_words)
    old_content, new_content = content_words(old_words), content_words(new_words)
    shared_content = old_content & new_content
    smaller = min(len(old_content), len(new_content)) or 1
    union = len(old_content | new_content) or 1
    old_numbers, new_numbers = numbers(old_words), numbers(new_words)
    both_contrast = CONTRASTS & set(old_words) & set(new_words)
    old_negated, new_negated = negated_words(old_words, both_contrast), negated_words(new_words, both_contrast)
    # The same negations on both sides, said in other places, agree ("never log keys", "keys must never be
    # logged"); contrasts ("instead of", "rather than") are about which side of them a word stands on.
    old_negations, new_negations = _negations(old_words), _negations(new_words)
    same_negations = old_negations == new_negations and not (old_negations.keys() & CONTRASTS)
    flipped = bool((old_negated ^ new_negated) & shared_content) and not same_negations
    return Comparison(
        similarity=2 * shared / (len(old_bigrams) + len(new_bigrams)),
        coverage=shared / len(old_bigrams),
        novelty=1 - shared / len(new_bigrams),
        overlap=len(shared_content) / smaller,
        jaccard=len(shared_content) / union,
        content_coverage=len(shared_content) / (len(old_content) or 1),
        content_novelty=len(new_content - old_content) / (len(new_content) or 1),
        content_added=frozenset(new_content - old_content),
        crossed=crossed_pivot(old_words, new_words, shared_content, old_passive, new_passive)
        or complement_moved(old_words, new_words),
        numbers_changed=bool(old_numbers - new_numbers) and bool(new_numbers - old_numbers),
        polarity_flipped=flipped,
        longer=len(new_words) > len(old_words),
    )
