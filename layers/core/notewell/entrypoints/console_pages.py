"""The console's pages: plain HTML from the services' values, no script, no I/O.

Everything a note holds is untrusted (agents write it, and agents copy text from anywhere): it is escaped, shown as
text (never rendered as Markdown or HTML), isolated in <bdi> so a right-to-left override cannot reorder the page
around it, and its invisible or control characters are shown as visible code points (⟦U+202E⟧). The one stylesheet
is inline and allowed by its hash; the Content-Security-Policy allows nothing else, not even a form posting
elsewhere.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import re
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

from notewell.domain.freshness import Freshness
from notewell.domain.model import NoteStatus, NoteType
from notewell.domain.packing import SECTION_ORDER, Section
from notewell.domain.refs import CROCKFORD, NOTE_ID_PATTERN, REF_CHARS, note_ref

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from notewell.domain.freshness import FreshnessSummary
    from notewell.domain.model import Note
    from notewell.services.console import NotePage, ProjectRow, Timeline
    from notewell.services.context import ContextResult
    from notewell.services.memory import Conflict
    from notewell.services.metering import UsageReport
    from notewell.services.search import SearchOutcome

STYLE = (
    ":root{color-scheme:light dark;--fg:#1d2430;--muted:#596273;--bg:#f6f7f9;--card:#fff;--line:#d5d9e0;"
    "--accent:#1d4ed8;--warn:#a40e26;--ins:#dcfce7;--del:#fee2e2}"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6e8ec;--muted:#a3abb9;--bg:#14171c;--card:#1d2129;"
    "--line:#39404d;--accent:#8ab4ff;--warn:#ff8a9a;--ins:#12361f;--del:#3d1519}}"
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:var(--bg);color:var(--fg)}"
    "a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,"
    "textarea:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}"
    ".skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem}"
    "header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.75rem 1rem;"
    "background:var(--card);border-bottom:1px solid var(--line)}header .who{margin-left:auto;color:var(--muted)}"
    "nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}"
    "main{max-width:60rem;margin:1rem auto;padding:0 1rem}"
    "section,.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;"
    "margin:0 0 1rem}h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:0 0 .5rem}"
    "h3{font-size:1rem;margin:.75rem 0 .25rem}ul.notes{list-style:none;padding:0;margin:0}"
    "ul.notes li{padding:.4rem 0;border-top:1px solid var(--line)}ul.notes li:first-child{border-top:0}"
    ".meta,.muted{color:var(--muted);font-size:.9rem}.tag{display:inline-block;border:1px solid var(--line);"
    "border-radius:999px;padding:0 .5rem;margin:0 .25rem 0 0;font-size:.85rem}"
    ".status-disputed,.status-superseded,.status-historical{font-weight:600}.status-disputed{color:var(--warn)}"
    ".verdict{font-weight:600;color:var(--warn)}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;font:14px/1.45 ui-monospace,monospace;margin:0}"
    ".diff ins{display:block;text-decoration:none;background:var(--ins)}"
    ".diff del{display:block;text-decoration:none;background:var(--del)}"
    ".cc{font:12px ui-monospace,monospace;border:1px dashed var(--warn);color:var(--warn);padding:0 2px}"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;"
    "border-top:1px solid var(--line);vertical-align:top}.scroll{overflow-x:auto}"
    "form.inline{display:inline}button,input,select,textarea{font:inherit}"
    "button{padding:.45rem 1rem;border-radius:8px;border:1px solid var(--accent);background:var(--card);"
    "color:var(--accent);cursor:pointer;margin:.25rem .25rem .25rem 0}button.primary{background:var(--accent);"
    "color:var(--card)}button.danger{border-color:var(--warn);color:var(--warn)}"
    "label{display:block;font-weight:600;margin-top:.75rem}input[type=text],input[type=password],"
    "input[type=search],input[type=number],select,textarea{box-sizing:border-box;width:100%;padding:.5rem;"
    "border:1px solid var(--muted);border-radius:8px;background:var(--card);color:var(--fg)}"
    "textarea{min-height:14rem;font:14px/1.45 ui-monospace,monospace}"
    ".row{display:flex;flex-wrap:wrap;gap:0 1rem}.row>*{flex:1 1 12rem}"
    "[role=alert]{color:var(--warn);font-weight:600}[role=status]{font-weight:600}"
    "progress{width:100%;height:.8rem}"
    "@media (max-width:40rem){main{padding:0 .5rem}header .who{margin-left:0}}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "same-origin",  # no-referrer would make the browser post forms with `Origin: null`
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
}

# What a note may contain that a person must see rather than have acted on: C0/C1 controls (but tab and newline),
# bidirectional overrides and isolates, zero-width characters, the byte-order mark, line and paragraph separators.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_FLASH = {
    "saved": "Saved.", "confirm": "Marked current.", "retire": "Marked historical.", "finish": "Supersession finished.",
    "dispute": "Marked disputed.", "historical": "Marked historical.", "delete": "Deleted; restore brings it back.",
    "restore": "Restored.", "supersede": "Superseded.", "signed-out": "Signed out.",
}  # fmt: skip
_KIND_WORDS = {"disputed": "Disputed", "unfinished_supersession": "Unfinished supersession"}


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking, as far as the pages care."""

    label: str  # how the key is named in the header
    writable: bool  # False: a read-only key, and no form that writes is shown
    csrf: str
    authors: Mapping[str, str] = field(default_factory=dict)  # actor -> how a person knows it ("alice (…QFvk)")

    def author(self, actor: str) -> str:
        return bdi(self.authors.get(actor, actor))


