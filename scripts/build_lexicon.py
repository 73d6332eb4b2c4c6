"""Build the lexicon remember weighs replaced words with, from a WordNet 3.0 database.

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb /tmp/wordnet
    python -m scripts.build_lexicon /tmp/wordnet/usr/share/wordnet

The output (layers/core/notewell/data/lexicon.txt.gz, committed beside WordNet's licence) keeps only what
notewell.domain.lexicon reads: each word's senses, each sense's broader senses (hypernyms and instance-of), the
senses a step away that say the same (derived from or pertaining to it, "Syrian" to "Syria", "consideration" to
"consider"; similar, "tiny" to "small"; see-also and verb groups), and the irregular forms of words ("geese" to
"goose"). Glosses, examples and every other relation are left out. Senses are numbered
anew in file order; nothing else is changed.
"""

from __future__ import annotations

import argparse
import gzip
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "layers" / "core" / "notewell" / "data" / "lexicon.txt.gz"
PARTS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
BROADER = {"@", "@i"}  # hypernym, instance of
# One step from a sense to a sense that says the same: a derivationally related form, a pertainym ("pertains to noun"
# / "derived from adjective"), an adjective's similar sense (satellite "tiny" / head "small"), "see also", a verb
# group. Never followed further: "red" and "yellow" are each similar to "chromatic", not to each other.
NEAR = {"+", "\\", "&", "^", "$"}
HEADER = (
    "# Notewell's lexicon: derived from WordNet 3.0 (Copyright 2006 by Princeton University; licence in\n"
    "# WORDNET-LICENSE beside this file) by scripts/build_lexicon.py. Sections, a blank line apart:\n"
    "# word part:senses... (sorted) | broader senses of sense 0, 1... | near senses of 0, 1... | part form base...\n"
)


def _part(symbol: str) -> str:
    return "a" if symbol == "s" else symbol  # adjective satellites are adjectives


def read(database: Path) -> str:
    """The lexicon's text from the WordNet database files in `database` (data.*, index.*, *.exc)."""
    numbers: dict[tuple[str, str], int] = {}

    def number(part: str, offset: str) -> int:
        return numbers.setdefault((part, offset), len(numbers))

    senses: dict[str, dict[str, list[int]]] = defaultdict(dict)
    broader: dict[int, list[int]] = defaultdict(list)
    near: dict[int, list[int]] = defaultdict(list)
    forms: list[str] = []
    for part, name in PARTS.items():
        for line in (database / f"index.{name}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):  # the licence at the top of every file
                continue
            fields = line.split()
            lemma, count, pointers = fields[0], int(fields[2]), int(fields[3])
            offsets = fields[6 + pointers :]  # by frequency, the commonest sense first
            if len(offsets) != count:
                raise ValueError(f"index.{name}: cannot read {line[:60]!r}")
            senses[lemma][part] = [number(part, o) for o in offsets]
        for line in (database / f"data.{name}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):
                continue
            fields = line.split("|", 1)[0].split()
            sense = number(part, fields[0])
            at = 4 + 2 * int(fields[3], 16)  # past the synset's words and their lex ids
            for i in range(int(fields[at])):
                symbol, offset, target_part = fields[at + 1 + 4 * i : at + 4 + 4 * i]
                if symbol in BROADER:
                    broader[sense].append(number(_part(target_part), offset))
                elif symbol in NEAR:
                    near[sense].append(number(_part(target_part), offset))
        for line in (database / f"{name}.exc").read_text(encoding="utf-8").splitlines():
            form, *bases = line.split()
            forms.append(f"{part} {form} {' '.join(bases)}")
    # Four sections, a blank line between them, so loading is a few splits: words sorted (looked up by bisection),
    # then the broader and the near senses of sense 0, 1, 2... one line each, then the irregular forms.
    words = sorted(
        f"{lemma} " + " ".join(f"{p}:{','.join(map(str, ids))}" for p, ids in parts.items())
        for lemma, parts in senses.items()
    )
    by_sense = [" ".join(map(str, sorted(set(broader.get(s, []))))) or "-" for s in range(len(numbers))]  # "-": none
    near_by_sense = [" ".join(map(str, sorted(set(near.get(s, []))))) or "-" for s in range(len(numbers))]
    sections = ["\n".join(words), "\n".join(by_sense), "\n".join(near_by_sense), "\n".join(forms)]
    return HEADER + "\n\n".join(sections) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database", type=Path, help="WordNet 3.0's dict directory (Debian: /usr/share/wordnet)")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = read(args.database)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same database gives the same bytes, so a rebuild shows no diff
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{args.out}: {len(text) / 1e6:.1f} MB of text, {args.out.stat().st_size / 1e6:.2f} MB gzipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
