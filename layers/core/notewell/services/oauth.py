"""The OAuth 2.1 authorization server: client registration now; authorization, tokens and grants build on it.

State lives in the store's AuthRecords (ports.py), one partition per thing: `CLIENT#<id>`. The rules are in
domain/oauth.py; this service reads the clock, mints ids and writes records.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

from notewell.domain import oauth, rules
from notewell.domain.oauth import OAuthError
from notewell.ports import AuthRecord, RecordWrite

if TYPE_CHECKING:
    from notewell.ports import AuthRecords
    from notewell.services.access import Deps

CLIENT_IDLE = timedelta(days=30)  # a client unused this long is forgotten (pinned): it registers again


class OAuthService:
    def __init__(self, deps: Deps, records: AuthRecords, issuer: str) -> None:
        self._deps = deps
        self._records = records
        self.issuer = issuer

    def register(self, body: bytes, content_type: str | None) -> dict[str, object]:
        """RFC 7591 dynamic registration of a public client: the stored metadata with its new client_id.

        Raises:
            OAuthError: what is wrong with the request, as the RFC's error codes.
        """
        media = (content_type or "").split(";")[0].strip().lower()
        if media != "application/json":
            raise OAuthError(
                400, "invalid_request", "Send the client metadata as JSON (Content-Type: application/json)."
            )
        if len(body) > oauth.MAX_REGISTRATION_BYTES:
            raise OAuthError(
                400, "invalid_client_metadata", f"The metadata is over {oauth.MAX_REGISTRATION_BYTES:,} bytes."
            )
        try:
            document = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise OAuthError(
                400, "invalid_request", "The body is not JSON; send the client metadata as an object."
            ) from None
        metadata = oauth.registration(document)
        now = self._deps.clock.now()
        client_id = self._deps.ids.new_id("client")
        record = AuthRecord(
            pk=f"CLIENT#{client_id}", sk="CLIENT", status="active",
            fields={**metadata, "created_at": rules.format_ts(now)},
            expires_at=rules.format_ts(now + CLIENT_IDLE),
        )  # fmt: skip
        if self._records.write_records([RecordWrite(record)]) is not None:  # a fresh id never exists
            raise OAuthError(503, "temporarily_unavailable", "Registration did not take; send it again.")
        return {"client_id": client_id, "client_id_issued_at": int(now.timestamp()), **metadata}

    def client(self, client_id: str) -> dict[str, object] | None:
        """A registered client's metadata, None when it is unknown or forgotten."""
        if not client_id.startswith("client_") or len(client_id) > 64:
            return None
        record = self._records.get_record(f"CLIENT#{client_id}", "CLIENT")
        if record is None or (record.expires_at or "") <= rules.format_ts(self._deps.clock.now()):
            return None
        return dict(record.fields)
