"""Validation rules, limits and text helpers shared by every store and entrypoint."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from notewell.domain.errors import InvalidArgumentError, TooLargeError
from notewell.domain.model import Anchor, LineRange, Link

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

# One body limit for both stores. DynamoDB items cap at 400 KB of UTF-8 (attribute names included), so the
# byte cap keeps room for title, tags and links even when every character takes four bytes.
MAX_BODY_CHARS = 100_000
MAX_BODY_BYTES = 256 * 1024
MAX_TITLE_CHARS = 200
MAX_TAGS = 20
MAX_TAG_CHARS = 64
MAX_LINKS = 50
MAX_SUPERSEDES = 20  # a DynamoDB transaction holds at most 100 actions; each supersession takes two
MAX_GET_NOTES = 50
MAX_PROJECT_TEXT = 4_000
DEFAULT_EXCERPT_CHARS = 160

_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?")  # used with fullmatch: "$" accepts a trailing newline
_TAG = re.compile(r"[\w][\w.:/+-]*")
_NOTE_ID = re.compile(r"n_[0-9A-HJKMNP-TV-Z]{26}")
_WS = re.compile(r"\s+")


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:64] or "project"


def check_project_slug(project: str) -> str:
    if not isinstance(project, str) or not _SLUG.fullmatch(project):
        raise InvalidArgumentError(
            f"Project {project!r} is not a valid slug; use lowercase letters, digits, '-', '_' or '.', "
            f"e.g. {slugify(str(project))!r}."
        )
    return project


def check_note_id(note_id: str) -> str:
    if not isinstance(note_id, str) or not _NOTE_ID.fullmatch(note_id):
        raise InvalidArgumentError(
            f"{note_id!r} is not a note id; ids look like 'n_01JD…' (26 characters after 'n_'), refs like 'Q4MF2A' "
            "(6 characters), as returned by search_notes or get_context."
        )
    return note_id


_DECIMAL = re.compile(r"[0-9]{1,18}")  # ASCII only: str.isdigit() accepts '²', which int() then refuses


def parse_decimal(text: str) -> int | None:
    """The integer an opaque page/cursor string spells in plain ASCII digits (at most 18), else None."""
    return int(text) if isinstance(text, str) and _DECIMAL.fullmatch(text) else None


def check_unicode(label: str, text: str) -> str:
    """`text` if UTF-8 can encode it. JSON may escape half a surrogate pair (`"\\ud800"`) and a parser may let it
    through; no store can keep one, so it is refused here instead of failing mid-write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _lone_surrogate(label, text, exc.start) from None
    return text


def _lone_surrogate(label: str, text: str, index: int) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{label} contains a lone surrogate (U+{ord(text[index]):04X}) at character {index}; "
        "send valid Unicode (a \\uD800-\\uDFFF escape must be half of a pair)."
    )


def check_title(title: str) -> str:
    check_unicode("Title", title)
    cleaned = _WS.sub(" ", title).strip()
    if not cleaned:
        raise InvalidArgumentError("Title is empty; give the note a short, specific title.")
    if len(cleaned) > MAX_TITLE_CHARS:
        raise InvalidArgumentError(
            f"Title has {len(cleaned)} characters; keep it under {MAX_TITLE_CHARS} and put details in the body."
        )
    return cleaned


def check_body(body: str) -> str:
    chars = len(body)
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise _lone_surrogate("Body", body, exc.start) from None
    if chars > MAX_BODY_CHARS or size > MAX_BODY_BYTES:
        raise TooLargeError(
            f"Note body has {chars:,} characters ({size:,} bytes); the limit is {MAX_BODY_CHARS:,} characters "
            f"and {MAX_BODY_BYTES // 1024} KiB. Split it into several notes and link them."
        )
    return body