def text(value: object) -> str:
    """Untrusted text as inert HTML: escaped, invisible characters shown as their code points."""
    escaped = escape(str(value))
    return _INVISIBLE.sub(lambda m: f'<span class="cc">U+{ord(m.group()):04X}</span>', escaped)


def plain(value: object) -> str:
    """Untrusted text where no markup may go (a <title>, an <option>): escaped, invisible characters as [U+XXXX]."""
    return escape(_INVISIBLE.sub(lambda m: f"[U+{ord(m.group()):04X}]", str(value)))


def bdi(value: object) -> str:
    return f"<bdi>{text(value)}</bdi>"


def when(stamp: str | None) -> str:
    if not stamp:
        return "never"
    return f'<time datetime="{escape(stamp)}">{escape(stamp[:16].replace("T", " "))} UTC</time>'


_ID_OR_REF = f"{NOTE_ID_PATTERN}|[{CROCKFORD}{CROCKFORD.lower()}]{{{REF_CHARS}}}"  # an id, or its ref in any case


def _ref_of(note_id: str) -> str:
    """The ref agents name the note by (get_context, search), so a person can match it to what an agent said."""
    ref = note_ref(note_id)
    return f" · ref <code>{ref}</code>" if ref else ""


def note_href(note_id: str) -> str:
    return f"/console/n/{quote(note_id, safe='')}"


def project_href(slug: str, view: str = "") -> str:
    return f"/console/p/{quote(slug, safe='')}" + (f"/{view}" if view else "")


def _status(status: str) -> str:
    return f'<span class="status-{escape(status)}">{escape(status)}</span>'


def shell(title: str, body: str, viewer: Viewer | None = None, *, flash: str | None = None) -> str:
    header = '<header><a href="/"><strong>Notewell</strong></a>'
    if viewer is not None:
        header += (
            '<nav aria-label="Console"><ul><li><a href="/">Projects</a></li>'
            '<li><a href="/console/usage">Usage</a></li></ul></nav>'
            f'<span class="who">Signed in with {text(viewer.label)}'
            f"{'' if viewer.writable else ' (read-only)'}</span>"
            '<form class="inline" method="post" action="/console/sign-out">'
            f'<input type="hidden" name="csrf" value="{escape(viewer.csrf)}">'
            '<button type="submit">Sign out</button></form>'
        )
    header += "</header>"
    note = f'<p role="status">{escape(_FLASH[flash])}</p>' if flash in _FLASH else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{plain(title)} · Notewell</title><style>{STYLE}</style></head><body>"
        '<a class="skip" href="#main">Skip to content</a>'
        f'{header}<main id="main">{note}{body}</main></body></html>'
    )


def _hidden(viewer: Viewer, **fields: object) -> str:
    pairs = {"csrf": viewer.csrf, **fields}
    # `action_`: a field named like a Python keyword or builtin is passed with a trailing underscore
    return "".join(
        f'<input type="hidden" name="{escape(k.rstrip("_"))}" value="{escape(str(v))}">' for k, v in pairs.items()
    )


def _button_form(viewer: Viewer, action: str, label: str, *, css: str = "", **fields: object) -> str:
    style = f' class="{css}"' if css else ""
    return (
        f'<form class="inline" method="post" action="{escape(action)}">{_hidden(viewer, **fields)}'
        f'<button type="submit"{style}>{escape(label)}</button></form>'
    )


