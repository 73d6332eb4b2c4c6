"""The web console's routes: parse the request, check the session and its CSRF token, call the services, map errors
to pages. `/` and everything under `/console/`; no MCP import (the console's Lambda function starts without the SDK).

Reading works without JavaScript (there is none) and every change is a plain form post: the session cookie is
HttpOnly and SameSite=Strict, each form carries the session's CSRF token, and HostGuard has already refused a
request from a foreign Origin. A change goes through the same services as a tool call, under the person's key.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING
from urllib.parse import quote

import anyio.to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from notewell.domain import rules
from notewell.domain.console_session import same_secret
from notewell.domain.errors import (
    ForbiddenError,
    InvalidArgumentError,
    NotewellError,
    UnavailableError,
    VersionConflictError,
)
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.packing import Detail
from notewell.entrypoints import console_pages as pages
from notewell.entrypoints.guard import HostGuard, split_host
from notewell.services.console import OAUTH_CALLBACK, Resolution
from notewell.services.notes import NoteChanges

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from starlette.requests import Request

    from notewell.bootstrap import Services
    from notewell.services.console import SignedIn

logger = logging.getLogger("notewell.console")

FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 1_200_000  # a note body at the largest plan's limit, escaped, with room for the other fields


def cookie_names(secure: bool) -> tuple[str, str]:
    """(session, sign-in CSRF) cookie names: `__Host-` binds them to this origin over https; plain http on loopback
    cannot carry the prefix."""
    return ("__Host-nw_console", "__Host-nw_console_csrf") if secure else ("nw_console", "nw_console_csrf")


def _cookie(name: str, value: str, *, secure: bool, max_age: int | None = None) -> str:
    age = f"; Max-Age={max_age}" if max_age is not None else ""
    return f"{name}={value}; Path=/; HttpOnly; SameSite=Strict{'; Secure' if secure else ''}{age}"


def _page(html: str, status: int = 200, extra: dict[str, str] | None = None) -> Response:
    return HTMLResponse(html, status, headers={**pages.SECURITY_HEADERS, **(extra or {})})


def _see_other(location: str, extra: dict[str, str] | None = None) -> Response:
    return RedirectResponse(location, 303, headers={**pages.SECURITY_HEADERS, **(extra or {})})


def _local(target: str | None) -> str:
    """Where to go after signing in: a console path of this site only (never `//host` or a scheme)."""
    if target and (target == "/" or target.startswith("/console/")) and "//" not in target and "\\" not in target:
        return target
    return "/"


class Console:
    """The console's request handlers around one set of services."""

    def __init__(self, services: Services, *, secure: bool) -> None:
        self._services = services
        self._secure = secure
        self._session_cookie, self._csrf_cookie = cookie_names(secure)
        self._flow_cookie = self._csrf_cookie.replace("_csrf", "_oauth")

    def routes(self) -> list[Route]:
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/console", self.home_redirect, methods=["GET"]),
            Route("/console/sign-in", self.sign_in, methods=["GET", "POST"]),
            Route("/console/sign-out", self.sign_out, methods=["POST"]),
            Route("/console/oauth/start", self.oauth_start, methods=["GET"]),
            Route(OAUTH_CALLBACK, self.oauth_callback, methods=["GET"]),
            Route("/console/usage", self.usage, methods=["GET"]),
            Route("/console/p/{project}", self.project, methods=["GET"]),
            Route("/console/p/{project}/changes", self.timeline, methods=["GET"]),
            Route("/console/p/{project}/conflicts", self.conflicts, methods=["GET"]),
            Route("/console/p/{project}/search", self.search, methods=["GET"]),
            Route("/console/p/{project}/freshness", self.freshness, methods=["GET"]),
            Route("/console/n/{note}", self.note, methods=["GET"]),
            Route("/console/n/{note}/edit", self.edit, methods=["GET", "POST"]),
            Route("/console/n/{note}/resolve", self.resolve, methods=["POST"]),
            Route("/console/n/{note}/supersede", self.supersede, methods=["POST"]),
        ]

    # ----- sessions ---------------------------------------------------------------------------------------------

    async def _who(self, request: Request) -> SignedIn | None:
        token = request.cookies.get(self._session_cookie)
        if not token:
            return None
        return await anyio.to_thread.run_sync(self._services.console.resume, token)

    def _viewer(self, who: SignedIn) -> pages.Viewer:
        principal = who.principal
        return pages.Viewer(label=who.label, writable=not principal.read_only, csrf=who.session.csrf)

    def _sign_in_form(self, problem: str | None = None, status: int = 200, then: str | None = None) -> Response:
        csrf = self._services.deps.ids.secret()
        cookie = _cookie(self._csrf_cookie, csrf, secure=self._secure, max_age=3600)
        oauth = self._services.console.oauth_sign_in
        html = pages.sign_in_page(csrf, problem, oauth_start=_oauth_start(then) if oauth else None)
        return _page(html, status, {"Set-Cookie": cookie})

    async def home(self, request: Request) -> Response:
        who = await self._who(request)
        if who is None:
            return await anyio.to_thread.run_sync(self._sign_in_form)
        return await self._read(request, who, "projects", lambda v: self._projects(who, v, request))

    async def home_redirect(self, request: Request) -> Response:
        return _see_other("/")

    async def sign_in(self, request: Request) -> Response:
        if request.method == "GET":
            then = _local(request.query_params.get("next"))
            if await self._who(request) is not None:
                return _see_other(then)
            return await anyio.to_thread.run_sync(lambda: self._sign_in_form(then=then))
        if not self._same_origin(request):
            # Login CSRF: a page on another port of this host can plant the sign-in cookie (cookies ignore ports),
            # so the token alone does not prove the form is ours; the browser's Origin does.
            return await anyio.to_thread.run_sync(
                lambda: self._sign_in_form("Sign in from this server's own sign-in page.", 403)
            )
        form = await self._form(request)
        if form is None:
            return _page(pages.error_page(None, 400, "Send the sign-in form as the page does."), 400)
        cookie = request.cookies.get(self._csrf_cookie, "")
        if not cookie or not same_secret(form.get("csrf", ""), cookie):
            return await anyio.to_thread.run_sync(
                lambda: self._sign_in_form("The page had expired; paste the key again.", 403)
            )
        try:
            _, token = await anyio.to_thread.run_sync(self._services.console.sign_in, form.get("api_key", ""))
        except UnavailableError:
            return await anyio.to_thread.run_sync(lambda: self._sign_in_form("Notewell is busy; try again.", 503))
        except NotewellError as exc:
            message = exc.message
            return await anyio.to_thread.run_sync(lambda: self._sign_in_form(message, 401))
        return self._open_session(token, _local(request.query_params.get("next")), spent=self._csrf_cookie)

    async def oauth_start(self, request: Request) -> Response:
        """Sign in through the authorization server: off to its consent page, with the flow state in a cookie."""
        then = _local(request.query_params.get("next"))
        try:
            location, flow = await anyio.to_thread.run_sync(self._services.console.oauth_start, then)
        except NotewellError as exc:
            message, status = exc.message, exc.status
            return await anyio.to_thread.run_sync(lambda: self._sign_in_form(message, status))
        # Lax, not Strict: the cookie must come back with the authorization server's redirect to the callback.
        cookie = _cookie(self._flow_cookie, flow, secure=self._secure, max_age=600).replace("Strict", "Lax")
        return _see_other(location, {"Set-Cookie": cookie})

    async def oauth_callback(self, request: Request) -> Response:
        params = {key: value for key, value in request.query_params.items()}
        flow = request.cookies.get(self._flow_cookie, "")
        try:
            _, token, then = await anyio.to_thread.run_sync(self._services.console.oauth_finish, params, flow)
        except NotewellError as exc:
            message, status = exc.message, exc.status
            return await anyio.to_thread.run_sync(lambda: self._sign_in_form(message, status))
        return self._open_session(token, then, spent=self._flow_cookie)

    def _open_session(self, token: str, then: str, *, spent: str) -> Response:
        """Off to `then` with the session cookie set, and the cookie that got the person here (`spent`) cleared."""
        response = _see_other(then)
        for cookie in (_cookie(self._session_cookie, token, secure=self._secure),
                       _cookie(spent, "", secure=self._secure, max_age=0)):  # fmt: skip
            response.raw_headers.append((b"set-cookie", cookie.encode()))
        return response

    async def sign_out(self, request: Request) -> Response:
        who = await self._who(request)
        form = await self._form(request)
        if who is not None and (
            form is None or not self._same_origin(request) or not same_secret(form.get("csrf", ""), who.session.csrf)
        ):
            return _page(pages.error_page(self._viewer(who), 403, "The page had expired; sign out again."), 403)
        if who is not None:
            # Ended on the server too: clearing the cookie alone would leave any copy of it working for hours.
            token = request.cookies.get(self._session_cookie, "")
            try:
                await anyio.to_thread.run_sync(self._services.console.sign_out, token)
            except NotewellError as exc:  # the end was not stored (a busy store): still signed in, say so
                return _page(pages.error_page(self._viewer(who), exc.status, exc.message), exc.status)
        gone = _cookie(self._session_cookie, "", secure=self._secure, max_age=0)
        return _see_other("/", {"Set-Cookie": gone})

    def _same_origin(self, request: Request) -> bool:
        """Whether a form post comes from a page of this origin (scheme, host and port). A browser names the page's
        origin on every POST (Origin, else Referer); a client that sends neither is not a browser, so not a victim."""
        sent = request.headers.get("origin") or _origin_of(request.headers.get("referer", ""))
        if not sent:
            return True
        scheme, separator, host = sent.strip().lower().partition("://")
        here = "https" if self._secure else "http"
        if not separator or scheme != here or "/" in host:
            return False  # includes `Origin: null` (a sandboxed or privacy-stripped page)
        return _host_port(host, scheme) == _host_port(request.headers.get("host", ""), here)

    # ----- reading ------------------------------------------------------------------------------------------------

    async def _read(
        self, request: Request, who: SignedIn | None, view: str, render: Callable[[pages.Viewer], str]
    ) -> Response:
        """A page for a signed-in person: admitted and metered as one call of `console:<view>`."""
        if who is None:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return _see_other(f"/console/sign-in?next={quote(target, safe='')}")
        viewer = self._viewer(who)
        return await anyio.to_thread.run_sync(lambda: self._metered(who, viewer, view, lambda: _page(render(viewer))))

    def _metered(self, who: SignedIn, viewer: pages.Viewer, view: str, call: Callable[[], Response]) -> Response:
        """One call of `console:<view>` (in a worker thread): admitted like a tool call (a suspended workspace, a
        used-up month), counted and timed; a NotewellError becomes its error page."""
        started = time.perf_counter()
        meter, principal = self._services.meter, who.principal
        outcome = "ok"
        try:
            meter.admit_call(principal.workspace_id)
            return call()
        except NotewellError as exc:
            outcome = exc.code
            return _page(pages.error_page(viewer, exc.status, exc.message), exc.status)
        finally:
            if outcome != "quota_exceeded":
                # Counted as a call, like a tool's; a page is read by a person, so it returns no tokens.
                meter.record_call(principal.workspace_id, f"console:{view}", 0, principal.project_id)
            if self._services.metrics is not None:
                self._services.metrics.record_call(f"console:{view}", outcome, (time.perf_counter() - started) * 1000)

    def _projects(self, who: SignedIn, viewer: pages.Viewer, request: Request) -> str:
        rows = self._services.console.projects(who.principal)
        return pages.projects_page(viewer, rows, flash=request.query_params.get("done"))

    async def usage(self, request: Request) -> Response:
        who = await self._who(request)

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            return pages.usage_page(viewer, self._services.workspaces.usage(who.principal))

        return await self._read(request, who, "usage", render)

    async def project(self, request: Request) -> Response:
        who = await self._who(request)
        slug = request.path_params["project"]
        query = request.query_params.get("q", "")
        detail = request.query_params.get("detail", "balanced")

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            if detail not in ("lean", "balanced", "deep"):
                raise InvalidArgumentError("detail is lean, balanced or deep.")
            project = self._services.console.project(who.principal, slug)
            context = self._services.context.get_context(
                who.principal, slug, query=query or None, detail=Detail(detail)
            )
            conflicts = self._services.memory.conflicts_in(who.principal, project)
            return pages.project_page(viewer, context, conflicts, query=query, detail=detail,
                                      flash=request.query_params.get("done"))  # fmt: skip

        return await self._read(request, who, "project", render)

    async def conflicts(self, request: Request) -> Response:
        who = await self._who(request)
        slug = request.path_params["project"]

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            project = self._services.console.project(who.principal, slug)
            found = self._services.memory.conflicts_in(who.principal, project)
            return pages.conflicts_page(viewer, slug, found, flash=request.query_params.get("done"))

        return await self._read(request, who, "conflicts", render)

    async def timeline(self, request: Request) -> Response:
        who = await self._who(request)
        slug = request.path_params["project"]
        params = request.query_params
        since, type_, status = params.get("since", "7"), params.get("type", ""), params.get("status", "")
        author, cursor = params.get("author", ""), params.get("cursor") or None

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            self._services.console.project(who.principal, slug)
            if since not in {value for value, _ in pages.SINCE_CHOICES}:
                raise InvalidArgumentError("since is 1, 7, 30 or all (days).")
            start = None
            if since != "all":
                start = rules.format_ts(self._services.deps.clock.now() - timedelta(days=int(since)))
            found = self._services.console.timeline(
                who.principal, slug, since=start, cursor=cursor, types=[type_] if type_ else [],
                statuses=[status] if status else [], author=author or None,
            )  # fmt: skip
            named = replace(viewer, authors=self._services.console.author_names(who.principal))
            return pages.timeline_page(named, slug, found, since=since, type_=type_, status=status, author=author)

        return await self._read(request, who, "timeline", render)

    async def search(self, request: Request) -> Response:
        who = await self._who(request)
        slug = request.path_params["project"]
        query = request.query_params.get("q", "").strip()

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            self._services.console.project(who.principal, slug)
            semantic = self._services.meaning is not None
            outcome = (
                self._services.search.run(who.principal, slug, query, semantic=semantic, limit=25) if query else None
            )
            return pages.search_page(viewer, slug, query, outcome)

        return await self._read(request, who, "search", render)

    async def freshness(self, request: Request) -> Response:
        who = await self._who(request)
        slug = request.path_params["project"]

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            return pages.freshness_page(viewer, slug, self._services.console.freshness(who.principal, slug))

        return await self._read(request, who, "freshness", render)

    async def note(self, request: Request) -> Response:
        who = await self._who(request)
        note_id = request.path_params["note"]

        def render(viewer: pages.Viewer) -> str:
            assert who is not None
            page = self._services.console.note_page(who.principal, note_id)
            named = replace(viewer, authors=self._services.console.author_names(who.principal))
            return pages.note_page(named, page, flash=request.query_params.get("done"))

        return await self._read(request, who, "note", render)

    # ----- changing -----------------------------------------------------------------------------------------------

    async def _form(self, request: Request) -> dict[str, str] | None:
        if request.headers.get("content-type", "").split(";")[0].strip() != FORM_TYPE:
            return None
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_FORM_BYTES:
            return None
        form = await request.form(max_files=0, max_fields=20, max_part_size=MAX_FORM_BYTES)
        return {key: value for key, value in form.items() if isinstance(value, str)}

    async def _change(
        self, request: Request, view: str, change: Callable[[SignedIn, dict[str, str]], Response | str]
    ) -> Response:
        """A form post that changes something: signed in, a valid CSRF token, then `change` (in a thread), which
        returns where to go next or a page to show. Errors come back as pages; nothing is half-written."""
        who = await self._who(request)
        if who is None:
            return _see_other("/console/sign-in")
        viewer = self._viewer(who)
        form = await self._form(request)
        if form is None:
            return _page(pages.error_page(viewer, 400, "Send the form as the page does."), 400)
        if not self._same_origin(request) or not same_secret(form.get("csrf", ""), who.session.csrf):
            return _page(pages.error_page(viewer, 403, "The page had expired; reload it and try again."), 403)

        def work() -> Response:
            done = change(who, form)
            return _see_other(done) if isinstance(done, str) else done

        return await anyio.to_thread.run_sync(lambda: self._metered(who, viewer, view, work))

    async def resolve(self, request: Request) -> Response:
        note_id = request.path_params["note"]

        def change(who: SignedIn, form: dict[str, str]) -> str:
            try:
                resolution = Resolution(form.get("action", ""))
            except ValueError:
                raise InvalidArgumentError("That button is not one the console shows; reload the page.") from None
            self._services.console.resolve(
                who.principal, note_id, resolution, expected_version=_version(form.get("version"))
            )
            return f"{pages.note_href(note_id)}?done={resolution.value}"

        return await self._change(request, "resolve", change)

    async def supersede(self, request: Request) -> Response:
        note_id = request.path_params["note"]

        def change(who: SignedIn, form: dict[str, str]) -> str:
            self._services.console.supersede(
                who.principal, note_id, form.get("by", ""), expected_version=_version(form.get("version"))
            )
            return f"{pages.note_href(note_id)}?done=supersede"

        return await self._change(request, "supersede", change)

    async def edit(self, request: Request) -> Response:
        note_id = request.path_params["note"]
        if request.method == "GET":
            who = await self._who(request)

            def render(viewer: pages.Viewer) -> str:
                assert who is not None
                note = self._services.notes.get(who.principal, note_id).note
                if not viewer.writable:
                    raise ForbiddenError("This key is read-only; sign in with a read-write key to change notes.")
                return pages.edit_page(viewer, note, pages.form_of(note))

            return await self._read(request, who, "edit", render)

        def change(who: SignedIn, form: dict[str, str]) -> Response | str:
            viewer = self._viewer(who)
            submitted = _edit_form(form)
            try:
                self._services.notes.update(
                    who.principal, note_id, _changes(submitted), expected_version=submitted.version
                )
            except VersionConflictError:
                # Someone saved first: show their change, and the person's text on the current version to merge.
                current = self._services.notes.get(who.principal, note_id).note
                base = self._services.notes.revision(who.principal, note_id, submitted.version)
                rebased = pages.EditForm(
                    current.version, submitted.title, submitted.body, submitted.type, submitted.status,
                    submitted.tags, submitted.importance, submitted.canonical,
                )  # fmt: skip
                html = pages.edit_page(
                    replace(viewer, authors=self._services.console.author_names(who.principal)), current, rebased,
                    base=base,
                    problem=f"This note changed since you opened it (you started from v{submitted.version}, current "
                    f"is v{current.version}). Nothing was saved.",
                )  # fmt: skip
                return _page(html, 409)
            except NotewellError as exc:
                note = self._services.notes.get(who.principal, note_id).note
                return _page(pages.edit_page(viewer, note, submitted, problem=exc.message), exc.status)
            return f"{pages.note_href(note_id)}?done=saved"

        return await self._change(request, "edit", change)


