"""What the web console adds to the services the MCP tools use: sign-in sessions, the project overview, a note
with its history and supersession chain, and the settling of conflicts. Every change goes through NoteService,
under the person's own key, with the same scoping and version checks as a tool call."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from notewell.domain import console_session, freshness, rules
from notewell.domain import oauth as oauth_rules
from notewell.domain.console_session import ConsoleSession, OAuthFlow
from notewell.domain.errors import (
    InvalidArgumentError,
    NotewellError,
    NotFoundError,
    UnauthenticatedError,
    VersionConflictError,
)
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.oauth import OAuthError
from notewell.ports import ANY, AuthRecord, RecordWrite
from notewell.services.access import may_see, visible_note, visible_project
from notewell.services.auth import hash_secret
from notewell.services.notes import NoteChanges, NoteView
from notewell.services.oauth import access_reference

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from notewell.domain.freshness import FreshnessSummary
    from notewell.domain.model import ApiKey, Note, Principal, Project
    from notewell.ports import AuthRecords
    from notewell.services.access import Deps
    from notewell.services.auth import AuthService
    from notewell.services.changes import ChangesPage, ChangesService
    from notewell.services.metering import Meter
    from notewell.services.notes import NoteService
    from notewell.services.oauth import OAuthService

REVISIONS_SHOWN = 20  # a note page shows this many earlier versions as diffs, newest first
# The anchored notes a project's freshness page weighs, at most: on DynamoDB per 100 of them one Query of anchor
# pointers and a BatchGetItem each of the notes (title and version) and of their verdicts.
ANCHORED_WEIGHED = 500
CHAIN_HOPS = 10  # how far a note page follows supersession each way
TIMELINE_PAGE = 50


class Resolution(StrEnum):
    """The two ways out of each kind of conflict, and the plain changes a person makes to one note."""

    CONFIRM = "confirm"  # a disputed note is right after all: current again
    RETIRE = "retire"  # a disputed note is wrong: historical
    FINISH = "finish"  # an unfinished supersession: its superseding note takes over
    DISPUTE = "dispute"  # an unfinished supersession is doubtful: disputed, for a person to settle
    HISTORICAL = "historical"
    DELETE = "delete"
    RESTORE = "restore"


@dataclass(frozen=True, slots=True)
class SignedIn:
    principal: Principal
    session: ConsoleSession
    label: str  # how the header names the credential: "key alice (…QFvk)", "key alice (…QFvk) through OAuth"


@dataclass(frozen=True, slots=True)
class ProjectRow:
    project: Project
    notes: int  # live notes
    last_activity: str | None  # when its most recently changed note changed


@dataclass(frozen=True, slots=True)
class NotePage:
    view: NoteView
    revisions: list[Note]  # earlier versions, newest first, with bodies
    more_revisions: bool
    older: list[Note]  # what it supersedes, nearest first (followed CHAIN_HOPS deep)
    newer: list[Note]  # what supersedes it, nearest first


@dataclass(frozen=True, slots=True)
class Timeline:
    page: ChangesPage
    shown: list[int]  # indexes into page.changes that pass the author filter
    authors: list[str]  # the authors seen on this page, for the filter


class ConsoleSignInError(NotewellError):
    """An OAuth sign-in that came back refused, forged or too late: start again."""

    status = 400
    code = "sign_in_failed"


class ConsoleService:
    def __init__(
        self, deps: Deps, auth: AuthService, notes: NoteService, changes: ChangesService, meter: Meter, secret: bytes,
        oauth: OAuthService | None = None, records: AuthRecords | None = None,
    ) -> None:  # fmt: skip
        self._deps = deps
        self._auth = auth
        self._meter = meter
        self._notes = notes
        self._changes = changes
        self._key = console_session.session_key(secret)
        self._oauth = oauth if records is not None else None
        self._records = records

    @property
    def oauth_sign_in(self) -> bool:
        """Whether a person can sign in through the authorization server (it runs here, with an issuer)."""
        return self._oauth is not None

    # ----- sessions -----------------------------------------------------------------------------------------

    def _now(self) -> int:
        return int(self._deps.clock.now().timestamp())

    def sign_in(self, api_key: str) -> tuple[SignedIn, str]:
        """A session for a person holding `api_key`, and its sealed cookie value."""
        api_key = api_key.strip()
        principal = self._auth.authenticate(api_key) if api_key else None
        key = self._deps.store.find_key(hash_secret(api_key)) if principal is not None else None
        if principal is None or key is None:
            raise UnauthenticatedError(
                "That API key is unknown or revoked; paste a key from 'notewell keys create' (it starts with nwk_)."
            )
        session = ConsoleSession(
            console_session.KEY, key.secret_hash, self._deps.ids.secret(), self._now() + console_session.SESSION_SECONDS
        )
        return SignedIn(principal, session, _key_label(key)), console_session.seal(session, self._key)

    def resume(self, token: str) -> SignedIn | None:
        """The person behind a session cookie, or None when it is forged or over, or its key or grant revoked."""
        session = console_session.unseal(token, self._key, now=self._now())
        if session is None or self._ended(token):
            return None
        if session.kind == console_session.KEY:
            key = self._deps.store.find_key(session.reference)
            if key is None or key.revoked_at is not None:
                return None
            return SignedIn(self._auth.principal_of(key), session, _key_label(key))
        family, _, token_hash = session.reference.partition(" ")
        principal = self._oauth.authenticate_reference(family, token_hash) if self._oauth is not None else None
        if principal is None:
            return None
        key_id = principal.actor.removeprefix("key:")
        named = [k for k in self._deps.store.list_keys(principal.workspace_id) if k.id == key_id]
        return SignedIn(principal, session, f"{_key_label(named[0]) if named else key_id} through OAuth")

    def sign_out(self, token: str) -> None:
        """End the session in `token` for good: a copy of the cookie kept elsewhere no longer signs anyone in. Its
        end is stored until the session would have expired anyway."""
        session = console_session.unseal(token, self._key, now=self._now())
        if session is None or self._records is None:
            return
        until = datetime.fromtimestamp(session.expires_at, UTC)
        ended = AuthRecord(*_ended_key(token), "ended", {}, rules.format_ts(until))
        self._records.write_records([RecordWrite(ended, condition=ANY)])  # signing out twice is fine

    def _ended(self, token: str) -> bool:
        return self._records is not None and self._records.get_record(*_ended_key(token)) is not None

    def _redirect_uri(self) -> str:
        assert self._oauth is not None
        return f"{self._oauth.issuer}{OAUTH_CALLBACK}"

    def _console_client(self) -> str:
        """The console's client id at the authorization server: registered once (again once it was forgotten for
        disuse), remembered in the store so every container uses the same."""
        assert self._oauth is not None and self._records is not None
        pointer = self._records.get_record(*CONSOLE_CLIENT)
        if pointer is not None:
            client_id = str(pointer.fields.get("client_id", ""))
            if self._oauth.client(client_id) is not None:
                return client_id
        metadata = {
            "client_name": "Notewell console", "redirect_uris": [self._redirect_uri()],
            "grant_types": ["authorization_code"], "response_types": ["code"], "token_endpoint_auth_method": "none",
        }  # fmt: skip
        registered = self._oauth.register(json.dumps(metadata).encode(), "application/json")
        client_id = str(registered["client_id"])
        record = AuthRecord(CONSOLE_CLIENT[0], CONSOLE_CLIENT[1], "active", {"client_id": client_id})
        self._records.write_records([RecordWrite(record, condition=ANY)])  # two at once: the later one is kept
        return client_id

    def oauth_start(self, then: str) -> tuple[str, str]:
        """Begin signing in through the authorization server: where to send the person (its /authorize, with
        PKCE) and the sealed flow state to keep in a cookie until they come back."""
        if self._oauth is None:
            raise ConsoleSignInError("This server has no authorization server; sign in with an API key.")
        ids, expires = self._deps.ids, self._now() + console_session.FLOW_SECONDS
        flow = OAuthFlow(ids.secret(), ids.secret(), self._console_client(), then, expires)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(flow.verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code", "client_id": flow.client_id, "redirect_uri": self._redirect_uri(),
            "state": flow.state, "code_challenge": challenge, "code_challenge_method": "S256",
            "scope": " ".join(oauth_rules.SCOPES), "resource": oauth_rules.resource_url(self._oauth.issuer),
        }  # fmt: skip
        return f"/authorize?{urlencode(query)}", console_session.seal_flow(flow, self._key)

    def oauth_finish(self, params: Mapping[str, str], flow_token: str) -> tuple[SignedIn, str, str]:
        """The person is back from the authorization server: the code is exchanged (with the PKCE verifier) for an
        access token, and a session opened on it. Returns the session, its sealed cookie value and the page to show.

        Raises:
            ConsoleSignInError: no sign-in under way, a state that does not match it, or a refusal.
        """
        if self._oauth is None:
            raise ConsoleSignInError("This server has no authorization server; sign in with an API key.")
        flow = console_session.unseal_flow(flow_token, self._key, now=self._now())
        if flow is None or not console_session.same_secret(params.get("state", ""), flow.state):
            raise ConsoleSignInError(
                "This sign-in is not the one this browser started, or it took too long; start again."
            )
        if params.get("iss", self._oauth.issuer) != self._oauth.issuer:
            raise ConsoleSignInError("The answer came from another authorization server; start again.")
        if "error" in params:
            refused = "You declined" if params["error"] == "access_denied" else "The authorization server refused"
            raise ConsoleSignInError(f"{refused} the sign-in; start again, or sign in with an API key.")
        pairs = [("grant_type", "authorization_code"), ("code", params.get("code", "")),
                 ("redirect_uri", self._redirect_uri()), ("client_id", flow.client_id),
                 ("code_verifier", flow.verifier)]  # fmt: skip
        try:
            tokens = self._oauth.token(pairs, "application/x-www-form-urlencoded", basic_auth=False)
        except OAuthError as exc:
            raise ConsoleSignInError(f"The sign-in could not be completed ({exc.error}); start again.") from None
        reference = access_reference(str(tokens["access_token"]))
        if reference is None:
            raise ConsoleSignInError("The authorization server answered without an access token; start again.")
        expires = self._now() + min(int(str(tokens.get("expires_in", 0))), console_session.SESSION_SECONDS)
        session = ConsoleSession(console_session.OAUTH, " ".join(reference), self._deps.ids.secret(), expires)
        token = console_session.seal(session, self._key)
        signed = self.resume(token)
        if signed is None:
            raise ConsoleSignInError("The new sign-in is not valid; start again.")
        return signed, token, flow.then

    # ----- reading --------------------------------------------------------------------------------------------

    def projects(self, principal: Principal) -> list[ProjectRow]:
        """The projects this key can see, with their live-note counts (the meter's per-project counters) and the
        time of each one's latest change: two small reads per project, whatever its size."""
        store = self._deps.store
        workspace = principal.workspace_id
        projects = store.list_projects(workspace)
        if principal.project_id is not None:
            projects = [p for p in projects if p.id == principal.project_id]
        plan = self._meter.plan_of(workspace)
        rows = []
        for project in sorted(projects, key=lambda p: p.slug):
            latest = store.project_notes(workspace, project.id, limit=1)
            notes = self._meter.report(workspace, plan, project.id, project.slug).notes
            rows.append(ProjectRow(project, notes, latest[0].updated_at if latest else None))
        return rows

    def author_names(self, principal: Principal) -> dict[str, str]:
        """How a person knows each key that writes ("alice (…QFvk)"), by the actor notes record. A project key is
        told only its own key's name: the other keys of the workspace are not its business."""
        keys = self._deps.store.list_keys(principal.workspace_id)
        if principal.project_id is not None:
            keys = [k for k in keys if f"key:{k.id}" == principal.actor]
        return {f"key:{k.id}": f"{k.name or k.id} (…{k.hint})" if k.hint else k.name or k.id for k in keys}

    def project(self, principal: Principal, slug: str) -> Project:
        project = visible_project(self._deps, principal, slug)
        if project is None:
            raise NotFoundError(f"There is no project {slug!r} yet; agents create it with their first note.")
        return project

    def freshness(self, principal: Principal, slug: str) -> FreshnessSummary:
        """The project's anchored notes by their last recorded verdict (freshness.summarize): the changed and gone
        ones to re-check, and how many are fresh, moved or not checked at their current version."""
        project = self.project(principal, slug)
        store, workspace = self._deps.store, principal.workspace_id
        notes = store.anchored_in_project(
            workspace, project.id, statuses=freshness.CHECKED_STATUSES, limit=ANCHORED_WEIGHED + 1
        )
        weighed = notes[:ANCHORED_WEIGHED]
        records = store.recorded_verdicts(workspace, project.id, [n.id for n in weighed])
        return freshness.summarize(weighed, records, complete=len(notes) <= ANCHORED_WEIGHED)

    def note_page(self, principal: Principal, note_id: str) -> NotePage:
        """A note (deleted ones too: they can be restored) with its latest revisions and both supersession chains."""
        history = self._notes.revisions(principal, note_id, limit=REVISIONS_SHOWN)
        note = history.note
        return NotePage(
            view=NoteView(note, self._notes.slug(principal, note.project_id)),
            revisions=history.revisions,
            more_revisions=history.next_cursor is not None,
            older=self._chain(principal, note, lambda n: n.supersedes),
            newer=self._chain(principal, note, lambda n: n.superseded_by),
        )

    def _chain(self, principal: Principal, start: Note, step: Callable[[Note], Sequence[str]]) -> list[Note]:
        """Notes reached from `start` by `step`, breadth first, each once, at most CHAIN_HOPS rounds of reads."""
        seen = {start.id}
        found: list[Note] = []
        frontier = [i for i in step(start) if i not in seen]
        for _ in range(CHAIN_HOPS):
            if not frontier:
                break
            seen.update(frontier)
            notes = self._deps.store.get_notes(principal.workspace_id, frontier)
            round_ = [notes[i] for i in frontier if i in notes and may_see(principal, notes[i])]
            found += round_
            frontier = list(dict.fromkeys(i for n in round_ for i in step(n) if i not in seen))
        return found

    def timeline(
        self,
        principal: Principal,
        project: str,
        *,
        since: str | None,
        cursor: str | None,
        types: Sequence[str],
        statuses: Sequence[str],
        author: str | None,
    ) -> Timeline:
        try:
            type_values = [NoteType(t) for t in types]
            status_values = [NoteStatus(s) for s in statuses]
        except ValueError as exc:
            raise InvalidArgumentError(f"{exc}; pick a type and status from the lists.") from None
        page = self._changes.since(
            principal, project, since=None if cursor else since, cursor=cursor, types=type_values,
            statuses=status_values, limit=TIMELINE_PAGE, max_tokens=32000,
        )  # fmt: skip
        authors = sorted({c.note.author for c in page.changes})
        shown = [i for i, c in enumerate(page.changes) if not author or c.note.author == author]
        return Timeline(page, shown, authors)

    # ----- tending ----------------------------------------------------------------------------------------------

    def resolve(
        self, principal: Principal, note_id: str, resolution: Resolution, *, expected_version: int | None
    ) -> NoteView:
        """Apply one of the console's buttons to a note; `expected_version` is the version the page showed, so a
        button pressed on a stale page is refused (409) instead of undoing someone else's change."""
        notes = self._notes
        if resolution is Resolution.RESTORE:
            return notes.restore(principal, note_id)
        if resolution is Resolution.DELETE:
            return notes.delete(principal, note_id, expected_version=expected_version)
        if resolution is Resolution.FINISH:
            note = visible_note(self._deps, principal, note_id)
            if not note.superseded_by or note.status is NoteStatus.SUPERSEDED:
                raise InvalidArgumentError(f"{note_id} has no unfinished supersession to finish; reload the page.")
            if expected_version is not None and note.version != expected_version:
                raise VersionConflictError(note_id, expected_version, note.version)
            notes.update(principal, note.superseded_by[-1], NoteChanges(supersedes=[note_id]))
            return notes.get(principal, note_id)
        status = {
            Resolution.CONFIRM: NoteStatus.CURRENT,
            Resolution.RETIRE: NoteStatus.HISTORICAL,
            Resolution.DISPUTE: NoteStatus.DISPUTED,
            Resolution.HISTORICAL: NoteStatus.HISTORICAL,
        }[resolution]
        return notes.update(principal, note_id, NoteChanges(status=status), expected_version=expected_version)

    def supersede(self, principal: Principal, old_id: str, new_id: str, *, expected_version: int | None) -> NoteView:
        """`new_id` replaces `old_id`: the old note becomes superseded, in one commit with the new note's link."""
        new_id = new_id.strip()
        old = visible_note(self._deps, principal, old_id)
        if expected_version is not None and old.version != expected_version:
            raise VersionConflictError(old_id, expected_version, old.version)
        return self._notes.update(principal, new_id, NoteChanges(supersedes=[old_id]))


OAUTH_CALLBACK = "/console/oauth/callback"
CONSOLE_CLIENT = ("CONSOLE#CLIENT", "CLIENT")  # where the console's own client id is remembered


def _ended_key(token: str) -> tuple[str, str]:
    """Where the end of a signed-out session is recorded (one record per session, in the OAuth records)."""
    return f"CONSOLE#ENDED#{console_session.session_id(token)}", "ENDED"


def _key_label(key: ApiKey) -> str:
    name = key.name or key.id
    return f"key {name} (…{key.hint})" if key.hint else f"key {name}"