def check_tags(tags: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for raw in tags:
        check_unicode(f"Tag {raw!r}", raw)
        tag = raw.strip().lower()
        if not tag or len(tag) > MAX_TAG_CHARS or not _TAG.fullmatch(tag):
            raise InvalidArgumentError(
                f"Tag {raw!r} is not valid; tags are single words such as 'auth' or 'api:v2' "
                f"(at most {MAX_TAG_CHARS} characters)."
            )
        seen[tag] = None
    if len(seen) > MAX_TAGS:
        raise InvalidArgumentError(f"A note takes at most {MAX_TAGS} tags; keep the most useful ones.")
    return tuple(seen)


def check_links(links: Sequence[Link], *, own_id: str | None = None) -> tuple[Link, ...]:
    if len(links) > MAX_LINKS:
        raise InvalidArgumentError(f"A note takes at most {MAX_LINKS} links; link to a summary note instead.")
    out: dict[tuple[str, str], Link] = {}
    for link in links:
        check_note_id(link.target)
        if link.target == own_id:
            raise InvalidArgumentError("A note cannot link to itself; remove that link.")
        check_unicode("Link relation", link.relation)
        relation = link.relation.strip().lower() or "related"
        if len(relation) > MAX_TAG_CHARS:
            raise InvalidArgumentError(f"Link relation {link.relation!r} is too long; use a short verb phrase.")
        out[(link.target, relation)] = Link(link.target, relation)
    return tuple(out.values())


def check_importance(importance: int) -> int:
    if not 1 <= importance <= 5:
        raise InvalidArgumentError(f"Importance {importance} is out of range; use 1 (minor) to 5 (critical).")
    return importance


# ----- anchors: the code a note is about (paths, a symbol, lines and hashes; never the code) ------------------------

MAX_ANCHORS = 20
MAX_ANCHOR_PATH_BYTES = 1_024  # UTF-8: 20 anchors stay far below what a DynamoDB item has left beside a body
MAX_ANCHOR_NAME_CHARS = 200  # a repository's name, a symbol
MAX_ANCHOR_LINE = 10_000_000
ANCHOR_FIELDS = ("repo", "path", "symbol", "lines", "commit", "contentHash", "fileHash")
_REPO = re.compile(r"[\w.-]+(?:/[\w.-]+)*")  # no ':' or '@': a clone URL with credentials cannot pass as a name
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1 or SHA-256 object names, in full
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SYMBOL = re.compile(
    r"[^\s.\x00-\x1f\x7f]+(?:\.[^\s.\x00-\x1f\x7f]+)*"
)  # dots name a symbol inside another: 'Config.load'
_DRIVE = re.compile(r"[A-Za-z]:")


def check_anchor_path(path: str) -> str:
    """A repository-relative file path, normalised ('./a//b' is 'a/b'); refused when absolute or using '..'."""
    check_unicode("Anchor path", path)
    if "\\" in path:
        raise InvalidArgumentError(f"Anchor path {quote_short(path)} uses '\\'; separate directories with '/'.")
    if path.startswith("/") or _DRIVE.match(path):
        raise InvalidArgumentError(
            f"Anchor path {quote_short(path)} is absolute; give it from the repository's top directory, "
            "e.g. 'src/app.py'."
        )
    if any(unicodedata.category(character) == "Cc" for character in path):
        raise InvalidArgumentError(f"Anchor path {quote_short(path)} holds a control character; remove it.")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise InvalidArgumentError(
            f"Anchor path {quote_short(path)} uses '..'; give the path inside the repository, from its top directory."
        )
    if not parts:
        raise InvalidArgumentError("An anchor path is empty; name a file from the repository's top, e.g. 'src/app.py'.")
    normalised = "/".join(parts)
    if len(normalised.encode()) > MAX_ANCHOR_PATH_BYTES:
        raise InvalidArgumentError(f"Anchor path {quote_short(path)} is over {MAX_ANCHOR_PATH_BYTES} bytes of UTF-8.")
    return normalised


def check_anchor(anchor: Anchor) -> Anchor:
    """The anchor with its path normalised and hex in lower case; refused with what to send instead."""
    repo = anchor.repo.strip()
    if not _REPO.fullmatch(repo) or len(repo) > MAX_ANCHOR_NAME_CHARS:
        raise InvalidArgumentError(
            f"Anchor repo {quote_short(anchor.repo)} is not a repository name; use one like "
            "'github.com/acme/billing-api' (no scheme, user or password), as notewell anchor records it."
        )
    commit = anchor.commit.strip().lower()
    if not _COMMIT.fullmatch(commit):
        raise InvalidArgumentError(
            f"Anchor commit {quote_short(anchor.commit)} is not a full commit id; send the 40 (or 64) hex digits "
            "'git rev-parse HEAD' prints."
        )
    hashes = []
    for name, value in (("contentHash", anchor.content_hash), ("fileHash", anchor.file_hash)):
        if not _SHA256.fullmatch(value.strip().lower()):
            raise InvalidArgumentError(
                f"Anchor {name} {quote_short(value)} is not a SHA-256 in hex (64 digits); notewell anchor computes it."
            )
        hashes.append(value.strip().lower())
    symbol = anchor.symbol
    if symbol is not None:
        check_unicode("Anchor symbol", symbol)
        symbol = symbol.strip()
        if not _SYMBOL.fullmatch(symbol) or len(symbol) > MAX_ANCHOR_NAME_CHARS:
            raise InvalidArgumentError(
                f"Anchor symbol {quote_short(anchor.symbol)} is not a name; send one such as 'parse_config', or "
                f"'Config.load' for a method (at most {MAX_ANCHOR_NAME_CHARS} characters, no spaces)."
            )
    lines = anchor.lines
    if lines is not None and not 1 <= lines.start <= lines.end <= MAX_ANCHOR_LINE:
        raise InvalidArgumentError(
            f"Anchor lines {lines.start}-{lines.end} are not a range; send start and end counted from 1, start <= end."
        )
    return Anchor(repo, check_anchor_path(anchor.path), commit, hashes[0], hashes[1], symbol, lines)


def check_anchors(anchors: Sequence[Anchor]) -> tuple[Anchor, ...]:
    """Each anchor checked; one per key (Anchor.key), the last given winning, in the order keys first appear."""
    if len(anchors) > MAX_ANCHORS:
        raise InvalidArgumentError(
            f"A note takes at most {MAX_ANCHORS} anchors ({len(anchors)} given); anchor the files that matter most."
        )
    kept: dict[tuple[str, str, str | None], Anchor] = {}
    for index, anchor in enumerate(anchors):
        try:
            checked = check_anchor(anchor)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"anchors[{index}]: {exc.message}") from None
        kept[checked.key] = checked
    return tuple(kept.values())


