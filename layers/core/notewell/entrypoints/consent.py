"""The consent page of /authorize: plain, accessible HTML, every value escaped, no script, readable on a phone.

Every answer carries the headers that keep it from being framed, cached, referred or sniffed; the one inline
stylesheet is allowed by its hash, nothing else loads.
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from notewell.domain import oauth

if TYPE_CHECKING:
    from notewell.services.oauth import Consent

_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}"
    "main{max-width:34rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;"
    "box-shadow:0 1px 4px #0002}h1{font-size:1.35rem;margin-top:0}code{word-break:break-all}"
    "mark{background:#fff3b0;font-weight:600}.note{color:#596273;font-size:.9rem}"
    "label{display:block;font-weight:600;margin-top:1rem}input[type=password]{width:100%;box-sizing:border-box;"
    "font:inherit;padding:.6rem;margin:.3rem 0;border:1px solid #8a94a6;border-radius:8px}"
    "button{font:inherit;padding:.6rem 1.2rem;margin:.8rem .5rem 0 0;border-radius:8px;border:1px solid #1d4ed8}"
    ".allow{background:#1d4ed8;color:#fff}.deny{background:#fff;color:#1d4ed8}"
    "[role=alert]{color:#a40e26;font-weight:600}@media (max-width:36rem){main{margin:0;border-radius:0}}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
SECURITY_HEADERS = {
    "Content-Security-Policy": f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    # same-origin, not no-referrer: under no-referrer a browser posts the form with `Origin: null`, and the Origin
    # check then refuses every real approval (a headless-browser test found this). Nothing leaves for other sites.
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
SCOPE_WORDS = {oauth.READ_SCOPE: "read the notes it can reach", oauth.WRITE_SCOPE: "write and change notes"}


def csrf_cookie_name(issuer: str) -> str:
    """`__Host-` binds the cookie to this origin over https; plain http on loopback cannot carry that prefix."""
    return "__Host-nw_csrf" if issuer.startswith("https://") else "nw_csrf"


def csrf_cookie(issuer: str, value: str) -> str:
    secure = "; Secure" if issuer.startswith("https://") else ""
    return f"{csrf_cookie_name(issuer)}={value}; Path=/; HttpOnly; SameSite=Lax{secure}"


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body><main>{body}</main></body></html>"
    )


# Characters that change how the text around them reads, or do not show at all: bidi overrides (U+202E), zero
# widths (U+200B), controls (NUL), separators, surrogates, private-use and unassigned code points. A client names
# itself, so each is shown as its code point instead of doing its trick.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def shown(text: str) -> str:
    """`text` HTML-escaped, every invisible or reordering character written as its code point (`<U+202E>`)."""
    return "".join(
        f'<span class="cp">&lt;U+{ord(ch):04X}&gt;</span>'
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES or (unicodedata.category(ch) == "Zs" and ch != " ")
        else escape(ch)
        for ch in text
    )


def _uri_with_host_marked(uri: str) -> str:
    """The URI with the host a browser will go to marked, in ASCII (punycode): a look-alike Unicode name shows as
    the xn-- name it is."""
    netloc = urlsplit(uri).netloc
    host = netloc if uri in oauth.KNOWN_NATIVE_CALLBACKS else oauth.url_host(uri)
    start = uri.find(netloc) if netloc else -1
    if host is None or start < 0:
        return f"<code>{shown(uri)}</code>"
    return f"<code>{shown(uri[:start])}<mark>{escape(host)}</mark>{shown(uri[start + len(netloc) :])}</code>"


def consent_page(consent: Consent) -> str:
    name = shown(consent.client_name) if consent.client_name else f"a client ({shown(consent.client_id)})"
    scopes = "".join(f"<li>{escape(SCOPE_WORDS.get(s, s))}</li>" for s in consent.scopes)
    where = _uri_with_host_marked(consent.redirect_uri)
    if consent.loopback:
        where += '<p class="note">This address is on your own computer: only allow it if you just started '
        where += "this sign-in from an app you trust.</p>"
    document_host = oauth.url_host(consent.client_id) if consent.document_host else None  # punycode, as fetched
    if document_host:
        where += f'<p class="note">Its details come from <strong>{escape(document_host)}</strong>.</p>'
        if consent.loopback_only:
            where += '<p class="note" role="note">It can only answer to your own computer, so any program there '
            where += f"could claim to be it: allow only if you started this from {escape(document_host)}"
            where += "'s app.</p>"
    problem = f'<p role="alert" id="problem">{escape(consent.problem)} ' if consent.problem else ""
    if consent.problem:
        problem += f"({consent.attempts_left} attempts left)</p>"
    described = ' aria-describedby="problem"' if consent.problem else ""
    body = (
        f"<h1>Allow {name} to use your Notewell memory?</h1>"
        '<p class="note">The name is what the client calls itself; Notewell has not verified it.</p>'
        f"<p>It will receive access at {where}</p>"
        f"<p>It asks to:</p><ul>{scopes}</ul>"
        '<form method="post" action="/authorize">'
        f'<input type="hidden" name="txn" value="{escape(consent.txn)}">'
        f'<input type="hidden" name="csrf" value="{escape(consent.csrf)}">'
        '<label for="api_key">API key of the workspace it should use</label>'
        f'<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false"{described}>'
        '<p class="note">Create one with <code>notewell keys create</code>. A read-only key allows reading only; '
        "a key for one project allows that project only.</p>"
        f"{problem}"
        '<button class="allow" type="submit" name="decision" value="approve">Allow</button>'
        '<button class="deny" type="submit" name="decision" value="deny">Deny</button>'
        "</form>"
    )
    return _page("Allow access to Notewell", body)


def error_page(message: str, *, return_to: str | None = None) -> str:
    """A refusal the person reads; with `return_to`, a link back to the client carrying its error answer."""
    link = ""
    if return_to is not None:
        host = oauth.url_host(return_to) or return_to
        link = f'<p><a href="{escape(return_to)}">Return to {shown(host)}</a></p>'
    return _page("Sign-in cannot continue", f"<h1>Sign-in cannot continue</h1><p>{shown(message)}</p>{link}")
