"""The OAuth 2.1 authorization server: registration, consent, codes, tokens, and the grants people can end.

State lives in the store's AuthRecords (ports.py), one partition per thing, secrets only as SHA-256 hashes:
`CLIENT#<id>` (30 days from last use), `AUTHZ#<hash of request id>` (a consent request, 10 min), `CODE#<hash>`
(5 min, single use), `FAM#<grant>` holding `META` (the grant, 180 days), `RT#<hash>` and `AT#<hash>` (its tokens),
and `GRANTS#<workspace>` listing the workspace's grants. The rules are in domain/oauth.py; this service reads the
clock, mints ids and secrets, and writes records, each transition one conditional write.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from notewell.domain import oauth, rules
from notewell.domain.errors import NotFoundError
from notewell.domain.model import Principal
from notewell.domain.oauth import OAuthError
from notewell.ports import ANY, AuthRecord, ClientDocumentError, RecordWrite

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from notewell.ports import AuthRecords, ClientDocuments
    from notewell.services.access import Deps
    from notewell.services.auth import AuthService

CLIENT_IDLE = timedelta(days=30)  # a client unused this long is forgotten (pinned): it registers again
FETCHES_AT_ONCE = 4  # client metadata documents fetched at the same time, per process; more are refused
DOCUMENT_FAILURE_MEMORY = timedelta(seconds=60)  # a failed document is not fetched again this soon
DOCUMENT_CACHE_ENTRIES = 1_000


class OAuthService:
    def __init__(
        self, deps: Deps, records: AuthRecords, issuer: str, auth: AuthService,
        documents: ClientDocuments | None = None,
    ) -> None:  # fmt: skip
        self._deps = deps
        self._records = records
        self._auth = auth
        self._documents = documents  # None: no client metadata documents, registration only
        # URL -> (the client, or why its document failed, until when): failures briefly, so a slow or broken host
        # is not fetched again for every request that names it.
        self._fetched: dict[str, tuple[dict[str, object] | str, datetime]] = {}
        self._fetched_lock = threading.Lock()
        self._fetching = threading.BoundedSemaphore(FETCHES_AT_ONCE)
        self.issuer = issuer

    @property
    def client_documents(self) -> bool:
        return self._documents is not None

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
        except RecursionError:  # nested past the parser's depth; a 16 KiB body reaches it with brackets alone
            raise OAuthError(
                400, "invalid_request", "The metadata is nested too deeply; send a flat JSON object."
            ) from None
        metadata = oauth.registration(document)
        now = self._deps.clock.now()
        client_id = self._deps.ids.new_id("client")
        record = AuthRecord(
            pk=f"CLIENT#{client_id}", sk="CLIENT", status="active",
            fields={**metadata, "created_at": rules.format_ts(now)},
            # Its first tokens renew it to CLIENT_IDLE (_keep_client); never used, it is gone in a day.
            expires_at=rules.format_ts(now + UNUSED_CLIENT_TTL),
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
            pk=f"AUTHZ#{_hash(txn)}", sk="AUTHZ", status="pending:0",
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
                       oauth.SCOPES if scope is None else tuple(scope.split(" ")),
                       registered_uris=tuple(registered))  # fmt: skip

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
        record = self._records.get_record(f"AUTHZ#{_hash(txn)}", "AUTHZ")
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

    def token(self, pairs: Sequence[tuple[str, str]], content_type: str | None, basic_auth: bool) -> dict[str, object]:
        """POST /token: an authorization code or a refresh token for tokens (OAuth 2.1 §3.2).

        Raises:
            OAuthError: invalid_request, invalid_client (401 for Basic credentials), unsupported_grant_type,
                invalid_grant, invalid_scope or invalid_target.
        """
        if basic_auth:
            raise OAuthError(401, "invalid_client", "Clients here are public: send client_id in the body, no secret.")
        if (content_type or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
            raise OAuthError(400, "invalid_request", "Send the token request form-encoded.")
        params: dict[str, str] = {}
        for name, value in pairs:
            if name in params:
                raise OAuthError(400, "invalid_request", f"{name} is repeated; send each parameter once.")
            params[name] = value
        grant_type = params.get("grant_type")
        if not grant_type:
            raise OAuthError(400, "invalid_request", "grant_type is required.")
        if grant_type not in oauth.GRANT_TYPES:
            raise OAuthError(400, "unsupported_grant_type", "Use authorization_code or refresh_token.")
        if "client_secret" in params:
            raise OAuthError(400, "invalid_client", "Clients here are public: send no client_secret.")
        client_id = params.get("client_id", "")
        try:
            known = self.client(client_id)
        except AuthorizationPageError as exc:  # a metadata document that no longer passes
            raise OAuthError(400, "invalid_client", exc.message) from exc
        if known is None:
            raise OAuthError(400, "invalid_client", "client_id is missing or not registered; register again.")
        if grant_type == "authorization_code":
            return self._redeem(client_id, params)
        return self._refresh(client_id, params)

    def _redeem(self, client_id: str, params: Mapping[str, str]) -> dict[str, object]:
        code = params.get("code")
        if not code:
            raise OAuthError(400, "invalid_request", "code is required.")
        record = self._records.get_record(f"CODE#{_hash(code)}", "CODE")
        now = self._deps.clock.now()
        if record is None or (record.expires_at or "") <= rules.format_ts(now):
            raise _invalid_grant("The code is unknown or expired; authorize again.")
        bound = record.fields
        if bound["client_id"] != client_id:
            raise _invalid_grant("The code was issued to another client.")
        if "redirect_uri" in params and params["redirect_uri"] != bound["redirect_uri"]:
            raise _invalid_grant("redirect_uri differs from the one the code was issued for.")
        if "redirect_uri" not in params and bound.get("redirect_uri_sent"):  # RFC 6749 §4.1.3: then it is required
            raise OAuthError(400, "invalid_request", "redirect_uri is required: send the one the code was issued for.")
        verifier = params.get("code_verifier")
        if not verifier:
            raise OAuthError(400, "invalid_request", "code_verifier is required (PKCE).")
        if not oauth.pkce_verifier_matches(verifier, str(bound["code_challenge"])):
            raise _invalid_grant("code_verifier does not match the code's challenge.")  # revokes nothing
        if "resource" in params and not oauth.resource_matches(params["resource"], self.issuer):
            raise OAuthError(400, "invalid_target", f"resource must be {oauth.resource_url(self.issuer)}.")
        family = str(bound["family_id"])
        if record.status != "unused":  # a replay of a redeemed code: what it issued is revoked (OAuth 2.1 §4.1.3)
            self.revoke_family(family, "code replayed")
            raise _invalid_grant("The code was already used; everything it issued is revoked. Authorize again.")
        scopes = [str(s) for s in bound["scopes"]]  # type: ignore[attr-defined]
        meta = AuthRecord(
            pk=f"FAM#{family}", sk="META", status="active",
            fields={
                "client_id": client_id, "workspace_id": bound["workspace_id"], "key_id": bound["key_id"],
                "project_id": bound["project_id"], "read_only": bound["read_only"], "scopes": scopes,
                "resource": bound["resource"], "created_at": rules.format_ts(now), "last_used_at": rules.format_ts(now),
            },
            expires_at=rules.format_ts(now + GRANT_LIFETIME),
        )  # fmt: skip
        listing = AuthRecord(f"GRANTS#{bound['workspace_id']}", family, "active", {"key_id": bound["key_id"]},
                             meta.expires_at)  # fmt: skip
        used = AuthRecord(record.pk, record.sk, "used", bound, record.expires_at)
        access, refresh, writes = self._token_pair(family, scopes, now)
        failed = self._records.write_records(
            [RecordWrite(used, condition="unused"), RecordWrite(meta), RecordWrite(listing), *writes]
        )
        if failed == 0:  # redeemed by a racing request a moment ago: that is a replay too
            self.revoke_family(family, "code replayed")
            raise _invalid_grant("The code was already used; everything it issued is revoked. Authorize again.")
        if failed is not None:
            raise OAuthError(503, "temporarily_unavailable", "The tokens could not be issued; try again.")
        self._keep_client(client_id, now)
        return self._token_answer(access, refresh, scopes)

    def _refresh(self, client_id: str, params: Mapping[str, str]) -> dict[str, object]:
        token = params.get("refresh_token")
        if not token:
            raise OAuthError(400, "invalid_request", "refresh_token is required.")
        family = _family_of(token, REFRESH_PREFIX)
        current = self._records.get_record(f"FAM#{family}", f"RT#{_hash(token)}") if family else None
        if family is None or current is None:
            raise _invalid_grant("The refresh token is unknown; authorize again.")
        meta = self._records.get_record(f"FAM#{family}", "META")
        now = self._deps.clock.now()
        stamp = rules.format_ts(now)
        if meta is None or meta.fields["client_id"] != client_id:
            raise _invalid_grant("The refresh token was issued to another client.")
        if current.status == "rotated":  # reuse: whoever holds the old token is not the client (OAuth 2.1 §4.3.1)
            self.revoke_family(family, "refresh token reused")
            raise _invalid_grant("The refresh token was already used; the grant is revoked. Authorize again.")
        if meta.status != "active" or current.status != "active" or (meta.expires_at or "") <= stamp:
            raise _invalid_grant("The grant is revoked or expired; authorize again.")
        if (current.expires_at or "") <= stamp:
            raise _invalid_grant("The refresh token expired unused; authorize again.")
        granted = [str(s) for s in meta.fields["scopes"]]  # type: ignore[attr-defined]
        scopes = granted
        if "scope" in params:
            asked = params["scope"].split(" ")
            if oauth.scopes_problem(params["scope"]) is not None or any(s not in granted for s in asked):
                raise OAuthError(400, "invalid_scope", f"scope may only narrow the grant: {' '.join(granted)}.")
            scopes = [s for s in granted if s in asked]
        if "resource" in params and not oauth.resource_matches(params["resource"], self.issuer):
            raise OAuthError(400, "invalid_target", f"resource must be {oauth.resource_url(self.issuer)}.")
        access, refresh, writes = self._token_pair(family, scopes, now, refresh_scopes=granted)
        rotated = AuthRecord(current.pk, current.sk, "rotated", {**current.fields, "rotated_at": stamp},
                             current.expires_at)  # fmt: skip
        touched = AuthRecord(meta.pk, meta.sk, "active", {**meta.fields, "last_used_at": stamp}, meta.expires_at)
        failed = self._records.write_records(
            [RecordWrite(rotated, condition="active"), RecordWrite(touched, condition="active"), *writes]
        )
        if failed == 0:  # a concurrent refresh of the same token won: this one is a reuse
            self.revoke_family(family, "refresh token reused")
            raise _invalid_grant("The refresh token was already used; the grant is revoked. Authorize again.")
        if failed is not None:
            raise _invalid_grant("The grant is revoked or expired; authorize again.")
        self._keep_client(client_id, now)
        return self._token_answer(access, refresh, scopes)

    def _keep_client(self, client_id: str, now: datetime) -> None:
        """A client in use is not forgotten: its 30 days run from its last token, renewed at most once a day."""
        if not client_id.startswith("client_"):
            return  # a metadata-document client is not stored
        record = self._records.get_record(f"CLIENT#{client_id}", "CLIENT")
        renewed = rules.format_ts(now + CLIENT_IDLE)
        if record is not None and (record.expires_at or "") < rules.format_ts(now + CLIENT_IDLE - timedelta(days=1)):
            kept = AuthRecord(record.pk, record.sk, record.status, record.fields, renewed)
            self._records.write_records([RecordWrite(kept, condition=record.status)])

    def _token_pair(
        self, family: str, scopes: list[str], now: datetime, refresh_scopes: list[str] | None = None
    ) -> tuple[str, str, list[RecordWrite]]:
        access = f"{ACCESS_PREFIX}{family}.{self._deps.ids.secret()}"
        refresh = f"{REFRESH_PREFIX}{family}.{self._deps.ids.secret()}"
        return access, refresh, [
            RecordWrite(AuthRecord(f"FAM#{family}", f"AT#{_hash(access)}", "active", {"scopes": scopes},
                                   rules.format_ts(now + ACCESS_TTL))),
            RecordWrite(AuthRecord(f"FAM#{family}", f"RT#{_hash(refresh)}", "active",
                                   {"scopes": refresh_scopes or scopes}, rules.format_ts(now + REFRESH_IDLE))),
        ]  # fmt: skip

    @staticmethod
    def _token_answer(access: str, refresh: str, scopes: list[str]) -> dict[str, object]:
        return {
            "access_token": access, "token_type": "Bearer", "expires_in": int(ACCESS_TTL.total_seconds()),
            "refresh_token": refresh, "scope": " ".join(scopes),
        }  # fmt: skip

    def revoke_family(self, family: str, reason: str) -> None:
        revoke_family(self._records, family, reason)

    def authenticate_access(self, token: str) -> Principal | None:
        """The principal behind an OAuth access token, checked on every call: known, unexpired, its grant active
        and for this server's /mcp. None otherwise (a refresh token is never an access token)."""
        reference = access_reference(token)
        return None if reference is None else self.authenticate_reference(*reference)

    def authenticate_reference(self, family: str, token_hash: str) -> Principal | None:
        """As authenticate_access, from the token's grant and hash (what the console's session keeps instead of
        the token itself, so its cookie is never a credential for /mcp)."""
        access = self._records.get_record(f"FAM#{family}", f"AT#{token_hash}")
        stamp = rules.format_ts(self._deps.clock.now())
        if access is None or access.status != "active" or (access.expires_at or "") <= stamp:
            return None
        meta = self._records.get_record(f"FAM#{family}", "META")
        if meta is None or meta.status != "active" or (meta.expires_at or "") <= stamp:
            return None
        if meta.fields.get("resource") != oauth.resource_url(self.issuer):
            return None
        scopes = frozenset(str(s) for s in access.fields["scopes"])  # type: ignore[attr-defined]
        project = meta.fields.get("project_id")
        now = self._deps.clock.now()
        if str(meta.fields.get("last_used_at", "")) < rules.format_ts(now - LAST_USED_EVERY):
            touched = AuthRecord(meta.pk, meta.sk, "active", {**meta.fields, "last_used_at": stamp}, meta.expires_at)
            self._records.write_records([RecordWrite(touched, condition="active")])  # lost to a revocation: fine
        return Principal(
            # The approving key is the author of what the client writes, as if the person had used it.
            workspace_id=str(meta.fields["workspace_id"]), actor=f"key:{meta.fields['key_id']}",
            project_id=None if project is None else str(project),
            read_only=bool(meta.fields["read_only"]) or oauth.WRITE_SCOPE not in scopes, scopes=scopes,
        )  # fmt: skip

    def client(self, client_id: str) -> dict[str, object] | None:
        """A client's metadata: registered here, or (an https client_id) its metadata document; None when it is
        unknown or forgotten.

        Raises:
            AuthorizationPageError: a metadata document that cannot be fetched or does not pass the rules.
        """
        if client_id.startswith("https://"):
            return self._document_client(client_id)
        if not client_id.startswith("client_") or len(client_id) > 64:
            return None
        record = self._records.get_record(f"CLIENT#{client_id}", "CLIENT")
        if record is None or (record.expires_at or "") <= rules.format_ts(self._deps.clock.now()):
            return None
        return dict(record.fields)

    def _document_client(self, url: str) -> dict[str, object] | None:
        if self._documents is None:
            return None
        problem = oauth.client_document_url_problem(url)
        if problem is not None:
            raise AuthorizationPageError(400, problem[:1].upper() + problem[1:] + ".")
        now = self._deps.clock.now()
        with self._fetched_lock:
            cached = self._fetched.get(url)
        if cached is not None and cached[1] > now:
            if isinstance(cached[0], str):
                raise AuthorizationPageError(400, cached[0])
            return cached[0]
        # Never wait for a fetch slot: a queue of slow hosts would hold the worker threads /mcp needs too.
        if not self._fetching.acquire(blocking=False):
            raise AuthorizationPageError(503, "Too many client documents are being fetched; try again in a minute.")
        try:
            fetched = self._documents.fetch(url)
            client = oauth.client_document(url, json.loads(fetched.body))
        except (ClientDocumentError, ValueError, RecursionError, OAuthError) as exc:
            if isinstance(exc, ClientDocumentError):
                message = f"The client's metadata document could not be used: {exc}."
            elif isinstance(exc, OAuthError):
                message = exc.description
            else:  # UnicodeDecodeError is a ValueError; RecursionError: JSON nested past the parser's depth
                message = "The client's metadata document is not JSON."
            self._remember_document(url, message, now + DOCUMENT_FAILURE_MEMORY)
            raise AuthorizationPageError(400, message) from exc
        finally:
            self._fetching.release()
        self._remember_document(url, client, now + timedelta(seconds=oauth.cache_seconds(fetched.max_age)))
        return client

    def _remember_document(self, url: str, outcome: dict[str, object] | str, until: datetime) -> None:
        with self._fetched_lock:
            if len(self._fetched) >= DOCUMENT_CACHE_ENTRIES:  # bounded: each entry is a URL a stranger picked
                now = self._deps.clock.now()
                for stale in [key for key, (_, expiry) in self._fetched.items() if expiry <= now]:
                    del self._fetched[stale]
                while len(self._fetched) >= DOCUMENT_CACHE_ENTRIES:
                    del self._fetched[next(iter(self._fetched))]  # the oldest
            self._fetched.pop(url, None)
            self._fetched[url] = (outcome, until)


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
    registered_uris: tuple[str, ...] = ()

    @property
    def document_host(self) -> str | None:
        """Where a client metadata document came from: the one name Notewell can vouch for."""
        return urlsplit(self.client_id).hostname if self.client_id.startswith("https://") else None

    @property
    def loopback_only(self) -> bool:
        """Every redirect URI is on the person's own machine: any program there could answer as this client."""
        return bool(self.registered_uris) and all(oauth.LOOPBACK.match(uri) for uri in self.registered_uris)

    @property
    def loopback(self) -> bool:
        return oauth.LOOPBACK.match(self.redirect_uri) is not None