def anchor_json(anchor: Anchor) -> dict[str, object]:
    """An anchor as JSON (the wire, the export format and the SQLite column): optional fields only when set."""
    value: dict[str, object] = {"repo": anchor.repo, "path": anchor.path}
    if anchor.symbol is not None:
        value["symbol"] = anchor.symbol
    if anchor.lines is not None:
        value["lines"] = {"start": anchor.lines.start, "end": anchor.lines.end}
    value.update(commit=anchor.commit, contentHash=anchor.content_hash, fileHash=anchor.file_hash)
    return value


def anchor_of_json(value: object) -> Anchor:
    """The anchor a JSON object describes (shape only: check_anchor judges the values).

    Raises:
        InvalidArgumentError: not an object, an unknown or missing field, or a value of the wrong type.
    """
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"An anchor is an object with {', '.join(ANCHOR_FIELDS)}; got {quote_short(value)}.")
    unknown = [key for key in value if key not in ANCHOR_FIELDS]
    if unknown:
        raise InvalidArgumentError(
            f"Unknown anchor field {quote_short(unknown[0])}; anchors take {', '.join(ANCHOR_FIELDS)}."
        )
    texts = {name: _anchor_text(value, name) for name in ("repo", "path", "commit", "contentHash", "fileHash")}
    symbol = value.get("symbol")
    if symbol is not None and not isinstance(symbol, str):
        raise InvalidArgumentError("Anchor symbol must be a string, such as 'parse_config'.")
    return Anchor(
        texts["repo"], texts["path"], texts["commit"], texts["contentHash"], texts["fileHash"], symbol,
        _anchor_lines(value.get("lines")),
    )  # fmt: skip


def anchors_of_json(values: Sequence[object]) -> tuple[Anchor, ...]:
    """check_anchors of the anchors JSON objects describe; errors name the anchor by its index."""
    anchors = []
    for index, value in enumerate(values):
        try:
            anchors.append(anchor_of_json(value))
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"anchors[{index}]: {exc.message}") from None
    return check_anchors(anchors)


def _anchor_text(value: Mapping[str, object], name: str) -> str:
    found = value.get(name)
    if not isinstance(found, str):
        what = "is missing" if found is None else "must be a string"
        raise InvalidArgumentError(f"Anchor {name} {what}; notewell anchor --print gives every field an anchor needs.")
    return found


def _anchor_lines(value: object) -> LineRange | None:
    if value is None:
        return None
    if isinstance(value, dict) and set(value) == {"start", "end"}:
        start, end = value["start"], value["end"]
        if type(start) is int and type(end) is int:  # not bool, not float
            return LineRange(start, end)
    raise InvalidArgumentError(
        'Anchor lines must be {"start": N, "end": M}, counted from 1; omit them for a whole file.'
    )


def check_project_text(label: str, text: str) -> str:
    check_unicode(f"Project {label}", text)
    if len(text) > MAX_PROJECT_TEXT:
        raise InvalidArgumentError(
            f"Project {label} has {len(text):,} characters; keep it under {MAX_PROJECT_TEXT:,} "
            "and move details into notes."
        )
    return text


def excerpt(text: str, limit: int = DEFAULT_EXCERPT_CHARS) -> str:
    """The first `limit` characters of `text` on one line, cut at a word boundary, '…' when shortened."""
    return shorten(flat_start(text, limit), limit)


