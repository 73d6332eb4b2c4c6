"""The change-feed cursor: a position plus the filters it was made for, sealed with HMAC-SHA256.

Opaque to callers and tamper-evident: editing, truncating or replaying it against another workspace, project or
filter set fails verification, which is a 400, never a 500.

A sequence cursor (the common one) is compact, since the agent carries it in its context window: a version byte,
the sequence number and the filters as bit masks, with a 96-bit HMAC that also covers the workspace and project
ids, which therefore need not be in it (about 26 characters, 17 cl100k tokens; the JSON form of versions 1 and 2
was 170 characters and 120 tokens). Cursors of versions 1 and 2 are still read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from notewell.domain.errors import InvalidCursorError
from notewell.domain.model import FeedPosition

# 1: the position is (updatedAt, id), the horizon-held feed; 2: the position is a commit sequence number. Both are
# read: a version-1 cursor made before a store had the sequence continues on it (ChangesService maps it).
POSITION_VERSION = 1
SEQUENCE_VERSION = 2
COMPACT_VERSION = 3
# The filter names a compact cursor can hold, in bit order: never reorder, only append.
TYPE_BITS = ("decision", "constraint", "architecture", "fact", "incident", "failed_approach", "procedure", "status",
             "task", "handoff", "preference", "reference", "note")  # fmt: skip
STATUS_BITS = ("current", "superseded", "historical", "disputed", "pending")
COMPACT_MAC_BYTES = 12


@dataclass(frozen=True, slots=True)
class FeedCursor:
    workspace_id: str
    project_id: str
    types: tuple[str, ...]
    statuses: tuple[str, ...]
    position: FeedPosition | None
    seq: int | None = None  # set: a sequence cursor (version 2), and `position` is None
    floor: FeedPosition | None = None  # version 2: skip notes at or before it (where the sequence was joined)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mask(names: tuple[str, ...], bits: tuple[str, ...]) -> int | None:
    if any(name not in bits for name in names):
        return None
    return sum(1 << bits.index(name) for name in names)


def _names(mask: int, bits: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(name for index, name in enumerate(bits) if mask >> index & 1))


def _compact_mac(key: bytes, workspace_id: str, project_id: str, body: bytes) -> bytes:
    bound = b"\x00".join([b"v3", workspace_id.encode(), project_id.encode(), body])
    return hmac.new(key, bound, hashlib.sha256).digest()[:COMPACT_MAC_BYTES]


def _seal_compact(cursor: FeedCursor, key: bytes) -> str | None:
    """The compact form, when the cursor fits it: a sequence cursor with no floor and known filter names."""
    types, statuses = _mask(cursor.types, TYPE_BITS), _mask(cursor.statuses, STATUS_BITS)
    if cursor.seq is None or cursor.floor is not None or types is None or statuses is None:
        return None
    body = bytes([COMPACT_VERSION]) + types.to_bytes(2, "big") + bytes([statuses]) + _varint(cursor.seq)
    return _b64(body + _compact_mac(key, cursor.workspace_id, cursor.project_id, body))


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low, number = number & 0x7F, number >> 7
        out.append(low | (0x80 if number else 0))
        if not number:
            return bytes(out)


def _unvarint(data: bytes) -> int:
    number = 0
    for shift, byte in enumerate(data):
        number |= (byte & 0x7F) << (7 * shift)
        if not byte & 0x80:
            if shift != len(data) - 1 or shift > 9:
                raise ValueError("bytes after the sequence number")
            return number
    raise ValueError("the sequence number is cut off")


def seal(cursor: FeedCursor, key: bytes, *, compact: bool = True) -> str:
    """The cursor as a token; `compact=False` writes the JSON form earlier versions issued (for tests of them)."""
    short = _seal_compact(cursor, key) if compact else None
    if short is not None:
        return short
    payload: dict[str, object] = {
        "v": POSITION_VERSION, "w": cursor.workspace_id, "p": cursor.project_id, "t": list(cursor.types),
        "s": list(cursor.statuses),
        "a": None if cursor.position is None else [cursor.position.updated_at, cursor.position.note_id],
    }  # fmt: skip
    if cursor.seq is not None:
        del payload["a"]
        floor = None if cursor.floor is None else [cursor.floor.updated_at, cursor.floor.note_id]
        payload |= {"v": SEQUENCE_VERSION, "q": cursor.seq, "f": floor}
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    signature = hmac.new(key, body, hashlib.sha256).digest()[:16]
    return f"{_b64(body)}.{_b64(signature)}"


def unseal(token: str, key: bytes, *, workspace_id: str, project_ids: tuple[str, ...]) -> FeedCursor:
    """Verify and decode a cursor. A compact cursor verifies only for the workspace and one of `project_ids` it was
    made for; a JSON cursor (versions 1 and 2) names its own, for the caller to check.

    Raises:
        InvalidCursorError: forged, truncated, corrupted, from another deployment, or (compact) for another
            workspace or project.
    """
    invalid = InvalidCursorError(
        "cursor is not one this server issued (edited, truncated or from elsewhere); pass the cursor of the "
        "previous page unchanged, or start again with since."
    )
    if isinstance(token, str) and "." not in token and 0 < len(token) <= 64:
        return _unseal_compact(token, key, workspace_id, project_ids)
    if not isinstance(token, str) or token.count(".") != 1 or len(token) > 2_000:
        raise invalid
    body_text, signature_text = token.split(".")
    try:
        body, signature = _unb64(body_text), _unb64(signature_text)
    except (binascii.Error, ValueError) as exc:
        raise invalid from exc
    expected = hmac.new(key, body, hashlib.sha256).digest()[:16]
    if not hmac.compare_digest(signature, expected):
        raise invalid
    try:
        payload = json.loads(body)
        version = payload["v"]
        position, seq, floor = None, None, None
        if version == POSITION_VERSION:
            after = payload["a"]
            position = None if after is None else FeedPosition(str(after[0]), str(after[1]))
        elif version == SEQUENCE_VERSION:
            seq, below = payload["q"], payload["f"]
            if type(seq) is not int or seq < 0:
                raise invalid
            floor = None if below is None else FeedPosition(str(below[0]), str(below[1]))
        else:
            raise invalid
        cursor = FeedCursor(
            workspace_id=str(payload["w"]), project_id=str(payload["p"]), types=tuple(payload["t"]),
            statuses=tuple(payload["s"]), position=position, seq=seq, floor=floor,
        )  # fmt: skip
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise invalid from exc
    return cursor


def _unseal_compact(token: str, key: bytes, workspace_id: str, project_ids: tuple[str, ...]) -> FeedCursor:
    try:
        data = _unb64(token)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursorError(
            "cursor is not one this server issued; pass it unchanged, or start with since."
        ) from exc
    body, mac = data[:-COMPACT_MAC_BYTES], data[-COMPACT_MAC_BYTES:]
    owner = next(
        (pid for pid in project_ids if hmac.compare_digest(mac, _compact_mac(key, workspace_id, pid, body))), None
    )
    if owner is None or len(body) < 5 or body[0] != COMPACT_VERSION:
        raise InvalidCursorError(
            "This cursor belongs to another project or was edited; pass this project's own cursor unchanged, or "
            "start again with since."
        )
    try:
        seq = _unvarint(body[4:])
    except ValueError as exc:
        raise InvalidCursorError("cursor is not one this server issued; start again with since.") from exc
    types, statuses = int.from_bytes(body[1:3], "big"), body[3]
    return FeedCursor(
        workspace_id, owner, _names(types, TYPE_BITS), _names(statuses, STATUS_BITS), position=None, seq=seq
    )
