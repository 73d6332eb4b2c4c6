"""The words admission knows, read once from the data files beside this module (data/*.json).

Knowledge is data: units, status words, opposites, quantifiers, environments, tool names and function words each
live in a file of their own, every entry a word our users write. This module only reads them; reading files shipped
inside the package is no more I/O than importing a module, and happens once per process.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from notewell.domain.stemming import stem


@dataclass(frozen=True, slots=True)
class Vocabulary:
    function_words: frozenset[str]
    negations: frozenset[str]
    negation_phrases: tuple[tuple[str, ...], ...]
    exceptions: frozenset[str]  # denials that carve a part out of a claim ("except", "apart from")
    phrases: dict[tuple[str, ...], str]  # a status or quantifier of several words -> its value key
    values: dict[str, str]  # a single word -> its value key ("status:toggle:off", "env:production", "q:all")
    after_be: frozenset[str]  # status words that are states only right after a form of "be"
    state_verbs: frozenset[str]  # the forms of "be" and of setting after which a state word is a state
    not_a_number_after: frozenset[str]  # after these, "one" is a pronoun ("the old one")
    ordinals: frozenset[str]  # units that before a word count it ("every second Wednesday")
    opposites: dict[str, frozenset[str]]  # stem -> stems of its opposites
    direction_words: frozenset[str]  # words whose two sides are not interchangeable ("instead", "over", "calls")
    names: dict[str, str]  # a tool, service or vendor name -> its canonical spelling
    units: dict[str, tuple[str, float]]  # unit -> (kind, size in the kind's base unit)
    number_words: dict[str, float]
    multipliers: frozenset[str]  # number words that multiply the one before them ("two dozen", "three hundred")
    scales: dict[str, float]
    unit_words: frozenset[str]  # a word that after a number is its unit or scale ("30 seconds", "5 k")
    other_state: dict[str, str]  # a state of a kind that has two (on/off, fixed/open) -> the other one
    additive: frozenset[str]  # words that add a thing beside the others ("also", "too"): no value replaced
    departure: frozenset[str]  # words of direction after which a value is left behind ("from", "instead of")
    frequencies: dict[str, str]  # "nightly" -> "every 1 night"
    signs: dict[str, str]  # a comparison sign before a number -> its quantifier (">=" -> "at least")
    phrase_starts: frozenset[str]  # first words of the phrases above: only these are looked up as phrases
    change_words: frozenset[str]  # words that announce a change ("moved", "no longer", "now")
    time_shifts: tuple[frozenset[str], frozenset[str]]  # words that move a time ("next"), and the times they move
    present_be: frozenset[str]  # "is", "are": what a claim in force says...
    past_be: frozenset[str]  # ..."was", "were": what a claim that held once says
    passive_after: frozenset[str]  # words after which "-ed" is the passive present ("is used"), not the past


def _read(name: str) -> Any:
    return json.loads(resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8"))


@functools.cache
def vocabulary() -> Vocabulary:
    statuses, quantifiers, environments = _read("statuses.json"), _read("quantifiers.json"), _read("environments.json")
    grouped: list[tuple[str, list[str]]] = [
        (f"status:{kind}:{group}", ws) for kind, groups in statuses["kinds"].items() for group, ws in groups.items()
    ]  # fmt: skip
    grouped += [(f"q:{group}", words) for group, words in quantifiers["groups"].items()]
    grouped += [(f"env:{group}", words) for group, words in environments["groups"].items()]
    values = {word: key for key, words in grouped for word in words if " " not in word}
    phrases = {tuple(word.split()): key for key, words in grouped for word in words if " " in word}
    negations, changes = _read("negations.json"), _read("changes.json")
    opposites: dict[str, set[str]] = {}
    data, names, units = _read("opposites.json"), _read("names.json"), _read("units.json")
    for left, right in (*data["pairs"], *(pair[::-1] for pair in data["pairs"])):  # each way
        opposites.setdefault(stem(left), set()).add(stem(right))
    sizes = {
        unit: (kind, float(v)) for kind in ("size", "duration", "share", "rate") for unit, v in units[kind].items()
    }  # fmt: skip
    other_state = {
        f"status:{kind}:{group}": f"status:{kind}:{next(g for g in groups if g != group)}"
        for kind, groups in statuses["kinds"].items() if len(groups) == 2 for group in groups
    }  # fmt: skip
    return Vocabulary(
        function_words=frozenset(_read("function_words.json")["words"]),
        negations=frozenset(negations["words"]),
        negation_phrases=tuple(tuple(p.split()) for p in negations["phrases"]),
        exceptions=frozenset(negations["exceptions"]),
        phrases=phrases,
        values=values,
        after_be=frozenset(statuses["after_be"]),
        state_verbs=frozenset(statuses["state_verbs"]),
        not_a_number_after=frozenset(units["not_a_number_after"]),
        ordinals=frozenset(units["ordinals"]),
        opposites={word: frozenset(others) for word, others in opposites.items()},
        direction_words=frozenset(data["direction_words"]),
        names={**{n: n for n in names["names"]}, **names["aliases"]},
        units=sizes,
        number_words={w: float(v) for w, v in (*units["number_words"].items(), *units["multipliers"].items())},
        multipliers=frozenset(units["multipliers"]),
        scales={w: float(v) for w, v in units["scales"].items()},
        unit_words=frozenset(sizes) | frozenset(units["scales"]),
        other_state=other_state,
        additive=frozenset(data["additive_words"]),
        departure=frozenset(data["departure_words"]),
        frequencies=units["frequencies"],
        signs=quantifiers["signs"],
        change_words=frozenset(changes["words"]) | frozenset(changes["hedges"]["words"]),
        time_shifts=(frozenset(changes["shifts"]["words"]), frozenset(changes["shifts"]["times"])),
        present_be=frozenset(changes["past_of_be"]["present"]),
        past_be=frozenset(changes["past_of_be"]["past"]),
        passive_after=frozenset(changes["past_of_be"]["passive_after"]),
        phrase_starts=frozenset(p[0] for p in [*phrases, *(tuple(n.split()) for n in negations["phrases"])]),
    )