def flat_start(text: str, limit: int) -> str:
    """Enough of the start of `text` for `limit` characters on one line (runs of spaces and breaks as one space):
    only the start is read (flat_reach), never a whole body."""
    return one_line(text[: flat_reach(limit)])


def flat_reach(limit: int) -> int:
    """How far into a text flat_start reads for `limit` characters: room for runs of spaces it folds."""
    return limit * 4 + 64


def one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


# A lean read (get_context's candidates on DynamoDB) carries the start of a body only: this many characters, on one
# line, plus one more to tell that it goes on. Every excerpt up to this long is then the one the whole body gives.
LEAN_BODY_CHARS = 240


def lean_text(body: str) -> str:
    """The start of `body` a lean read keeps: `excerpt(body, n)` == `shorten(lean_text(body), n)` for every
    n <= LEAN_BODY_CHARS."""
    return flat_start(body, LEAN_BODY_CHARS)[: LEAN_BODY_CHARS + 1]


def shorten(flat: str, limit: int) -> str:
    """`flat` (one line, already normalised) cut to `limit` characters at a word boundary, '…' when shortened."""
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"  # combining diacritics
_INDEX_WORD = re.compile(rf"[{_MARKS}]*[^\W_](?:[^\W_]|[{_MARKS}])*")


def words(text: str) -> list[str]:
    """The words a search index holds for `text`, lowercased, in order: runs of letters and digits.

    The one word splitter of search and remember, drawn to match SQLite FTS5's unicode61 tokenizer: letters and
    digits stay together ('alpha123'), underscore and punctuation separate ('foo_bar', 'x-y': two words each), an
    accent stays in its word, composed or not (FTS5 drops it). So a word taken from a note's text is a term the
    index holds for that note (a word FTS5 splits further still matches, as a phrase), which is how remember finds
    the note that identical content would duplicate.
    """
    return _INDEX_WORD.findall(unicodedata.normalize("NFC", text).lower())


def word_matches(text: str) -> Iterator[re.Match[str]]:
    """The words of `text` as words() finds them, with where each stands (`text` already lowercased)."""
    return _INDEX_WORD.finditer(text)


# A run of ASCII letters and digits that mixes them (ids, hashes, versions such as 'v2') comes first: tokenizers
# split such runs into pieces of about 1.5 characters (a note id's 26 characters are 17 cl100k tokens).
_TOKEN_PIECE = re.compile(r"[A-Za-z0-9]*(?:[A-Za-z][0-9]|[0-9][A-Za-z])[A-Za-z0-9]*|[^\W\d_]+|\d+|\s+|[^\w\s]+|_")


_IDEOGRAPHIC = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")  # kana, Han, Hangul


def estimate_tokens(text: str) -> int:
    """The product's one token estimate (budgets, get_context's `spent`, metering).

    Counts pieces the way BPE tokenizers split text: a word is one token per 8 letters (a leading space is
    free), digits go in threes, a run of punctuation costs one token per two characters. Measured against
    cl100k_base and o200k_base (tests/unit/test_token_estimate.py): English prose 1.02x the real count, note
    texts 0.97x, get_context JSON 1.10x (slightly over, so a budget holds), random ids 0.82x. Texts over
    SAMPLE_ABOVE characters are estimated from evenly spread slices, so metering a large result stays cheap.
    """
    if len(text) > SAMPLE_ABOVE:
        step = len(text) // SAMPLE_SLICES
        slices = [text[i * step : i * step + SAMPLE_CHARS] for i in range(SAMPLE_SLICES)]
        sampled = sum(len(x) for x in slices)
        return round(sum(_count_tokens(x) for x in slices) * len(text) / sampled)
    return _count_tokens(text)


# What a budget keeps free for the estimate's error against cl100k/o200k on rendered answers (get_context's
# tests/unit/test_packing.py, get_changes_since's tests/integration/test_mcp_changes.py).
TOKENIZER_MARGIN = 0.04


def estimate_tokens_whole(text: str) -> int:
    """estimate_tokens without sampling: what a budget check needs, where a sampled guess could overrun."""
    return _count_tokens(text)


SAMPLE_ABOVE = 4_096
SAMPLE_SLICES = 4
SAMPLE_CHARS = 1_024


