"""OAuth 2.1 rules that need no I/O: the issuer, the discovery documents, the 401 challenge, redirect URIs, PKCE.

Pinned choices (the specs leave them open; tests assert them): scopes `notes:read` and `notes:write`; the issuer is
a configured string, never derived from a request; redirect URIs are kept and compared as the raw strings received,
loopback ones matching on everything but the port (RFC 8252 §7.3); PKCE is S256 only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from notewell.domain.errors import InvalidArgumentError

READ_SCOPE = "notes:read"
WRITE_SCOPE = "notes:write"
SCOPES = (READ_SCOPE, WRITE_SCOPE)
RESOURCE_PATH = "/mcp"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource" + RESOURCE_PATH
AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"

_LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")
LOOPBACK = re.compile(r"^http://(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?(?=[/?]|$)")
# RFC 7636 §4.1: 43-128 unreserved characters; an S256 challenge is the base64url of 32 bytes: 43 of them.
PKCE_TEXT = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


def canonical_issuer(text: str) -> str:
    """The issuer as every document and redirect carries it, byte for byte: scheme and host lower-cased, no default
    port, no path, no trailing slash. https, or http on a loopback host (a local `notewell serve`).

    Raises:
        InvalidArgumentError: anything else, saying what to set.
    """
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidArgumentError(f"The issuer {text!r} is not a URL: {exc}.") from None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise InvalidArgumentError(
            f"The issuer {text!r} must be only scheme and host, e.g. 'https://notes.example.com'."
        )
    if parts.path not in ("", "/"):
        raise InvalidArgumentError(
            f"The issuer {text!r} has a path; well-known documents sit at the host root, so use the bare origin."
        )
    bracketed = f"[{host}]" if ":" in host else host
    if scheme == "http" and bracketed not in _LOOPBACK_HOSTS:
        raise InvalidArgumentError(f"The issuer {text!r} must be https (plain http only on a loopback address).")
    if scheme not in ("http", "https") or not host:
        raise InvalidArgumentError(f"The issuer {text!r} must be an https URL with a host.")
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{bracketed}" + (f":{port}" if port is not None and port != default else "")


def resource_url(issuer: str) -> str:
    return issuer + RESOURCE_PATH


def protected_resource_metadata(issuer: str) -> dict[str, object]:
    """RFC 9728 §2: what /mcp is and which authorization server issues its tokens."""
    return {
        "resource": resource_url(issuer), "authorization_servers": [issuer], "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"], "resource_name": "Notewell",
    }  # fmt: skip


def authorization_server_metadata(issuer: str, *, client_metadata_documents: bool = False) -> dict[str, object]:
    """RFC 8414 §2, every default made explicit (an omitted grant or auth-method list means something else)."""
    metadata: dict[str, object] = {
        "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register", "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"], "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"], "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
    }  # fmt: skip
    if client_metadata_documents:
        metadata["client_id_metadata_document_supported"] = True
    return metadata


def challenge(issuer: str, *, error: str | None = None, description: str | None = None) -> str:
    """The WWW-Authenticate value of a 401 from /mcp (RFC 6750 §3, RFC 9728 §5.1): where to discover how to sign
    in, and the scopes to ask for; `error` only when a credential was sent and refused."""
    value = f'Bearer resource_metadata="{issuer}{PROTECTED_RESOURCE_PATH}", scope="{" ".join(SCOPES)}"'
    if error is not None:
        value += f', error="{error}"'
        if description:
            value += f', error_description="{description.replace(chr(34), chr(39))}"'
    return value


def redirect_matches(registered: str, requested: str) -> bool:
    """Byte for byte, except that a loopback URI may name any port (a native client picks a free one)."""
    if registered == requested:
        return True
    mine, theirs = LOOPBACK.match(registered), LOOPBACK.match(requested)
    if mine is None or theirs is None or mine.group(1) != theirs.group(1):
        return False
    if theirs.group(2) is not None and not 0 < int(theirs.group(2)) < 65_536:
        return False
    return registered[mine.end() :] == requested[theirs.end() :]


# ----- URLs as a browser reads them (WHATWG URL Standard) ------------------------------------------------------------

# Where urllib and a browser disagree about an http(s) URL, refuse it: a backslash is a slash to a browser, so
# `https://evil.example\.good.example/cb` goes to evil.example; `%2e` is a dot in a path segment; a host is
# percent-decoded and IDNA-mapped; a host ending in a number is an IPv4 address in any base. Tabs and newlines,
# which a browser silently drops, are refused by the callers' whitespace check.
_FORBIDDEN_HOST = frozenset(" #%/:<>?@[\\]^|")  # WHATWG forbidden host code points; '%' since browsers decode it
_DOT_SEGMENTS = (".", "..")


@dataclass(frozen=True, slots=True)
class BrowserUrl:
    """An http(s) URL read the way a browser reads it; `host` is ASCII: punycode for a name (IDNA), brackets round
    an IPv6 address."""

    scheme: str
    host: str
    port: int | None
    path: str

    @property
    def origin_host(self) -> str:
        """The host with its port, as it names the site the browser will go to."""
        return self.host + (f":{self.port}" if self.port is not None else "")


class UntrustedUrlError(ValueError):
    """Why a URL cannot be trusted to mean what it says (the message is a clause: callers add the subject)."""


def browser_url(text: str) -> BrowserUrl:
    """`text` as a browser parses it, or UntrustedUrlError where urllib and the WHATWG parser could disagree.

    Raises:
        UntrustedUrlError: backslashes, a missing '//', user information, a host that is not a clean name,
            dotted-decimal IPv4 or bracketed IPv6, a bad port, or '.'/'..' path segments in any spelling (`%2e%2e`).
    """
    if "\\" in text:
        raise UntrustedUrlError("has a backslash, which browsers read as '/'")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise UntrustedUrlError("is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not text[len(parts.scheme) :].startswith("://"):
        raise UntrustedUrlError("must start with https:// (or http:// on a loopback host)")
    if "@" in parts.netloc:
        raise UntrustedUrlError("has user information")
    raw_host = parts.netloc.rsplit(":", 1)[0] if not parts.netloc.endswith("]") else parts.netloc
    if raw_host.startswith("["):
        try:
            host = f"[{ipaddress.IPv6Address(raw_host[1:-1]).compressed}]"
        except ValueError:
            raise UntrustedUrlError("has a malformed IPv6 host") from None
    else:
        host = _ascii_host(raw_host)
    if any(segment.lower().replace("%2e", ".") in _DOT_SEGMENTS for segment in parts.path.split("/")):
        raise UntrustedUrlError("has a '.' or '..' path segment (percent-encoded ones count)")
    return BrowserUrl(parts.scheme, host, port, parts.path)


def _ascii_host(raw: str) -> str:
    if not raw or any(ch in _FORBIDDEN_HOST or ord(ch) < 0x21 or ord(ch) == 0x7F for ch in raw):
        raise UntrustedUrlError("has an empty host or one with characters a browser would change")
    try:
        host = raw.encode("idna").decode("ascii").lower()  # stdlib IDNA 2003; browsers map by UTS 46, close enough
    except UnicodeError:
        raise UntrustedUrlError("has a host name that is not a valid internationalised name") from None
    last = host.rstrip(".").rsplit(".", 1)[-1]
    if last.isdigit() or re.fullmatch(r"0x[0-9a-f]*", last):  # WHATWG "ends in a number": an IPv4 address
        try:
            if str(ipaddress.IPv4Address(host)) == host:
                return host
        except ValueError:
            pass
        raise UntrustedUrlError("has a numeric host not written as four decimal numbers (a browser reads it otherwise)")
    return host


def url_host(text: str) -> str | None:
    """The ASCII host (punycode, with port) a browser would go to for `text`, or None when it is not a URL one
    can trust to be read the same way."""
    try:
        return browser_url(text).origin_host
    except UntrustedUrlError:
        return None


# Private-use callbacks (RFC 8252 §7.1) of native clients in wide use, accepted by exact string only: Cursor's
# registration sends this beside its https and loopback callbacks, and refusing one URI refuses the client. The
# code it receives is bound to the client's PKCE verifier, as a loopback one is (pinned; other schemes stay out).
KNOWN_NATIVE_CALLBACKS = frozenset({"cursor://anysphere.cursor-mcp/oauth/callback"})


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` cannot be registered as a redirect URI, or None: https with a host, or http on a loopback host
    (MCP: "localhost or HTTPS"), or a known native client's own callback; no fragment, no userinfo, no relative or
    dot-segment path."""
    if isinstance(uri, str) and uri in KNOWN_NATIVE_CALLBACKS:
        return None
    if not isinstance(uri, str) or not uri or len(uri) > 2_000:
        return "a redirect URI must be a non-empty string of at most 2,000 characters"
    if any(ch.isspace() or ord(ch) < 0x20 for ch in uri):
        return f"{uri[:80]!r} contains whitespace or control characters"
    if "#" in uri:
        return f"{uri[:80]!r} has a fragment; redirect URIs may not"
    try:
        parts = browser_url(uri)  # as the browser that follows the redirect will read it
    except UntrustedUrlError as exc:
        return f"{uri[:80]!r} {exc}"
    if "*" in uri:
        return f"{uri[:80]!r} has a wildcard; register each redirect URI exactly"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and LOOPBACK.match(uri):
        return None
    return f"{uri[:80]!r} is neither https nor http on 127.0.0.1, [::1] or localhost"