def _with_query(uri: str, params: dict[str, str]) -> str:
    """`params` appended to the raw registered URI, form-encoded (`&` when it already has a query)."""
    return uri + ("&" if "?" in uri else "?") + urlencode(params)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


# ----- tokens --------------------------------------------------------------------------------------------------------

ACCESS_PREFIX = "nw_at_"
REFRESH_PREFIX = "nw_rt_"
ACCESS_TTL = timedelta(hours=1)
REFRESH_IDLE = timedelta(days=30)  # OAuth 2.1 §4.3.3: a refresh token unused this long expires
GRANT_LIFETIME = timedelta(days=180)  # absolute: then the person approves again


def access_reference(token: str) -> tuple[str, str] | None:
    """(grant family, hash) of an access token, or None when it is not one."""
    family = _family_of(token, ACCESS_PREFIX)
    return None if family is None else (family, _hash(token))


def _family_of(token: str, prefix: str) -> str | None:
    """The grant a token belongs to (`<prefix><family>.<secret>`); the hash covers the whole string, so an edited
    family is simply an unknown token."""
    if not token.startswith(prefix) or len(token) > 200:
        return None
    family, dot, secret = token[len(prefix) :].partition(".")
    return family if dot and family.startswith("fam_") and secret else None


def _invalid_grant(description: str) -> OAuthError:
    return OAuthError(400, "invalid_grant", description)


