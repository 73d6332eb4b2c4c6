"""The OAuth 2.1 authorization server: client registration now; authorization, tokens and grants build on it.

State lives in the store's AuthRecords (ports.py), one partition per thing: `CLIENT#<id>`. The rules are in
domain/oauth.py; this service reads the clock, mints ids and writes records.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from notewell.domain import oauth, rules
from notewell.domain.oauth import OAuthError
from notewell.ports import AuthRecord, RecordWrite

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from notewell.ports import AuthRecords
    from notewell.services.access import Deps
    from notewell.services.auth import AuthService

CLIENT_IDLE = timedelta(days=30)  # a client unused this long is forgotten (pinned): it registers again


class OAuthService:
    def __init__(self, deps: Deps, records: AuthRecords, issuer: str, auth: AuthService) -> None:
        self._deps = deps
        self._records = records
        self._auth = auth
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

    def begin_authorization(self, query: Sequence[tuple[str, str]]) -> Consent | Redirect:
        """GET /authorize: the consent to show, or an error redirect. Checks, in order: the client and its redirect
        URI (a failure is a page, never a redirect), then every other parameter (a failure goes back to the client).

        Raises:
            AuthorizationPageError: unknown client, unmatched redirect URI, or either repeated.
        """
        params: dict[str, str] = {}
        repeated: set[str] = set()
        for name, value in query:
            if name in params:
                repeated.add(name)
            params.setdefault(name, value)
        if repeated & {"client_id", "redirect_uri"}:
            raise AuthorizationPageError(400, "The request names its client or redirect URI twice; start again.")
        client_id = params.get("client_id", "")
        client = self.client(client_id)
        if client is None:
            raise AuthorizationPageError(400, "This client is not registered here (or was forgotten); register again.")
        registered = [str(uri) for uri in client.get("redirect_uris", [])]  # type: ignore[attr-defined]
        requested = params.get("redirect_uri")
        if requested is None:
            if len(registered) != 1:  # OAuth 2.1 §2.3.2: default only to the one registered URI
                raise AuthorizationPageError(400, "The request names no redirect URI and the client has several.")
            redirect_uri = registered[0]
        elif any(oauth.redirect_matches(uri, requested) for uri in registered):
            redirect_uri = requested
        else:
            raise AuthorizationPageError(400, "The redirect URI is not one this client registered.")

        state = params.get("state")

        def refuse(error: str, description: str) -> Redirect:
            answer = {"error": error, "error_description": description, **({"state": state} if state else {})}
            location = _with_query(redirect_uri, {**answer, "iss": self.issuer})
            return Redirect(location, automatic=oauth.LOOPBACK.match(redirect_uri) is not None)

        if repeated:
            return refuse("invalid_request", f"{sorted(repeated)[0]} is repeated; send each parameter once.")
        response_type = params.get("response_type")
        if not response_type:
            return refuse("invalid_request", "response_type is required: send response_type=code.")
        if response_type != "code":
            return refuse("unsupported_response_type", "Only response_type=code is supported.")
        problem = oauth.pkce_challenge_problem(params.get("code_challenge"), params.get("code_challenge_method"))
        if problem is not None:
            return refuse("invalid_request", problem[:1].upper() + problem[1:] + ".")
        resource = params.get("resource", oauth.resource_url(self.issuer))
        if not oauth.resource_matches(resource, self.issuer):
            return refuse("invalid_target", f"resource must be {oauth.resource_url(self.issuer)}.")
        scope = params.get("scope")
        problem = oauth.scopes_problem(scope)
        if problem is not None:
            return refuse("invalid_scope", problem[:1].upper() + problem[1:] + ".")

        txn, csrf = self._deps.ids.secret(), self._deps.ids.secret()
        now = self._deps.clock.now()
        request = AuthRecord(
            pk=f"AUTHZ#{txn}", sk="AUTHZ", status="pending:0",
            fields={
                "client_id": client_id, "redirect_uri": redirect_uri, "redirect_uri_sent": requested is not None,
                "state": state, "code_challenge": params["code_challenge"], "resource": oauth.resource_url(self.issuer),
                "scope": scope, "csrf_hash": _hash(csrf),
            },
            expires_at=rules.format_ts(now + REQUEST_TTL),
        )  # fmt: skip
        if self._records.write_records([RecordWrite(request)]) is not None:
            raise AuthorizationPageError(400, "The request could not be recorded; start again.")
        shown = client.get("client_name")
        return Consent(txn, csrf, client_id, shown if isinstance(shown, str) else None, redirect_uri,
                       oauth.SCOPES if scope is None else tuple(scope.split(" ")))  # fmt: skip

    def decide(self, form: Mapping[str, str], cookie: str | None, origin: str | None) -> Consent | Redirect:
        """POST /authorize: the person's answer. Approve with a workspace API key mints a single-use code bound to
        everything the request named; Deny answers access_denied. A wrong key shows the page again, five of them
        kill the request.

        Raises:
            AuthorizationPageError: forged (CSRF, Origin), expired, decided or dead requests.
        """
        if origin is not None and origin.rstrip("/").lower() != self.issuer:
            raise AuthorizationPageError(403, "This form was sent from another site; open the sign-in link again.")
        txn, csrf = form.get("txn", ""), form.get("csrf", "")
        if not txn or len(txn) > 100:
            raise AuthorizationPageError(400, "This sign-in request is unknown; start again from your client.")
        record = self._records.get_record(f"AUTHZ#{txn}", "AUTHZ")
        now = rules.format_ts(self._deps.clock.now())
        if record is None or (record.expires_at or "") <= now or not record.status.startswith("pending:"):
            raise AuthorizationPageError(400, "This sign-in request has expired or was already answered; start again.")
        fields = record.fields
        if not csrf or cookie != csrf or not hmac.compare_digest(_hash(csrf), str(fields["csrf_hash"])):
            raise AuthorizationPageError(403, "This form's security check failed; open the sign-in link again.")
        state = fields.get("state")
        redirect_uri = str(fields["redirect_uri"])
        answer: dict[str, str] = {"state": str(state)} if state else {}
        automatic = oauth.LOOPBACK.match(redirect_uri) is not None

        def settled(status: str, extra: Sequence[RecordWrite] = ()) -> None:
            done = AuthRecord(record.pk, record.sk, status, fields, record.expires_at)
            if self._records.write_records([RecordWrite(done, condition=record.status), *extra]) is not None:
                raise AuthorizationPageError(400, "This sign-in request was already answered; start again.")

        if form.get("decision") == "deny":
            settled("decided")
            error = {"error": "access_denied", "error_description": "The person declined."}
            return Redirect(_with_query(redirect_uri, {**error, **answer, "iss": self.issuer}), automatic)
        failures = int(record.status.split(":")[1])
        if failures >= MAX_KEY_ATTEMPTS:  # five wrong keys were enough: no sixth guess, right or wrong
            settled("dead")
            raise AuthorizationPageError(403, "Too many wrong keys; this sign-in request is closed. Start again.")
        principal = self._auth.authenticate(form.get("api_key", "").strip())
        client = self.client(str(fields["client_id"]))
        if principal is None or client is None:
            attempts = failures + 1
            settled(f"pending:{attempts}")
            name = client.get("client_name") if client else None
            scope = fields.get("scope")
            return Consent(
                txn, csrf, str(fields["client_id"]), name if isinstance(name, str) else None, redirect_uri,
                oauth.SCOPES if scope is None else tuple(str(scope).split(" ")),
                problem="That API key is not valid here; paste a key of the workspace this client should use.",
                attempts_left=MAX_KEY_ATTEMPTS - attempts,
            )  # fmt: skip
        code = self._deps.ids.secret()
        scope = fields.get("scope")
        granted = oauth.granted_scopes(None if scope is None else str(scope), read_only=principal.read_only)
        grant = AuthRecord(
            pk=f"CODE#{_hash(code)}", sk="CODE", status="unused",
            fields={
                "client_id": fields["client_id"], "redirect_uri": redirect_uri,
                "redirect_uri_sent": fields["redirect_uri_sent"], "code_challenge": fields["code_challenge"],
                "resource": fields["resource"],
                "scopes": list(granted),
                "workspace_id": principal.workspace_id, "key_id": principal.actor.removeprefix("key:"),
                "project_id": principal.project_id, "read_only": principal.read_only,
                "family_id": self._deps.ids.new_id("fam"),
            },
            expires_at=rules.format_ts(self._deps.clock.now() + CODE_TTL),
        )  # fmt: skip
        settled("decided", [RecordWrite(grant)])
        return Redirect(_with_query(redirect_uri, {"code": code, **answer, "iss": self.issuer}), automatic=True)

    def client(self, client_id: str) -> dict[str, object] | None:
        """A registered client's metadata, None when it is unknown or forgotten."""
        if not client_id.startswith("client_") or len(client_id) > 64:
            return None
        record = self._records.get_record(f"CLIENT#{client_id}", "CLIENT")
        if record is None or (record.expires_at or "") <= rules.format_ts(self._deps.clock.now()):
            return None
        return dict(record.fields)