def _count_tokens(text: str) -> int:
    count = 0
    spaced = False  # the last piece was a lone space: free before a word, a token of its own before digits
    for match in _TOKEN_PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if spaced and first.isdigit():
            count += 1
        spaced = piece == " "
        if piece.isascii() and piece.isalnum() and not piece.isalpha() and not piece.isdigit():
            count += (len(piece) * 2 + 2) // 3  # mixed letters and digits: 1.5 characters a token
        elif first.isalpha():
            if piece.isascii():
                count += 1 + (len(piece) - 1) // 8
            elif _IDEOGRAPHIC.match(piece):  # cl100k spends about 4 tokens on 3 Chinese or Japanese characters
                count += (len(piece) * 4 + 2) // 3
            else:
                count += len(piece) // 2 + 1
        elif first.isdigit():
            count += (len(piece) + 2) // 3
        elif first.isspace():
            count += 0 if piece == " " else 1
        else:
            count += (len(piece) + 1) // 2
    return count


# Timestamps are fixed-width UTC with milliseconds, so string order is time order (years padded to four digits:
# strftime would write year 999 as '999', which sorts after '2026').
def format_ts(moment: datetime) -> str:
    m = moment.astimezone(UTC)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}."
        f"{m.microsecond // 1000:03d}Z"
    )


# ISO-8601 extended form in ASCII digits: a date, optionally a time (seconds and fraction optional) with an offset.
_ISO_TS = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?:[Tt ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:[.,](?P<fraction>[0-9]{1,9}))?)?"
    r"(?P<offset>[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(microsecond=999_000, tzinfo=UTC)
_TS_EXAMPLE = "'2026-03-01T12:00:00Z' (UTC) or '2026-03-01T14:00:00+02:00'"


def parse_ts(text: str) -> datetime:
    """The UTC moment an ISO-8601 timestamp names; no offset means UTC, a date alone means its midnight.

    An offset that carries the moment past year 1 or 9999 clamps it to the first or last representable millisecond
    (nothing is earlier or later), instead of overflowing.
    """
    match = _ISO_TS.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidArgumentError(f"{quote_short(text)} is not an ISO-8601 timestamp; send one like {_TS_EXAMPLE}.")
    fraction = (match["fraction"] or "").ljust(6, "0")[:6]
    offset_text = match["offset"] or "Z"
    try:
        local = datetime(
            int(match["year"]), int(match["month"]), int(match["day"]), int(match["hour"] or 0),
            int(match["minute"] or 0), int(match["second"] or 0), int(fraction),
        )  # fmt: skip
        offset = timedelta(0)
        if offset_text not in "Zz":
            digits = offset_text[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:] or 0)
            if hours > 23 or minutes > 59:
                raise ValueError(offset_text)
            offset = timedelta(hours=hours, minutes=minutes) * (-1 if offset_text[0] == "-" else 1)
    except ValueError:
        raise InvalidArgumentError(
            f"{quote_short(text)} is not a real date, time and offset; send one like {_TS_EXAMPLE}."
        ) from None
    try:
        return (local - offset).replace(tzinfo=UTC)
    except OverflowError:
        return EARLIEST if offset > timedelta(0) else LATEST


def quote_short(value: object, limit: int = 40) -> str:
    """`value` quoted for an error message, cut short: an echo must not be bigger than the answer."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def next_updated_at(now: datetime, previous: str) -> str:
    """Edits move `updatedAt` strictly forward, even when two land in the same millisecond."""
    floor = parse_ts(previous) + timedelta(milliseconds=1)
    return format_ts(max(now, floor))


# ----- branches ------------------------------------------------------------------------------------------------

MAX_BRANCH_CHARS = 200
# The project's record of merged branches stays one small item (DynamoDB: far below 400 KB, read whole by every
# branch-aware get_context): past this many the oldest merges are forgotten.
MAX_MERGED_BRANCHES = 500
# What `git check-ref-format --branch` accepts, less what no branch worth a note uses: no control characters,
# spaces or ~^:?*[\, no "..", "@{" or "//", no leading "-" or "/", no trailing "/", "." or ".lock".
_BRANCH_CHARS = re.compile(r"[^\x00-\x20\x7f~^:?*\[\\]+")
_BRANCH_BAD = re.compile(r"\.\.|@\{|//|^[-/.]|/\.|[/.]$|\.lock$|\.lock/")


def check_branch(branch: str) -> str:
    """A git branch name as `git branch --show-current` prints it (e.g. 'main', 'feature/login')."""
    if (
        not isinstance(branch, str)
        or not 0 < len(branch) <= MAX_BRANCH_CHARS
        or not _BRANCH_CHARS.fullmatch(branch)
        or _BRANCH_BAD.search(branch)
        or branch == "@"
    ):
        raise InvalidArgumentError(
            f"{quote_short(str(branch))} is not a git branch name; pass what `git branch --show-current` prints "
            f"(at most {MAX_BRANCH_CHARS} characters)."
        )
    return branch
