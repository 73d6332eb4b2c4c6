"""Freshness of anchored notes: is the code a note is about still what it was when the note was anchored?

Pure. The caller gathers what the current tree holds (adapters/git_tree.py reads a working tree; a client may send
only `{path: fileHash}` pairs) and `judge_note` answers per anchor and per note:

    fresh    the anchored text is where it was, unchanged
    moved    the same text is elsewhere: other lines of the file, or (a symbol) another file
    changed  the file, or the symbol in it, is still there but its anchored text is not the same
    gone     the file is not in the tree, or its symbol is no longer in it (nor, unchanged, in another file)

A note is as stale as its stalest anchor (gone, then changed, then moved, then fresh): changed and gone notes must
be re-checked before they are trusted. Reads use the end of this module: a client's `files` (notes anchored there
lead) and `checkFreshness` (`{path: fileHash or null}`) checked, notes matched to files, verdicts from file hashes,
and the mark a stale note's line carries (`[changed: src/retry.py, re-check]`). Last, the verdicts recorded for the
console: the last one per anchored file of each note, at the note version judged, and the project's summary.

The text hash (`text_hash`) is SHA-256, in hex, of the anchored lines without their line endings (LF or CRLF), joined
with LF. For a whole file that is `sha256(data.replace(b"\\r\\n", b"\\n").removesuffix(b"\\n"))`: a CRLF checkout
hashes as an LF one. Only hashes, paths and names are ever stored or sent, never the code.

A symbol's text is found without parsing any language (`symbol_range`): its definition is the first line that
starts with a definition word (`def`, `class`, `fn`, `func (receiver)`, ...: DEFINERS, maybe after MODIFIERS such
as `export async`) followed by the name; else the first of the least indented lines where the name occurs as a word
(C, Java: calls are indented deeper than the definition). Its block is that line and the lines indented deeper
(blank ones inside it too), with the bracket lines at its own indentation that open it (`{`), continue it
(`) -> int:`, followed by deeper lines) or close it (`}`, `end`). `Outer.inner` is looked up block within block.
Anchoring and checking use the same rule, so a block found again hashes the same.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import LineRange, NoteStatus
from notewell.domain.rules import check_anchor_path, quote_short

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from notewell.domain.model import Anchor, Note


class Freshness(StrEnum):
    FRESH = "fresh"
    MOVED = "moved"
    CHANGED = "changed"
    GONE = "gone"


_STALENESS = {Freshness.FRESH: 0, Freshness.MOVED: 1, Freshness.CHANGED: 2, Freshness.GONE: 3}

# Words that introduce a definition in the languages agents meet most, and the words that may stand before them at
# the start of the line; matched without case ('Public Function', 'Sub'). A definition word inside a sentence (a
# comment saying "the function parse_config") does not count: only modifiers may come before it.
DEFINERS = (
    "def", "class", "function", "fn", "fun", "func", "struct", "enum", "interface", "trait", "type", "impl",
    "module", "object", "record", "const", "let", "var", "val", "sub", "macro", "defn", "defmodule", "defp",
    "procedure", "namespace", "protocol", "extension", "union",
)  # fmt: skip
MODIFIERS = (
    "export", "default", "public", "private", "protected", "internal", "static", "async", "abstract", "final",
    "override", "inline", "extern", "unsafe", "open", "sealed", "data", "suspend", "declare", "virtual", "partial",
    "readonly", "local", "global", "create", "or", "replace", "pub", r"pub\([\w:]*\)",
)  # fmt: skip
_DEFINITION = (
    rb"^\s*(?i:(?:" + b"|".join(word.encode() for word in MODIFIERS) + rb")\s+)*"
    rb"(?i:" + b"|".join(word.encode() for word in DEFINERS) + rb")\s+(?:\([^)]*\)\s*)?"
)  # the receiver of a Go method: 'func (s *Server) Handle'
_OPENER = re.compile(rb"[{(\[]+")
_CLOSER = re.compile(rb"[)\]}]")
_END_WORD = re.compile(rb"(?i:end)(?![\w$])")


# ----- the text of a file ------------------------------------------------------------------------------------------


def split_lines(data: bytes) -> list[bytes]:
    """A file's lines without their endings (LF or CRLF); text after the last LF is a line, nothing is not."""
    pieces = data.split(b"\n")
    last = pieces.pop()
    lines = [piece[:-1] if piece.endswith(b"\r") else piece for piece in pieces]
    if last:
        lines.append(last)
    return lines