# ----- sign-in, errors -----------------------------------------------------------------------------------------


def sign_in_page(csrf: str, problem: str | None = None, *, oauth_start: str | None = None) -> str:
    alert = f'<p role="alert" id="problem">{escape(problem)}</p>' if problem else ""
    described = ' aria-describedby="problem"' if problem else ""
    body = (
        "<section><h1>Sign in to the Notewell console</h1>"
        "<p>See what your agents remember about each project, and fix it.</p>"
        '<form method="post" action="/console/sign-in">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        '<label for="api_key">API key</label>'
        f'<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" required'
        f"{described}>"
        f"{alert}"
        '<p class="muted">Create one with <code>notewell keys create</code>. A read-only key opens a read-only '
        "console; a key for one project shows that project only.</p>"
        '<button class="primary" type="submit">Sign in</button></form>'
        + (
            f'<p>Or <a href="{escape(oauth_start)}">sign in through the authorization server</a> (its consent page '
            "asks for the key; the session then lasts as long as the access token it grants, an hour).</p>"
            if oauth_start
            else ""
        )
        + "</section>"
    )
    return shell("Sign in", body)


def error_page(viewer: Viewer | None, status: int, message: str) -> str:
    headings = {400: "That did not work", 403: "Not allowed", 404: "Not found", 409: "Changed meanwhile",
                429: "Over the plan's limit", 503: "Busy"}  # fmt: skip
    heading = headings.get(status, "Something went wrong")
    body = f'<section><h1>{escape(heading)}</h1><p role="alert">{text(message)}</p><p><a href="/">Projects</a></p>'
    return shell(heading, body + "</section>", viewer)


# ----- projects, usage -------------------------------------------------------------------------------------------


def projects_page(viewer: Viewer, rows: Sequence[ProjectRow], *, flash: str | None = None) -> str:
    if not rows:
        listing = (
            "<p>No projects yet. An agent creates one with its first note, e.g. "
            "<code>remember(project=&quot;my-app&quot;, …)</code>.</p>"
        )
    else:
        body_rows = "".join(
            f'<tr><th scope="row"><a href="{project_href(row.project.slug)}">{bdi(row.project.slug)}</a></th>'
            f"<td>{row.notes:,}</td><td>{when(row.last_activity)}</td><td>{bdi(row.project.summary)}</td></tr>"
            for row in rows
        )
        listing = (
            '<div class="scroll"><table><caption class="muted">Projects this key can see</caption>'
            '<thead><tr><th scope="col">Project</th><th scope="col">Notes</th><th scope="col">Last activity</th>'
            f'<th scope="col">Summary</th></tr></thead><tbody>{body_rows}</tbody></table></div>'
        )
    return shell("Projects", f"<h1>Projects</h1><section>{listing}</section>", viewer, flash=flash)


def _meter(label: str, used: int, limit: int | None) -> str:
    if not limit:
        return f"<p>{escape(label)}: {used:,} (no limit)</p>"
    share = min(100, round(100 * used / limit))
    return (
        f"<p>{escape(label)}: {used:,} of {limit:,} ({share} %)<br>"
        f'<progress max="{limit}" value="{min(used, limit)}">{share} %</progress></p>'
    )


def usage_page(viewer: Viewer, report: UsageReport) -> str:
    limits = report.limits
    calls = "".join(
        f'<tr><th scope="row">{text(name)}</th><td>{count:,}</td></tr>' for name, count in report.calls_by_tool.items()
    )
    scope = f" of project {bdi(report.project)}" if report.project else ""
    body = (
        f"<h1>Usage{scope} in {escape(report.period)}</h1>"
        f"<section><h2>Plan: {escape(report.plan.value)}</h2>"
        f"{_meter('Calls this month', report.calls, limits.calls_per_month)}"
        f"{_meter('Notes', report.notes, limits.notes_per_workspace)}"
        f"<p>Revisions kept: {report.revisions:,}; stored: {report.stored_bytes / 1e6:,.2f} MB; "
        f"tokens returned this month: {report.tokens:,}.</p></section>"
        f'<section><h2>Calls by tool</h2><div class="scroll"><table><tbody>{calls or "<tr><td>None yet.</td></tr>"}'
        "</tbody></table></div></section>"
    )
    return shell("Usage", body, viewer)


# ----- a project -----------------------------------------------------------------------------------------------


