"""Every console route, with generated and broken field values: a page, a redirect or a 4xx, never a 5xx.

The console's counterpart of test_mcp_fuzz.py. Each GET and POST route of the console gets, per field of its query
or form, either a value the page itself would send (the session's CSRF token, a real note id, a listed type) or a
broken one (non-ASCII, lone surrogates sent as the bytes a browser could send, superscript digits, huge numbers,
empty), or no field at all. Bounded and derandomized: a fixed number of requests per route, on both stores, through
the app `notewell serve` runs (OAuth sign-in on, so the callback is live).
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.model import NoteStatus, NoteType, Plan
from notewell.services.console import Resolution
from tests.support.console import ConsoleClient, console, parse
from tests.support.fuzz import EDGE_STRINGS
from tests.support.mcp_harness import make_keys

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from anyio.from_thread import BlockingPortal

    from notewell.ports import Store

SERVE = "http://127.0.0.1:8765"
REQUESTS_PER_ROUTE = {"sqlite": 12, "dynamodb": 6}  # moto is slower; both stay within seconds
REQUEST_TIMEOUT_S = 30  # a hang guard only: pages take milliseconds

# Beyond the MCP fuzz's strings: what a form field or a query can carry that JSON arguments cannot.
BROKEN = [
    *EDGE_STRINGS, "\ud800", "a\udfffb", "\udc80\ud800", "¹²³", "²", "1²", "٣", "Ⅻ", "１２", "9" * 5_000,
    str(2**64), str(-(2**63)), "+1", " 1", "1 ", "0x10", "1_000", "é", "€" * 50, "\x7f", "%", "%ZZ", "a=b&c=d",
]  # fmt: skip
MISSING = object()  # a field left out of the request


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # may hold {project} or {note}
    fields: tuple[str, ...]


ROUTES = [
    Route("GET", "/", ("done",)),
    Route("GET", "/console", ()),
    Route("GET", "/console/sign-in", ("next",)),
    Route("POST", "/console/sign-in", ("csrf", "api_key")),
    Route("POST", "/console/sign-out", ("csrf",)),
    Route("GET", "/console/oauth/start", ("next",)),
    Route("GET", "/console/oauth/callback", ("code", "state", "iss", "error")),
    Route("GET", "/console/usage", ()),
    Route("GET", "/console/p/{project}", ("q", "detail", "done")),
    Route("GET", "/console/p/{project}/changes", ("since", "type", "status", "author", "cursor")),
    Route("GET", "/console/p/{project}/conflicts", ("done",)),
    Route("GET", "/console/p/{project}/search", ("q",)),
    Route("GET", "/console/n/{note}", ("done",)),
    Route("GET", "/console/n/{note}/edit", ()),
    Route("POST", "/console/n/{note}/edit",
          ("csrf", "version", "title", "body", "type", "status", "tags", "importance", "canonical")),
    Route("POST", "/console/n/{note}/resolve", ("csrf", "action", "version")),
    Route("POST", "/console/n/{note}/supersede", ("csrf", "by", "version")),
]  # fmt: skip


def encode(value: str) -> str:
    """Percent-encoded UTF-8; a lone surrogate goes as the three bytes a careless client sends for it."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def encoded_pairs(values: dict[str, str]) -> str:
    return "&".join(f"{encode(name)}={encode(value)}" for name, value in values.items())


