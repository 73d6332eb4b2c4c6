"""A note's ref: the last six characters of its id, which every tool that takes a note id also accepts.

A note id is `n_` and a ULID: 26 characters a tokenizer reads as about 19 tokens, more than most titles. Its last six
cost about 4.5, so get_context names notes by ref and spends its budget on what the notes say. A ref is random, not
unique: 30 bits make a shared ref likely only past ~30k notes in one workspace, so a tool resolves a ref among the
notes its caller can see and refuses an ambiguous one, naming the ids to use instead.
"""

from __future__ import annotations

import re

REF_CHARS = 6
_NOTE_ID = re.compile(r"n_[0-9A-HJKMNP-TV-Z]{26}")  # what the store's id source makes: a ULID in Crockford base32
_REF = re.compile(rf"[0-9A-HJKMNP-TV-Z]{{{REF_CHARS}}}")


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
