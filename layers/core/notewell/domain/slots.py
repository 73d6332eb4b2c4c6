"""What a claim says about a slot: the names and numbers it gives, and whether a second claim gives other ones.

"We deploy the frontend to Vercel" and "…to Netlify" share every word but one, and that word is the fact: the
second claim changes the slot, it does not repeat it. Bigram and word-overlap measures call such pairs duplicates;
these checks say which values each claim holds and whether one was swapped for another:
  * names: product, tool, person and place names, told by their spelling (GraphQL, REST, MySQL, Netlify
    mid-sentence), matched with light aliasing (Postgres = PostgreSQL, SPA = single page app);
  * numbers and versions ("v16" = "16");
  * antonyms standing where the other claim has their opposite (enable/disable, before/after, sync/async, …);
  * a word swapped in place ("exponential backoff" / "linear backoff"): the same frame, one word different.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from notewell.domain.similarity import (
    BE_FORMS,
    PLAIN_NEGATIONS,
    STOPWORDS,
    TIME_ADVERBS,
    amounts,
    denied_alike,
    negated_words,
    number,
    plain,
)
from notewell.domain.stemming import stem

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_WORD = re.compile(r"v?\d+(?:[.:]\d+)*[a-z%]*|[^\W\d_]+(?:[-'][^\W\d_]+)*", re.IGNORECASE)  # as similarity._TOKEN
_SENTENCE_START = re.compile(r"(?:^|[.!?;:\n]\s*|^\s*[-*#>]+\s*|\(\s*)$")
_DIGIT = re.compile(r"\d")
_PAUSE = re.compile(r"[,;:()\[\]\u2013\u2014]|\s-\s")
MIN_ALIAS = 4  # "postgres" is an alias of "postgresql"; "go" is not one of "google"

# Deployment environments, each with its other names: rivals of each other (below), not of themselves.
ENVIRONMENTS = (("dev", "development"), ("staging",), ("production", "prod"), ("sandbox",), ("qa",), ("uat",),
                ("preprod",))  # fmt: skip
ANTONYMS = {
    frozenset(pair)
    for pair in [
        ("enable", "disable"), ("allow", "deny"), ("allow", "forbid"), ("allow", "block"), ("accept", "reject"),
        ("increase", "decrease"), ("upgrade", "downgrade"), ("before", "after"), ("sync", "async"),
        ("synchronous", "asynchronous"), ("public", "private"), ("internal", "external"), ("push", "pull"),
        ("always", "never"), ("include", "exclude"), ("start", "stop"), ("open", "closed"), ("on", "off"),
        ("read", "write"), ("true", "false"), ("min", "max"), ("minimum", "maximum"), ("more", "less"),
        ("higher", "lower"), ("faster", "slower"), ("first", "last"), ("add", "remove"), ("encrypt", "decrypt"),
        ("online", "offline"), ("required", "optional"), ("mandatory", "optional"), ("inbound", "outbound"),
        ("client", "server"), ("lose", "gain"), ("win", "lose"), ("buy", "sell"), ("up", "down"), ("in", "out"),
        ("input", "output"), ("import", "export"), ("upload", "download"), ("local", "remote"),
        ("primary", "secondary"), ("primary", "replica"), ("old", "new"), ("early", "late"), ("cheap", "expensive"),
        ("small", "large"), ("big", "small"), ("short", "long"), ("hot", "cold"), ("success", "failure"),
        ("lock", "unlock"), ("mutable", "immutable"), ("stateful", "stateless"), ("horizontal", "vertical"),
        ("lazy", "eager"), ("strict", "lenient"), ("manual", "automatic"), ("male", "female"),
        ("man", "woman"), ("boy", "girl"), ("mother", "father"), ("mom", "dad"), ("husband", "wife"),
        ("son", "daughter"), ("brother", "sister"), ("king", "queen"), ("near", "far"), ("day", "night"),
        ("yes", "no"), ("like", "dislike"), ("love", "hate"),
        ("good", "bad"), ("high", "low"), ("pass", "fail"), ("succeed", "fail"),
        ("succeeded", "failed"),  # the stemmer leaves "succeed" and "succeeded" apart, and "add" and "added"
        ("added", "removed"), ("won", "lost"), ("gained", "lost"), ("bought", "sold"), ("forbidden", "allowed"),
        ("kept", "removed"), ("began", "finished"), ("began", "ended"),  # past forms the stemmer does not reach
        # states a note reports: "Login works." / "Login is broken." (WordNet gives "work" and "break" a sense in
        # common), "The queue is empty." / "… full."
        ("working", "broken"), ("empty", "full"), ("approve", "reject"), ("acquire", "release"),
        ("flaky", "stable"), ("create", "drop"), ("create", "delete"),
        # (not "enabled" / "off" nor "offline" / "up": a text holding a word's opposite flips nothing, and "on" and "up"
        # are in most texts: "went offline after we set up the proxy" / "went online …" would flip nothing)
        ("warm", "cold"),
        # a step of a decision or a document is not the next one: "evaluating Kafka" / "adopted Kafka"
        ("evaluate", "adopt"), ("consider", "adopt"), ("draft", "final"), ("draft", "published"),
        ("weekday", "weekend"), ("weekdays", "weekends"), ("upstream", "downstream"), ("above", "below"),
        ("over", "under"), ("inside", "outside"), ("allowlist", "blocklist"), ("whitelist", "blacklist"),
        ("same", "different"), ("beginning", "end"), ("start", "end"), ("start", "finish"), ("first", "final"),
        ("beginning", "final"), ("assert", "deny"), ("confirm", "deny"), ("affirm", "deny"), ("actual", "fictional"),
        ("real", "fictional"), ("real", "fake"), ("fact", "fiction"), ("least", "most"), ("more", "fewer"),
        ("exactly", "least"), ("exactly", "most"),  # "exactly-once delivery" is not "at-least-once"
        ("soft", "hard"),  # "soft-deleted" / "hard-deleted", a soft limit / a hard one
        ("easy", "hard"), ("easy", "difficult"), ("earlier", "later"), ("older", "newer"),
        # sizes and speeds, and their comparatives: the stemmer keeps "larger" apart from "large", and the model
        # scores "larger" / "smaller" as alike (0.87), so "uploads larger than 10 MB" / "… smaller …" was a repeat
        ("fast", "slow"), ("strong", "weak"), ("heavy", "light"), ("wide", "narrow"), ("young", "old"),
        ("dark", "light"), ("better", "worse"), ("best", "worst"), ("larger", "smaller"), ("bigger", "smaller"),
        ("largest", "smallest"), ("biggest", "smallest"), ("longer", "shorter"), ("longest", "shortest"),
        ("hotter", "colder"), ("warmer", "colder"), ("highest", "lowest"), ("fastest", "slowest"),
        ("earliest", "latest"), ("oldest", "newest"), ("older", "younger"), ("easier", "harder"),
        ("stronger", "weaker"), ("heavier", "lighter"), ("wider", "narrower"), ("greater", "less"),
        ("greater", "smaller"), ("greater", "fewer"), ("cheaper", "costlier"),
        # a status and the one it moves on to: "waiting on the vendor for the key" / "received the key"
        ("wait", "receive"), ("waiting", "received"), ("pending", "approved"), ("pending", "done"),
        ("pending", "complete"), ("pending", "merged"), ("pause", "resume"), ("paused", "resumed"),
        ("ongoing", "resolved"), ("healthy", "degraded"), ("keep", "remove"),
        # how often: "always" is not "sometimes", "never" is not "often"
        *(("always", w) for w in ("sometimes", "occasionally", "rarely", "seldom", "usually", "often")),
        *(("never", w) for w in ("sometimes", "occasionally", "usually", "often")),
        # one deployment environment is not another ("staging" and "production" share a sense in WordNet: a show)
        *((a, b) for x, y in itertools.combinations(ENVIRONMENTS, 2) for a in x for b in y),
    ]
}  # fmt: skip
# The states a note gives a flag, a service or a task, each state with its other names. In a sentence otherwise kept
# word for word, a state put in place of another of its kind says the other thing ("The flag is true." / "… off.":
# WordNet relates neither way, and a model weighs the pair as it weighs a synonym), and one of the same state says
# the same ("… false." / "… off."; "Caching is off." / "… disabled." was a conflict with the model).
STATES = (
    (("on", "enabled", "true", "active"), ("off", "disabled", "false", "inactive")),  # a flag, a setting
    (("up", "online", "running", "available"), ("down", "offline", "unavailable")),  # a service
    (("done", "complete", "completed", "finished"), ("pending", "waiting", "awaiting", "blocked"),
     ("running", "ongoing", "underway")),  # a task
    (("fixed", "resolved"), ("open", "reopened", "unresolved", "unfixed")),  # a bug, an incident
)  # fmt: skip
# Words a sentence may add to a state, or leave out, and say it all the same: "The flag is now off."
_STATE_ADVERBS = TIME_ADVERBS | {"currently"}


def _states_of_words() -> dict[str, frozenset[tuple[int, int]]]:
    """Each word's (kind, state) in STATES: "running" is a service up and a task under way."""
    states: dict[str, set[tuple[int, int]]] = {}
    for kind, kind_states in enumerate(STATES):
        for state, words in enumerate(kind_states):
            for word in words:
                states.setdefault(word, set()).add((kind, state))
    return {word: frozenset(them) for word, them in states.items()}