def text_hash(lines: Sequence[bytes]) -> str:
    """The contract's hash of anchored text: SHA-256 of the lines joined with LF, in hex."""
    return hashlib.sha256(b"\n".join(lines)).hexdigest()


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _definition_lines(lines: Sequence[bytes], name: str, start: int, stop: int) -> int | None:
    """The index of the line defining `name` within lines[start:stop] (see the module docstring), if any."""
    raw = name.encode()
    word = re.escape(raw)
    defined = re.compile(_DEFINITION + word + rb"(?![\w$])")
    mentioned = re.compile(rb"(?<![\w$])" + word + rb"(?![\w$])")
    best: int | None = None
    for index in range(start, stop):
        line = lines[index]
        if raw not in line:  # most lines: one substring test, no pattern
            continue
        if defined.match(line):
            return index
        if (best is None or _indent(line) < _indent(lines[best])) and mentioned.search(line):
            best = index
    return best


def _block_end(lines: Sequence[bytes], first: int, stop: int) -> int:
    """The index of the last line of the block that lines[first] opens."""
    depth = _indent(lines[first])
    end = first
    index = first + 1
    while index < stop:
        text = lines[index].strip()
        if not text:
            index += 1
            continue
        indent = _indent(lines[index])
        if indent > depth:
            end = index
        elif indent == depth and (_OPENER.fullmatch(text) or _CLOSER.match(text) or _END_WORD.match(text)):
            end = index
            after = next((j for j in range(index + 1, stop) if lines[j].strip()), None)
            opens = _OPENER.fullmatch(text) is not None
            if not (opens or (_CLOSER.match(text) and after is not None and _indent(lines[after]) > depth)):
                break  # it closed the block
        else:
            break
        index += 1
    return end


def symbol_range(lines: Sequence[bytes], symbol: str) -> LineRange | None:
    """The lines (from 1) of `symbol`'s block, each dotted part looked up inside the previous one's; None if absent."""
    start, stop = 0, len(lines)
    found: LineRange | None = None
    for part in symbol.split("."):
        first = _definition_lines(lines, part, start, stop)
        if first is None:
            return None
        last = _block_end(lines, first, stop)
        found = LineRange(first + 1, last + 1)
        start, stop = first + 1, last + 1
    return found


@dataclass(slots=True)
class FileText:
    """One file of the current tree, with what freshness looks up in it kept: many anchors share a file."""

    path: str
    lines: list[bytes]
    _whole: str | None = field(default=None, init=False, repr=False)
    # By window length: the hash of each run of that many lines -> where the first such run starts.
    _windows: dict[int, dict[str, int]] = field(default_factory=dict, init=False, repr=False)
    _symbols: dict[str, LineRange | None] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def of(cls, path: str, data: bytes) -> FileText:
        return cls(path, split_lines(data))

    @property
    def whole_hash(self) -> str:
        if self._whole is None:
            self._whole = text_hash(self.lines)
        return self._whole

    def hash_of(self, lines: LineRange) -> str | None:
        """The hash of those lines now; None when the file is shorter."""
        if lines.end > len(self.lines):
            return None
        return text_hash(self.lines[lines.start - 1 : lines.end])

    def find_text(self, length: int, content_hash: str) -> LineRange | None:
        """The first `length` lines whose text hashes to `content_hash`, if any."""
        windows = self._windows.get(length)
        if windows is None:
            windows = {}
            for start in range(len(self.lines) - length, -1, -1):  # backwards: the first start wins
                windows[text_hash(self.lines[start : start + length])] = start
            self._windows[length] = windows
        found = windows.get(content_hash)
        return None if found is None else LineRange(found + 1, found + length)

    def symbol(self, symbol: str) -> LineRange | None:
        if symbol not in self._symbols:
            self._symbols[symbol] = symbol_range(self.lines, symbol)
        return self._symbols[symbol]

    def place_of(self, symbol: str) -> Place | None:
        """Where `symbol` is defined in this file, with its text's hash."""
        lines = self.symbol(symbol)
        found = None if lines is None else self.hash_of(lines)
        return None if lines is None or found is None else Place(self.path, lines, found)


# ----- facts and verdicts ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """Where anchored text is in the current tree, and the hash of the text there. `lines` None: the whole file."""

    path: str
    lines: LineRange | None
    content_hash: str


@dataclass(frozen=True, slots=True)
class AnchorFacts:
    """What the current tree holds for one anchor.

    `file_exists`: its path is a file in the tree. `places`: where its text is now, each with the hash of the text
    there (its lines where they were, other lines holding the same text, its symbol wherever it is defined).
    `searched`: the file's text was read, so no place for a symbol means the symbol is gone; False when only the
    whole file's hash is known, as from a client's `{path: fileHash}` pairs.
    """

    file_exists: bool
    places: tuple[Place, ...] = ()
    searched: bool = True


