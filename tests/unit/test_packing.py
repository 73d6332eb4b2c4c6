"""get_context's packer, pure: the answer as sent fits the budget by real tokenizers, every candidate is accounted
for (shown, listed or counted, never lost), and every section with candidates is represented before any section's
long tail."""

from __future__ import annotations

import re

import bpe_openai
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.domain.model import Note, NoteStatus, NoteType
from notewell.domain.packing import (
    SECTION_ORDER,
    Candidate,
    ConflictEntry,
    Detail,
    PackedContext,
    Section,
    names_in,
    pack,
    without_asides,
)
from notewell.domain.refs import name_of

ENCODINGS = [bpe_openai.get_encoding("cl100k_base"), bpe_openai.get_encoding("o200k_base")]
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
NAME = re.compile(r"(?<![0-9A-Za-z_])(n_[0-9A-HJKMNP-TV-Z]{26}|[0-9A-HJKMNP-TV-Z]{6})(?![0-9A-Za-z_])")  # id or ref
WORDS = ("cache", "deploy", "Postgres 16", "retry", "the", "tokens", "we", "use", "never", "because", "S3", "v2",
         "on-call", "Kafka", "latency", "p99", "is", "for", "orders", "billing", "émigré", "日本語", "🙂")  # fmt: skip


def note(number: int, text: str, kind: NoteType, *, title: str | None = None, importance: int = 3) -> Note:
    # Ends in random-looking characters, as a ULID does, and distinct ones: the last six (its ref, how the text names
    # it) are the low 30 bits of `number` times an odd number plus a constant: no two notes below 2**30 share a ref.
    serial = (number * 0x9E3779B1 + 0x2545F491) % 32**10
    tail = "".join(ALPHABET[serial >> (5 * i) & 31] for i in reversed(range(10)))
    return Note(
        id=f"n_01M8ZR{number:010d}{tail}", workspace_id="w", project_id="p", title=title or text[:80],
        body=text, type=kind, status=NoteStatus.CURRENT, tags=(), links=(), importance=importance,
        canonical=number % 7 == 0, supersedes=(), superseded_by=(), version=1,
        created_at="2026-11-01T10:00:00.000Z", updated_at=f"2026-11-{1 + number % 28:02d}T10:00:00.000Z",
        author="k", deleted_at=None, write_id=f"w{number}",
    )  # fmt: skip


def named_in(text: str, notes: list[Note]) -> set[str]:
    """The ids of the notes `text` names, each by its ref or, where two of `notes` share a ref, by its id (an id a
    conflict's message quotes counts too); every name in it must be one of theirs."""
    named = {name: note_id for note_id, name in names_in(notes).items()} | {n.id: n.id for n in notes}
    found = NAME.findall(text)
    assert set(found) <= set(named), f"{set(found) - set(named)} in the text name no candidate"
    return {named[name] for name in found}


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=120).map(" ".join)
candidates = st.lists(st.tuples(st.sampled_from(SECTION_ORDER), texts, st.booleans()), min_size=0, max_size=90)


def accounted(packed: PackedContext) -> tuple[set[str], set[str]]:
    shown = {str(e["id"]) for _, entries in packed.sections for e in entries} | {str(c["id"]) for c in packed.conflicts}
    return shown, {i for i, _ in packed.omitted_ids}


def packed_from(drawn: list[tuple[Section, str, bool]], budget: int, detail: Detail, conflicts: int) -> tuple[
    PackedContext, list[Note]
]:  # fmt: skip
    by_section: dict[Section, list[Candidate]] = {s: [] for s in SECTION_ORDER}
    notes = []
    for number, (section, text, own_title) in enumerate(drawn):
        made = note(number, text, NoteType.DECISION, title=f"Title {number}" if own_title else None)
        notes.append(made)
        by_section[section].append(Candidate(made, score=-number))
    conflict_entries = [
        ConflictEntry(n, "disputed", f"Disputed: decide with update_note({n.id!r})") for n in notes[:conflicts]
    ]
    packed = pack(
        budget=budget, detail=detail, summary="Billing API. " * 3, instructions="Run make test.", project="api",
        conflicts=conflict_entries, sections=[(s, c) for s, c in by_section.items() if c],
        beyond=[Section.DECISIONS] if len(drawn) % 2 else [],
    )  # fmt: skip
    return packed, notes


