"""The console's sign-in session and OAuth sign-in state: signed, expiring cookie values. Pure: the key and the
time are passed in.

A session holds no credential, only a reference the server checks on every request: the stored hash of the API key
it was opened with (revoking the key ends it), or the grant and hash of the OAuth access token it was opened with
(revoking the grant, or the token expiring, ends it). Signing out ends it too: the server records the end under
`session_id`, so a copy of the cookie kept elsewhere stops working. It is signed, not encrypted; the cookie is HttpOnly.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

SESSION_SECONDS = 12 * 3600  # a working day; the person signs in again after that
FLOW_SECONDS = 600  # an OAuth sign-in must come back within this
_LABEL = b"notewell console session v1"  # one secret, two uses: a session can never pass for a feed cursor
KEY = "key"  # credential kinds
OAUTH = "oauth"


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    kind: str  # KEY or OAUTH
    reference: str  # KEY: the API key's stored hash; OAUTH: "<grant family> <access token hash>"
    csrf: str  # every form of the session carries it back
    expires_at: int  # unix seconds


@dataclass(frozen=True, slots=True)
class OAuthFlow:
    """An OAuth sign-in under way: what the callback must see again, and the PKCE verifier it proves with."""

    state: str
    verifier: str
    client_id: str  # the console's client id the sign-in started with: the code is exchanged as that client
    then: str  # the console page to show after
    expires_at: int


def same_secret(given: str, expected: str) -> bool:
    """Whether a secret sent back by the browser (a CSRF token, an OAuth state) is the expected one, in constant
    time. Compared as bytes: `hmac.compare_digest` refuses non-ASCII text, and a form or query may hold any."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def session_id(token: str) -> str:
    """A sealed session's id, under which its end is recorded: the hash of the whole cookie value, so the id
    needs no field of its own and says nothing about the session."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def session_key(secret: bytes) -> bytes:
    return hmac.new(secret, _LABEL, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _seal(kind: str, values: list[str | int], key: bytes) -> str:
    body = json.dumps([kind, *values], separators=(",", ":")).encode()
    return f"{_b64(body)}.{_b64(hmac.new(key, body, hashlib.sha256).digest())}"


def _unseal(token: str, key: bytes, kind: str, now: int) -> list[object] | None:
    """The values sealed as `kind`, or None when malformed, forged, of another kind or expired (last value)."""
    if len(token) > 1024 or token.count(".") != 1:
        return None
    body_part, mac_part = token.split(".")
    try:
        body, mac = _unb64(body_part), _unb64(mac_part)
    except (ValueError, TypeError):
        return None
    if not hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()):
        return None
    try:
        values = json.loads(body)
    except (ValueError, TypeError):
        return None
    if not isinstance(values, list) or len(values) < 2 or values[0] != kind:
        return None
    expires_at = values[-1]
    if not isinstance(expires_at, int) or expires_at <= now:
        return None
    return values[1:]


def seal(session: ConsoleSession, key: bytes) -> str:
    return _seal("session", [session.kind, session.reference, session.csrf, session.expires_at], key)


def unseal(token: str, key: bytes, *, now: int) -> ConsoleSession | None:
    """The session in `token`, or None when it is malformed, forged or over."""
    values = _unseal(token, key, "session", now)
    if values is None or len(values) != 4:
        return None
    kind, reference, csrf, expires_at = values
    if kind not in (KEY, OAUTH) or not isinstance(reference, str) or not isinstance(csrf, str):
        return None
    assert isinstance(expires_at, int)
    return ConsoleSession(str(kind), reference, csrf, expires_at)


def seal_flow(flow: OAuthFlow, key: bytes) -> str:
    return _seal("flow", [flow.state, flow.verifier, flow.client_id, flow.then, flow.expires_at], key)


def unseal_flow(token: str, key: bytes, *, now: int) -> OAuthFlow | None:
    values = _unseal(token, key, "flow", now)
    if values is None or len(values) != 5 or not all(isinstance(v, str) for v in values[:4]):
        return None
    state, verifier, client_id, then, expires_at = values
    assert isinstance(expires_at, int)
    return OAuthFlow(str(state), str(verifier), str(client_id), str(then), expires_at)