@dataclass(frozen=True, slots=True)
class AnchorVerdict:
    anchor: Anchor
    freshness: Freshness
    place: Place | None = None  # where the anchored text is now: moved to, or changed at


@dataclass(frozen=True, slots=True)
class NoteVerdict:
    freshness: Freshness  # the stalest of its anchors'
    anchors: tuple[AnchorVerdict, ...]


def judge_anchor(anchor: Anchor, facts: AnchorFacts) -> AnchorVerdict:
    same_text = [place for place in facts.places if place.content_hash == anchor.content_hash]
    for place in same_text:
        if place.path == anchor.path and (anchor.lines is None or place.lines == anchor.lines):
            return AnchorVerdict(anchor, Freshness.FRESH, place)
    if same_text:
        return AnchorVerdict(anchor, Freshness.MOVED, same_text[0])
    # Another text of the same name in another file is not this symbol changed: names repeat across files.
    here = [place for place in facts.places if place.path == anchor.path]
    if here:
        return AnchorVerdict(anchor, Freshness.CHANGED, here[0])
    if facts.file_exists and (anchor.symbol is None or not facts.searched):
        return AnchorVerdict(anchor, Freshness.CHANGED)
    return AnchorVerdict(anchor, Freshness.GONE)


def judge_note(judged: Iterable[tuple[Anchor, AnchorFacts]]) -> NoteVerdict | None:
    """The verdict on each anchor given its facts, and the note's; None when no anchor could be judged."""
    verdicts = tuple(judge_anchor(anchor, facts) for anchor, facts in judged)
    if not verdicts:
        return None
    return NoteVerdict(max((v.freshness for v in verdicts), key=_STALENESS.__getitem__), verdicts)


def facts_in_tree(
    anchor: Anchor, own: FileText | None, elsewhere: Callable[[str], Iterable[FileText]] = lambda name: ()
) -> AnchorFacts:
    """The facts of `anchor` in a tree whose text can be read: `own` is its file (None: not in the tree);
    `elsewhere(name)` gives other files that mention a name, searched only for a symbol not defined in its own file.
    Other places are looked for only when the anchored text is not where it was."""
    if anchor.symbol is not None:
        place = own.place_of(anchor.symbol) if own is not None else None
        if place is not None and place.content_hash == anchor.content_hash:
            return AnchorFacts(True, (place,))
        places = [] if place is None else [place]
        if place is None:
            top = anchor.symbol.split(".")[0]
            places += [p for text in elsewhere(top) if text.path != anchor.path and (p := text.place_of(anchor.symbol))]
        return AnchorFacts(own is not None, tuple(places))
    if own is None:
        return AnchorFacts(False)
    if anchor.lines is None:
        return AnchorFacts(True, (Place(own.path, None, own.whole_hash),))
    now = own.hash_of(anchor.lines)
    here = () if now is None else (Place(own.path, anchor.lines, now),)
    if now == anchor.content_hash:
        return AnchorFacts(True, here)
    moved = own.find_text(anchor.lines.end - anchor.lines.start + 1, anchor.content_hash)
    return AnchorFacts(True, here + (() if moved is None else (Place(own.path, moved, anchor.content_hash),)))


def facts_from_file_hash(anchor: Anchor, file_hash: str | None) -> AnchorFacts:
    """The facts of `anchor` from the hash of its whole file now (None: the file is not in the tree): unchanged
    file, fresh anchor; any change to the file counts as a change to the anchored text, which cannot be told apart."""
    if file_hash is None:
        return AnchorFacts(False, searched=False)
    if file_hash.lower() == anchor.file_hash:
        return AnchorFacts(True, (Place(anchor.path, anchor.lines, anchor.content_hash),), searched=False)
    return AnchorFacts(True, searched=False)


# ----- a client's view: the files it works on, and the hashes of its files -----------------------------------------
# get_context and search_notes take `files` (notes anchored there lead) and get_context `checkFreshness`
# (`{path: fileHash or null}`): paths follow the anchor path rules, and only paths and hashes travel, never code.

MAX_FILES = 20  # `files` entries a read takes: on DynamoDB each is one bounded Query of anchor pointers
MAX_HASHED_PATHS = 2_000  # `checkFreshness` entries a read takes: a branch's worth of anchored files
MARK_PATHS = 2  # paths a stale mark names; more are counted
MARK_PATH_CHARS = 60  # a longer path is shown by its end: the file name says most
_FILE_HASH = re.compile(r"[0-9a-f]{64}")
NAMED_FILE, UNDER_DIRECTORY = 0, 1  # how closely a note's anchors meet `files`: best first


