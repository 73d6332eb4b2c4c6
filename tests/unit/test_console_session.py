"""The console's cookies: only the server can make one, each ends on time, and none holds a credential."""

from __future__ import annotations

from notewell.domain.console_session import (
    KEY,
    OAUTH,
    ConsoleSession,
    OAuthFlow,
    seal,
    seal_flow,
    session_key,
    unseal,
    unseal_flow,
)

KEY_BYTES = session_key(b"deployment secret")
SESSION = ConsoleSession(kind=KEY, reference="ab" * 32, csrf="token", expires_at=1_000)


def test_a_sealed_session_opens_until_it_expires() -> None:
    token = seal(SESSION, KEY_BYTES)
    assert unseal(token, KEY_BYTES, now=999) == SESSION
    assert unseal(token, KEY_BYTES, now=1_000) is None
    oauth = ConsoleSession(kind=OAUTH, reference="fam_1 cd", csrf="t", expires_at=50)
    assert unseal(seal(oauth, KEY_BYTES), KEY_BYTES, now=0) == oauth


def test_a_session_sealed_with_another_secret_or_altered_in_any_byte_is_refused() -> None:
    token = seal(SESSION, KEY_BYTES)
    assert unseal(token, session_key(b"another deployment"), now=0) is None
    body, mac = token.split(".")
    for position in range(0, len(body), 3):
        flipped = body[:position] + ("A" if body[position] != "A" else "B") + body[position + 1 :]
        assert unseal(f"{flipped}.{mac}", KEY_BYTES, now=0) is None
    for junk in ("", ".", "a.b.c", "x" * 2000, "not base64!.@@@"):
        assert unseal(junk, KEY_BYTES, now=0) is None


def test_an_oauth_flow_cookie_never_passes_for_a_session_nor_the_other_way() -> None:
    flow = OAuthFlow(state="s", verifier="v" * 43, client_id="client_1", then="/", expires_at=1_000)
    assert unseal_flow(seal_flow(flow, KEY_BYTES), KEY_BYTES, now=0) == flow
    assert unseal(seal_flow(flow, KEY_BYTES), KEY_BYTES, now=0) is None
    assert unseal_flow(seal(SESSION, KEY_BYTES), KEY_BYTES, now=0) is None


def test_the_session_key_is_not_the_secret_itself() -> None:
    # The same secret seals feed cursors; a cursor's signature must never pass for a session's.
    assert session_key(b"deployment secret") != b"deployment secret"
    assert len(KEY_BYTES) == 32
