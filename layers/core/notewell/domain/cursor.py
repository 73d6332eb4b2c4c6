"""The change-feed cursor: a position plus the filters it was made for, sealed with HMAC-SHA256.

Opaque to callers and tamper-evident: editing, truncating or replaying it against another workspace, project or
filter set fails verification, which is a 400, never a 500.
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


def seal(cursor: FeedCursor, key: bytes) -> str:
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


def unseal(token: str, key: bytes) -> FeedCursor:
    """Verify and decode a cursor.

    Raises:
        InvalidCursorError: forged, truncated, corrupted or from another deployment.
    """
    invalid = InvalidCursorError(
        "cursor is not one this server issued (edited, truncated or from elsewhere); pass the cursor of the "
        "previous page unchanged, or start again with since."
    )
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
