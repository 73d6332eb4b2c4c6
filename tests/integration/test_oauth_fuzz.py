"""Every OAuth route, with generated and broken input: an answer below 500, and an OAuth error object where the
route answers JSON errors.

The authorization server's counterpart of test_mcp_fuzz.py and test_console_fuzz.py. Each route gets requests
whose every parameter is what a real client sends (a registered client, a fresh code, the consent page's own
CSRF token), or broken (EDGE_STRINGS, lone surrogates as the bytes a careless client sends, wrong JSON types,
huge arrays, deep nesting), or missing, or repeated; bodies in the wrong encoding and content type too. Through
`serve`'s app (build_app) on both stores and through the Lambda functions' apps (build_oauth_app behind Mangum,
as functions/oauth/app.py serves them) on DynamoDB. Each request comes from an address of its own, so the
per-address budgets (guard.RateLimit) never answer for the route. Derandomized: a fixed seed and count per route.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.consent import csrf_cookie_name
from notewell.entrypoints.http import OAUTH_FUNCTIONS, build_app, build_oauth_app, oauth_rates
from notewell.entrypoints.lambda_asgi import invoke_asgi
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import ClientDocument, ClientDocumentError, Store
from notewell.services.oauth import Consent, Redirect
from tests.integration.test_lambda_oauth import in_own_loop
from tests.integration.test_oauth_client_documents import CLIENT, claude_document
from tests.support.fuzz import EDGE_STRINGS, WRONG_TYPES
from tests.support.mcp_harness import make_keys
from tests.support.oauth import CHALLENGE, VERIFIER

SEED = 38
SERVE_REQUESTS = {"sqlite": 90, "dynamodb": 50}  # per route (moto is slower); /register takes 100 an hour
LAMBDA_REQUESTS = 40  # per route: a Lambda invocation builds its app and runs its lifespan each time
SERVE_ISSUER = "http://testserver"
LAMBDA_HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
LAMBDA_ISSUER = f"https://{LAMBDA_HOST}"
LOOPBACK = "http://127.0.0.1:3030/cb"
ODD_CLIENT = "https://odd.example/client.json"  # serves a document full of broken values
GONE_CLIENT = "https://gone.example/client.json"  # its fetch fails

BROKEN = [
    *EDGE_STRINGS, "\ud800", "a\udfffb", "\udc80\ud800", "¹²³", "é", "€" * 50, "\x7f", "%", "%ZZ", "a=b&c=d",
    "9" * 5_000, "https://", "https://a/b#c", "http://127.0.0.1:99999/cb", "http://[::1", "nw_rt_.", "nw_rt_x.y",
    "cursor://anysphere.cursor-mcp/oauth/callback", CLIENT + "/../x", ODD_CLIENT, GONE_CLIENT,
]  # fmt: skip
MISSING = object()
JSON_ERROR_ROUTES = ("/register", "/token")
REGISTRATION_FIELDS = (
    "redirect_uris", "client_name", "grant_types", "response_types", "scope", "application_type",
    "token_endpoint_auth_method", "client_uri", "logo_uri", "contacts", "software_id", "software_version",
    "tos_uri", "policy_uri", "jwks_uri", "client_id",
)  # fmt: skip
AUTHORIZE_PARAMS = (
    "response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "resource",
    "scope",
)  # fmt: skip
CONSENT_FIELDS = ("txn", "csrf", "api_key", "decision")
TOKEN_FIELDS = ("grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "client_id", "resource",
                "scope")  # fmt: skip
WELL_KNOWN = ("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
              "/.well-known/oauth-protected-resource/mcp", "/.well-known/openid-configuration")  # fmt: skip


def encode(value: str) -> str:
    """Percent-encoded UTF-8; a lone surrogate goes as the three bytes a careless client sends for it."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def pairs_of(values: list[tuple[str, str]]) -> str:
    return "&".join(f"{encode(name)}={encode(value)}" for name, value in values)