def pkce_challenge_problem(challenge: str | None, method: str | None) -> str | None:
    if not challenge:
        return "code_challenge is required (PKCE with S256)"
    if method != "S256":
        return "code_challenge_method must be S256 (plain and an omitted method are refused)"
    if not S256_CHALLENGE.fullmatch(challenge):
        return "code_challenge must be the 43-character base64url SHA-256 of the verifier"
    return None


def pkce_verifier_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 §4.6 for S256, in constant time; a verifier of the wrong length or alphabet never matches."""
    if not PKCE_TEXT.fullmatch(verifier):
        return False
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()
    return hmac.compare_digest(digest, challenge)


def resource_matches(requested: str, issuer: str) -> bool:
    """RFC 8707: the resource a client names must be this server's /mcp; scheme and host compare without case."""
    try:
        parts = urlsplit(requested)
    except ValueError:
        return False
    if parts.fragment or "#" in requested or not parts.scheme:
        return False
    normalised = f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}" + (
        f"?{parts.query}" if parts.query else ""
    )
    return normalised == resource_url(issuer)


def scopes_problem(requested: str | None) -> str | None:
    """Why a requested scope string cannot be granted, or None (absent means every scope)."""
    if requested is None:
        return None
    unknown = [scope for scope in requested.split(" ") if scope not in SCOPES]
    if unknown or not requested.strip():
        return f"scope {requested[:100]!r} is not one of {' '.join(SCOPES)}"
    return None