def revoke_family(records: AuthRecords, family: str, reason: str) -> None:
    """End a grant: its record says revoked (every access check reads it), its refresh tokens are revoked and its
    access tokens deleted."""
    writes: list[RecordWrite] = []
    for record in records.records_under(f"FAM#{family}"):
        if record.sk == "META":
            fields = {**record.fields, "revoked_reason": reason}
            writes.append(RecordWrite(AuthRecord(record.pk, "META", "revoked", fields, record.expires_at), ANY))
        elif record.sk.startswith("AT#"):
            writes.append(RecordWrite(record, ANY, delete=True))
        elif record.status != "revoked":
            writes.append(
                RecordWrite(AuthRecord(record.pk, record.sk, "revoked", record.fields, record.expires_at), ANY)
            )
    for start in range(0, len(writes), 90):  # a store takes at most 100 writes at once
        records.write_records(writes[start : start + 90])


def revoke_grants_of_key(records: AuthRecords, workspace_id: str, key_id: str) -> int:
    """End every grant a key approved (revoking a key ends the access it handed out); how many there were."""
    ended = 0
    for listing in records.records_under(f"GRANTS#{workspace_id}"):
        if listing.fields.get("key_id") == key_id and listing.status == "active":
            revoke_family(records, listing.sk, "approving key revoked")
            ended += (
                records.write_records(
                    [
                        RecordWrite(
                            AuthRecord(listing.pk, listing.sk, "revoked", listing.fields, listing.expires_at), ANY
                        )
                    ]
                )
                is None
            )
    return ended