@dataclass
class Run:
    """One app, one browser signed in with a read-write key, and what the app handed out to fuzz from."""

    portal: BlockingPortal
    browser: ConsoleClient
    key: str
    note_ids: list[str]
    csrf: str = ""
    outcomes: Counter[str] = field(default_factory=Counter)
    by_route: Counter[str] = field(default_factory=Counter)

    def likely(self, name: str) -> st.SearchStrategy[str]:
        """What the console's own pages would send in field `name`."""
        choices: dict[str, st.SearchStrategy[str]] = {
            "csrf": st.just(self.csrf),
            "api_key": st.sampled_from([self.key, "nwk_not-a-key"]),
            "version": st.sampled_from(["1", "2", "3"]),
            "importance": st.sampled_from(["1", "3", "5"]),
            "type": st.sampled_from([t.value for t in NoteType]),
            "status": st.sampled_from([s.value for s in NoteStatus]),
            "action": st.sampled_from([r.value for r in Resolution]),
            "by": st.sampled_from(self.note_ids),
            "note": st.sampled_from(self.note_ids),
            "project": st.sampled_from(["alpha", "beta"]),
            "detail": st.sampled_from(["lean", "balanced", "deep"]),
            "since": st.sampled_from(["1", "7", "30", "all"]),
            "next": st.sampled_from(["/", "/console/usage", "//evil.example", "https://evil.example/"]),
            "canonical": st.just("1"),
            "done": st.sampled_from(["saved", "confirm"]),
        }
        return choices.get(name, st.text(max_size=40))

    def value(self, name: str) -> st.SearchStrategy[object]:
        broken = st.one_of(st.sampled_from(BROKEN), st.text(max_size=30))
        return st.one_of(self.likely(name), self.likely(name), broken, st.just(MISSING))

    def step(self, route: Route, data: st.DataObject) -> None:
        path = route.path
        for name in ("project", "note"):
            if "{" + name + "}" in path:
                drawn = data.draw(st.one_of(self.likely(name), st.sampled_from(BROKEN)), label=name)
                path = path.replace("{" + name + "}", encode(drawn))
        drawn_fields = {name: data.draw(self.value(name), label=name) for name in route.fields}
        values = {name: value for name, value in drawn_fields.items() if isinstance(value, str)}
        stray = data.draw(st.one_of(st.just(MISSING), st.sampled_from(BROKEN)), label="stray field")
        if isinstance(stray, str):  # a field no page sends, named and valued oddly
            values.setdefault(stray[:20] or "x", stray)
        if route.path == "/console/sign-in" and route.method == "POST":
            self.signed_out_with_a_sign_in_page(values)
        status = self.portal.call(self.send, route.method, path, values)
        assert status < 500, (route.method, path, {k: v[:40] for k, v in values.items()}, status)
        self.outcomes[f"{status // 100}xx"] += 1
        self.by_route[f"{route.method} {route.path}"] += 1
        if route.path in ("/console/sign-in", "/console/sign-out") and route.method == "POST":
            self.portal.call(self.sign_in)  # the next request is made signed in again, with the new session's token

    def signed_out_with_a_sign_in_page(self, values: dict[str, str]) -> None:
        """Sign-in is tried signed out, from a sign-in page whose token the likely `csrf` value is."""
        self.browser.http.cookies.clear()
        page = self.portal.call(self.browser.get, "/console/sign-in")
        if values.get("csrf") == self.csrf:
            values["csrf"] = page.form("Sign in").fields["csrf"]

    async def send(self, method: str, path: str, values: dict[str, str]) -> int:
        encoded = encoded_pairs(values)
        http = self.browser.http
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            if method == "GET":
                answer = await http.get(f"{path}?{encoded}" if encoded else path)
            else:
                answer = await http.post(
                    path, content=encoded.encode(), headers={"content-type": "application/x-www-form-urlencoded"}
                )
        return answer.status_code

    async def sign_in(self) -> None:
        self.browser.http.cookies.clear()
        signed = await self.browser.sign_in(self.key)
        assert signed.status_code == 303, signed.text
        home = parse(await self.browser.http.get("/"))
        self.csrf = next(f for f in home.parsed.forms if f.action == "/console/sign-out").fields["csrf"]


@contextlib.contextmanager
def fuzzing(services: Services) -> Iterator[Run]:
    keys = make_keys(services)
    services.workspaces.set_plan(keys.workspace, Plan.ENTERPRISE)  # quotas would turn long runs into 429s
    me = services.auth.authenticate(keys.full)
    assert me is not None
    notes = [services.notes.create(me, "alpha", title=f"Note {n}", body=f"Body {n}.").note for n in range(3)]
    services.notes.create(me, "alpha", title="Doubt", body="Is it?", status=NoteStatus.DISPUTED)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(console(services, base=SERVE)) as browser:
        run = Run(portal, browser, keys.full, [n.id for n in notes])
        portal.call(run.sign_in)
        yield run


def generate(examples: int, step: Callable[[st.DataObject], None]) -> None:
    @settings(
        max_examples=examples, derandomize=True, database=None, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )  # fmt: skip
    @given(st.data())
    def run(data: st.DataObject) -> None:
        step(data)

    run()


def test_every_console_route_answers_generated_and_broken_fields_with_a_page_a_redirect_or_a_4xx(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.params["store"]
    services = bootstrap(Settings(data_dir=tmp_path, issuer=SERVE), store=store)
    with fuzzing(services) as run:
        for route in ROUTES:
            generate(REQUESTS_PER_ROUTE[kind], functools.partial(run.step, route))
    assert all(run.by_route[f"{r.method} {r.path}"] >= REQUESTS_PER_ROUTE[kind] for r in ROUTES), run.by_route
    assert run.outcomes["4xx"] > 0 and (run.outcomes["2xx"] + run.outcomes["3xx"]) > 0, run.outcomes