def granted_scopes(requested: str | None, *, read_only: bool) -> tuple[str, ...]:
    """What a grant holds: the requested scopes (all when none are named), narrowed to reading for a read-only
    approver."""
    asked = SCOPES if requested is None else tuple(s for s in SCOPES if s in requested.split(" "))
    return tuple(s for s in asked if not (read_only and s == WRITE_SCOPE)) or (READ_SCOPE,)


# ----- errors and client registration (RFC 7591) ------------------------------------------------------------------


class OAuthError(Exception):
    """An OAuth error answer: `error` is the RFC's code, `description` says what to do; `status` the HTTP status."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.status = status
        self.error = error
        self.description = description

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


MAX_REGISTRATION_BYTES = 16 * 1024
MAX_REDIRECT_URIS = 10
MAX_CLIENT_NAME_CHARS = 200
GRANT_TYPES = ("authorization_code", "refresh_token")


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


def _metadata_error(description: str) -> OAuthError:
    return OAuthError(400, "invalid_client_metadata", description)


def registration(document: object) -> dict[str, object]:
    """The client metadata Notewell keeps from a registration request, validated (RFC 7591 §2, §3.2.2).

    Public clients only: whatever `token_endpoint_auth_method` is asked for, the client is registered with "none"
    and gets no secret (RFC 7591 §3.2.1 lets the server replace a value). Redirect URIs are kept as the raw strings
    received, in order.

    Raises:
        OAuthError: invalid_request, invalid_redirect_uri or invalid_client_metadata, saying what to fix.
    """
    if not isinstance(document, dict) or not document:
        raise OAuthError(400, "invalid_request", "Send the client metadata as a non-empty JSON object.")
    if _has_lone_surrogate(document):  # JSON's \ud800 escapes decode to text no store, page or JSON encoder takes
        raise _metadata_error("The metadata holds a lone surrogate escape (such as \\ud800); send valid Unicode text.")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise OAuthError(400, "invalid_redirect_uri", "redirect_uris is required: a list of at least one URI.")
    if len(uris) > MAX_REDIRECT_URIS:
        raise _metadata_error(f"redirect_uris lists {len(uris)} URIs; register at most {MAX_REDIRECT_URIS}.")
    for uri in uris:
        problem = redirect_uri_problem(uri) if isinstance(uri, str) else "every redirect URI must be a string"
        if problem is not None:
            raise OAuthError(400, "invalid_redirect_uri", problem[:1].upper() + problem[1:] + ".")
    name = document.get("client_name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > MAX_CLIENT_NAME_CHARS):
        raise _metadata_error(f"client_name must be text of 1 to {MAX_CLIENT_NAME_CHARS} characters.")
    grants = document.get("grant_types", list(GRANT_TYPES))
    if not isinstance(grants, list) or not grants or any(g not in GRANT_TYPES for g in grants):
        raise _metadata_error("grant_types may hold only authorization_code and refresh_token.")
    if "authorization_code" not in grants:
        raise _metadata_error("grant_types must include authorization_code: Notewell issues tokens no other way.")
    responses = document.get("response_types", ["code"])
    if responses != ["code"]:
        raise _metadata_error('response_types must be ["code"] (the authorization code flow with PKCE).')
    scope = document.get("scope")
    if scope is not None and (not isinstance(scope, str) or scopes_problem(scope) is not None):
        raise _metadata_error(f"scope must name only {' and '.join(SCOPES)}, separated by one space.")
    kind = document.get("application_type", "native")
    if kind not in ("native", "web"):
        raise _metadata_error("application_type must be native or web.")
    kept: dict[str, object] = {
        "redirect_uris": list(uris), "grant_types": list(dict.fromkeys(grants)), "response_types": ["code"],
        "token_endpoint_auth_method": "none", "application_type": kind,
    }  # fmt: skip
    if name is not None:
        kept["client_name"] = name.strip()
    if scope is not None:
        kept["scope"] = scope
    return kept


# ----- client ID metadata documents (CIMD draft-00) ----------------------------------------------------------------

CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024  # §6.6
CLIENT_DOCUMENT_MIN_CACHE = 5 * 60  # seconds: §4.4, Cache-Control clamped to 5 min - 24 h
CLIENT_DOCUMENT_MAX_CACHE = 24 * 60 * 60


def client_document_url_problem(url: str) -> str | None:
    """Why `url` cannot be a client_id metadata document URL, or None: https, a host, a path other than '/', no
    fragment, user information or dot segments (§3)."""
    if len(url) > 2_000:
        return "the client_id URL is too long"
    if "#" in url or "@" in url.partition("?")[0]:
        return "a client_id URL may not have a fragment or user information"
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        return "a client_id URL may not contain whitespace or control characters"
    try:
        parts = browser_url(url)  # the URL fetched and the host shown must be the ones a browser would see
    except UntrustedUrlError as exc:
        return f"the client_id URL {exc}"
    if parts.scheme != "https":
        return "a client_id URL must be https with a host"
    if parts.path in ("", "/"):
        return "a client_id URL must have a path"
    return None


def client_document(url: str, document: object) -> dict[str, object]:
    """A fetched client metadata document as Notewell keeps a client: its client_id must be the URL itself (simple
    string comparison, §4.1), it must be a public client, and the rest passes registration's checks.

    Raises:
        OAuthError: what is wrong with the document.
    """
    if not isinstance(document, dict) or document.get("client_id") != url:
        raise _metadata_error("The client's metadata document does not name its own URL as client_id.")
    if document.get("token_endpoint_auth_method", "none") != "none":
        raise _metadata_error("The client's metadata document asks for a client secret; only public clients.")
    kept = registration({k: v for k, v in document.items() if k != "token_endpoint_auth_method"})
    return {**kept, "client_id": url}


def cache_seconds(max_age: int | None) -> int:
    return min(CLIENT_DOCUMENT_MAX_CACHE, max(CLIENT_DOCUMENT_MIN_CACHE, max_age or 0))
