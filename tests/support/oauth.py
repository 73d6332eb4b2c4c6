"""A grant and its tokens through the OAuth service, the calls the routes make, for tests that need one at hand."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from notewell.bootstrap import Services
from notewell.services.oauth import Consent, Redirect

VERIFIER = "d" * 43
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
FORM = "application/x-www-form-urlencoded"
# https://client.example.com/cb spelled otherwise: each one is another redirect URI, never a match (RFC 9700 §4.1.3).
MISSPELLED_HTTPS_REDIRECTS = [
    "https://Client.example.com/cb", "https://client.example.com/cb/", "https://client.example.com/CB",
    "https://client.example.com/cb?x=1", "https://client.example.com/cb#f", "https://client.example.com:443/cb",
    "https://client.example.com/a/../cb", "https://client.example.com/c%62",
]  # fmt: skip


def issue_tokens(services: Services, key: str, client_name: str = "tests") -> tuple[str, dict[str, Any]]:
    """Register a client, approve it with `key` and redeem the code: (client_id, the token answer)."""
    oauth = services.oauth
    assert oauth is not None
    metadata = {"redirect_uris": ["http://127.0.0.1/cb"], "client_name": client_name}
    client = str(oauth.register(json.dumps(metadata).encode(), "application/json")["client_id"])
    request = {
        "response_type": "code",
        "client_id": client,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
    }
    consent = oauth.begin_authorization(list(request.items()))
    assert isinstance(consent, Consent)
    form = {"txn": consent.txn, "csrf": consent.csrf, "api_key": key, "decision": "approve"}
    approved = oauth.decide(form, consent.csrf, None)
    assert isinstance(approved, Redirect)
    code = parse_qs(urlsplit(approved.location).query)["code"][0]
    redeem = {"grant_type": "authorization_code", "code": code, "client_id": client, "code_verifier": VERIFIER}
    return client, oauth.token(list(redeem.items()), FORM, False)