def _project_nav(slug: str, current: str) -> str:
    views = (("", "Current state"), ("changes", "Timeline"), ("conflicts", "Conflicts"), ("freshness", "Freshness"),
             ("search", "Search"))  # fmt: skip
    items = "".join(
        f'<li><a href="{project_href(slug, view)}"{" aria-current=page" if view == current else ""}>{label}</a></li>'
        for view, label in views
    )
    return f'<nav aria-label="Project"><ul>{items}</ul></nav>'


def _note_line(entry: dict[str, object]) -> str:
    note_id = str(entry["id"])
    flags = [str(entry.get("type", ""))]
    status = str(entry.get("status", "current"))
    if entry.get("canonical"):
        flags.append("canonical")
    excerpt = entry.get("excerpt")
    shown = f'<br><span class="muted">{bdi(excerpt)}</span>' if excerpt else ""
    return (
        f'<li><a href="{note_href(note_id)}">{bdi(entry.get("title", note_id))}</a> '
        f'<span class="meta">{escape(" · ".join(f for f in flags if f))}'
        f"{' · ' + _status(status) if status != 'current' else ''}"
        f"{' · ' + when(str(entry['updatedAt'])) if entry.get('updatedAt') else ''}</span>{shown}</li>"
    )


SECTION_TITLES = {
    Section.CONSTRAINTS: "Constraints", Section.DECISIONS: "Decisions", Section.FAILED_APPROACHES: "Failed approaches",
    Section.STATUS: "Status", Section.RELEVANT: "Relevant", Section.OPEN_ITEMS: "Open items",
    Section.RECENT_CHANGES: "Recent changes",
}  # fmt: skip


def _conflict_actions(viewer: Viewer, conflict: Conflict) -> str:
    if not viewer.writable:
        return ""
    note = conflict.note
    action = f"{note_href(note.id)}/resolve"
    if conflict.kind == "disputed":
        return _button_form(viewer, action, "Keep it: mark current", css="primary", action_="confirm",
                            version=note.version) + _button_form(
            viewer, action, "Retire it: mark historical", action_="retire", version=note.version
        )  # fmt: skip
    return _button_form(
        viewer, action, "Finish: the newer note replaces it", css="primary", action_="finish", version=note.version
    ) + _button_form(viewer, action, "Doubtful: mark disputed", action_="dispute", version=note.version)


def conflicts_block(viewer: Viewer, conflicts: Sequence[Conflict]) -> str:
    if not conflicts:
        return '<section aria-labelledby="conflicts"><h2 id="conflicts">Conflicts</h2><p>None open.</p></section>'
    items = "".join(
        f'<li><a href="{note_href(c.note.id)}">{bdi(c.note.title)}</a> '
        f'<span class="meta">{escape(_KIND_WORDS.get(str(c.kind), str(c.kind)))} · v{c.note.version}</span>'
        f'<br><span class="muted">{text(c.message)}</span><br>{_conflict_actions(viewer, c)}</li>'
        for c in conflicts
    )
    return (
        f'<section aria-labelledby="conflicts"><h2 id="conflicts">Conflicts ({len(conflicts)})</h2>'
        f'<ul class="notes">{items}</ul></section>'
    )


def project_page(
    viewer: Viewer, context: ContextResult, conflicts: Sequence[Conflict], *, query: str, detail: str,
    flash: str | None = None,
) -> str:  # fmt: skip
    packed = context.packed
    slug = context.project
    header = packed.header
    summary = f"<p>{bdi(header['summary'])}</p>" if header.get("summary") else ""
    instructions = (
        f"<h3>Instructions for agents</h3><pre>{text(header['instructions'])}</pre>"
        if header.get("instructions")
        else ""
    )
    details = "".join(
        f'<option value="{d}"{" selected" if d == detail else ""}>{d}</option>' for d in ("lean", "balanced", "deep")
    )
    form = (
        f'<form method="get" action="{project_href(slug)}" class="card"><div class="row">'
        f'<div><label for="q">Working on</label><input id="q" name="q" type="search" value="{escape(query)}">'
        f'</div><div><label for="detail">Detail</label><select id="detail" name="detail">{details}</select></div>'
        '</div><button type="submit">Show</button></form>'
    )
    sections = []
    shown = dict(packed.sections)
    for section in SECTION_ORDER:
        entries = shown.get(section)
        if not entries:
            continue
        items = "".join(_note_line(e) for e in entries)
        sections.append(
            f'<section aria-labelledby="s-{section.value}"><h2 id="s-{section.value}">{SECTION_TITLES[section]}</h2>'
            f'<ul class="notes">{items}</ul></section>'
        )
    omitted = ""
    if packed.omitted_ids:
        links = ", ".join(f'<a href="{note_href(i)}">{escape(i)}</a>' for i, _ in packed.omitted_ids[:50])
        omitted = f'<section><h2>Left out by the budget ({packed.omitted})</h2><p class="meta">{links}</p></section>'
    notice = f'<p class="muted">{text(context.notice)}</p>' if context.notice else ""
    body = (
        f"<h1>Project {bdi(slug)}</h1>{_project_nav(slug, '')}"
        f"<section>{summary}{instructions}"
        f'<p class="meta">What an agent sees first (get_context): {packed.spent:,} of {packed.budget:,} tokens, '
        f"{packed.selected} notes, detail {escape(packed.detail.value)}.</p>{notice}</section>"
        f"{form}{conflicts_block(viewer, conflicts)}{''.join(sections) or '<section><p>No notes yet.</p></section>'}"
        f"{omitted}"
    )
    return shell(f"Project {slug}", body, viewer, flash=flash)