@dataclass(frozen=True)
class Sent:
    method: str
    path: str  # percent-encoded
    query: str = ""  # percent-encoded
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class Got:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class Documents:
    """Client metadata documents without a network: one real-looking, one full of junk, every other URL fails."""

    def fetch(self, url: str) -> ClientDocument:
        # fmt: off
        served: dict[str, object] = {
            CLIENT: claude_document(),
            ODD_CLIENT: {"client_id": ODD_CLIENT, "client_name": "\ud800\u202eevil", "redirect_uris": [[], None],
                         "grant_types": "authorization_code", "token_endpoint_auth_method": 7},
        }
        # fmt: on
        if url not in served:
            raise ClientDocumentError("the document answered HTTP 404")
        return ClientDocument(json.dumps(served[url]).encode(), max_age=600)


def each_from_its_own_address(app: ASGIApp) -> ASGIApp:
    """Gives every request another client address, as RateLimit keys its budgets by it."""
    counter = itertools.count(1)

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            n = next(counter)
            scope = {**scope, "client": (f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}", 40000)}
        await app(scope, receive, send)

    return wrapped


@dataclass
class Fuzz:
    """Generates requests for each route from what the server handed out, sends them, and checks the answers."""

    rng: random.Random
    send: Callable[[Sent], Got]
    services: Services
    issuer: str
    key: str
    client_id: str = ""
    refresh_tokens: list[str] = field(default_factory=list)
    used_codes: list[str] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    fault: float = 0.3  # the chance that a value is broken or left out; drawn again for each request

    def __post_init__(self) -> None:
        created = self.send(self.json_post("/register", {"redirect_uris": [LOOPBACK], "client_name": "fuzz"}))
        assert created.status == 201, created.body
        self.client_id = json.loads(created.body)["client_id"]
        code = self.mint_code()
        form = {"grant_type": "authorization_code", "code": code, "client_id": self.client_id,
                "code_verifier": VERIFIER, "redirect_uri": LOOPBACK}  # fmt: skip
        redeemed = self.send(self.form_post("/token", list(form.items())))
        assert redeemed.status == 200, redeemed.body
        self.refresh_tokens.append(json.loads(redeemed.body)["refresh_token"])
        self.used_codes.append(code)

    # ----- building blocks --------------------------------------------------------------------------------------

    def json_post(self, path: str, document: object) -> Sent:
        return Sent("POST", path, headers={"content-type": "application/json"}, body=json.dumps(document).encode())

    def form_post(self, path: str, values: list[tuple[str, str]], headers: dict[str, str] | None = None) -> Sent:
        form = {"content-type": "application/x-www-form-urlencoded", **(headers or {})}
        return Sent("POST", path, headers=form, body=pairs_of(values).encode())

    def mint_code(self) -> str:
        """A fresh code for the registered client, approved through the service as the consent page would."""
        oauth = self.services.oauth
        assert oauth is not None
        request = {"response_type": "code", "client_id": self.client_id, "redirect_uri": LOOPBACK,
                   "code_challenge": CHALLENGE, "code_challenge_method": "S256"}  # fmt: skip
        consent = oauth.begin_authorization(list(request.items()))
        assert isinstance(consent, Consent)
        approved = oauth.decide({"txn": consent.txn, "csrf": consent.csrf, "api_key": self.key,
                                 "decision": "approve"}, consent.csrf, None)  # fmt: skip
        assert isinstance(approved, Redirect)
        return parse_qs(urlsplit(approved.location).query)["code"][0]

    def broken(self) -> object:
        """A broken value of any JSON type."""
        roll = self.rng.random()
        if roll < 0.5:
            return self.rng.choice(BROKEN)
        if roll < 0.8:
            return self.rng.choice(WRONG_TYPES)
        return [self.rng.choice(BROKEN) for _ in range(self.rng.randint(0, 3))]

    def text(self, likely: list[str]) -> object:
        """A query or form value: mostly what a real client sends, else broken, else left out."""
        roll = self.rng.random()
        if roll >= self.fault:
            return self.rng.choice(likely)
        if roll >= self.fault / 4:
            return self.rng.choice(BROKEN)
        return MISSING

    def fields(self, names: tuple[str, ...], likely: dict[str, list[str]]) -> list[tuple[str, str]]:
        """Each field drawn, then sometimes one repeated with another value and a stray field added."""
        values = [(name, value) for name in names if isinstance(value := self.text(likely[name]), str)]
        if values and self.rng.random() < 0.2:
            name = self.rng.choice(values)[0]
            again = self.rng.choice(likely[name] + [self.rng.choice(BROKEN)])
            values.insert(self.rng.randrange(len(values) + 1), (name, again))
        if self.rng.random() < 0.15:
            stray = self.rng.choice(BROKEN)
            values.append((stray[:20] or "x", stray))
        if self.rng.random() < 0.3:
            self.rng.shuffle(values)
        return values

    def check(self, route: str, sent: Sent) -> None:
        got = self.send(sent)
        shown = (sent.method, sent.path[:80], sent.query[:200], sent.headers, sent.body[:300], got.status, got.body)
        assert got.status < 500, shown
        self.outcomes[f"{route} {got.status}"] += 1
        if route == "/token":
            self.remember_tokens(got)
        if route in JSON_ERROR_ROUTES and got.status >= 400:
            assert got.headers.get("content-type", "").startswith("application/json"), shown
            error = json.loads(got.body)
            assert isinstance(error, dict) and isinstance(error.get("error"), str) and error["error"], shown
            assert isinstance(error.get("error_description", ""), str), shown
            assert got.headers.get("cache-control") == "no-store", shown

    # ----- one request per route --------------------------------------------------------------------------------

    def metadata(self) -> Sent:
        path = self.rng.choice(WELL_KNOWN) + self.rng.choice(
            ["", "", "", "/", "/mcp", "/mcp/", "/x", "/%00", "/..%2f..%2fetc", "//", "/%ED%A0%80", "/" + "a" * 3000]
        )
        query = self.rng.choice(["", "", "x=1", "resource=" + encode(self.issuer + "/mcp"),
                                 pairs_of([(str(self.rng.choice(BROKEN)), str(self.rng.choice(BROKEN)))])])  # fmt: skip
        method = self.rng.choice(["GET", "GET", "GET", "HEAD", "POST", "OPTIONS"])
        return Sent(method, path, query, headers={"mcp-protocol-version": self.rng.choice(["2026-07-28", "\x7f"])})

    def registration_document(self) -> dict[str, object]:
        likely: dict[str, list[object]] = {
            "redirect_uris": [[LOOPBACK], ["https://client.example.com/cb"], [LOOPBACK, "http://[::1]/cb"],
                              ["cursor://anysphere.cursor-mcp/oauth/callback"]],
            "client_name": ["Fuzz", "Claude Code"], "grant_types": [["authorization_code", "refresh_token"]],
            "response_types": [["code"]], "scope": ["notes:read notes:write", "notes:read"],
            "application_type": ["native", "web"], "token_endpoint_auth_method": ["none", "client_secret_basic"],
            "client_uri": ["https://client.example.com/"], "logo_uri": ["https://client.example.com/logo.png"],
            "contacts": [["ops@client.example.com"]], "software_id": ["fuzz"], "software_version": ["1.0"],
            "tos_uri": ["https://client.example.com/tos"], "policy_uri": ["https://client.example.com/policy"],
            "jwks_uri": ["https://client.example.com/jwks"], "client_id": ["client_x", CLIENT],
        }  # fmt: skip
        document: dict[str, object] = {}
        for name in REGISTRATION_FIELDS:
            roll = self.rng.random()
            if name == "redirect_uris" and roll < 0.7 or roll < 0.3:
                document[name] = self.rng.choice(likely[name])
            elif roll < 0.6 and name in ("redirect_uris", "client_name", "grant_types", "scope"):
                document[name] = self.broken()
        return document

    def register(self) -> Sent:
        kind = self.rng.choice(["document"] * 6 + ["huge", "deep", "raw_surrogate", "not_object", "not_json"])
        headers = {"content-type": "application/json"}
        if self.rng.random() < 0.2:
            headers = {"content-type": self.rng.choice(["text/plain", "application/json; charset=latin-1",
                       "APPLICATION/JSON", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                       "application/json;;", "application/jsonx", ""])}  # fmt: skip
        document: object = self.registration_document()
        if kind == "huge":
            size = self.rng.choice([11, 300, 2_000])
            document = {"redirect_uris": [LOOPBACK] * size, "contacts": ["a"] * size}
        elif kind == "deep":  # spelled out: json.dumps itself stops at the interpreter's recursion limit
            depth = self.rng.choice([50, 1_000, 5_000])
            opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}")])
            nested = opener * depth + '"x"' + closer * depth
            body = f'{{"redirect_uris": ["{LOOPBACK}"], "{self.rng.choice(REGISTRATION_FIELDS)}": {nested}}}'
            return Sent("POST", "/register", headers=headers, body=body.encode())
        elif kind == "not_object":
            document = self.rng.choice([*WRONG_TYPES, *BROKEN[:20]])
        if kind == "raw_surrogate":  # the UTF-8-ish bytes of a lone surrogate, not its JSON escape
            body = json.dumps({"redirect_uris": [LOOPBACK], "client_name": "a\ud800b"}, ensure_ascii=False)
            return Sent("POST", "/register", headers=headers, body=body.encode("utf-8", "surrogatepass"))
        if kind == "not_json":
            raw = self.rng.choice([b"", b"{", b"\xff\xfe{}", b"redirect_uris=x", b"[" * 10_000, b"{}" * 3, b"\x00"])
            return Sent("POST", "/register", headers=headers, body=raw)
        return Sent("POST", "/register", headers=headers, body=json.dumps(document).encode())

    def authorize_query(self) -> list[tuple[str, str]]:
        likely = {
            "response_type": ["code"], "client_id": [self.client_id] * 3 + [CLIENT, ODD_CLIENT, GONE_CLIENT],
            "redirect_uri": [LOOPBACK, "http://127.0.0.1:9/cb", "https://claude.ai/api/mcp/auth_callback"],
            "state": ["s", "st-+/ é&x"], "code_challenge": [CHALLENGE], "code_challenge_method": ["S256", "plain"],
            "resource": [self.issuer + "/mcp"], "scope": ["notes:read notes:write", "notes:read"],
        }  # fmt: skip
        return self.fields(AUTHORIZE_PARAMS, likely)

    def authorize_get(self) -> Sent:
        return Sent("GET", "/authorize", pairs_of(self.authorize_query()))

    def consent(self) -> tuple[str, str, str]:
        """A real consent page's txn, CSRF field and cookie, fetched as a browser would."""
        query = {"response_type": "code", "client_id": self.client_id, "redirect_uri": LOOPBACK, "state": "s",
                 "code_challenge": CHALLENGE, "code_challenge_method": "S256"}  # fmt: skip
        page = self.send(Sent("GET", "/authorize", pairs_of(list(query.items()))))
        assert page.status == 200, page.body
        hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.body.decode()))
        return hidden["txn"], hidden["csrf"], page.headers["set-cookie"].split(";")[0]

    def authorize_post(self) -> Sent:
        txn, csrf, cookie = self.consent()
        likely = {"txn": [txn], "csrf": [csrf], "api_key": [self.key, "nwk_wrong"], "decision": ["approve", "deny"]}
        values = self.fields(CONSENT_FIELDS, likely)
        headers: dict[str, str] = {}
        cookie = self.rng.choice([cookie] * 3 + ["", f"{csrf_cookie_name(self.issuer)}=x", "a=b; c"])
        if cookie:
            headers["cookie"] = cookie
        origin = self.rng.choice([None, None, self.issuer, "null", "https://evil.example"])
        if origin is not None:
            headers["origin"] = origin
        if self.rng.random() < 0.15:  # the same fields in a body the page never sends
            kind = self.rng.choice(["multipart/form-data; boundary=b", "application/json", "text/plain"])
            body = self.body_as(kind, values)
            return Sent("POST", "/authorize", headers={**headers, "content-type": kind}, body=body)
        return self.form_post("/authorize", values, headers)

    def token(self) -> Sent:
        if self.rng.random() < 0.5:
            code = self.mint_code()
            self.used_codes.append(code)
        likely = {
            "grant_type": ["authorization_code", "refresh_token"], "code": self.used_codes[-3:],
            "code_verifier": [VERIFIER], "redirect_uri": [LOOPBACK], "refresh_token": self.refresh_tokens[-3:],
            "client_id": [self.client_id], "resource": [self.issuer + "/mcp"], "scope": ["notes:read", ""],
        }  # fmt: skip
        values = self.fields(TOKEN_FIELDS, likely)
        headers: dict[str, str] = {}
        if self.rng.random() < 0.1:
            secret = f"{self.client_id}:{self.rng.choice(BROKEN)}".encode("utf-8", "surrogatepass")
            headers["authorization"] = "Basic " + base64.b64encode(secret).decode()
        if self.rng.random() < 0.2:
            kind = self.rng.choice(["multipart/form-data; boundary=b", "application/json", "text/plain", ""])
            return Sent("POST", "/token", headers={**headers, "content-type": kind}, body=self.body_as(kind, values))
        return self.form_post("/token", values, headers)

    def body_as(self, kind: str, values: list[tuple[str, str]]) -> bytes:
        if kind.startswith("multipart"):
            parts = [f'--b\r\ncontent-disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
                     for name, value in values]  # fmt: skip
            return ("".join(parts) + "--b--\r\n").encode("utf-8", "surrogatepass")
        if kind == "application/json":
            return json.dumps(dict(values)).encode()
        return pairs_of(values).encode()

    def remember_tokens(self, got: Got) -> None:
        if got.status == 200 and got.headers.get("content-type", "").startswith("application/json"):
            issued = json.loads(got.body)
            if isinstance(issued, dict) and "refresh_token" in issued:
                self.refresh_tokens.append(issued["refresh_token"])

    def run(self, per_route: int) -> None:
        routes: dict[str, Callable[[], Sent]] = {
            "metadata": self.metadata, "/register": self.register, "GET /authorize": self.authorize_get,
            "POST /authorize": self.authorize_post, "/token": self.token,
        }  # fmt: skip
        for route, generate in routes.items():
            for _ in range(per_route):
                # Mostly-valid requests reach the checks deep in a route; mostly-broken ones the first ones.
                self.fault = self.rng.choice([0.05, 0.15, 0.4])
                self.check(route, generate())
        for route in routes:
            assert sum(n for outcome, n in self.outcomes.items() if outcome.startswith(route + " ")) == per_route
        assert any(o.startswith("/token 200") for o in self.outcomes), self.outcomes  # good input got through too
        assert any(o.startswith("/register 201") for o in self.outcomes), self.outcomes