_STATES_OF = _states_of_words()
# Opposites that stand as parts of a compound only: "client-side" / "server-side" flips as "client" / "server" do,
# and so do "single-threaded" / "multi-threaded", "pre-release" / "post-release", "read-only" / "read-write".
COMPOUND_ANTONYMS = {
    frozenset(pair) for pair in [("single", "multi"), ("pre", "post"), ("left", "right"), ("only", "write")]
}


def _by_stem(pairs: set[frozenset[str]]) -> dict[str, frozenset[str]]:
    """Each stem's opposites, both ways ("enabl" -> {"disabl"})."""
    opposites: dict[str, set[str]] = {}
    for pair in pairs:
        x, y = (stem(word) for word in sorted(pair))
        if x != y:
            opposites.setdefault(x, set()).add(y)
            opposites.setdefault(y, set()).add(x)
    return {word: frozenset(them) for word, them in opposites.items()}


_OPPOSITES = _by_stem(ANTONYMS)
_PART_OPPOSITES = _by_stem(ANTONYMS | COMPOUND_ANTONYMS)

# Units of measure, each form to the unit it names: another unit in the place of one is another quantity ("30
# seconds" / "30 minutes", "hourly" / "daily"), whatever senses the words share (WordNet holds "second" and "minute"
# both for "a moment", "days" and "years" for a lifetime).
UNITS = {
    form: unit
    for unit, forms in {
        "nanosecond": "ns nanosecond nanoseconds", "microsecond": "us µs microsecond microseconds",
        "millisecond": "ms msec msecs millisecond milliseconds", "second": "sec secs second seconds",
        "minute": "min mins minute minutes", "hour": "hr hrs hour hours hourly", "day": "day days daily nightly",
        "week": "wk wks week weeks weekly", "fortnight": "fortnight fortnights fortnightly",
        "month": "month months monthly", "quarter": "quarter quarters quarterly",
        "year": "yr yrs year years yearly annually annual", "decade": "decade decades",
        "century": "century centuries",
        "bit": "bit bits", "byte": "byte bytes", "kilobyte": "kb kilobyte kilobytes", "kibibyte": "kib",
        "megabyte": "mb megabyte megabytes", "mebibyte": "mib", "gigabyte": "gb gigabyte gigabytes",
        "gibibyte": "gib", "terabyte": "tb terabyte terabytes", "tebibyte": "tib", "petabyte": "pb petabyte petabytes",
        "millimetre": "mm millimeter millimeters millimetre millimetres",
        "centimetre": "cm centimeter centimeters centimetre centimetres",
        "metre": "meter meters metre metres", "kilometre": "km kilometer kilometers kilometre kilometres",
        "inch": "inch inches", "foot": "ft foot feet", "yard": "yard yards", "mile": "mile miles",
        "milligram": "mg milligram milligrams", "gram": "gram grams", "kilogram": "kg kilogram kilograms kilo kilos",
        "pound": "lb lbs pound pounds", "ounce": "oz ounce ounces", "ton": "ton tons tonne tonnes",
        "cent": "cent cents", "dollar": "usd dollar dollars", "euro": "eur euro euros", "yen": "jpy yen",
        "hertz": "hz hertz", "kilohertz": "khz kilohertz", "megahertz": "mhz megahertz", "gigahertz": "ghz gigahertz",
    }.items()
    for form in forms.split()
}  # fmt: skip
FREQUENCIES = frozenset(
    {"hourly", "daily", "nightly", "weekly", "fortnightly", "monthly", "quarterly", "yearly", "annually"}
)

# Words whose swap leaves a claim as it was ("each" record / "every" record, "via" / "through").
LIGHT = frozenset(
    {"each", "every", "via", "through", "get", "gets", "got", "is", "are", "be", "becom", "kind", "sort", "type",
     "lot", "lots", "many", "much", "way", "ways", "thing", "things", "one", "someone", "somebody", "people",
     "person", "guy", "guys", "good", "best", "better", "great", "nice", "really", "very", "just", "only",
     "quick", "quickest", "fast", "fastest", "easy", "easiest", "simple", "simplest"}
)  # fmt: skip


# Modal verbs of what may or would be: "the team could adopt Terraform" / "the team adopts Terraform" is a
# possibility and a fact. Not "should" nor "must": "agents should call get_context" and "agents call get_context"
# state one convention.
MODALS = frozenset({"could", "would"})
ALL_MODALS = MODALS | {"can", "may", "might", "must", "shall", "will"}
# Verbs of intent or attempt before "to": what they take is aimed at, not done ("tried to shard the table" /
# "sharded the table", "hopes to ship" / "ships", "was supposed to expire" / "expires"). Not "need": "we need to
# rotate the keys" states a rule as "we rotate the keys" does, as "should" does.
INTENTS = frozenset(
    stem(w)
    for w in ("try", "tried", "want", "hope", "wish", "intend", "aim", "plan", "attempt", "seek", "sought", "mean",
              "meant", "supposed", "expect", "promise")
)  # fmt: skip


