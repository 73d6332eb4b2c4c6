"""The console's sign-in session: a signed, expiring cookie value. Pure: the key and the time are passed in.

The session holds no credential: only the stored hash of the API key it was opened with (so revoking the key ends
it, checked on every request), its CSRF token and when it ends. It is signed, not encrypted; the cookie is HttpOnly.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

SESSION_SECONDS = 12 * 3600  # a working day; the person signs in again after that
_LABEL = b"notewell console session v1"  # one secret, two uses: a session can never pass for a feed cursor


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    key_hash: str  # the API key's stored hash (AuthService.hash_secret)
    csrf: str  # every form of the session carries it back
    expires_at: int  # unix seconds


def session_key(secret: bytes) -> bytes:
    return hmac.new(secret, _LABEL, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(session: ConsoleSession, key: bytes) -> str:
    body = json.dumps([session.key_hash, session.csrf, session.expires_at], separators=(",", ":")).encode()
    mac = hmac.new(key, body, hashlib.sha256).digest()
    return f"{_b64(body)}.{_b64(mac)}"


def unseal(token: str, key: bytes, *, now: int) -> ConsoleSession | None:
    """The session in `token`, or None when it is malformed, forged or over."""
    if len(token) > 512 or token.count(".") != 1:
        return None
    body_part, mac_part = token.split(".")
    try:
        body, mac = _unb64(body_part), _unb64(mac_part)
    except (ValueError, TypeError):
        return None
    if not hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()):
        return None
    try:
        key_hash, csrf, expires_at = json.loads(body)
    except (ValueError, TypeError):
        return None
    if not (isinstance(key_hash, str) and isinstance(csrf, str) and isinstance(expires_at, int)):
        return None
    if expires_at <= now:
        return None
    return ConsoleSession(key_hash, csrf, expires_at)