def _oauth_start(then: str | None) -> str:
    return "/console/oauth/start" + (f"?next={quote(then, safe='')}" if then and then != "/" else "")


def _origin_of(url: str) -> str:
    """`scheme://host[:port]` of an absolute URL, else ""."""
    scheme, separator, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}" if separator else ""


def _host_port(host: str, scheme: str) -> tuple[str, str]:
    name, port = split_host(host)
    return name, port or ("443" if scheme == "https" else "80")


def _version(value: str | None) -> int | None:
    if not value:
        return None
    # ASCII digits only: str.isdigit() passes '²', which int() then refuses.
    version = rules.parse_decimal(value.strip())
    if version is None:
        raise InvalidArgumentError("The form's version is not a number; reload the page.")
    return version


def _edit_form(form: dict[str, str]) -> pages.EditForm:
    version = _version(form.get("version"))
    if version is None:
        raise InvalidArgumentError("The form lost the version it was opened at; reload the page.")
    importance = rules.parse_decimal(form.get("importance", "3").strip())
    if importance is None:
        raise InvalidArgumentError("Importance is a whole number from 1 to 5.")
    return pages.EditForm(
        version=version, title=form.get("title", ""), body=form.get("body", "").replace("\r\n", "\n"),
        type=form.get("type", ""), status=form.get("status", ""), tags=form.get("tags", ""),
        importance=importance, canonical=form.get("canonical") == "1",
    )  # fmt: skip


def _changes(form: pages.EditForm) -> NoteChanges:
    try:
        note_type, status = NoteType(form.type), NoteStatus(form.status)
    except ValueError:
        raise InvalidArgumentError("Pick a type and a status from the lists.") from None
    tags = [t.strip() for t in form.tags.split(",") if t.strip()]
    return NoteChanges(
        title=form.title.strip(), body=form.body, type=note_type,
        status=None if status is NoteStatus.SUPERSEDED else status, tags=tags, importance=form.importance,
        canonical=form.canonical,
    )  # fmt: skip


def build_console_app(
    services: Services, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str] = (), secure: bool = True
) -> Starlette:
    """The console alone, for the function that serves it on AWS (https: its cookies carry `__Host-`)."""
    routes = Console(services, secure=secure).routes()
    return Starlette(routes=routes, middleware=[Middleware(HostGuard, hosts=allowed_hosts, origins=allowed_origins)])
