"""The console's session cookie: only the server can make one, it ends on time, and it holds no credential."""

from __future__ import annotations

from notewell.domain.console_session import ConsoleSession, seal, session_key, unseal

KEY = session_key(b"deployment secret")
SESSION = ConsoleSession(key_hash="ab" * 32, csrf="token", expires_at=1_000)


def test_a_sealed_session_opens_until_it_expires() -> None:
    token = seal(SESSION, KEY)
    assert unseal(token, KEY, now=999) == SESSION
    assert unseal(token, KEY, now=1_000) is None


def test_a_session_sealed_with_another_secret_or_altered_in_any_byte_is_refused() -> None:
    token = seal(SESSION, KEY)
    assert unseal(token, session_key(b"another deployment"), now=0) is None
    body, mac = token.split(".")
    for position in range(0, len(body), 3):
        flipped = body[:position] + ("A" if body[position] != "A" else "B") + body[position + 1 :]
        assert unseal(f"{flipped}.{mac}", KEY, now=0) is None
    for junk in ("", ".", "a.b.c", "x" * 600, "not base64!.@@@"):
        assert unseal(junk, KEY, now=0) is None


def test_the_session_key_is_not_the_secret_itself() -> None:
    # The same secret seals feed cursors; a cursor's signature must never pass for a session's.
    assert session_key(b"deployment secret") != b"deployment secret"
    assert len(KEY) == 32
