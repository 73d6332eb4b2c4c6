"""The lexicon remember weighs replaced words with: built from WordNet's own file format, then read as shipped.

The first tests build a lexicon from a small database written here in WordNet 3.0's format (index.*, data.*,
*.exc), so the build script, the file it writes and the rules that read it are tested together on words whose
relations are known by construction. The last ones read the lexicon the package ships.
"""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING

import pytest

from notewell.adapters.system import FixedClock
from notewell.adapters.wordnet_lexicon import PackagedLexicon
from notewell.domain.lexicon import ALIKE, Lexicon
from notewell.services.meaning import Meaning
from scripts import build_lexicon
from tests.support.embedders import CountingEmbedder

if TYPE_CHECKING:
    from pathlib import Path


LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by Princeton University\n"
# offset: (type, words, pointers as (symbol, offset, part)); offsets are WordNet's byte offsets, any unique number here
NOUNS = {
    "00000001": ("n", ["instrument"], []),
    "00000002": ("n", ["stringed_instrument"], [("@", "00000001", "n")]),
    "00000003": ("n", ["guitar"], [("@", "00000002", "n")]),
    "00000004": ("n", ["violin", "fiddle"], [("@", "00000002", "n")]),
    "00000005": ("n", ["child", "kid", "youngster"], []),
    "00000006": ("n", ["Syria"], [("+", "00000020", "a")]),
    "00000007": ("n", ["goose"], []),
    "00000008": ("n", ["cut"], [("+", "00000010", "v")]),
    "00000030": ("n", ["room"], []),
    "00000031": ("n", ["kitchen"], [("@", "00000030", "n")]),
    "00000032": ("n", ["dining_room"], [("@", "00000030", "n")]),
}
VERBS = {
    "00000010": ("v", ["cut"], [("+", "00000008", "n")]),
    "00000011": ("v", ["slice"], [("@", "00000010", "v")]),
    "00000012": ("v", ["peel"], [("@", "00000010", "v")]),
}
ADJECTIVES = {
    "00000020": ("a", ["Syrian"], [("\\", "00000006", "n")]),
    # a head and its satellites ("s"), each similar ("&") to the head and not to each other
    "00000021": ("a", ["small", "little"], [("&", "00000022", "s")]),
    "00000022": ("s", ["tiny"], [("&", "00000021", "a")]),
    "00000023": ("a", ["chromatic"], [("&", "00000024", "s"), ("&", "00000025", "s")]),
    "00000024": ("s", ["red"], [("&", "00000023", "a")]),
    "00000025": ("s", ["yellow"], [("&", "00000023", "a")]),
}


def write_part(
    directory: Path, name: str, synsets: dict[str, tuple[str, list[str], list[tuple[str, str, str]]]]
) -> None:
    data, index = [LICENCE], [LICENCE]
    lemmas: dict[str, list[str]] = {}
    for offset, (kind, words, pointers) in synsets.items():
        listed = " ".join(f"{w} 0" for w in words)
        linked = " ".join(f"{s} {o} {p} 0000" for s, o, p in pointers)
        data.append(f"{offset} 03 {kind} {len(words):02x} {listed} {len(pointers):03d} {linked} | a gloss\n")
        for word in words:
            lemmas.setdefault(word.lower(), []).append(offset)
    for lemma, offsets in sorted(lemmas.items()):
        index.append(f"{lemma} {name[0]} {len(offsets)} 0 {len(offsets)} 0 {' '.join(offsets)}\n")
    (directory / f"data.{name}").write_text("".join(data))
    (directory / f"index.{name}").write_text("".join(index))
    (directory / f"{name}.exc").write_text({"noun": "geese goose\n", "verb": "cutting cut\n"}.get(name, ""))