# ----- grants, for the people who approved them ---------------------------------------------------------------------

LAST_USED_EVERY = timedelta(hours=1)  # how stale a grant's last_used_at may get: a write per call would cost more


@dataclass(frozen=True, slots=True)
class GrantView:
    id: str
    client_id: str
    client_name: str | None
    scopes: tuple[str, ...]
    project_id: str | None
    key_id: str
    status: str  # active | revoked | expired
    created_at: str
    last_used_at: str


class Grants:
    """The OAuth grants of a workspace: who approved which client, for what, and ending one. Needs no issuer: a
    CLI without one still sees and ends what a server issued."""

    def __init__(self, deps: Deps, records: AuthRecords) -> None:
        self._deps = deps
        self._records = records

    def list(self, workspace_id: str) -> list[GrantView]:
        now = rules.format_ts(self._deps.clock.now())
        views = []
        for listing in self._records.records_under(f"GRANTS#{workspace_id}"):
            meta = self._records.get_record(f"FAM#{listing.sk}", "META")
            if meta is None:
                continue
            fields = meta.fields
            client = self._records.get_record(f"CLIENT#{fields['client_id']}", "CLIENT")
            name = client.fields.get("client_name") if client is not None else None
            status = meta.status if meta.status != "active" or (meta.expires_at or "") > now else "expired"
            project = fields.get("project_id")
            views.append(
                GrantView(
                    id=listing.sk,
                    client_id=str(fields["client_id"]),
                    client_name=name if isinstance(name, str) else None,
                    scopes=tuple(str(s) for s in fields["scopes"]),  # type: ignore[attr-defined]
                    project_id=None if project is None else str(project),
                    key_id=str(fields["key_id"]),
                    status=status,
                    created_at=str(fields["created_at"]),
                    last_used_at=str(fields.get("last_used_at", "")),
                )  # fmt: skip
            )
        return sorted(views, key=lambda v: (v.created_at, v.id))

    def revoke(self, workspace_id: str, grant_id: str) -> GrantView:
        """End a grant of this workspace now: its client must sign in again.

        Raises:
            NotFoundError: no such grant in this workspace.
        """
        listing = self._records.get_record(f"GRANTS#{workspace_id}", grant_id)
        if listing is None:
            raise NotFoundError(f"No grant {grant_id} in this workspace; 'notewell grants list' shows them.")
        revoke_family(self._records, grant_id, "revoked by a person")
        self._records.write_records(
            [RecordWrite(AuthRecord(listing.pk, listing.sk, "revoked", listing.fields, listing.expires_at), ANY)]
        )
        return next(view for view in self.list(workspace_id) if view.id == grant_id)


# ----- limits on what strangers leave behind -------------------------------------------------------------------------

# A registration nobody signs in with is kept a day, not CLIENT_IDLE: with the per-source and overall request budgets
# on /register (entrypoints/http.py oauth_rates), that bounds how many unused clients the store holds.
UNUSED_CLIENT_TTL = timedelta(days=1)