# Words that bound or hedge a claim: dropped from an otherwise repeated sentence they leave another claim ("far from
# perfect" -> "perfect", "may be cached" -> "is cached", "mostly idle" -> "idle").
QUALIFIERS = frozenset(
    {"far", "beyond", "above", "more", "less", "most", "least", "almost", "nearly", "partly", "partially", "half",
     "halfway", "somewhat", "mostly", "largely", "either", "only", "rarely", "seldom", "sometimes", "occasionally",
     "usually", "often", "possibly", "probably", "perhaps", "maybe", "likely", "unlikely", "allegedly", "supposedly",
     "apparently", "ideally", "hopefully", "theoretically", "may", "might", *MODALS,
     # what a thing was, or is only planned or said to be: "the former team lead", "the proposed schema", "a fake
     # alarm" is not the team lead, the schema or an alarm
     "former", "previous", "ex", "erstwhile", "proposed", "planned", "draft", "tentative", "potential",
     "hypothetical", "fake", "alleged", "mock", "would-be", "so-called", "false", "counterfeit", "imitation",
     "imaginary", "pseudo", "faux",
     # what is missing: "the lack of tests slows reviews" does not say tests slow them
     "lack", "absence", "shortage"}
)  # fmt: skip


PUT_IN_WORDS = 3  # "was supposed to expire" / "expires": a qualifier put in brings at most this many words
# Qualifiers that stress or narrow a claim more than they change it, put in: "only three options" / "three
# options", "at least 15" / "15", "either real or metaphorical" / "real or metaphorical". Left out they still count
# ("far from perfect" -> "perfect").
STRESSING = frozenset({"only", "more", "less", "most", "least", "either", "far", "beyond", "above"})


@dataclass(frozen=True, slots=True)
class Values:
    names: frozenset[str]  # casefolded
    numbers: frozenset[str]  # casefolded, without a leading "v"
    words: tuple[str, ...]  # every word, casefolded, in order (numbers normalised too)
    capitalised: frozenset[str]  # words written with a capital anywhere, sentence starts included (casefolded)
    headline: bool = False  # most words capitalised: capitals tell no names apart
    paused: frozenset[int] = frozenset()  # where a word follows a comma, a dash, a colon or a bracket
    paths: frozenset[str] = frozenset()  # paths, file names, URLs and cloud identifiers, casefolded, whole


HEADLINE_CAPITALS = 0.6  # this share of a text's longer words capitalised: a headline, where a capital names nothing


def _headline(text: str) -> bool:
    words = _WORD.findall(text)
    longer = [w for w in words if len(w) > 3 and not _DIGIT.search(w)]
    # three longer words besides the first, capitalised in any sentence: "Sessions are stored in Memcached." has
    # two, and one name among them is no headline
    after_first = sum(len(w) > 3 and not _DIGIT.search(w) for w in words[1:])
    return after_first >= 3 and sum(w[0].isupper() for w in longer) >= HEADLINE_CAPITALS * len(longer)


SENTENCE_REACH = 64