def check_files(files: Sequence[str]) -> tuple[str, ...]:
    """A `files` argument's paths, normalised as anchor paths are ('./src/' is 'src'), each once, in order.

    Raises:
        InvalidArgumentError: too many paths, or one an anchor could not have (named by its index).
    """
    if len(files) > MAX_FILES:
        raise InvalidArgumentError(
            f"files has {len(files)} paths; send at most {MAX_FILES}: name a directory (e.g. 'src/') for the files "
            "under it."
        )
    paths: list[str] = []
    for index, path in enumerate(files):
        try:
            paths.append(check_anchor_path(path))
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"files[{index}]: {exc.message}") from None
    return tuple(dict.fromkeys(paths))


def check_file_hashes(hashes: Mapping[str, str | None]) -> dict[str, str | None]:
    """A `checkFreshness` argument: each path normalised as anchor paths are, each hash in lower case; None (null)
    says the file is not in the tree.

    Raises:
        InvalidArgumentError: too many paths, a path an anchor could not have, one named twice, or a value that is
            neither a fileHash nor null.
    """
    if len(hashes) > MAX_HASHED_PATHS:
        raise InvalidArgumentError(
            f"checkFreshness has {len(hashes)} paths; send at most {MAX_HASHED_PATHS:,}: the files your notes are "
            "anchored to (get_context lists them in meta.anchoredPaths)."
        )
    checked: dict[str, str | None] = {}
    for path, value in hashes.items():
        try:
            normal = check_anchor_path(path)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"checkFreshness: {exc.message}") from None
        if normal in checked:
            raise InvalidArgumentError(
                f"checkFreshness names {quote_short(normal)} twice (as {quote_short(path)} too); send each file once."
            )
        if value is not None and not _FILE_HASH.fullmatch(value.strip().lower()):
            raise InvalidArgumentError(
                f"checkFreshness[{quote_short(normal)}] is {quote_short(value)}, not a fileHash: send the file's "
                "SHA-256 in hex (64 digits) as anchors define it, or null when the file is gone."
            )
        checked[normal] = None if value is None else value.strip().lower()
    return checked


def file_match(anchors: Iterable[Anchor], files: Sequence[str]) -> int | None:
    """How closely anchors meet `files` (check_files' paths): NAMED_FILE when one is anchored to a path of `files`,
    UNDER_DIRECTORY when one is anchored to a file under one of them, None when neither."""
    best: int | None = None
    for anchor in anchors:
        for path in files:
            if anchor.path == path:
                return NAMED_FILE
            if anchor.path.startswith(path + "/"):
                best = UNDER_DIRECTORY
    return best


def judge_by_file_hashes(anchors: Sequence[Anchor], hashes: Mapping[str, str | None]) -> NoteVerdict | None:
    """A note's verdict from a client's `{path: fileHash or None}` (check_file_hashes'): its anchors on those paths
    judged (facts_from_file_hash), the rest left alone; None when none of its paths is there."""
    return judge_note((anchor, facts_from_file_hash(anchor, hashes[anchor.path])) for anchor in anchors
                      if anchor.path in hashes)  # fmt: skip


def stale_mark(verdict: NoteVerdict | None) -> str | None:
    """The mark of a note whose code changed or is gone, as a line shows it: `[changed: src/retry.py, re-check]`,
    naming the paths of the anchors at the note's verdict; None for fresh and moved notes (moved text is unchanged)."""
    if verdict is None or verdict.freshness not in (Freshness.CHANGED, Freshness.GONE):
        return None
    paths = list(dict.fromkeys(v.anchor.path for v in verdict.anchors if v.freshness is verdict.freshness))
    shown = [p if len(p) <= MARK_PATH_CHARS else "…" + p[-(MARK_PATH_CHARS - 1) :] for p in paths[:MARK_PATHS]]
    more = f" +{len(paths) - MARK_PATHS}" if len(paths) > MARK_PATHS else ""
    return f"[{verdict.freshness.value}: {' '.join(shown)}{more}, re-check]"


def anchored_first(notes: Iterable[Note], files: Sequence[str]) -> list[Note]:
    """The notes anchored to `files`, those anchored to a named file first, then the most recently updated; the
    others left out. Both stores' `anchored_notes` answer in this order."""
    matched = [(match, note) for note in notes if (match := file_match(note.anchors, files)) is not None]
    matched.sort(key=lambda pair: (pair[1].updated_at, pair[1].id), reverse=True)
    return [note for _, note in sorted(matched, key=lambda pair: pair[0])]