def conflicts_page(viewer: Viewer, slug: str, conflicts: Sequence[Conflict], *, flash: str | None = None) -> str:
    body = f"<h1>Conflicts in {bdi(slug)}</h1>{_project_nav(slug, 'conflicts')}{conflicts_block(viewer, conflicts)}"
    return shell(f"Conflicts in {slug}", body, viewer, flash=flash)


def _options(values: Iterable[str], chosen: str, *, any_label: str) -> str:
    options = [f'<option value="">{escape(any_label)}</option>']
    options += [f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{plain(v)}</option>' for v in values]
    return "".join(options)


SINCE_CHOICES = (("1", "the last day"), ("7", "the last 7 days"), ("30", "the last 30 days"), ("all", "all time"))


def timeline_page(
    viewer: Viewer, slug: str, timeline: Timeline, *, since: str, type_: str, status: str, author: str
) -> str:
    page = timeline.page
    since_options = "".join(
        f'<option value="{v}"{" selected" if v == since else ""}>{label}</option>' for v, label in SINCE_CHOICES
    )
    authors = sorted({*timeline.authors, *([author] if author else [])})
    author_options = ['<option value="">anyone</option>'] + [
        f'<option value="{escape(a)}"{" selected" if a == author else ""}>{plain(viewer.authors.get(a, a))}</option>'
        for a in authors
    ]
    form = (
        f'<form method="get" action="{project_href(slug, "changes")}" class="card"><div class="row">'
        f'<div><label for="since">Changes in</label><select id="since" name="since">{since_options}</select></div>'
        f'<div><label for="type">Type</label><select id="type" name="type">'
        f"{_options([t.value for t in NoteType], type_, any_label='any type')}</select></div>"
        f'<div><label for="status">Status</label><select id="status" name="status">'
        f"{_options([s.value for s in NoteStatus], status, any_label='any status')}</select></div>"
        f'<div><label for="author">Author</label><select id="author" name="author">'
        f"{''.join(author_options)}</select></div>"
        '</div><button type="submit">Filter</button></form>'
    )
    rows = "".join(
        f"<tr><td>{when(c.note.updated_at)}</td><td>{escape(c.kind)}</td>"
        f'<td><a href="{note_href(c.note.id)}">{bdi(c.note.title)}</a><br><span class="muted">{bdi(c.excerpt)}</span>'
        f"</td><td>{escape(c.note.type.value)}</td><td>{_status(c.note.status.value)} v{c.note.version}</td>"
        f"<td>{viewer.author(c.note.author)}</td></tr>"
        for c in (page.changes[i] for i in timeline.shown)
    )
    table = (
        '<div class="scroll"><table><caption class="muted">Oldest first; each note appears at its latest change'
        '</caption><thead><tr><th scope="col">When</th><th scope="col">Change</th><th scope="col">Note</th>'
        '<th scope="col">Type</th><th scope="col">Status</th><th scope="col">Author</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        if rows
        else "<p>No changes match.</p>"
    )
    more = ""
    if page.has_more:
        query = {"cursor": page.cursor, "type": type_, "status": status, "author": author, "since": since}
        more = f'<p><a href="{project_href(slug, "changes")}?{escape(urlencode(query))}">Later changes →</a></p>'
    notice = f'<p class="muted">{text(page.notice)}</p>' if page.notice else ""
    body = (
        f"<h1>Timeline of {bdi(slug)}</h1>{_project_nav(slug, 'changes')}{form}<section>{notice}{table}{more}</section>"
    )
    return shell(f"Timeline of {slug}", body, viewer)


RECHECK = "What to do: re-check the note against the code, then update or re-anchor it"


def freshness_page(viewer: Viewer, slug: str, summary: FreshnessSummary) -> str:
    """The project's anchored notes whose code changed or went at their last check, with what to do, and how the
    others stand."""
    rows = "".join(
        f'<tr><td><a href="{note_href(s.note.id)}">{bdi(s.note.title)}</a><br><code>{escape(s.note.id)}</code></td>'
        f'<td class="verdict">{escape(s.verdict.freshness.value)}</td>'
        f"<td>{'<br>'.join(f'<code>{bdi(path)}</code>' for path in s.verdict.stale_paths)}</td>"
        f"<td>{when(s.verdict.judged_at)}</td></tr>"
        for s in summary.stale
    )
    table = (
        f"<p>{escape(RECHECK)} (in a checkout: <code>notewell anchor NOTE_ID PATH</code>).</p>"
        '<div class="scroll"><table><caption class="muted">Gone first; found: when a check first found the verdict'
        '</caption><thead><tr><th scope="col">Note</th><th scope="col">Verdict</th><th scope="col">Files</th>'
        f'<th scope="col">Found</th></tr></thead><tbody>{rows}</tbody></table></div>'
        if rows
        else "<p>None: no anchored note's code changed or went at its last check.</p>"
    )
    counts = summary.counts
    if summary.weighed:
        noun = "note" if summary.weighed == 1 else "notes"
        tally = (
            f"<p>{summary.weighed:,} anchored {noun}{'' if summary.complete else ' weighed (the project has more)'}: "
            f"{len(summary.stale):,} to re-check, {counts[Freshness.FRESH]:,} fresh, {counts[Freshness.MOVED]:,} "
            f"moved (the same code, elsewhere), {summary.unchecked:,} not checked since their last edit.</p>"
        )
    else:
        tally = "<p>No note of this project is anchored to code yet.</p>"
    body = (
        f"<h1>Freshness of {bdi(slug)}</h1>{_project_nav(slug, 'freshness')}"
        f'<section aria-labelledby="stale"><h2 id="stale">To re-check ({len(summary.stale)})</h2>{table}</section>'
        f'<section aria-labelledby="anchored"><h2 id="anchored">Anchored notes</h2>{tally}'
        '<p class="muted">Verdicts come from <code>notewell check</code> in a checkout of the code and from agents '
        "whose get_context sends checkFreshness: only paths and hashes reach the server, never code. A note edited "
        "or re-anchored since its last check counts as not checked.</p></section>"
    )
    return shell(f"Freshness of {slug}", body, viewer)


def search_page(viewer: Viewer, slug: str, query: str, outcome: SearchOutcome | None) -> str:
    form = (
        f'<form method="get" action="{project_href(slug, "search")}" class="card" role="search">'
        f'<label for="q">Search {bdi(slug)}</label><input id="q" name="q" type="search" value="{escape(query)}" '
        'required><button type="submit">Search</button></form>'
    )
    results = ""
    if outcome is not None:
        items = "".join(
            f'<li><a href="{note_href(hit.note.id)}">{bdi(hit.note.title)}</a> '
            f'<span class="meta">{escape(hit.note.type.value)} · {_status(hit.note.status.value)} · '
            f'{when(hit.note.updated_at)}</span><br><span class="muted">{bdi(hit.snippet)}</span></li>'
            for hit in outcome.hits
        )
        mode = f'<p class="meta">{len(outcome.hits)} found by {escape(outcome.mode.value)} search.</p>'
        results = f'<section>{mode}<ul class="notes">{items}</ul></section>' if items else f"<section>{mode}</section>"
    body = f"<h1>Search {bdi(slug)}</h1>{_project_nav(slug, 'search')}{form}{results}"
    return shell(f"Search {slug}", body, viewer)


# ----- a note --------------------------------------------------------------------------------------------------


def diff_lines(old: str, new: str) -> str:
    """A line diff as <del>/<ins> lines, unchanged lines kept as context (3 each side)."""
    out: list[str] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            out.append(f'<span class="muted">{escape(line)}</span>\n')
        elif line.startswith("+"):
            out.append(f"<ins>{text(line)}</ins>")
        elif line.startswith("-"):
            out.append(f"<del>{text(line)}</del>")
        else:
            out.append(f"{text(line)}\n")
    return f'<pre class="diff">{"".join(out)}</pre>' if out else '<p class="muted">Body unchanged.</p>'


def _field_changes(old: Note, new: Note) -> str:
    changed = []
    for label, before, after in (
        ("title", old.title, new.title), ("type", old.type.value, new.type.value),
        ("status", old.status.value, new.status.value), ("tags", ", ".join(old.tags), ", ".join(new.tags)),
        ("importance", str(old.importance), str(new.importance)), ("canonical", str(old.canonical), str(new.canonical)),
        ("deleted", "yes" if old.is_deleted else "no", "yes" if new.is_deleted else "no"),
    ):  # fmt: skip
        if before != after:
            changed.append(f"<li>{label}: <del>{bdi(before)}</del> → <ins>{bdi(after)}</ins></li>")
    return f"<ul>{''.join(changed)}</ul>" if changed else ""


def _chain_list(notes: Sequence[Note], heading: str) -> str:
    if not notes:
        return ""
    items = "".join(
        f'<li><a href="{note_href(n.id)}">{bdi(n.title)}</a> <span class="meta">{_status(n.status.value)} · '
        f"v{n.version} · {when(n.updated_at)}</span></li>"
        for n in notes
    )
    return f'<h3>{escape(heading)}</h3><ul class="notes">{items}</ul>'


def _note_actions(viewer: Viewer, note: Note) -> str:
    if not viewer.writable:
        return ""
    action = f"{note_href(note.id)}/resolve"
    if note.is_deleted:
        buttons = _button_form(viewer, action, "Restore", css="primary", action_="restore", version=note.version)
        return f'<section aria-labelledby="act"><h2 id="act">Change</h2>{buttons}</section>'
    buttons = f'<p><a href="{note_href(note.id)}/edit">Edit</a></p>'
    if note.status is NoteStatus.DISPUTED:
        buttons += _button_form(viewer, action, "Keep it: mark current", css="primary", action_="confirm",
                                version=note.version)  # fmt: skip
    if note.status is not NoteStatus.HISTORICAL and note.status is not NoteStatus.SUPERSEDED:
        buttons += _button_form(viewer, action, "Mark historical", action_="historical", version=note.version)
    if note.superseded_by and note.status is not NoteStatus.SUPERSEDED:
        buttons += _button_form(viewer, action, "Finish: the newer note replaces it", action_="finish",
                                version=note.version)  # fmt: skip
    buttons += _button_form(viewer, action, "Delete", css="danger", action_="delete", version=note.version)
    supersede = ""
    if note.status is not NoteStatus.SUPERSEDED:
        supersede = (
            f'<form method="post" action="{note_href(note.id)}/supersede">{_hidden(viewer, version=note.version)}'
            '<label for="by">Replaced by (id or ref of the note that supersedes this one)</label>'
            f'<input id="by" name="by" type="text" required pattern="{_ID_OR_REF}" '
            'spellcheck="false" autocomplete="off"><button type="submit">Supersede</button></form>'
        )
    return f'<section aria-labelledby="act"><h2 id="act">Change</h2>{buttons}{supersede}</section>'


def note_page(viewer: Viewer, page: NotePage, *, flash: str | None = None) -> str:
    note = page.view.note
    slug = page.view.project
    tags = "".join(f'<span class="tag">{bdi(t)}</span>' for t in note.tags)
    links = "".join(
        f'<li>{text(link.relation)}: <a href="{note_href(link.target)}">{escape(link.target)}</a></li>'
        for link in note.links
    )
    deleted = f'<p role="status">Deleted {when(note.deleted_at)}.</p>' if note.is_deleted else ""
    facts = (
        f'<p class="meta">{escape(note.type.value)} · {_status(note.status.value)} · v{note.version} · '
        f"importance {note.importance}{' · canonical' if note.canonical else ''} · updated {when(note.updated_at)} "
        f"by {viewer.author(note.author)} · created {when(note.created_at)} · in "
        f'<a href="{project_href(slug)}">{bdi(slug)}</a> · <code>{escape(note.id)}</code>{_ref_of(note.id)}</p>'
    )
    history = []
    newer = note
    for revision in page.revisions:
        history.append(
            f"<details><summary>v{revision.version} → v{newer.version}, {when(newer.updated_at)} by "
            f"{viewer.author(newer.author)}</summary>{_field_changes(revision, newer)}"
            f"{diff_lines(revision.body, newer.body)}</details>"
        )
        newer = revision
    if page.revisions and not page.more_revisions and page.revisions[-1].version == 1:
        history.append(f'<p class="muted">v1 created {when(page.revisions[-1].created_at)}.</p>')
    elif page.more_revisions:
        history.append('<p class="muted">Older versions exist; list_note_revisions pages through them.</p>')
    body = (
        f"<h1>{bdi(note.title)}</h1>{deleted}<section>{facts}"
        f"{'<p>' + tags + '</p>' if tags else ''}<pre>{text(note.body)}</pre>"
        f"{'<h3>Links</h3><ul>' + links + '</ul>' if links else ''}</section>"
        f'<section aria-labelledby="chain"><h2 id="chain">Supersession</h2>'
        f"{_chain_list(page.newer, 'Replaced by') + _chain_list(page.older, 'Replaces') or '<p>Nothing.</p>'}"
        f"</section>"
        f'<section aria-labelledby="hist"><h2 id="hist">History</h2>{"".join(history) or "<p>First version.</p>"}'
        f"</section>{_note_actions(viewer, note)}"
    )
    return shell(note.title or note.id, body, viewer, flash=flash)


@dataclass(frozen=True, slots=True)
class EditForm:
    version: int  # the version the person started from
    title: str
    body: str
    type: str
    status: str
    tags: str
    importance: int
    canonical: bool


def form_of(note: Note) -> EditForm:
    return EditForm(note.version, note.title, note.body, note.type.value, note.status.value, ", ".join(note.tags),
                    note.importance, note.canonical)  # fmt: skip


def edit_page(
    viewer: Viewer, note: Note, form: EditForm, *, problem: str | None = None, base: Note | None = None
) -> str:
    """The edit form. With `base` (the version the person started from, after a refused stale save), the other
    change is shown as a diff from it to the current note, and the form carries the person's text on the current
    version: saving again applies it on top, after they have merged what they want to keep."""
    types = "".join(
        f'<option value="{t.value}"{" selected" if t.value == form.type else ""}>{t.value}</option>' for t in NoteType
    )
    statuses = "".join(
        f'<option value="{s.value}"{" selected" if s.value == form.status else ""}>{s.value}</option>'
        for s in NoteStatus
        if s is not NoteStatus.SUPERSEDED or form.status == s.value
    )
    alert = f'<p role="alert" id="problem">{text(problem)}</p>' if problem else ""
    other = ""
    if base is not None:
        other = (
            f'<section aria-labelledby="other"><h2 id="other">The other change (v{base.version} → v{note.version}, '
            f"by {viewer.author(note.author)}, {when(note.updated_at)})</h2>{_field_changes(base, note)}"
            f"{diff_lines(base.body, note.body)}<h3>Your text against the current version</h3>"
            f"{diff_lines(note.body, form.body)}<p>The form below holds your text. Merge what you want to keep from "
            f"the other change, then save: it applies on top of v{note.version}.</p></section>"
        )
    body = (
        f"<h1>Edit {bdi(note.title)}</h1>{alert}{other}"
        f'<form method="post" action="{note_href(note.id)}/edit" class="card">'
        f"{_hidden(viewer, version=form.version)}"
        f'<label for="title">Title</label><input id="title" name="title" type="text" value="{escape(form.title)}" '
        'required maxlength="200">'
        f'<label for="body">Body (Markdown)</label><textarea id="body" name="body">\n{escape(form.body)}</textarea>'
        f'<div class="row"><div><label for="type">Type</label><select id="type" name="type">{types}</select></div>'
        f'<div><label for="status">Status</label><select id="status" name="status">{statuses}</select></div>'
        f'<div><label for="importance">Importance (1–5)</label><input id="importance" name="importance" '
        f'type="number" min="1" max="5" value="{form.importance}"></div></div>'
        f'<label for="tags">Tags (comma separated)</label><input id="tags" name="tags" type="text" '
        f'value="{escape(form.tags)}">'
        f'<label><input type="checkbox" name="canonical" value="1"{" checked" if form.canonical else ""}> '
        "Canonical: the authoritative note on its topic</label>"
        f'<button class="primary" type="submit">Save as v{note.version + 1}</button> '
        f'<a href="{note_href(note.id)}">Cancel</a></form>'
    )
    return shell(f"Edit {note.title}", body, viewer)