def test_every_oauth_route_of_serve_answers_generated_and_broken_input_below_500_with_oauth_errors(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.params["store"]
    services = bootstrap(Settings(data_dir=tmp_path, issuer=SERVE_ISSUER), store=store, client_documents=Documents())
    key = make_keys(services).full
    app = build_app(build_server(services), services, allowed_hosts=["testserver"])
    with TestClient(each_from_its_own_address(app), base_url=SERVE_ISSUER, raise_server_exceptions=False,
                    follow_redirects=False) as client:  # fmt: skip

        def send(sent: Sent) -> Got:
            client.cookies.clear()  # each request carries exactly the cookie it was generated with
            url = sent.path + (f"?{sent.query}" if sent.query else "")
            answer = client.request(sent.method, url, headers=sent.headers, content=sent.body or None)
            return Got(answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.content)

        fuzz = Fuzz(random.Random(SEED), send, services, SERVE_ISSUER, key)
        fuzz.run(SERVE_REQUESTS[kind])


@pytest.mark.parametrize("store", ["dynamodb"], indirect=True)
def test_every_oauth_lambda_function_answers_generated_and_broken_input_below_500_with_oauth_errors(
    store: Store, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, issuer=LAMBDA_ISSUER, allowed_hosts=(LAMBDA_HOST,))
    services = bootstrap(settings, store=store, client_documents=Documents())
    key = make_keys(services).full
    rates = oauth_rates()  # kept per container, as functions/oauth/app.py keeps them
    function_of = {path: function for function, paths in OAUTH_FUNCTIONS.items() for path in paths}
    addresses = itertools.count(1)

    def send(sent: Sent) -> Got:
        # API Gateway routes a path the template lists to its function; an odd well-known path to none of them
        # would be API Gateway's own 404, so it goes to the metadata function to see what that function does.
        function = function_of.get(sent.path, "metadata")
        n = next(addresses)
        headers = {k: v for k, v in sent.headers.items() if k != "cookie"}
        event: dict[str, Any] = {
            "version": "2.0", "routeKey": "$default", "rawPath": sent.path, "rawQueryString": sent.query,
            "headers": {**headers, "host": LAMBDA_HOST},
            "requestContext": {
                "accountId": "123456789012", "apiId": "abc123defg", "domainName": LAMBDA_HOST,
                "domainPrefix": "abc123defg",
                "http": {"method": sent.method, "path": sent.path, "protocol": "HTTP/1.1",
                         "sourceIp": f"198.18.{n // 256 % 256}.{n % 256}", "userAgent": "fuzz"},
                "requestId": uuid.uuid4().hex, "routeKey": "$default", "stage": "$default",
                "time": "06/Dec/2026:04:00:00 +0000", "timeEpoch": 1796529600000,
            },
            "isBase64Encoded": True, "body": base64.b64encode(sent.body).decode(),
        }  # fmt: skip
        if "cookie" in sent.headers:
            event["cookies"] = [c.strip() for c in sent.headers["cookie"].split(";") if c.strip()]

        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            app = build_oauth_app(services, function, allowed_hosts=[LAMBDA_HOST], rates=rates)
            return invoke_asgi(app, event, context)

        answer = in_own_loop(handler, event)
        raw = answer.get("body") or ""
        body = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
        answered = {k.lower(): v for k, v in answer.get("headers", {}).items()}
        if answer.get("cookies"):
            answered["set-cookie"] = answer["cookies"][0]
        return Got(answer["statusCode"], answered, body)

    fuzz = Fuzz(random.Random(SEED), send, services, LAMBDA_ISSUER, key)
    fuzz.run(LAMBDA_REQUESTS)


# ----- what the fuzz found ------------------------------------------------------------------------------------------

DEEP_REGISTRATIONS = [
    b"[" * 5_000,  # never closed: the parser gives up on the depth before it sees the end
    b'{"redirect_uris": ["http://127.0.0.1:3030/cb"], "client_name": ' + b"[" * 5_000 + b"1" + b"]" * 5_000 + b"}",
    b'{"redirect_uris": ["http://127.0.0.1:3030/cb"], "contacts": ' + b'{"a":' * 2_000 + b"1" + b"}" * 2_000 + b"}",
]


@pytest.mark.parametrize("body", DEEP_REGISTRATIONS, ids=["unclosed_arrays", "deep_array", "deep_object"])
def test_registration_metadata_nested_deeper_than_the_parser_goes_is_invalid_request_not_a_500(
    store: Store, tmp_path: Path, body: bytes
) -> None:
    services = bootstrap(Settings(data_dir=tmp_path, issuer=SERVE_ISSUER), store=store, client_documents=Documents())
    app = build_app(build_server(services), services, allowed_hosts=["testserver"])
    with TestClient(app, base_url=SERVE_ISSUER, raise_server_exceptions=False) as client:
        refused = client.post("/register", content=body, headers={"content-type": "application/json"})
        function = build_oauth_app(services, "register", allowed_hosts=["testserver"])
    with TestClient(function, base_url=SERVE_ISSUER, raise_server_exceptions=False) as client:
        refused_by_the_function = client.post("/register", content=body, headers={"content-type": "application/json"})
    for answer in (refused, refused_by_the_function):
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_request", answer.text
        assert answer.headers["cache-control"] == "no-store"