@settings(max_examples=150, deadline=None)
@given(
    drawn=candidates, budget=st.integers(200, 4000), detail=st.sampled_from(list(Detail)), conflicts=st.integers(0, 3)
)
def test_the_answer_as_sent_fits_and_every_candidate_is_accounted_for(
    drawn: list[tuple[Section, str, bool]], budget: int, detail: Detail, conflicts: int
) -> None:
    packed, notes = packed_from(drawn, budget, detail, conflicts)
    every = {n.id for n in notes}
    for encoding in ENCODINGS:
        real = len(encoding.encode(packed.text))
        assert real <= budget, f"{real} real tokens for a budget of {budget}"
    assert packed.spent <= budget
    shown, listed = accounted(packed)
    assert not shown & listed
    assert shown | listed <= every
    assert len(every - shown - listed) == packed.unlisted  # the rest is counted, exactly
    assert packed.omitted == len(packed.omitted_ids) + packed.unlisted == len(every) - len(shown)
    assert packed.selected == len(shown)
    # What the model reads says the same as the structured answer: it names exactly the notes shown or listed.
    assert named_in(packed.text, notes) == shown | listed
    assert (f"{packed.unlisted} more not listed" in packed.text) == (packed.unlisted > 0)


@settings(max_examples=60, deadline=None)
@given(drawn=candidates, budget=st.integers(600, 4000))
def test_every_section_is_represented_before_any_section_shows_a_second_note(
    drawn: list[tuple[Section, str, bool]], budget: int
) -> None:
    packed, _ = packed_from(drawn, budget, Detail.BALANCED, 0)
    shown = {section: len(entries) for section, entries in packed.sections}
    wanting = {s for s, _, _ in drawn} - set(shown)
    if any(count > 1 for count in shown.values()):
        assert not wanting, f"{wanting} got nothing while {shown} got more than one"


def test_a_short_note_says_its_text_once() -> None:
    short = note(1, "Orders are stored in Postgres 16.", NoteType.DECISION)
    titled = note(2, "Sessions use opaque tokens in Redis.", NoteType.DECISION, title="Opaque tokens")
    packed = pack(
        budget=1000, detail=Detail.BALANCED, summary="", instructions="", conflicts=[], project="api",
        sections=[(Section.DECISIONS, [Candidate(short, 1.0), Candidate(titled, 0.5)])],
    )  # fmt: skip
    lines = packed.text.splitlines()
    assert f"- {name_of(short.id)} [canonical] Orders are stored in Postgres 16." in lines or (
        f"- {name_of(short.id)} Orders are stored in Postgres 16." in lines
    )
    assert f"- {name_of(titled.id)} Opaque tokens: Sessions use opaque tokens in Redis." in lines
    assert packed.text.count("Postgres 16") == 1


def test_a_budget_too_small_for_every_id_says_how_many_are_missing() -> None:
    many = [Candidate(note(n, f"Decision {n} about the cache layer and its retries", NoteType.DECISION), -n)
            for n in range(60)]  # fmt: skip
    packed = pack(
        budget=200, detail=Detail.BALANCED, summary="", instructions="", conflicts=[], project="api",
        sections=[(Section.DECISIONS, many)],
    )  # fmt: skip
    shown, listed = accounted(packed)
    assert packed.unlisted == 60 - len(shown) - len(listed) > 0
    assert f"{packed.unlisted} more not listed" in packed.text
    assert len(ENCODINGS[0].encode(packed.text)) <= 200


def test_an_excerpt_leaves_asides_out_but_never_code() -> None:
    body = "Call `retry (3)` and `f(x)` (twice, from the worker) before the deploy (`deploy_gate`) goes green."
    assert without_asides(body, 200) == "Call `retry (3)` and `f(x)` before the deploy (`deploy_gate`) goes green."
    assert without_asides("(draft)", 200) == "(draft)"  # nothing but an aside: shown as it is