@pytest.fixture(scope="module")
def lexicon(tmp_path_factory: pytest.TempPathFactory) -> Lexicon:
    database = tmp_path_factory.mktemp("wordnet")
    write_part(database, "noun", NOUNS)
    write_part(database, "verb", VERBS)
    write_part(database, "adj", ADJECTIVES)
    write_part(database, "adv", {})
    out = database / "lexicon.txt.gz"
    assert build_lexicon.main([str(database), "--out", str(out)]) == 0
    first = out.read_bytes()
    build_lexicon.main([str(database), "--out", str(out)])
    assert out.read_bytes() == first  # the same database gives the same bytes: a rebuild shows no diff
    return Lexicon(gzip.decompress(first).decode())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("violin", "fiddle"),  # one sense, two words
        ("kid", "child"),
        ("guitar", "stringed instrument"),  # the broader term, a collocation written with a space
        ("guitar", "instrument"),  # two steps up
        ("instrument", "guitar"),  # and down
        ("slicing", "cutting"),  # inflected verbs, a step apart
        ("kids", "youngsters"),
        ("Syrian", "Syria"),  # pertains to it
        ("Syrian", "Syria's"),  # a possessive is the word
        ("the kids'", "a child’s"),
        ("cut", "cutting"),
        ("geese", "goose"),  # an irregular form
        ("the violin", "a fiddle"),  # function words say nothing
        ("reproduce violins or", "fiddle"),  # a phrase that is no entry: alike when one of its words is
        ("tiny", "small"),  # WordNet lists them as similar
        ("little", "tiny"),
        ("red", "chromatic"),
        ("guittar", "guitar"),  # a misspelling: an unknown word a letter from a known one
        ("kitchen", "kitchne"),
        ("violin", "viloin"),
    ],
)
def test_words_for_the_same_thing_are_alike(lexicon: Lexicon, old: str, new: str) -> None:
    assert lexicon.alike(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("guitar", "violin"),  # co-hyponyms: rival values of one slot
        ("slicing", "peeling"),
        ("kitchen", "dining room"),  # an entry is decided whole, not by its word "room", broader than a kitchen
        ("violin 2", "fiddle 3"),  # numbers are the slot rules' to compare
        ("Vercel", "Netlify"),  # unknown words are not alike
        ("not a violin", "not a guitar"),  # a word both keep says nothing of the ones they swap
        ("", "violin"),
        ("red", "yellow"),  # each similar to "chromatic", not to each other
        ("Vercel", "Vercell"),  # two unknown words: names, for all the lexicon knows
        ("kidd", "kid"),  # a short unknown word is as often a name as a typo
        ("violin", "vilion"),  # two letters away
    ],
)
def test_other_values_are_not_alike(lexicon: Lexicon, old: str, new: str) -> None:
    assert not lexicon.alike(old, new)


@pytest.mark.parametrize(
    ("old", "new", "relation"),
    [
        ("kid", "child", "alike"), ("slicing", "cutting", "alike"),
        ("guitar", "violin", "rival"), ("kitchen", "dining room", "rival"),  # one kind, another value
        ("slicing", "peeling", "rival"),
        ("guitar", "child", None),  # nothing in common: the lexicon cannot say what the swap means
        ("Vercel", "Netlify", None), ("violin 2", "violin 3", None), ("reproduce violins or", "kitchen", None),
    ],
)  # fmt: skip
def test_a_rival_is_another_value_of_the_same_kind(lexicon: Lexicon, old: str, new: str, relation: str | None) -> None:
    assert lexicon.relation(old, new) == relation


def test_replaced_phrases_the_lexicon_knows_weigh_what_it_says_and_cost_the_model_nothing(lexicon: Lexicon) -> None:
    """Alike weighs fully and a rival not at all, whatever the model says: the model put "white"/"black",
    "Brazil"/"Argentina" and "bought"/"sold" as close as synonyms. Only the pairs it does not know go to the model."""
    embedder = CountingEmbedder()
    meaning = Meaning(embedder, None, FixedClock(), lexicon)
    weights = meaning.pair_similarities(
        [("kid", "child"), ("guitar", "violin"), ("kid", "child"), ("Vercel", "Netlify")]
    )
    assert weights is not None and weights[("kid", "child")] == 1.0
    assert weights[("guitar", "violin")] == 0.0
    assert embedder.texts == ["Vercel", "Netlify"]
    assert meaning.pair_similarities([("violin", "fiddle"), ("violin", "guitar")]) == {
        ("violin", "fiddle"): 1.0, ("violin", "guitar"): 0.0,
    }  # fmt: skip
    assert embedder.texts == ["Vercel", "Netlify"]


def test_a_file_that_is_not_a_lexicon_is_refused() -> None:
    with pytest.raises(ValueError, match="four sections"):
        Lexicon("guitar n:0\n")


@pytest.mark.parametrize(
    ("old", "new", "alike"),
    [
        ("kid", "child", True), ("slicing", "cutting", True), ("guardianship", "protection", True),
        ("Syria", "Syrian", True), ("US", "American", True), ("car", "automobile", True), ("French", "France's", True),
        ("guitar", "violin", False), ("man", "woman", False), ("kitchen", "dining room", False),
        ("PostgreSQL", "MySQL", False), ("GraphQL", "REST", False), ("Vercel", "Netlify", False),
        ("Japan", "China", False), ("red", "yellow", False), ("18th", "11th", False),
        ("tiny", "small", True), ("happy", "joyful", True), ("batery", "battery", True), ("Redis", "reds", False),
        # states a note gives a service or a flag, which WordNet holds apart
        ("off", "disabled", True), ("down", "offline", True), ("done", "finished", True), ("up", "running", True),
        ("off", "enabled", False), ("down", "online", False), ("false", "off", True), ("true", "off", False),
    ],
)  # fmt: skip
def test_the_shipped_lexicon(old: str, new: str, alike: bool) -> None:
    assert (SHIPPED.relation(old, new) == ALIKE) is alike


SHIPPED = PackagedLexicon()
