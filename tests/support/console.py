"""Driving the web console as a browser would, without one: pages fetched, their forms read and submitted with the
values the page holds. The browser tests (test_console_browser.py) do the same in Chromium."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import httpx2

from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from tests.support.mcp_harness import running

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from notewell.bootstrap import Services

BASE = "http://testserver"


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[str] = field(default_factory=list)  # their visible labels


class PageParser(HTMLParser):
    """The forms, links, elements and visible text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str | None]] = []  # (tag, name, value) of every attribute
        self.labels: set[str] = set()  # ids named by a <label for>
        self.ids_needing_labels: list[str] = []
        self.text_parts: list[str] = []
        self._in_button = False
        self._hidden_depth = 0  # inside <style> or <title>
        self._select: str | None = None  # name of the <select> being read
        self._select_chosen = False
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.append(tag)
        self.attributes += [(tag, name, value) for name, value in attrs]
        if tag in ("style", "title"):
            self._hidden_depth += 1
        if tag == "form":
            self.forms.append(Form(values.get("action") or "", (values.get("method") or "get").lower()))
        elif tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        elif tag == "label" and values.get("for"):
            self.labels.add(values["for"] or "")
        elif tag in ("input", "select", "textarea") and self.forms:
            name = values.get("name")
            kind = values.get("type", "text")
            if kind != "hidden" and tag != "button":
                self.ids_needing_labels.append(values.get("id") or f"<{tag} name={name}>")
            if tag == "select":
                self._select, self._select_chosen = name, False
            elif tag == "textarea":
                self._textarea = name
                if name:
                    self.forms[-1].fields[name] = ""
            elif name and (kind != "checkbox" or "checked" in values):
                self.forms[-1].fields[name] = values.get("value") or ""
        elif tag == "button":
            self._in_button = True
            if self.forms:
                self.forms[-1].buttons.append("")
        elif tag == "option" and self._select and self.forms:
            fields = self.forms[-1].fields
            if "selected" in values and not self._select_chosen:
                fields[self._select], self._select_chosen = values.get("value") or "", True
            elif self._select not in fields:  # the first option, until one is selected
                fields[self._select] = values.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "title"):
            self._hidden_depth -= 1
        if tag == "button":
            self._in_button = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea" and self._textarea and self.forms:
            # A browser drops the one newline that follows <textarea>.
            self.forms[-1].fields[self._textarea] = self.forms[-1].fields[self._textarea].removeprefix("\n")
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._hidden_depth:
            return
        self.text_parts.append(data)
        if self._textarea and self.forms:
            self.forms[-1].fields[self._textarea] += data
        if self._in_button and self.forms:
            self.forms[-1].buttons[-1] += data


@dataclass
class Page:
    status: int
    html: str
    headers: httpx2.Headers
    parsed: PageParser

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.parsed.text_parts).split())

    @property
    def writing_forms(self) -> list[Form]:
        """Forms that change something (every post but signing out)."""
        return [f for f in self.parsed.forms if f.method == "post" and f.action != "/console/sign-out"]

    def form(self, button: str) -> Form:
        """The form whose button reads `button`."""
        for form in self.parsed.forms:
            if any(label.strip() == button for label in form.buttons):
                return form
        raise AssertionError(f"no form with a {button!r} button; buttons: {[f.buttons for f in self.parsed.forms]}")


def parse(response: httpx2.Response) -> Page:
    parser = PageParser()
    parser.feed(response.text)
    return Page(response.status_code, response.text, response.headers, parser)


class ConsoleClient:
    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http

    async def get(self, path: str) -> Page:
        return parse(await self.http.get(path))

    async def submit(self, form: Form, **changes: str) -> httpx2.Response:
        """Post a form as the browser would (its values, with `changes` typed in), without following redirects."""
        return await self.http.post(form.action, data={**form.fields, **changes})

    async def sign_in(self, key: str) -> httpx2.Response:
        page = await self.get("/console/sign-in")
        return await self.submit(page.form("Sign in"), api_key=key)


@contextlib.asynccontextmanager
async def console(services: Services, key: str | None = None, *, base: str = BASE) -> AsyncIterator[ConsoleClient]:
    """The app `notewell serve` runs, console included, at `base`, and a client signed in with `key` (when given)."""
    host = base.split("://", 1)[1]
    app = build_app(build_server(services), services, allowed_hosts=[host], console=True)
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base) as http:
        client = ConsoleClient(http)
        if key is not None:
            signed = await client.sign_in(key)
            assert signed.status_code == 303, signed.text
        yield client
