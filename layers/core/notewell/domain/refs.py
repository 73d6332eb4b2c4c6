"""A note's ref: the last six characters of its id, which every tool that takes a note id also accepts.

A note id is `n_` and a ULID: 26 characters a tokenizer reads as about 19 tokens, more than most titles. Its last six
cost about 4.5, so get_context names notes by ref and spends its budget on what the notes say. A ref is random, not
unique: 30 bits make a shared ref likely only past ~30k notes in one workspace, so a tool resolves a ref among the
notes its caller can see and refuses an ambiguous one, naming the ids to use instead.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

REF_CHARS = 6
CROCKFORD = "0-9A-HJKMNP-TV-Z"  # the characters of Crockford's base32, as a regex class's ranges
NOTE_ID_PATTERN = f"n_[{CROCKFORD}]{{26}}"  # what the store's id source makes: `n_` and a ULID
_NOTE_ID = re.compile(NOTE_ID_PATTERN)
_REF = re.compile(rf"[{CROCKFORD}]{{{REF_CHARS}}}")


def note_ref(note_id: str) -> str | None:
    """The ref of a note id, or None for an id the store did not make (an imported one of another shape): such a
    note is named by its whole id."""
    return note_id[-REF_CHARS:] if _NOTE_ID.fullmatch(note_id) else None


def parse_ref(value: str) -> str | None:
    """The ref `value` is (case aside, as a model may retype it), or None when it is not one: then it is an id."""
    candidate = value.strip().upper()
    return candidate if _REF.fullmatch(candidate) else None


def name_of(note_id: str) -> str:
    """How text names a note: its ref when it has one, else its id."""
    return note_ref(note_id) or note_id


def names(note_ids: Iterable[str], *, by_ref: bool = True) -> dict[str, str]:
    """How one answer names each of `note_ids`: by ref, or by id where two of them share a ref, so that no name in
    the answer is ambiguous (a ref shared with a note the answer does not show is refused by the tool that gets it,
    with the ids). `by_ref` False: every note by id (a store that cannot resolve the project's refs yet: a project
    below model.REF_LAYOUT)."""
    ids = set(note_ids)
    if not by_ref:
        return {note_id: note_id for note_id in ids}
    refs = {note_id: note_ref(note_id) for note_id in ids}
    shared = Counter(refs.values())
    return {note_id: ref if ref is not None and shared[ref] == 1 else note_id for note_id, ref in refs.items()}