# ----- recorded verdicts: the last one on each anchored note, for the console ---------------------------------------
# Reads that judge notes (get_context's checkFreshness) and `notewell check` record what they found, as derived data
# beside the note (never a note version, never in the change feed). A client may judge a few files only, so a record
# keeps one verdict per anchored file, and a new judgment replaces only the files it judged; the record holds for the
# note version judged, and an edit or re-anchoring (a new version) leaves it behind: not checked since.

# What the console weighs: the notes `notewell check` checks (superseded and historical notes are settled history).
CHECKED_STATUSES = (NoteStatus.CURRENT, NoteStatus.PENDING, NoteStatus.DISPUTED)
STALE = frozenset({Freshness.CHANGED, Freshness.GONE})


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """The stalest verdict on a note's anchors in one file of one repository."""

    repo: str
    path: str
    freshness: Freshness


@dataclass(frozen=True, slots=True)
class RecordedVerdict:
    """A note's last recorded verdicts: one per anchored file judged (in (repo, path) order), at note `version`.
    `judged_at`: when the record last changed (a check that finds the same again writes nothing)."""

    note_id: str
    project_id: str
    version: int
    files: tuple[FileVerdict, ...]
    judged_at: str

    @property
    def freshness(self) -> Freshness:
        """The note's: its stalest file's."""
        return max((f.freshness for f in self.files), key=_STALENESS.__getitem__, default=Freshness.FRESH)

    @property
    def stale_paths(self) -> tuple[str, ...]:
        """The paths at the note's verdict when it is changed or gone, as stale_mark names them; else none."""
        verdict = self.freshness
        return tuple(dict.fromkeys(f.path for f in self.files if f.freshness is verdict)) if verdict in STALE else ()


def file_verdicts(verdict: NoteVerdict) -> dict[tuple[str, str], Freshness]:
    """A note verdict by file: for each (repo, path) judged, the stalest of its anchors there."""
    files: dict[tuple[str, str], Freshness] = {}
    for judged in verdict.anchors:
        key = (judged.anchor.repo, judged.anchor.path)
        before = files.get(key, Freshness.FRESH)
        files[key] = max(before, judged.freshness, key=_STALENESS.__getitem__)
    return files


def record_verdict(
    note: Note, verdict: NoteVerdict, before: RecordedVerdict | None, now: str
) -> RecordedVerdict | None:
    """The note's record once `verdict` (judged on `note` at its version) is added to `before`, the one stored: the
    files judged now replace theirs, the others judged at the same version stay. None when nothing would change (no
    write), or when `before` is of a later version (this judgment came from an older read)."""
    if before is not None and before.version > note.version:
        return None
    kept = {(f.repo, f.path): f.freshness for f in before.files} if before and before.version == note.version else {}
    files = {**kept, **file_verdicts(verdict)}
    if before is not None and before.version == note.version and files == kept:
        return None
    ordered = tuple(FileVerdict(repo, path, files[repo, path]) for repo, path in sorted(files))
    return RecordedVerdict(note.id, note.project_id, note.version, ordered, now)


@dataclass(frozen=True, slots=True)
class StaleNote:
    note: Note
    verdict: RecordedVerdict


@dataclass(frozen=True, slots=True)
class FreshnessSummary:
    """A project's anchored notes by their last verdict at their current version.

    `stale`: changed or gone, gone first, then the most recently judged. `counts`: how many are fresh and how many
    moved (unchanged text elsewhere). `unchecked`: no verdict at the current version. `weighed`: the anchored notes
    looked at; `complete` False when the project holds more than were weighed."""

    stale: tuple[StaleNote, ...]
    counts: Mapping[Freshness, int]
    unchecked: int
    weighed: int
    complete: bool


def summarize(notes: Sequence[Note], records: Mapping[str, RecordedVerdict], *, complete: bool) -> FreshnessSummary:
    """The summary of the anchored `notes` given the records stored for them; a record of another version than the
    note's no longer applies (the note was edited or re-anchored since), so that note counts as unchecked."""
    stale: list[StaleNote] = []
    counts = {Freshness.FRESH: 0, Freshness.MOVED: 0}
    unchecked = 0
    for note in notes:
        record = records.get(note.id)
        if record is None or record.version != note.version or not record.files:
            unchecked += 1
        elif record.freshness in STALE:
            stale.append(StaleNote(note, record))
        else:
            counts[record.freshness] += 1
    stale.sort(key=lambda s: s.verdict.judged_at, reverse=True)
    stale.sort(key=lambda s: s.verdict.freshness is not Freshness.GONE)
    return FreshnessSummary(tuple(stale), counts, unchecked, len(notes), complete)
