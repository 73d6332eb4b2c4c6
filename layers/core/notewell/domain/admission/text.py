"""A note as admission reads it: sentences of tokens, each token a plain word or a value of some kind.

A value is what a claim can be changed in: an amount (`30s`, `10 MB`, `3`), a version, a name (a tool, a service, a
person: capitals mid-sentence, inner capitals, or a name from data/names.json), an identifier (`max_connections`,
`us-east-1`), a path, a URL, an environment, a status, a quantifier. Plain words are compared by their stem.
A long note is read through a window: the few sentences that share words with the text it is compared with, so a
100 KB note costs about what a 2 KB one does.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, replace

from notewell.domain.admission.vocabulary import vocabulary
from notewell.domain.stemming import stem

WINDOW_CHARS = 400  # a text this long or shorter is read whole
WINDOW_SENTENCES = 4  # of a longer one, the sentences sharing most words with the other text
PROBE_WORDS = 12  # distinctive words of the other text looked for in a long one
SENTENCE_TOKENS = 80  # a sentence is compared on this many tokens at most
SENTENCE_CHARS = 600  # ...and a long note's window reaches this far on each side of a hit for its sentence's ends

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_CONTRACTION = re.compile(r"\b(?:(ca)|(wo)|(\w+))n't\b", re.IGNORECASE)
# Sentences, and clauses that give a reason or a contrast: "…, because JWTs cannot be revoked" is its own claim.
_SENTENCE_END = re.compile(
    r"(?i)(?<=[.!?;])[*_]*\s+|\n+|,\s+(?=(?:because|since|as|so|but|which|while|though|although|unless|until)\b)"
    r"|\s+(?=because\b)"
)
_TOKEN = re.compile(
    r"(?i)`(?P<code>[^`\s]+)`"
    r"|(?P<url>[a-z][a-z0-9+.-]*://[^\s'\"<>)\]]+[^\s'\"<>)\].,;:!?])"
    r"|(?P<path>(?:~|\.{1,2})?/[\w.*-]+(?:/[\w.*-]+)*/?|[\w.*-]+(?:/[\w.*-]+)+/?|[\w.-]+/(?![\w*]))"
    r"|(?P<time>\d{1,2}:\d{2}(?:\s?[ap]\.?m\b\.?)?|\d{1,2}\s?[ap]\.?m\b\.?)"
    r"|(?P<amount>(?:(?<![\w.])[-+^~])?\d+(?:[.,]\d+)*(?:%|[a-zµ]+\b)?)"
    r"|(?P<version>v\d+(?:\.\d+)*(?:-[\w.]+)?)"
    r"|(?P<word>[^\W\d_](?:[\w]|[-.:](?=\w))*)"
    r"|(?P<comma>[,;]|(?<=\s)/(?=\s))"
)
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)\s?(%|[a-zµ]+)?$", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[_.:]|\d|[a-z][A-Z]")  # snake_case, dotted, with digits, camelCase
_OPENERS = frozenset('.:!?|*#([-"')
_SLASHED_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*(?:/[^\W\d_]+(?:-[^\W\d_]+)*)+")  # "read/write", "feature/login"


@dataclass(frozen=True, slots=True)
class Token:
    text: str  # as written
    key: str  # what it is compared by: a stem, or a value's kind and canonical form ("amount:duration:30")
    kind: str  # "word", "negation", or a value's kind: amount, name, identifier, path, url, env, status:…, q
    side: str = ""  # the word of direction before it in its clause: "from", "to", "instead"…
    clause: int = 0  # which clause of its sentence it stands in (a comma, "and", "but" start the next)
    at: int = 0  # its place among the sentence's words, function words counted

    @property
    def is_value(self) -> bool:
        return self.kind not in ("word", "negation")


Sentence = tuple[Token, ...]


def normalized(text: str) -> str:
    """Straight apostrophes, contractions written out ("isn't" -> "is not", "we're" -> "we are"), numbers spelled
    out written in digits ("two weeks" -> "2 weeks"), composed accents."""
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if "'" in text:  # most sentences have none: each pass below is skipped when it cannot match
        text = _CONTRACTION.sub(lambda m: "can not" if m[1] else "will not" if m[2] else f"{m[3]} not", text)
        text = _SHORT_FORM.sub(lambda m: _SHORT_FORMS[m[1].casefold()], text)
    text = _SIGN.sub(lambda m: vocabulary().signs[m[1]] + " ", text) if "<" in text or ">" in text else text
    text = _BOX.sub(lambda m: "completed" if m[1].strip() else "todo", text) if "[" in text else text
    text = _spelled().sub(_digits, text)
    text = _periods().sub(_period, text)
    return _HALF.sub(lambda m: f"{float(m[1] or 0) + 0.5:g} {m[2] or m[3]}", text) if "half" in text else text


_BOX = re.compile(r"\[([ xX])\]")  # a checklist's box: "[x]" is completed, "[ ]" to do
_SIGN = re.compile(r"(?<![-=<>])(>=|=>|≥|<=|=<|≤|>|<)\s*(?=v?\d)")  # before a number: data/quantifiers.json "signs"
# "a minute and a half" (its "a" already 1), "half an hour" (its "an hour" already "an 1 hour": _periods)
_HALF = re.compile(r"\b(?:(\d+)\s+([^\W\d_]+)\s+and\s+a\s+half|half\s+an?\s+(?:1\s+)?([^\W\d_]+))\b", re.IGNORECASE)


@functools.cache
def _periods() -> re.Pattern[str]:
    """ "nightly", and a unit of time after "every", "per", "each" or "a" without a number ("every night")."""
    vocab = vocabulary()
    units = "|".join(sorted((u for u, (kind, _) in vocab.units.items() if kind == "duration" and len(u) > 2), key=len))
    adverbs = "|".join(vocab.frequencies)
    return re.compile(rf"\b(?:(?P<adverb>{adverbs})|(?P<every>every|per|each|a|an)\s+(?P<unit>{units}))\b", re.I)


def _period(match: re.Match[str]) -> str:
    adverb, vocab, after = match["adverb"], vocabulary(), _NEXT_WORD.match(match.string, match.end())
    if not adverb and match["unit"].casefold() in vocab.ordinals and after and after[1] not in vocab.function_words:
        return match[0]  # "every second Wednesday": an ordinal counting what follows, not a unit of time
    return vocab.frequencies[adverb.casefold()] if adverb else f"{match['every']} 1 {match['unit']}"


_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")  # the word after a match, as written


_SHORT_FORM = re.compile(r"(?<=\w)'(re|ve|ll|d|m|s)\b", re.IGNORECASE)
_SHORT_FORMS = {"re": " are", "ve": " have", "ll": " will", "d": " would", "m": " am", "s": ""}  # 's: is or whose


@functools.cache
def _spelled() -> re.Pattern[str]:
    words = "|".join(sorted(vocabulary().number_words, key=len, reverse=True))
    return re.compile(
        rf"(?<![\w-])((?!(?:{words})\b)\w+\s+)?((?:{words})(?:(?:\s+|-|\s+and\s+)(?:{words}))*)\b(?!\s+of\b)",
        re.IGNORECASE,
    )


def _digits(match: re.Match[str]) -> str:
    before, spelled = match[1] or "", match[2]
    parts = [p for p in re.split(r"[\s-]+", spelled.casefold()) if p != "and"]
    if parts == ["one"] and before.strip().casefold() in vocabulary().not_a_number_after:
        return match[0]  # "the old one": a pronoun
    values = vocabulary().number_words
    total = current = 0.0
    for part in parts:
        value = values[part]
        if part in vocabulary().multipliers:
            current = max(current, 1) * value
        elif value >= 1000:
            total, current = total + max(current, 1) * value, 0.0
        else:
            current += value
    return f"{before}{total + current:g}"


def sentences_of(text: str) -> list[str]:
    return [s for s in (part.strip(" \t-*#>") for part in _SENTENCE_END.split(text)) if s]


@functools.lru_cache(maxsize=16_384)
def tokens_of(sentence: str) -> Sentence:
    """The sentence's tokens, function words left out; several-word statuses and denials read as one token. Each
    token knows its side: the word of direction before it in its clause ("to" in "from MySQL to Postgres")."""
    vocab = vocabulary()
    text_of = normalized(sentence)
    matches = list(_TOKEN.finditer(text_of))[: SENTENCE_TOKENS * 2]
    raw: list[tuple[str, str | None]] = [(m["code"] or m[0], m.lastgroup) for m in matches]
    lowers = [text.casefold() for text, _ in raw]
    found: list[Token] = []
    side, clause, at = "", 0, 0
    while at < len(raw):
        (text, group), lower = raw[at], lowers[at]
        if group == "comma" or lower in ("and", "but"):
            side, at, clause = "", at + 1, clause + 1
            continue
        if lower in vocab.phrase_starts and (phrase := _phrase_at(lowers, at)) is not None:
            words, key = phrase
            found.append(Token(" ".join(t for t, _ in raw[at : at + words]), key, _kind_of(key), side, clause, at))
            at += words
            continue
        if lower in vocab.direction_words:
            side = lower
        following = lowers[at + 1] if at + 1 < len(raw) else ""
        if group == "word" and lower in vocab.function_words and lower not in vocab.after_be:
            at += 1
            continue
        if group == "path" and _SLASHED_WORDS.fullmatch(text):  # words joined by slashes: a list, not a path
            items = text.split("/")
            found += [Token(*_classified(w, "word", False, False), "" if i else side, clause + i, at)
                      for i, w in enumerate(items)]  # fmt: skip
            side, at, clause = side if len(items) == 1 else "", at + 1, clause + len(items) - 1
            continue
        # a word opens a sentence, a heading, a table cell or a list item: its capital shows no name
        first = at == 0 or not _OPENERS.isdisjoint(text_of[matches[at - 1].end() : matches[at].start()])
        # "the flag is on", "is on in staging"; not "we are on Rails 7.1", "is on port 8080"
        state = (
            at > 0 and lowers[at - 1] in vocab.state_verbs and (following in ",;" or following in vocab.function_words)
        )
        start = at
        if group == "amount" and following in vocab.unit_words and not _NUMBER_WITH_UNIT.search(lower):
            text, lower, at = f"{text} {raw[at + 1][0]}", f"{lower}{following}", at + 1  # "30 seconds", "10 MB"
        assigned = _ASSIGNMENT.fullmatch(text) if group == "code" else None
        if assigned:  # `KEY=value`, `pkg==1.2`: the key names the slot, the value fills it
            text, group = assigned["value"], "code"
            found.append(_keyed(assigned["key"], side, clause, start))
        token = Token(*_classified(text, group, first, state), side, clause, start)
        gap = text_of[matches[at].end() : matches[at + 1].start()] if at + 1 < len(matches) else ""
        keyed = token.is_value and bool(_ASSIGNED_BY.fullmatch(gap)) and (":" not in gap or _yaml(token, matches, at))
        found.append(_keyed(text, side, clause, start) if keyed else token)
        at += 1
    kept = [t for t in found if t.kind != "word" or t.text.casefold() not in vocab.function_words][:SENTENCE_TOKENS]
    return tuple(_denied_states(kept))


_NUMBER_WITH_UNIT = re.compile(r"[a-z%µ]$")
_ASSIGNMENT = re.compile(r"(?P<key>[\w.\[\]-]+?)(?:==|~=|:=|=|:)(?P<value>[^=:~].*)")  # `KEY=value`, `pkg==1.2`
_ASSIGNED_BY = re.compile(r"`?\s*(?:==|~=|:=|=|:)\s*`?")  # between a key and its value (":" after an identifier)


def _yaml(key: Token, matches: list[re.Match[str]], at: int) -> bool:
    """`key: value` as a line of YAML: an identifier, and one value that ends its line ("ADR-017: Job scheduling
    with locks" is a title)."""
    rest = matches[at + 1].string[matches[at + 1].end() :].split("\n", 1)[0]
    return key.kind == "identifier" and not any(c.isalnum() for c in rest)


def _keyed(text: str, side: str, clause: int, at: int) -> Token:
    """A key given a value (`replicaCount: 3`, `LOG_LEVEL=debug`) is the slot's name: a plain word of the frame,
    compared by the key it has as a value elsewhere ("DB_HOST is db2")."""
    return Token(text, _classified(text, "code" if _IDENTIFIER.search(text) else "word", False, False)[1], "word")


@functools.lru_cache(maxsize=65_536)
def _classified(text: str, group: str | None, first: bool, after_be: bool) -> tuple[str, str, str]:
    token = _token(text, text.casefold(), group, first=first, after_be=after_be)
    return token.text, token.key, token.kind


def _denied_states(tokens: list[Token]) -> list[Token]:
    """A state of two denied is the other ("not enabled" is "disabled", "nobody has fixed" is "open"): the denial
    and the state become that one token, so both ways of saying it compare alike."""
    other = vocabulary().other_state
    result: list[Token] = []
    for token in tokens:
        if result and result[-1].kind == "negation" and token.key in other:
            result[-1] = replace(token, key=other[token.key], text=f"{result[-1].text} {token.text}")
        else:
            result.append(token)
    return result


def _phrase_at(lowers: list[str], at: int) -> tuple[int, str] | None:
    vocab = vocabulary()
    for size in (3, 2):
        words = tuple(lowers[at : at + size])
        if len(words) == size and (words in vocab.phrases or words in vocab.negation_phrases):
            return size, vocab.phrases.get(words, "not")
    return None


def _kind_of(key: str) -> str:
    return "negation" if key == "not" else key.rsplit(":", 1)[0] if key.startswith("status:") else key.split(":", 1)[0]


def _token(text: str, lower: str, group: str | None, *, first: bool = False, after_be: bool = False) -> Token:
    vocab = vocabulary()
    if group == "code":  # `anything` in backticks is a name the writer marked as code
        group = "url" if "://" in text else "path" if "/" in text else "amount" if text[0].isdigit() else group
        if group == "code":
            return Token(text, "identifier:" + lower, "identifier")
    if group == "url":
        return Token(text, "url:" + lower.rstrip("/"), "url")
    if group == "path":
        return Token(text.rstrip("."), "path:" + lower.rstrip(".").strip("./"), "path")
    if group == "time":
        return Token(text, "amount:time:" + _clock(lower), "amount")
    if group in ("amount", "version"):
        return _measured(text, lower)
    if lower in vocab.negations or lower == "no":
        return Token(text, "not", "negation")
    key = vocab.values.get(lower)
    if key is not None and (lower not in vocab.after_be or after_be):
        return Token(text, key, _kind_of(key))
    if lower in vocab.names:
        return Token(text, "name:" + vocab.names[lower], "name")
    if (not first and text[0].isupper() and not text.isupper()) or re.match(r"[A-Z]\w*[a-z][A-Z]", text):
        return Token(text, "name:" + lower, "name")  # capitals mid-sentence or inside: a person, product, service
    if _IDENTIFIER.search(text):
        return Token(text, "identifier:" + lower, "identifier")
    return Token(text, stem(lower.replace("-", "")), "word")


def _clock(lower: str) -> str:
    """A time of day as HH:MM on 24 hours: "2am", "02:00" and "2:00 a.m." are one time."""
    digits = re.findall(r"\d+", lower)
    hour, minute = int(digits[0]), int(digits[1]) if len(digits) > 1 else 0
    hour += 12 if "p" in lower and hour < 12 else 0
    hour = 0 if "a" in lower and hour == 12 else hour
    return f"{hour:02d}h{minute:02d}"  # no colon: a key is "amount:<kind>:<value>"


def _measured(text: str, lower: str) -> Token:
    """A number with its unit's kind and its size in the kind's base unit: "30s" and "30 seconds" are one value."""
    vocab = vocabulary()
    if lower[0] in "-+^~":  # a sign or a range's mark is part of its value: -2.5 is not +2.5, ^18.2.0 not 18.2.0
        kind, _, unsigned = _measured(text, lower[1:]).key.rpartition(":")
        return Token(text, f"{kind}:{lower[0]}{unsigned}", "amount")
    lower = lower.removeprefix("v")  # "v16" is 16
    if lower.count(".") >= 2 or "-" in lower:
        return Token(text, "amount:version:" + lower, "amount")
    match = _NUMBER.match(lower)
    if match is None:
        return Token(text, "amount:number:" + lower, "amount")
    number, unit = match[1].replace(",", ""), (match[2] or "")
    if "." in number and not unit:  # "Terraform 1.10" is no "1.1": a bare decimal is read as written, like a version
        return Token(text, "amount:number:" + number, "amount")
    value = float(number)  # digits of any script, as _NUMBER matched them
    if unit in vocab.units:
        kind, size = vocab.units[unit]
        binary = value * 1024 ** round(math.log(size, 1000)) if kind == "size" else value * size
        return Token(text, f"amount:{kind}:{value * size:.12g}|{binary:.12g}", "amount")
    if unit in vocab.scales:
        return Token(text, f"amount:number:{value * vocab.scales[unit]:.12g}", "amount")
    return Token(text, f"amount:number:{value:.12g}", "amount")


def same_value(a: Token, b: Token) -> bool:
    """Whether two values are the same: one key, or amounts of a kind that come to the same size (decimal or
    binary, for sizes)."""
    if a.key == b.key:
        return True
    if a.kind == b.kind == "identifier":  # "queue.visibility_timeout" names "visibility_timeout" in full
        short, long = sorted((a.key, b.key), key=len)
        return long.endswith("." + short.split(":", 1)[1])
    if a.kind != "amount" or b.kind != "amount" or kind_of_value(a) != kind_of_value(b):
        return False
    return bool(set(a.key.rsplit(":", 1)[1].split("|")) & set(b.key.rsplit(":", 1)[1].split("|")))


def kind_of_value(token: Token) -> str:
    """The kind two values must share to be rivals: amount:duration, name (a tool, person or identifier), env…"""
    if token.kind == "amount" or token.kind.startswith("status"):
        return token.key.rsplit(":", 1)[0]
    return "name" if token.kind == "identifier" else token.kind


# ----- windows ------------------------------------------------------------------------------------------------


def window(text: str, other: str) -> list[str]:
    """The sentences of `text` to compare with `other`: all of a short text; of a long one the few that hold most
    of `other`'s distinctive words, found by substring search from each hit to the sentence's ends, so the cost
    follows the hits, not the length."""
    if len(text) <= WINDOW_CHARS:
        return sentences_of(text)
    lowered = text.casefold()
    hits: dict[tuple[int, int], set[str]] = {}
    for word in distinctive_words(other, PROBE_WORDS):
        at, seen = lowered.find(word), 0
        while at >= 0 and seen < WINDOW_SENTENCES * 2:
            low, high = max(0, at - SENTENCE_CHARS), min(len(text), at + SENTENCE_CHARS)  # a sentence is no longer
            start = max((found + len(end) for end in _ENDS if (found := lowered.rfind(end, low, at)) >= 0), default=low)
            stop = min((found for end in _ENDS if (found := lowered.find(end, at, high)) >= 0), default=high)
            hits.setdefault((start, stop), set()).add(word)
            at, seen = lowered.find(word, stop), seen + 1
    best = sorted(hits, key=lambda span: (-len(hits[span]), span))[:WINDOW_SENTENCES]
    chosen = [text[start : stop + 1] for start, stop in sorted(best)] or [text[:WINDOW_CHARS]]
    return [s for part in chosen for s in sentences_of(part)]


def edited_copy(old: str, new: str) -> tuple[list[str], list[str]] | None:
    """Of two long texts that differ in a few sentences each (one is an edited copy of the other), those sentences:
    what to compare, where the rest would only say they are alike."""
    if min(len(old), len(new)) <= WINDOW_CHARS:
        return None
    olds, news = sentences_of(old), sentences_of(new)
    kept = set(olds) & set(news)
    old_only, new_only = [s for s in olds if s not in kept], [s for s in news if s not in kept]
    return (old_only, new_only) if 0 < min(len(old_only), len(new_only)) <= WINDOW_SENTENCES else None


def set_apart(old: str, new: str) -> bool:
    """Texts under other headings ("Staging upgrade:" / "Production upgrade:" over the same items), or the same
    sentences rearranged (_rearranged): alike line by line, yet not one claim."""
    heads = [_heading(text) for text in (old, new)]
    return (None not in heads and heads[0] != heads[1]) or _rearranged(old, new)


def _heading(text: str) -> str | None:
    """The first line of a text of several lines when it heads them ("# CI reference", "Release 2.4:")."""
    first, _, rest = text.strip().partition("\n")
    return first.strip(" #:").casefold() if rest.strip() and (first[0] == "#" or first.rstrip().endswith(":")) else None


def _rearranged(old: str, new: str) -> bool:
    """Sentences of the old text only, at least two, in another order or with some left out of a copy of most of it
    ("1. Migrate. 2. Deploy." / "1. Deploy. 2. Migrate."; a list of regions with one bullet gone)."""
    news = sentences_of(new) if len(new) <= len(old) else []
    if len(news) < 2 or not all(s in old for s in news):  # most pairs stop here
        return False
    olds = sentences_of(old)
    kept = set(news) <= set(olds) and olds != news
    return kept and (sorted(olds) == sorted(news) or len(olds) > len(news) >= len(olds) / 2)


_ENDS = (". ", ".\n", "\n", "! ", "? ", "; ")  # where a sentence of a long note ends, for the window


_WORD = re.compile(r"[^\W_][\w.-]*[^\W_]|[^\W_]", re.UNICODE)


def distinctive_words(text: str, count: int) -> list[str]:
    """The longest words of `text` that are not function words (casefolded, in text order among equals)."""
    function = vocabulary().function_words
    seen = dict.fromkeys(w for w in _WORD.findall(text[:20_000].casefold()) if len(w) > 1 and w not in function)
    return sorted(seen, key=len, reverse=True)[:count]