def _at_sentence_start(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence, a list item or a parenthesis. Looks back SENTENCE_REACH
    characters, not the whole text (a long note has many capitals); blanks and bullets only within reach are
    decided on the whole text, since they may open it."""
    window = text[max(0, start - SENTENCE_REACH) : start]
    if start > SENTENCE_REACH and not window.strip(" \t\n-*#>("):
        window = text[:start]
    return bool(_SENTENCE_START.search(window))


LONG_TEXT = 8_000  # characters: a text longer than this is kept in the small cache (a 100k-character note's values
#                   are about 1 MB; 1,024 of them would hold a gigabyte)


def values(text: str) -> Values:
    """The names, numbers and words of `text`. Kept for the texts read again (remember reads the same content against
    every candidate, and a candidate against every remember): many short texts, a few long ones."""
    return _short_values(text) if len(text) <= LONG_TEXT else _long_values(text)


@functools.lru_cache(maxsize=1_024)
def _short_values(text: str) -> Values:
    return _read_values(text)


@functools.lru_cache(maxsize=16)
def _long_values(text: str) -> Values:
    return _read_values(text)


def _read_values(text: str) -> Values:
    text = amounts(plain(text))
    names: set[str] = set()
    numbers: set[str] = set()
    words: list[str] = []
    capitalised: set[str] = set()
    paused: set[int] = set()
    headline = _headline(text)
    end = 0
    for match in _WORD.finditer(text):
        token = match.group()
        if _PAUSE.search(text, end, match.start()):
            paused.add(len(words))
        end = match.end()
        if _DIGIT.search(token):
            numbers.add(number(token))
            words.append(number(token))
            continue
        words.append(token.casefold())
        if len(token) < 2 or token == "I" or text.startswith("$", match.end()):  # "US$38b": a currency, no name
            continue
        if token[0].isupper():
            capitalised.add(token.casefold())
        inner_capital = any(ch.isupper() for ch in token[1:])  # GraphQL, MySQL, REST, SQLite, iOS
        mid_sentence_capital = token[0].isupper() and not headline and not _at_sentence_start(text, match.start())
        if inner_capital or mid_sentence_capital:
            names.add(token.casefold())
    return Values(
        frozenset(names), frozenset(numbers), tuple(words), frozenset(capitalised), headline, frozenset(paused),
        _paths(text),
    )  # fmt: skip


# Paths and file names are values, whole: "src/config/settings.py" / "src/settings.py" names another file, and
# the words inside a path tell it from nothing. A path: two slashes or more, a leading "/", "./" or "~/", or a last
# part with an extension; not "and/or" or "read/write".
_PATH = re.compile(r"(?<![\w.:/-])(?:~/|\.{1,2}/|/)?(?:[\w.-]+/)+[\w.-]*\w|(?<![\w/])/[\w.-]*\w")
_FILE = re.compile(
    r"(?<![\w./-])[\w-]+\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|java|kt|rb|php|cs|c|h|cpp|swift|json|ya?ml|toml|ini|cfg"
    r"|conf|env|md|rst|txt|csv|sql|sh|lock|html|css|tf|xml|proto)\b"
)
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,4}$", re.IGNORECASE)
_URL = re.compile(r"\bhttps?://[^\s<>\"']*[\w/]")
# Cloud identifiers are values too, whole: an instance type ("t3.large" / "t3.xlarge": the lexicon took "xlarge"
# for a misspelling of "large", and the two for one value) or a region ("us-east-1" / "us-west-2").
_CLOUD_ID = re.compile(
    r"(?<![\w.-])(?:[a-z]+\.)?[a-z]\d+[a-z]*\.\d*[a-z]+(?![\w-])"
    r"|(?<![\w-])(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-[a-z]+-\d(?![\w-])",
    re.IGNORECASE,
)


def _paths(text: str) -> frozenset[str]:
    found = {m.group().casefold() for m in (*_FILE.finditer(text), *_URL.finditer(text), *_CLOUD_ID.finditer(text))}
    for match in _PATH.finditer(text):
        path = match.group()
        if path.startswith(("/", "./", "../", "~/")) or path.count("/") >= 2 or _EXTENSION.search(path):
            found.add(path.casefold())
    return frozenset(found)


def words(text: str) -> frozenset[str]:
    """The distinct words and numbers of `text`, casefolded (numbers as `values` normalises them)."""
    return frozenset(number(w) if _DIGIT.search(w) else w.casefold() for w in _WORD.findall(amounts(plain(text))))


def aliases(a: str, b: str) -> bool:
    """One name for the same thing: equal, one a prefix of the other (Postgres, PostgreSQL), or its plural (JWT,
    JWTs)."""
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return (len(shorter) >= MIN_ALIAS and longer.startswith(shorter)) or longer in (shorter + "s", shorter + "es")


def _acronym_of(name: str, words: tuple[str, ...]) -> bool:
    """SPA in "single page app": the name's letters are the initials of consecutive words of the other text."""
    if not 2 <= len(name) <= 6 or not name.isalpha():
        return False
    initials = "".join(w[0] for w in words if w)
    return (
        name in initials
        and len(name) >= 2
        and any("".join(w[0] for w in words[i : i + len(name)]) == name for i in range(len(words) - len(name) + 1))
    )


def _missing_names(names: frozenset[str], other: Values) -> set[str]:
    return {
        n for n in names
        if not any(aliases(n, w) for w in other.words) and not _acronym_of(n, other.words)
    }  # fmt: skip


@dataclass(frozen=True, slots=True)
class SlotChange:
    names_swapped: bool  # a name of the old claim is gone and another one stands in the new claim
    numbers_swapped: bool  # a number (or a unit) of the old claim is gone and another one stands in the new claim
    antonym_flipped: bool  # a word of one claim has its opposite in the other
    word_swapped: bool  # the same frame with a word or two swapped in place ("exponential" -> "linear")
    new_values: bool  # the new claim names or numbers something the old one does not
    # Phrases of up to three words put in place of others, the rest of the sentence kept ("bedroom" ->
    # "living room"): whether each is a synonym or another value is for a model to weigh (swap_similarity).
    replacements: tuple[tuple[str, str], ...] = ()
    only_replacements: bool = False  # the replacements are the only difference in content words
    # Each name gone from the old claim with each name new in the other: a model tells a respelling or the same
    # place said otherwise (Islamist/Islamic, UK/Britain) from another thing (Vercel/Netlify).
    renamed: tuple[tuple[str, str], ...] = ()
    # The new claim is the old one shortened (it adds no word of substance) and leaves out a qualifier, or the old
    # one with a qualifier put in and little else ("crashed" -> "almost crashed").
    qualifier_dropped: bool = False
    # The new claim is the old one with words cut out, and the cut ended on a word that took what follows it ("made
    # of fiberglass aged to look like real brick" -> "made of real brick"), joined the start of a clause to the
    # end of the one set against it ("the service is fast but the database is slow" -> "the service is slow"), or
    # took a clause's subject away ("the manager knew the engineer broke the build" -> "the manager broke the
    # build"): what follows now completes another phrase, and says another thing. The last two either way round.
    cut_rejoined: bool = False
    # One claim is said in the other only as what someone says, thinks or asks, or as a condition ("Alice argued
    # that we should drop Redis" / "We should drop Redis"; "If the deploy fails, we roll back" / "We roll back"):
    # stated outright it is another claim, whichever text came first.
    unasserted: bool = False
    # A word's opposite stands in its place, negated in one claim only: "an open path" / "not a closed path" says
    # the same, and the negation it adds changes nothing.
    negated_opposite: bool = False
    # A path, a file name or a URL of the old claim is gone and another stands in the new one: another file, spelt
    # exactly (no model weighs it: "/health" and "/healthz" are two endpoints, not a typo).
    paths_swapped: bool = False
    # Every difference is a word of STATES put in place of another of the same state ("off" / "disabled"): the same
    # claim. (Another state of the kind put in place is an antonym flipped.)
    state_restated: bool = False

    @property
    def changed(self) -> bool:
        return (
            self.names_swapped or self.numbers_swapped or self.antonym_flipped or self.qualifier_dropped
            or self.cut_rejoined or self.unasserted or self.paths_swapped
        )  # fmt: skip


@functools.lru_cache(maxsize=256)  # judged, and weighed beforehand, for the same pairs
def changed_slots(old: str, new: str) -> SlotChange:
    """How `new` changes the slots of `old`."""
    a, b = values(old), values(new)
    old_names_gone, new_names_added = _missing_names(a.names, b), _missing_names(b.names, a)
    old_numbers_gone = {n for n in a.numbers if n not in b.numbers}
    new_numbers_added = {n for n in b.numbers if n not in a.numbers}
    old_stems = {stem(w) for w in a.words}
    new_stems = {stem(w) for w in b.words}
    old_only, new_only = old_stems - new_stems, new_stems - old_stems
    flips = [(x, y) for x in old_only for y in _OPPOSITES.get(x, ()) if y in new_only]
    old_negated = {stem(w) for w in negated_words(list(a.words))} if flips else set()
    new_negated = {stem(w) for w in negated_words(list(b.words))} if flips else set()
    # A word whose opposite its own text already holds is contrasted there ("the big countries at the expense of
    # the small"), and a word said otherwise beside it ("large") flips nothing.
    flipped = any(
        (x in old_negated) == (y in new_negated) and not _OPPOSITES[x] & old_stems and not _OPPOSITES[y] & new_stems
        for x, y in flips
    )
    # A word's opposite, with a negation one text has and the other lacks ("open" / "not … closed")
    said_otherwise = frozenset((x, y) for x, y in flips if (x in old_negated) != (y in new_negated))
    denial_changed = _denials(a.words) != _denials(b.words)
    swaps = _swapped_in_place(a.words, b.words)
    # one unit put for another, and nothing else in its place ("30 seconds" / "30 minutes"; not "365 days" / "the year")
    unit_swapped = any(
        all(w in UNITS for w in (*gone, *came)) and _units(gone) != _units(came) for gone, came in swaps
    ) or _measured_otherwise(a, b)
    # "Alice owns billing" / "Bob owns billing": names at the start of a sentence, told by the swap in place.
    capital_swaps = [
        (" ".join(gone), " ".join(came))
        for gone, came in swaps
        if any(w in a.capitalised and w not in CONNECTIVES for w in gone)
        and any(w in b.capitalised and w not in CONNECTIVES for w in came)
        and not (a.headline or b.headline)
    ]
    capital_swap = bool(capital_swaps)
    shortened = not any(w not in FUNCTION_WORDS and stem(w) in new_only for w in b.words)
    new_modals = set(b.words) & ALL_MODALS - b.names
    dropped = shortened and (_qualifier_dropped(a.words, b.words, new_modals) or _exception_dropped(a.words, b.words))
    # and the other way: the old claim with a qualifier put in ("crashed" / "almost crashed", "the owner" / "the
    # former owner") is another claim, not the same one with a word more. Only a few words more: a note with a
    # sentence added ("… Admins are usually rate limited too.") adds a detail, and updates the note.
    lengthened = len(b.words) - len(a.words) <= PUT_IN_WORDS and not any(
        w not in FUNCTION_WORDS and stem(w) in old_only for w in a.words
    )
    old_modals = set(a.words) & ALL_MODALS - a.names
    qualified = lengthened and _qualifier_dropped(b.words, a.words, old_modals, STRESSING)
    put = state_put(old, new)
    return SlotChange(
        names_swapped=(bool(old_names_gone) and bool(new_names_added)) or capital_swap,
        numbers_swapped=(bool(old_numbers_gone) and bool(new_numbers_added))
        or unit_swapped
        or _quantifier_swapped(a.words, b.words)
        or _only_widened(a.words, b.words)
        or _only_widened(b.words, a.words)
        or _count_dropped(a, b)
        or _count_dropped(b, a),
        antonym_flipped=flipped or _compound_flipped(a.words, b.words) or put == STATE_FLIPPED,
        word_swapped=bool(swaps),
        new_values=bool(new_names_added) or bool(new_numbers_added),
        renamed=(
            *((g, c) for g in sorted(old_names_gone)[:MAX_NAMES] for c in sorted(new_names_added)[:MAX_NAMES]),
            *capital_swaps[:MAX_NAMES],
        ),
        qualifier_dropped=dropped or qualified,
        # and the other way: the same words put in ("the service is slow" -> "the service is fast but the database
        # is slow") was an update that overwrote the claim with its opposite
        cut_rejoined=_cut_rejoined(a.words, b.words, a.paused)
        or _cut_rejoined(b.words, a.words, b.paused, governing=False),
        unasserted=_unasserted(old, b.words) or _unasserted(new, a.words) or _asks(old) != _asks(new),
        negated_opposite=bool(said_otherwise),
        paths_swapped=bool(a.paths - b.paths) and bool(b.paths - a.paths),
        state_restated=put == STATE_RESTATED,
        **_replacements(a.words, b.words, said_otherwise if denial_changed else frozenset()),
    )


# How many of a kind a claim speaks of: one of these put in place of another in another group ("some endpoints" /
# "all endpoints", "most tests" / "every test") is another amount. Not "several": between some and many, it is said
# for either.
QUANTIFIERS = {
    word: group
    for group, forms in {
        "all": "all every each", "some": "some", "most": "most", "many": "many", "few": "few"
    }.items()
    for word in forms.split()
}  # fmt: skip


def _amount(words: tuple[str, ...], at: int) -> str | None:
    word = words[at]
    if word == "few" and at and words[at - 1] in ("a", "quite"):
        return "some"  # "a few" is some, "few" next to none
    return QUANTIFIERS.get(word)


# Words that open a claim to every one of a kind: "only the billing service may write" / "any service may write".
_WIDENING = frozenset({"any", "all", "every", "each", "anyone", "anybody", "everyone", "everybody"})


def _only_widened(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """`old` says "only" and `new` does not, and opens the claim to any or all in its place."""
    return "only" in old and "only" not in new and bool(_WIDENING.intersection(new) - set(old))


QUANTIFIER_WORDS = 3  # "some" / "all of the"


def _quantifier_swapped(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """A quantifier put in place of one of another group, nothing else of substance with it ("some" / "all")."""
    if QUANTIFIERS.keys().isdisjoint(old) or QUANTIFIERS.keys().isdisjoint(new):
        return False
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 > QUANTIFIER_WORDS or j2 - j1 > QUANTIFIER_WORDS:
            continue
        old_amounts = {_amount(old, i) for i in range(i1, i2)} - {None}
        new_amounts = {_amount(new, j) for j in range(j1, j2)} - {None}
        if (
            old_amounts
            and new_amounts
            and old_amounts != new_amounts
            and all(w in QUANTIFIERS or w in STOPWORDS for w in (*old[i1:i2], *new[j1:j2]))
        ):
            return True
    return False


def _units(words: Iterable[str]) -> frozenset[str]:
    return frozenset(UNITS[w] for w in words if w in UNITS)


def _measured_otherwise(a: Values, b: Values) -> bool:
    """A number both texts give is measured in another unit in each ("30 seconds" / "30 minutes, and retries ..."),
    or how often something happens is another frequency ("weekly" / "daily, after the import finishes")."""
    old, new = _measures(a), _measures(b)
    if any(units.isdisjoint(new[n]) for n, units in old.items() if n in new):
        return True
    old_often = {UNITS[w] for w in a.words if w in FREQUENCIES}
    new_often = {UNITS[w] for w in b.words if w in FREQUENCIES}
    return bool(old_often) and bool(new_often) and old_often.isdisjoint(_units(b.words))


def _count_dropped(a: Values, b: Values) -> bool:
    """A count of a unit in `a` (not one) left out of the same place in `b`, the unit kept: "every two weeks" /
    "every week". (Not "four years" / "four long years", nor "for 22 years" / "each year".)"""
    counted = {
        (before, UNITS[unit])
        for before, count, unit in zip(a.words, a.words[1:], a.words[2:], strict=False)
        if count in a.numbers and count != "1" and unit in UNITS
    }
    return bool(counted) and any(
        (before, UNITS[unit]) in counted for before, unit in itertools.pairwise(b.words) if unit in UNITS
    )


def _measures(v: Values) -> dict[str, set[str]]:
    measured: dict[str, set[str]] = {}
    for number_word, unit in itertools.pairwise(v.words):
        if number_word in v.numbers and unit in UNITS:
            measured.setdefault(number_word, set()).add(UNITS[unit])
    return measured


def _compound_flipped(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """A compound of `old` stands in `new` with one part put in its opposite ("client-side" / "server-side"), both
    negated or neither."""
    gone = [w for w in dict.fromkeys(old) if "-" in w and w not in new]
    came = [w for w in dict.fromkeys(new) if "-" in w and w not in old] if gone else []
    for old_word, new_word in ((g, c) for g in gone for c in came):
        old_parts, new_parts = _parts(old_word), _parts(new_word)
        differ = [(x, y) for x, y in zip(old_parts, new_parts, strict=False) if x != y]
        if (
            len(old_parts) == len(new_parts) and len(differ) == 1
            and stem(differ[0][1]) in _PART_OPPOSITES.get(stem(differ[0][0]), ())
            and (old_word in negated_words(list(old))) == (new_word in negated_words(list(new)))
        ):  # fmt: skip
            return True
    return False


def _parts(compound: str) -> list[str]:
    """The parts of a compound, a stopword among three or more aside: "at-least-once" stands against "exactly-once"
    ("on-site" keeps its "on": against "off-site")."""
    parts = compound.split("-")
    kept = [p for p in parts if p not in STOPWORDS]
    return kept if len(kept) >= 2 else parts


def _denials(words: tuple[str, ...]) -> int:
    return sum(w in PLAIN_NEGATIONS or w.endswith("n't") for w in words)


def _qualifier_dropped(
    old: tuple[str, ...], new_words: tuple[str, ...], new_modals: set[str], unless: frozenset[str] = frozenset()
) -> bool:
    """A qualifier of `old` missing from `new_words` while the word it qualified stays ("far from perfect" ->
    "perfect"). One dropped with what it qualified ("perhaps in a metaphorical sense", "become less intense") leaves
    the rest of the claim as it was. `new_modals`: the modal verbs of the new text ("May" the month is none);
    `unless`: qualifiers that do not count."""
    new = set(new_words)
    new_stems: set[str] | None = None
    for at, word in enumerate(old):
        if word in new or word in unless or not _qualifies(old, at):
            continue
        qualified = next((w for w in old[at + 1 :] if w not in STOPWORDS), None)
        if qualified is None:
            continue
        if _takes_verb(old, at):
            # The verb in any form ("could adopt" / "adopts", "tried to shard" / "sharded"), unless the new text
            # keeps the intent in another form ("needing to" / "needs to") or a modal of its own ("could" / "can"),
            # asks for it ("Could you check …" / "Check …"), keeps a condition it hangs on ("would fail without
            # …"), or the note has the verb elsewhere too (it may be that one the new text says).
            new_stems = new_stems if new_stems is not None else {stem(w) for w in new}
            target = stem(qualified)
            if (
                target in new_stems and stem(word) not in new_stems and not new_modals
                and not (word in MODALS and new & CONDITIONS) and not _bids(new_words, target)
                and sum(stem(w) == target for w in old) == 1
            ):  # fmt: skip
                return True
            continue
        # "used to call" said now is "call" or "calls"; "called" still says it was once
        forms = (qualified, qualified + "s", qualified + "es") if word == "used" else (qualified,)
        if word == "little":
            # "little" is a size too: where another word stands in its place ("one little girl" / "one small girl"),
            # it was that; "little hope" / "hope" leaves it out, what stood before it now before "hope"
            kept_before = {_be(old[at - 1]) if at else "", *map(_be, old[at + 1 : old.index(qualified, at)])}
            if any(w in forms and (_be(new_words[j - 1]) if j else "") in kept_before for j, w in enumerate(new_words)):
                return True
        elif any(form in new for form in forms):
            return True
    return False


# Words that take an exception out of a claim: "every endpoint except /health requires a key" / "every endpoint
# requires a key" says more than the note did.
EXCEPTING = frozenset({"except", "excepting", "excluding"})
# "all but", "everything but": plain() writes "except"; "for anything but flat-bottomed boats" denies nothing, yet
# dropping it says more than the note did
_EXCEPTING_PAIRS = frozenset({("other", "than"), ("apart", "from"), ("aside", "from"), ("anything", "but")})


def _exception_dropped(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """`old` makes an exception ("except", "other than", "apart from") that `new` does not."""

    def excepts(words: tuple[str, ...]) -> int:
        return sum(w in EXCEPTING for w in words) + sum(p in _EXCEPTING_PAIRS for p in itertools.pairwise(words))

    return excepts(old) > excepts(new)


def _be(word: str) -> str:
    """Any form of "be" as "be" ("may be cached" / "are cached")."""
    return "be" if word in BE_FORMS else word


_BIDDING = frozenset({"please", "always", "just", "now", "first", "then", "also"})


def _bids(words: tuple[str, ...], verb: str) -> bool:
    """Whether `words` open on `verb` (by stem), a word such as "please" or "always" aside: an instruction."""
    first = next((w for w in words if w not in _BIDDING), "")
    return stem(first) == verb


def _takes_verb(words: tuple[str, ...], at: int) -> bool:
    """Whether the word at `at` is a modal (MODALS) or a verb of intent before "to" (INTENTS): what it qualifies is
    the verb it takes."""
    word = words[at]
    return word in MODALS or (stem(word) in INTENTS and words[at + 1 : at + 2] == ("to",))


def _qualifies(words: tuple[str, ...], at: int) -> bool:
    """Whether the word at `at` qualifies what follows it: one of QUALIFIERS, a verb of intent before "to", "few"
    but not "a few" (some), and "used" in "used to" (no longer: "used to call the ledger" / "calls the ledger")."""
    word, before = words[at], words[at - 1] if at else ""
    if _takes_verb(words, at):
        return True
    if word == "one":  # "one of the largest customers" / "the largest customer"
        return words[at + 1 : at + 2] == ("of",)
    if word in ("few", "fewer"):
        return before not in ("a", "quite")
    if word == "little":  # "little hope" is next to none; "a little slow", "the little service" are not
        return before not in _DETERMINERS
    if word == "used":
        return words[at + 1 : at + 2] == ("to",) and before not in BE_FORMS  # "is used to call …": a purpose
    if word in ("too", "false"):  # "too small to hold", "a false positive"; "Redis too, and …", "false that …"
        return words[at + 1 : at + 2] != () and words[at + 1] not in STOPWORDS
    return word in QUALIFIERS


# Words that take the phrase after them: prepositions and particles ("look like …", "nets out …"). Not "of": a cut
# that ends on it drops the head of "X of Y" and keeps Y ("the amended version of the treaty" / "the amended treaty").
GOVERNING = frozenset(
    {"to", "from", "than", "before", "after", "over", "under", "into", "onto", "above", "below", "like", "as",
     "with", "by", "for", "out", "at", "on", "in", "about", "against", "toward", "towards", "through", "via",
     "without", "within", "upon", "off", "up", "down"}
)  # fmt: skip


def _cut_rejoined(
    old: tuple[str, ...], new: tuple[str, ...], paused: frozenset[int] = frozenset(), *, governing: bool = True
) -> bool:
    """`new` is `old` with words cut out only, and one cut of two words or more inside the text ends on a word that
    took the content word after it, or runs from inside a clause to inside the one set against it (_bridges), or
    takes a clause's subject away (_subject_cut). Cuts that end on a content word ("the frontend, built with Vite,
    to Vercel" -> "the frontend to Vercel") leave what follows where it was, and a cut that opens after a comma
    drops an aside. `paused`: where `old` has a comma, a dash or a bracket before a word (Values.paused).
    `governing=False` leaves out the first test: read the other way, words put in before a word that takes what
    follows ("logs go to S3" -> "logs go to Kinesis and then to S3") add a detail as often as not."""
    remaining = iter(old)
    if len(new) >= len(old) or not all(word in remaining for word in new):  # not a subsequence: no cut only
        return False
    cuts = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes() if op[0] != "equal"]
    return all(tag == "delete" for tag, *_ in cuts) and any(
        i2 - i1 >= 2
        and (
            i1 > 0
            and (
                governing
                and _governs(old[i1:i2])
                and _takes_content(old[i2:])
                or any(j1 not in paused and _bridges(old[j1:j2]) for j1, j2 in _slid(old, i1, i2))
            )
            or _subject_cut(old, i1, i2)
        )
        for _, i1, i2, _, _ in cuts
    )


def _slid(old: tuple[str, ...], i1: int, i2: int) -> Iterator[tuple[int, int]]:
    """The cut old[i1:i2] and the cuts that leave the same words: slid along where the word it takes at one end is
    the word it gives back at the other ("runs on [ARM and production runs on] x86" is "[runs on ARM and
    production] runs on x86")."""
    yield i1, i2
    left, right = i1, i2
    while left > 0 and old[left - 1] == old[right - 1]:
        left, right = left - 1, right - 1
        yield left, right
    left, right = i1, i2
    while right < len(old) and old[left] == old[right]:
        left, right = left + 1, right + 1
        yield left, right


# Verbs that take a clause and vouch for it ("knew the engineer broke the build"); REPORTING has those that do not.
VOUCHING = frozenset({
    stem(w)
    for w in ("know", "knew", "known", "see", "saw", "seen", "hear", "heard", "notice", "find", "found", "learn",
              "learned", "learnt", "realize", "realise", "show", "shown", "confirm", "report", "discover", "understand",
              "understood", "remember", "prove", "proven", "reveal", "feel", "felt", "mention", "note", "explain",
              "announce", "admit", "verify")
})  # fmt: skip
RELATIVE_PRONOUNS = frozenset({"who", "whom", "which"})


def _subject_cut(old: tuple[str, ...], i1: int, i2: int) -> bool:
    """Whether the cut old[i1:i2] takes a clause's subject away and gives its verb another: a verb that takes a
    clause cut with the clause's subject ("the manager [knew the engineer] broke the build" -> "the manager broke
    the build"), or a noun cut with the relative pronoun after it ("the [lawyer who] the client called approved
    …" -> "the client … approved …"). A cut that opens on the pronoun drops a relative clause whole."""
    cut = old[i1:i2]
    if cut[-1] in _ARTICLES:  # "the [lawyer who the] client": cut either side of "the"
        cut = cut[:-1]
    if cut[-1] in RELATIVE_PRONOUNS:
        return any(w not in STOPWORDS for w in cut[:-1])
    return (
        i1 > 0
        and (stem(cut[0]) in VOUCHING or stem(cut[0]) in REPORTING)
        and any(w not in STOPWORDS for w in cut[1:])
        and i2 < len(old)
        and old[i2] not in STOPWORDS
        and any(w not in STOPWORDS for w in old[:i1])
    )


# Words that set a clause against the one before it: a cut across one joins the start of the first to the end of the
# second, which says the opposite.
CONTRASTING = frozenset({"but", "while", "whereas", "although", "though", "yet"})
BRIDGE_WORDS = 6  # a longer cut drops more than the two halves of a contrast


# Verbs among the stopwords that take what follows them: a cut across "and" that ends on one (or on a preposition)
# ends inside the second clause's predicate.
_LINKING = frozenset({"is", "are", "was", "were", "be", "been", "use", "uses", "used", "has", "have", "had"})


def _bridges(cut: tuple[str, ...]) -> bool:
    """Whether the cut runs from inside one clause to inside the contrasting next one, words of substance on both
    sides of the contrasting word ("the service is [fast but the database is] slow" -> "the service is slow"). A cut
    that opens on that word drops a clause whole ("we host the API [but not the worker] on ECS"). Across "and" only
    a cut that ends on a word taking what follows joins two clauses ("staging runs on [ARM and production runs on]
    x86"); "[capital facilities and core competencies]", "[energetic and especially] underhanded" join words."""
    joins_clauses = cut[-1] in GOVERNING or cut[-1] in _LINKING
    return len(cut) <= BRIDGE_WORDS and any(
        (word in CONTRASTING or word == "and" and joins_clauses)
        and any(w not in STOPWORDS for w in cut[:at])
        and any(w not in STOPWORDS for w in cut[at + 1 :])
        for at, word in enumerate(cut)
    )


_ARTICLES = frozenset({"the", "a", "an"})
_DETERMINERS = _ARTICLES | {"this", "that", "these", "those", "my", "our", "your", "his", "her", "its", "their"}
# What a clause said after these is supposed or asked, not stated: "if the deploy fails", "whether it scales".
SUPPOSING = frozenset({"if", "unless", "whether"})
CONDITIONAL = SUPPOSING - {"whether"}  # a clause they open, and the sentence around it, hang on a condition
# What a modal's claim may hang on, kept in a text that drops the modal ("would fail without the migration step").
CONDITIONS = CONDITIONAL | {"without", "otherwise"}
# Stems of verbs that report a claim without vouching for it ("argued that", "claims", "wonders whether"); verbs
# that vouch for it ("knows that", "showed that") are left out: what they report stays asserted.
REPORTING = frozenset(
    stem(w)
    for w in (
        "say", "says", "said", "claim", "argue", "think", "thought", "believe", "suggest", "hope", "wish", "doubt",
        "suppose", "assume", "guess", "fear", "figure", "expect", "imagine", "pretend", "insist", "predict",
        "propose", "wonder", "allege", "reckon", "suspect", "speculate", "deny", "rumour", "rumor", "worry", "ask",
        "seem", "appear",  # "it seems the leak comes from the pool" hedges it
        # and nouns and adjectives that say a claim is only held, or false: "the myth that", "it is false that"
        "myth", "misconception", "notion", "belief", "assumption", "false", "untrue",
    )
)  # fmt: skip
_CLAUSE_END = re.compile(r"[.!?;:]+(?:\s+|$)|\n+")


def _unasserted(text: str, claim: tuple[str, ...]) -> bool:
    """Whether `claim` (two words or more) stands whole inside one sentence of `text` as a clause that sentence
    only reports, supposes or asks about: after "if", "unless" or "whether", after a reporting verb (and "that"),
    before "if" or "unless", in a sentence that opens with "if", "unless" or "according to", or one that ends on
    who says it ("…, the vendor says")."""
    size = len(claim)
    if size < 2 or claim[0] not in values(text).words:  # the claim can stand only where its first word does
        return False
    # in any tense: "I wish we used Redis" only wishes what "We use Redis" states
    stems = [stem(w) for w in claim]
    for sentence in _CLAUSE_END.split(text):
        words = values(sentence).words
        if len(words) <= size or claim[0] not in words:
            continue
        for start, word in enumerate(words[: len(words) - size + 1]):
            if (
                word == claim[0] and [stem(w) for w in words[start : start + size]] == stems
                and _supposed(words, start, start + size)
            ):  # fmt: skip
                return True
    return False


def _asks(text: str) -> bool:
    """Whether `text` ends on a question: "Is the cache shared between tenants?" asks what "The cache is shared
    between tenants." states."""
    return text.strip().rstrip("'\")]\u2019\u201d ").endswith("?")


def _supposed(words: tuple[str, ...], start: int, end: int) -> bool:
    before = words[start - 1] if start else ""
    verb = start - 2 if before == "that" else start - 1
    after = words[end:]
    return (
        before in SUPPOSING
        or (verb >= 0 and stem(words[verb]) in REPORTING)
        or (before == "that" and start >= 3 and words[start - 3] == "little" and _qualifies(words, start - 3))
        or (bool(after) and after[0] in CONDITIONAL)
        or (start > 0 and words[0] in CONDITIONAL)
        # "When the queue is full, requests are rejected" / "… rejected whenever the queue is full": a condition, as
        # "if" is; "when the deploy finished, we left" tells when, and "we left" stands
        or (start > 0 and words[0] in WHENEVER and not _past(words[:start]))
        or (bool(after) and after[0] in WHENEVER - {"once"} and not _past(after) and not _past(words[start:end]))
        or (start > 2 and words[:2] == ("according", "to"))  # "According to the vendor, the API …"
        # "…, the vendor says" / "…, says the vendor": the sentence ends on who says it
        or (0 < len(after) <= REPORTER_WORDS and any(stem(w) in REPORTING for w in after))
    )


WHENEVER = frozenset({"when", "whenever", "once"})
_PAST_MARKERS = frozenset({"was", "were", "had", "did"})
_PERFECT_OR_PASSIVE = BE_FORMS | {"has", "have"}


def _past(words: tuple[str, ...]) -> bool:
    """Whether a clause tells of the past: "was", "had", "did", or a verb in "-ed" that no "is" or "has" goes with."""
    return any(
        w in _PAST_MARKERS or (w.endswith("ed") and len(w) > 4 and (i == 0 or words[i - 1] not in _PERFECT_OR_PASSIVE))
        for i, w in enumerate(words)
    )


REPORTER_WORDS = 4  # "the vendor says", "Alice thinks", "our account manager claims"


# Verbs whose "to" takes what was decided or is required: "we decided to keep Redis" says "we keep Redis", "we need
# to rotate the keys" "we rotate the keys".
DECIDING = frozenset(
    stem(w) for w in ("decide", "decided", "agree", "agreed", "opt", "opted", "resolve", "vote", "need", "required")
)


def _governs(cut: tuple[str, ...]) -> bool:
    """Whether the cut ends on a word that takes a phrase, an article aside ("… nets out | the overhead" is cut
    either side of "the"); not the "to" of a decision ("we [decided to] keep Redis")."""
    last = cut[-2] if cut[-1] in _ARTICLES else cut[-1]
    if last == "to" and all(stem(w) in DECIDING for w in cut[:-1] if w not in STOPWORDS):
        return False  # "we [have to] rotate the keys" too: a "to" after no word of substance takes a verb
    return last in GOVERNING


def _takes_content(rest: tuple[str, ...]) -> bool:
    """Whether `rest` opens with a content word, an article aside ("… out the overhead")."""
    rest = rest[1:] if rest[:1] and rest[0] in _ARTICLES else rest
    return bool(rest) and rest[0] not in STOPWORDS


# Words that open a sentence with a capital and name nothing: "Yet a process…" / "However, a process…" is no name
# swapped for another.
CONNECTIVES = STOPWORDS | {
    "yet", "however", "moreover", "furthermore", "besides", "thus", "therefore", "hence", "still", "meanwhile",
    "nevertheless", "nonetheless", "indeed", "though", "although", "while", "whereas", "now", "today", "here",
    "there", "first", "firstly", "second", "secondly", "finally", "instead", "otherwise", "accordingly",
    "consequently", "additionally", "similarly", "likewise", "overall", "currently", "previously", "initially",
}  # fmt: skip
MAX_REPLACED_WORDS = 3
# Phrases that say the same put for each other: that something is no longer done ("we no longer use Celery" / "we
# stopped using Celery"), and what someone would have ("wants to keep Redis" / "would rather keep Redis").
CEASING = frozenset({("no", "longer"), ("not", "any", "longer"), ("stopped",), ("stop",), ("stops",), ("ceased",)})
PREFERRING = frozenset({
    ("want", "to"), ("wants", "to"), ("would", "rather"), ("would", "like", "to"), ("prefer", "to"),
    ("prefers", "to"), ("would", "prefer", "to"),
})  # fmt: skip
# One denial said two ways: "Do not deploy without a review." / "Never deploy without a review.". Not "is not" /
# "is never" (now against always).
DENYING_ALWAYS = frozenset({("never",), ("do", "not"), ("does", "not"), ("will", "not"), ("must", "never")})
# A verb that denies, said with a denial, in the same tense: "lacks pagination" / "has no pagination", "breaks
# backwards compatibility" / "is not backwards compatible" ("broke" / "breaks" is left to the model: the same verb).
LACKING = frozenset({("lacks",), ("has", "no"), ("have", "no"), ("does", "not", "have"), ("do", "not", "have")})
LACKED = frozenset({("lacked",), ("had", "no"), ("did", "not", "have")})
BREAKING = frozenset({("breaks",), ("is", "not"), ("are", "not")})
BROKE = frozenset({("broke",), ("was", "not"), ("were", "not")})
INTERCHANGEABLE = (CEASING, PREFERRING, DENYING_ALWAYS, LACKING, LACKED, BREAKING, BROKE)
# Words that carry no value of their own: a phrase made only of them is never weighed as a replacement.
FUNCTION_WORDS = STOPWORDS | {"each", "every", "via", "through", "per", "get", "gets", "got"}
_ONE_DENIAL = frozenset({"not", "never", "no"})
MAX_NAMES = 3  # names weighed on each side, at most


def _replacements(
    old: tuple[str, ...], new: tuple[str, ...], said_otherwise: frozenset[tuple[str, str]] = frozenset()
) -> dict[str, Any]:
    """The phrases of `new` standing where phrases of `old` stood (each at most MAX_REPLACED_WORDS words, with a
    content word on both sides), and whether nothing else of substance differs."""
    matcher = difflib.SequenceMatcher(a=[stem(w) for w in old], b=[stem(w) for w in new], autojunk=False)
    replaced: list[tuple[str, str]] = []
    only = True
    said_alike = False  # a phrase put in place of another that says the same, as rules of words tell
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        gone, came = old[i1:i2], new[j1:j2]
        # "unwilling" / "not willing", the comparison reads them as one denial; "an open" / "not … a closed"; "not"
        # / "never", one denial said two ways (no value a model could weigh)
        if (
            denied_alike(gone, came) or any(gone in phrases and came in phrases for phrases in INTERCHANGEABLE)
            or (tag == "replace" and _ONE_DENIAL.issuperset((*gone, *came)))
            or any((stem(g), stem(c)) in said_otherwise for g in gone for c in came)
        ):  # fmt: skip
            said_alike = True
            continue
        substantive = any(w not in FUNCTION_WORDS for w in (*gone, *came))
        if (
            tag == "replace" and len(gone) <= MAX_REPLACED_WORDS and len(came) <= MAX_REPLACED_WORDS
            and any(w not in FUNCTION_WORDS for w in gone) and any(w not in FUNCTION_WORDS for w in came)
        ):  # fmt: skip
            replaced.append((" ".join(gone), " ".join(came)))
        elif substantive:
            only = False
    return {"replacements": tuple(replaced), "only_replacements": only and (bool(replaced) or said_alike)}


STATE_FLIPPED, STATE_RESTATED = "flipped", "restated"


@functools.lru_cache(maxsize=256)
def state_put(old_text: str, new_text: str) -> str | None:
    """STATE_FLIPPED when a word of STATES stands in place of another state of its kind, STATE_RESTATED when every
    word put in place is one of the same state; None unless every difference is one word put in place of one, or an
    adverb of time (cheap to ask of two long notes: their words are counted first)."""
    old = [w for w in _WORD.findall(old_text.casefold()) if w not in _STATE_ADVERBS]
    new = [w for w in _WORD.findall(new_text.casefold()) if w not in _STATE_ADVERBS]
    if len(old) != len(new):
        return None
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not changes or any(tag != "replace" or i2 - i1 != 1 or j2 - j1 != 1 for tag, i1, i2, j1, j2 in changes):
        return None
    none: frozenset[tuple[int, int]] = frozenset()
    states = [(_STATES_OF.get(old[i1], none), _STATES_OF.get(new[j1], none)) for _, i1, _, j1, _ in changes]
    if any(k == m and s != t for x, y in states for k, s in x for m, t in y):
        return STATE_FLIPPED
    return STATE_RESTATED if all(x & y for x, y in states) else None


def _swapped_in_place(old: tuple[str, ...], new: tuple[str, ...]) -> list[tuple[list[str], list[str]]]:
    """Words of one claim replaced by as many others (one or two), the rest of the frame around them kept."""
    old_words = [w for w in old if w not in STOPWORDS and w not in LIGHT]
    new_words = [w for w in new if w not in STOPWORDS and w not in LIGHT]
    matcher = difflib.SequenceMatcher(a=[stem(w) for w in old_words], b=[stem(w) for w in new_words], autojunk=False)
    return [
        (old_words[i1:i2], new_words[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag == "replace"
        and i2 - i1 == j2 - j1 <= 2
        and (i1 > 0 or i2 < len(old_words))
        # one denial for another ("not" / "never") is no value swapped: the phrases around them tell
        and not PLAIN_NEGATIONS.issuperset((*old_words[i1:i2], *new_words[j1:j2]))
    ]
