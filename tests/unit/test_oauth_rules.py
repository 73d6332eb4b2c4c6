"""The pure OAuth rules: issuer, discovery documents, challenge, redirect URIs (with a property test of the
matcher), PKCE, resource and scopes. Test names follow the cases of the negative-test checklist."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.domain import oauth
from notewell.domain.errors import InvalidArgumentError
from tests.support.oauth import MISSPELLED_HTTPS_REDIRECTS

ISSUER = "https://api.example.com"


@pytest.mark.parametrize(
    ("configured", "canonical"),
    [
        ("https://API.Example.com", "https://api.example.com"),
        ("https://api.example.com/", "https://api.example.com"),
        ("https://api.example.com:443", "https://api.example.com"),
        ("https://api.example.com:8443", "https://api.example.com:8443"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://localhost:8765/", "http://localhost:8765"),
        ("http://[::1]:8765", "http://[::1]:8765"),
    ],
)
def test_the_issuer_is_one_fixed_string_without_trailing_slash(configured: str, canonical: str) -> None:
    assert oauth.canonical_issuer(configured) == canonical
    assert oauth.canonical_issuer(canonical) == canonical  # a fixed point: clients compare it byte for byte


@pytest.mark.parametrize(
    "configured",
    ["http://api.example.com", "https://api.example.com/prod", "https://api.example.com?x=1", "ftp://x.example",
     "https://user@api.example.com", "api.example.com", "https://", "https://api.example.com:99999"],
)  # fmt: skip
def test_an_issuer_that_clients_could_not_match_is_refused_with_what_to_set(configured: str) -> None:
    with pytest.raises(InvalidArgumentError, match="issuer"):
        oauth.canonical_issuer(configured)


def test_metadata_documents_name_one_issuer_and_every_default_explicitly() -> None:
    server = oauth.authorization_server_metadata(ISSUER)
    assert server["issuer"] == ISSUER and server["code_challenge_methods_supported"] == ["S256"]
    assert server["token_endpoint_auth_methods_supported"] == ["none"]
    assert server["response_types_supported"] == ["code"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert server["authorization_response_iss_parameter_supported"] is True
    assert "offline_access" not in server["scopes_supported"]  # type: ignore[operator]
    assert "client_id_metadata_document_supported" not in server
    resource = oauth.protected_resource_metadata(ISSUER)
    assert resource["resource"] == "https://api.example.com/mcp" and resource["authorization_servers"] == [ISSUER]


def test_the_challenge_names_the_metadata_and_scopes_and_an_error_only_when_a_credential_was_refused() -> None:
    bare = oauth.challenge(ISSUER)
    assert bare == (
        'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp", '
        'scope="notes:read notes:write"'
    )
    refused = oauth.challenge(ISSUER, error="invalid_token", description='the "key" is revoked')
    assert refused.startswith(bare) and 'error="invalid_token"' in refused and '"key"' not in refused


# ----- redirect URIs -------------------------------------------------------------------------------------------

REGISTERED = "https://client.example.com/cb"
LOOPBACK = "http://127.0.0.1:3030/cb"


@pytest.mark.parametrize("requested", MISSPELLED_HTTPS_REDIRECTS)
def test_a_registered_https_uri_matches_only_byte_for_byte(requested: str) -> None:
    assert oauth.redirect_matches(REGISTERED, REGISTERED)
    assert not oauth.redirect_matches(REGISTERED, requested)


@pytest.mark.parametrize("requested", ["http://127.0.0.1:53123/cb", "http://127.0.0.1/cb", LOOPBACK])
def test_a_loopback_uri_matches_on_any_port(requested: str) -> None:
    assert oauth.redirect_matches(LOOPBACK, requested)


@pytest.mark.parametrize(
    "requested",
    ["http://127.0.0.1:3030/cb2", "http://127.0.0.1:3030/cb?x=1", "HTTP://127.0.0.1:3030/cb",
     "http://127.000.000.001:3030/cb", "http://evil@127.0.0.1:3030/cb", "http://127.0.0.1:3030/x/../cb",
     "http://[::1]:3030/cb", "http://localhost:3030/cb", "https://127.0.0.1:3030/cb", "http://127.0.0.1:0/cb",
     "http://127.0.0.1:65536/cb", "http://127.0.0.1.evil.example/cb"],
)  # fmt: skip
def test_a_loopback_uri_differing_in_anything_but_the_port_does_not_match(requested: str) -> None:
    assert not oauth.redirect_matches(LOOPBACK, requested)


uri_text = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=0, max_size=30)


@given(path=uri_text, other=uri_text)
def test_property_a_non_loopback_uri_matches_nothing_but_itself(path: str, other: str) -> None:
    registered = "https://client.example.com/" + path
    requested = "https://client.example.com/" + other
    assert oauth.redirect_matches(registered, requested) == (path == other)


@given(host=st.sampled_from(["127.0.0.1", "[::1]", "localhost"]), port=st.integers(1, 65_535),
       path=uri_text.filter(lambda p: not p[:1].isdigit()), other=uri_text)  # fmt: skip
def test_property_a_loopback_uri_matches_exactly_its_path_on_every_port(
    host: str, port: int, path: str, other: str
) -> None:
    registered = f"http://{host}:3030/{path}"
    assert oauth.redirect_matches(registered, f"http://{host}:{port}/{path}")
    assert oauth.redirect_matches(registered, f"http://{host}:{port}/{other}") == (path == other)
    assert not oauth.redirect_matches(registered, f"https://{host}:{port}/{path}")


@pytest.mark.parametrize(
    "uri",
    ["https://client.example.com/cb#f", "/cb", "cb", "https://user@client.example.com/cb", "javascript:alert(1)",
     "data:text/html,x", "file:///etc/passwd", "http://evil.example/cb", "myapp:/cb", "com.example.app:/cb",
     "https://client.example.com/a/../cb", "https:///cb", "", "https://client.example.com/c b",
     "https://*.example.com/cb", "https://client.example.com/*"],
)  # fmt: skip
def test_an_unsafe_redirect_uri_cannot_be_registered(uri: str) -> None:
    assert oauth.redirect_uri_problem(uri) is not None


@pytest.mark.parametrize(
    "uri",
    ["https://claude.ai/api/mcp/auth_callback", "http://localhost:33418/callback", "http://127.0.0.1/",
     "http://127.0.0.1:33418/", "https://vscode.dev/redirect", "http://[::1]:8080/cb?x=1"],
)  # fmt: skip
def test_the_redirect_uris_real_clients_register_are_accepted(uri: str) -> None:
    assert oauth.redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    "uri",
    ["https://evil.example\\.good.example/cb", "https://good.example/a\\b", "https://good.example/%2e%2e/cb",
     "https://good.example/a/%2E./cb", "https://good.example/a/.%2e/cb", "https://good.example/%2e/cb",
     "https:evil.example/cb", "https:/evil.example/cb", "https://0x7f.1/cb", "https://2130706433/cb",
     "https://ex%61mple.com/cb", "https://a..b.example/cb", "https://[::1/cb"],
    ids=["backslash_host", "backslash_path", "encoded_dot_dot", "mixed_dot_dot_upper", "mixed_dot_dot",
         "encoded_dot", "no_slashes", "one_slash", "hex_ipv4", "integer_ipv4", "encoded_host", "empty_label",
         "broken_ipv6"],
)  # fmt: skip
def test_a_redirect_uri_a_browser_would_read_differently_cannot_be_registered(uri: str) -> None:
    assert oauth.redirect_uri_problem(uri) is not None
    assert oauth.url_host(uri) is None


@pytest.mark.parametrize(
    ("uri", "host"),
    [("https://bücher.example/cb", "xn--bcher-kva.example"), ("https://аpple.example/cb", "xn--pple-43d.example"),
     ("https://Client.Example.com:8443/cb", "client.example.com:8443"), ("http://[::1]:3030/cb", "[::1]:3030"),
     ("https://93.184.216.34/cb", "93.184.216.34")],
)  # fmt: skip
def test_the_host_a_browser_goes_to_is_shown_in_ascii_punycode(uri: str, host: str) -> None:
    assert oauth.redirect_uri_problem(uri) is None
    assert oauth.url_host(uri) == host


def test_a_client_id_url_with_a_backslash_or_encoded_dot_segments_is_refused() -> None:
    assert oauth.client_document_url_problem("https://evil.example\\.claude.ai/client.json") is not None
    assert oauth.client_document_url_problem("https://claude.ai/a/%2e%2e/client.json") is not None
    assert oauth.client_document_url_problem("https://claude.ai/oauth/client.json") is None


@pytest.mark.parametrize("where", ["client_name", "redirect_uris", "key"])
def test_a_lone_surrogate_anywhere_in_client_metadata_is_invalid_client_metadata(where: str) -> None:
    document: dict[str, object] = {"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "Tool"}
    if where == "client_name":
        document["client_name"] = "Tool \ud800"
    elif where == "redirect_uris":
        document["redirect_uris"] = ["http://127.0.0.1/cb\udc00"]
    else:
        document["x\udfff"] = 1
    with pytest.raises(oauth.OAuthError) as refused:
        oauth.registration(document)
    assert refused.value.error == "invalid_client_metadata" and "valid Unicode" in refused.value.description


# ----- PKCE, resource, scopes ------------------------------------------------------------------------------------

VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 Appendix B
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_pkce_s256_matches_the_rfc_example_and_nothing_else() -> None:
    assert oauth.pkce_challenge_problem(CHALLENGE, "S256") is None
    assert oauth.pkce_verifier_matches(VERIFIER, CHALLENGE)
    assert not oauth.pkce_verifier_matches(VERIFIER[:-1] + "l", CHALLENGE)


@pytest.mark.parametrize(
    ("challenge", "method"),
    [(None, "S256"), (CHALLENGE, "plain"), (CHALLENGE, None), (CHALLENGE, "s256"), (CHALLENGE[:42], "S256"),
     (CHALLENGE + "a" * 86, "S256"), (CHALLENGE[:41] + "+/", "S256"), (CHALLENGE[:42] + "=", "S256")],
)  # fmt: skip
def test_a_missing_plain_or_malformed_challenge_is_refused(challenge: str | None, method: str | None) -> None:
    assert oauth.pkce_challenge_problem(challenge, method) is not None


@pytest.mark.parametrize("verifier", ["a" * 42, "a" * 129, "a" * 42 + "+", "a" * 43 + " "])
def test_a_verifier_of_the_wrong_length_or_alphabet_never_matches(verifier: str) -> None:
    import base64
    import hashlib

    made = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert not oauth.pkce_verifier_matches(verifier, made)


def test_the_resource_is_this_servers_mcp_url_scheme_and_host_without_case() -> None:
    assert oauth.resource_matches("https://api.example.com/mcp", ISSUER)
    assert oauth.resource_matches("HTTPS://API.example.com/mcp", ISSUER)
    for foreign in ("https://api.example.com/mcp/", "https://other.example/mcp", "https://api.example.com/mcp#f",
                    "/mcp", "https://api.example.com/MCP"):  # fmt: skip
        assert not oauth.resource_matches(foreign, ISSUER), foreign


def test_scopes_outside_the_supported_ones_are_refused_and_a_read_only_approver_narrows_the_grant() -> None:
    assert oauth.scopes_problem(None) is None and oauth.scopes_problem("notes:read notes:write") is None
    for bad in ("", "admin", "notes:read offline_access", "notes:read  notes:write"):
        assert oauth.scopes_problem(bad) is not None, bad
    assert oauth.granted_scopes(None, read_only=False) == ("notes:read", "notes:write")
    assert oauth.granted_scopes("notes:read notes:write", read_only=True) == ("notes:read",)
    assert oauth.granted_scopes("notes:write", read_only=False) == ("notes:write",)