# ----- authorization: the consent page ------------------------------------------------------------------------------

REQUEST_TTL = timedelta(minutes=10)
CODE_TTL = timedelta(minutes=5)  # OAuth 2.1 §4.1.2: short, at most 10 minutes
MAX_KEY_ATTEMPTS = 5  # wrong API keys before the request is dead
_SINGLE = ("client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method",
           "resource", "scope")  # fmt: skip


class AuthorizationPageError(Exception):
    """A refusal shown as a page, never as a redirect: the client or its redirect URI cannot be trusted (400), or a
    forged, replayed or exhausted decision (403)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Redirect:
    """Where the browser goes next. `automatic` is False for an error bound to an https redirect URI: the person
    gets a page with a link to follow instead (RFC 9700 §4.11.2)."""

    location: str
    automatic: bool = True


@dataclass(frozen=True, slots=True)
class Consent:
    """What the consent page shows and carries: the request (`txn`) and its CSRF value, the client as it named
    itself, where the answer goes, what it asks for."""

    txn: str
    csrf: str
    client_id: str
    client_name: str | None
    redirect_uri: str
    scopes: tuple[str, ...]
    problem: str | None = None  # why the last submission was not accepted
    attempts_left: int = MAX_KEY_ATTEMPTS

    @property
    def loopback(self) -> bool:
        return oauth.LOOPBACK.match(self.redirect_uri) is not None


def _with_query(uri: str, params: dict[str, str]) -> str:
    """`params` appended to the raw registered URI, form-encoded (`&` when it already has a query)."""
    return uri + ("&" if "?" in uri else "?") + urlencode(params)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
