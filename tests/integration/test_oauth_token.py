"""POST /token and access tokens on /mcp through the real app on both stores: the checklist's token cases, named
after them. Each test gets a code the way a client does (register, consent, approve) and then breaks one thing."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import Store
from tests.support.mcp_harness import make_keys, running

pytestmark = pytest.mark.anyio

ISSUER = "http://testserver"
REDIRECT = "http://127.0.0.1:3030/cb"
VERIFIER = "v" * 43
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path, clock: FixedClock) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store, clock=clock)


@dataclass
class Flow:
    http: httpx2.AsyncClient
    services: Services

    async def client(self) -> str:
        body = json.dumps({"redirect_uris": [REDIRECT], "client_name": "t"})
        answer = await self.http.post("/register", content=body, headers={"content-type": "application/json"})
        return str(answer.json()["client_id"])

    async def code(self, client: str, key: str | None = None, omit: tuple[str, ...] = (), **query: str) -> str:
        params = {"response_type": "code", "client_id": client, "redirect_uri": REDIRECT, "state": "s",
                  "code_challenge": CHALLENGE, "code_challenge_method": "S256", **query}  # fmt: skip
        page = await self.http.get("/authorize?" + urlencode({k: v for k, v in params.items() if k not in omit}))
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
        key = key or make_keys(self.services).full
        answer = await self.http.post("/authorize", data={**fields, "api_key": key, "decision": "approve"})
        return parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]

    async def token(self, **form: str) -> httpx2.Response:
        return await self.http.post("/token", data=form)

    async def redeem(self, client: str, code: str, **extra: str) -> httpx2.Response:
        form = {"grant_type": "authorization_code", "code": code, "client_id": client, "code_verifier": VERIFIER,
                "redirect_uri": REDIRECT, **extra}  # fmt: skip
        return await self.token(**form)

    async def refresh(self, client: str, refresh_token: str, **extra: str) -> httpx2.Response:
        return await self.token(grant_type="refresh_token", refresh_token=refresh_token, client_id=client, **extra)

    async def mcp_status(self, access_token: str) -> int:
        answer = await self.http.post(
            "/mcp", json=PING, headers={**MCP_HEADERS, "authorization": f"Bearer {access_token}"}
        )
        return answer.status_code


@pytest.fixture
async def flow(oauth_services: Services) -> AsyncIterator[Flow]:
    app = build_app(build_server(oauth_services), oauth_services, allowed_hosts=["testserver"])
    async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as http:
        yield Flow(http, oauth_services)


def error_of(answer: httpx2.Response, status: int = 400) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["cache-control"] == "no-store"
    return str(answer.json()["error"])


def tokens(answer: httpx2.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body: dict[str, Any] = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600 and body["refresh_token"]
    return body


# ----- authorization_code ----------------------------------------------------------------------------------------


async def test_success_is_200_bearer_with_expiry_refresh_token_scope_and_no_store(flow: Flow) -> None:
    client = await flow.client()
    issued = tokens(await flow.redeem(client, await flow.code(client)))
    assert issued["scope"] == "notes:read notes:write" and await flow.mcp_status(issued["access_token"]) == 200
    lower = await flow.http.post(
        "/mcp", json=PING, headers={**MCP_HEADERS, "authorization": f"bearer {issued['access_token']}"}
    )
    assert lower.status_code == 200  # the scheme is case-insensitive


async def test_a_json_body_missing_grant_type_or_repeated_parameter_is_invalid_request(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    as_json = await flow.http.post("/token", json={"grant_type": "authorization_code", "code": code})
    assert error_of(as_json) == "invalid_request"
    assert error_of(await flow.token(code=code, client_id=client)) == "invalid_request"
    repeated = await flow.http.post("/token", content=f"grant_type=authorization_code&code={code}&code={code}",
                                    headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert error_of(repeated) == "invalid_request"
    assert tokens(await flow.redeem(client, code))  # none of that consumed the code


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "foo"])
async def test_an_unsupported_grant_type_is_refused(flow: Flow, grant_type: str) -> None:
    client = await flow.client()
    assert error_of(await flow.token(grant_type=grant_type, client_id=client)) == "unsupported_grant_type"


async def test_basic_credentials_a_secret_or_an_unknown_or_missing_client_is_invalid_client(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    basic = await flow.http.post("/token", data={"grant_type": "authorization_code", "code": code},
                                 headers={"authorization": "Basic " + base64.b64encode(b"a:b").decode()})  # fmt: skip
    assert error_of(basic, 401) == "invalid_client" and basic.headers["www-authenticate"].startswith("Basic")
    assert error_of(await flow.redeem(client, code, client_secret="s")) == "invalid_client"
    assert error_of(await flow.redeem("client_unknown", code)) == "invalid_client"
    assert error_of(await flow.token(grant_type="authorization_code", code=code, code_verifier=VERIFIER)) == (
        "invalid_client"
    )


async def test_a_missing_unknown_foreign_or_expired_code_is_refused(flow: Flow, clock: FixedClock) -> None:
    client, other = await flow.client(), await flow.client()
    missing = await flow.token(grant_type="authorization_code", client_id=client, code_verifier=VERIFIER)
    assert error_of(missing) == "invalid_request"
    assert error_of(await flow.redeem(client, "nope")) == "invalid_grant"
    assert error_of(await flow.redeem(other, await flow.code(client))) == "invalid_grant"
    late = await flow.code(client)
    clock.advance(seconds=5 * 60 + 1)
    assert error_of(await flow.redeem(client, late)) == "invalid_grant"


async def test_a_redirect_uri_sent_must_be_byte_equal(flow: Flow) -> None:
    client = await flow.client()
    assert error_of(await flow.redeem(client, await flow.code(client), redirect_uri=REDIRECT + "/")) == "invalid_grant"


async def test_a_redirect_uri_named_at_authorize_is_required_at_token_and_omitted_at_both_is_fine(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)  # /authorize named redirect_uri: RFC 6749 §4.1.3 requires it again here
    form = {"grant_type": "authorization_code", "client_id": client, "code_verifier": VERIFIER}
    refused = await flow.token(**form, code=code)
    assert error_of(refused) == "invalid_request" and "redirect_uri" in refused.json()["error_description"]
    assert tokens(await flow.redeem(client, code))  # refused, not consumed: the corrected request succeeds
    unnamed = await flow.code(client, omit=("redirect_uri",))  # defaulted to the one registered URI
    assert tokens(await flow.token(**form, code=unnamed))


@pytest.mark.parametrize("verifier", ["w" * 43, "v" * 42, "v" * 129, "v" * 42 + "+"])
async def test_a_wrong_short_long_or_badly_spelled_verifier_is_invalid_grant(flow: Flow, verifier: str) -> None:
    client = await flow.client()
    code = await flow.code(client)
    assert error_of(await flow.redeem(client, code, code_verifier=verifier)) == "invalid_grant"
    missing = await flow.token(grant_type="authorization_code", code=code, client_id=client)
    assert error_of(missing) == "invalid_request"
    assert tokens(await flow.redeem(client, code))  # still unused


async def test_a_resource_differing_from_the_codes_is_invalid_target(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    assert error_of(await flow.redeem(client, code, resource="https://other.example/mcp")) == "invalid_target"
    assert tokens(await flow.redeem(client, code, resource=f"{ISSUER}/mcp"))


async def test_a_second_redemption_revokes_what_the_first_issued(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    first = tokens(await flow.redeem(client, code))
    assert error_of(await flow.redeem(client, code)) == "invalid_grant"
    assert await flow.mcp_status(first["access_token"]) == 401
    assert error_of(await flow.refresh(client, first["refresh_token"])) == "invalid_grant"


async def test_a_replay_with_a_wrong_verifier_after_success_revokes_nothing(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    first = tokens(await flow.redeem(client, code))
    assert error_of(await flow.redeem(client, code, code_verifier="w" * 43)) == "invalid_grant"
    assert await flow.mcp_status(first["access_token"]) == 200


async def test_eight_parallel_redemptions_give_one_success_and_then_revoke_it(flow: Flow) -> None:
    client = await flow.client()
    code = await flow.code(client)
    answers = await asyncio.gather(*(flow.redeem(client, code) for _ in range(8)))
    won = [a for a in answers if a.status_code == 200]
    assert len(won) == 1 and all(error_of(a) == "invalid_grant" for a in answers if a.status_code != 200)
    assert await flow.mcp_status(won[0].json()["access_token"]) == 401


async def test_a_read_only_key_grants_notes_read_and_write_tools_are_refused(flow: Flow) -> None:
    client = await flow.client()
    issued = tokens(await flow.redeem(client, await flow.code(client, key=make_keys(flow.services).read_only)))
    assert issued["scope"] == "notes:read"


# ----- refresh_token ---------------------------------------------------------------------------------------------


async def issued_pair(flow: Flow) -> tuple[str, dict[str, Any]]:
    client = await flow.client()
    return client, tokens(await flow.redeem(client, await flow.code(client)))


async def test_an_unknown_truncated_flipped_or_re_familied_refresh_token_is_invalid_grant_and_revokes_nothing(
    flow: Flow,
) -> None:
    client, issued = await issued_pair(flow)
    token = issued["refresh_token"]
    family, _, secret = token.removeprefix("nw_rt_").partition(".")
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in ("nw_rt_nope", token[:-4], flipped, f"nw_rt_fam_other.{secret}", token + "x"):
        assert error_of(await flow.refresh(client, bad)) == "invalid_grant", bad
    assert await flow.mcp_status(issued["access_token"]) == 200 and tokens(await flow.refresh(client, token))


async def test_a_refresh_token_of_another_client_is_invalid_grant(flow: Flow) -> None:
    client, issued = await issued_pair(flow)
    other = await flow.client()
    assert error_of(await flow.refresh(other, issued["refresh_token"])) == "invalid_grant"
    assert tokens(await flow.refresh(client, issued["refresh_token"]))  # and it still works for its own client


async def test_a_refresh_token_unused_past_its_idle_expiry_is_invalid_grant_while_its_client_lives_on(
    flow: Flow, clock: FixedClock
) -> None:
    client, idle = await issued_pair(flow)
    clock.advance(days=20)
    kept = tokens(await flow.redeem(client, await flow.code(client)))  # the client is in use: it is not forgotten
    clock.advance(days=10, seconds=1)  # 30 days and a second since `idle` was issued
    assert error_of(await flow.refresh(client, idle["refresh_token"])) == "invalid_grant"
    assert tokens(await flow.refresh(client, kept["refresh_token"]))  # 10 days old: fine
    clock.advance(days=31)  # unused for 31 days: the client is forgotten, and must register again
    assert error_of(await flow.refresh(client, kept["refresh_token"])) == "invalid_client"


async def test_rotation_then_reuse_of_the_old_token_revokes_the_family(flow: Flow) -> None:
    client, first = await issued_pair(flow)
    second = tokens(await flow.refresh(client, first["refresh_token"]))
    assert second["refresh_token"] != first["refresh_token"] and await flow.mcp_status(second["access_token"]) == 200
    assert error_of(await flow.refresh(client, first["refresh_token"])) == "invalid_grant"
    assert error_of(await flow.refresh(client, second["refresh_token"])) == "invalid_grant"
    assert await flow.mcp_status(second["access_token"]) == 401 and await flow.mcp_status(first["access_token"]) == 401


async def test_a_grandparent_token_after_two_rotations_revokes_the_family(flow: Flow) -> None:
    client, first = await issued_pair(flow)
    second = tokens(await flow.refresh(client, first["refresh_token"]))
    third = tokens(await flow.refresh(client, second["refresh_token"]))
    assert error_of(await flow.refresh(client, first["refresh_token"])) == "invalid_grant"
    assert await flow.mcp_status(third["access_token"]) == 401


@pytest.mark.parametrize("racers", [2, 8])
async def test_concurrent_refreshes_of_one_token_give_at_most_one_success_then_the_family_is_revoked(
    flow: Flow, racers: int
) -> None:
    client, first = await issued_pair(flow)
    answers = await asyncio.gather(*(flow.refresh(client, first["refresh_token"]) for _ in range(racers)))
    assert sum(a.status_code == 200 for a in answers) <= 1
    for answer in answers:
        if answer.status_code == 200:
            assert await flow.mcp_status(answer.json()["access_token"]) == 401  # a loser's reuse revoked it


async def test_a_wider_scope_is_invalid_scope_and_a_narrower_one_narrows_only_the_access_token(flow: Flow) -> None:
    client = await flow.client()
    narrow = tokens(await flow.redeem(client, await flow.code(client, scope="notes:read")))
    assert error_of(await flow.refresh(client, narrow["refresh_token"], scope="notes:read notes:write")) == (
        "invalid_scope"
    )
    client, full = await issued_pair(flow)
    reading = tokens(await flow.refresh(client, full["refresh_token"], scope="notes:read"))
    assert reading["scope"] == "notes:read"
    again = tokens(await flow.refresh(client, reading["refresh_token"]))
    assert again["scope"] == "notes:read notes:write"  # the refresh token kept the grant's full scope


async def test_a_resource_differing_from_the_familys_is_invalid_target_and_omitted_is_fine(flow: Flow) -> None:
    client, issued = await issued_pair(flow)
    refused = await flow.refresh(client, issued["refresh_token"], resource="https://other.example/mcp")
    assert error_of(refused) == "invalid_target"
    assert tokens(await flow.refresh(client, issued["refresh_token"]))


# ----- /mcp with OAuth tokens --------------------------------------------------------------------------------------


async def test_an_expired_or_refresh_token_as_bearer_or_a_token_in_the_query_is_401(
    flow: Flow, clock: FixedClock
) -> None:
    client, issued = await issued_pair(flow)
    assert await flow.mcp_status(issued["refresh_token"]) == 401
    query = await flow.http.post(f"/mcp?access_token={issued['access_token']}", json=PING, headers=MCP_HEADERS)
    assert query.status_code == 401
    in_body = await flow.http.post("/mcp", data={"access_token": issued["access_token"]})  # RFC 6750 §2.2: not here
    assert in_body.status_code == 401
    clock.advance(seconds=3601)
    assert await flow.mcp_status(issued["access_token"]) == 401


async def test_revoking_the_approving_api_key_ends_the_grants_it_approved(flow: Flow) -> None:
    auth = flow.services.auth
    workspace = auth.create_workspace("team")
    approver = auth.create_key(workspace.id, name="person")
    bystander = auth.create_key(workspace.id, name="other person")
    client = await flow.client()
    mine = tokens(await flow.redeem(client, await flow.code(client, key=approver.secret)))
    theirs = tokens(await flow.redeem(client, await flow.code(client, key=bystander.secret)))
    auth.revoke_key(workspace.id, approver.key.id)
    assert await flow.mcp_status(mine["access_token"]) == 401
    assert error_of(await flow.refresh(client, mine["refresh_token"])) == "invalid_grant"
    assert await flow.mcp_status(theirs["access_token"]) == 200  # another key's grant stands


async def test_a_token_without_the_write_scope_gets_403_insufficient_scope_on_a_tool_that_writes(flow: Flow) -> None:
    client = await flow.client()
    reading = tokens(await flow.redeem(client, await flow.code(client, scope="notes:read")))
    headers = {
        **MCP_HEADERS,
        "authorization": f"Bearer {reading['access_token']}",
        "mcp-protocol-version": "2025-06-18",
    }

    def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}

    refused = await flow.http.post("/mcp", json=call("remember", {"project": "api", "content": "x"}), headers=headers)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="notes:read notes:write"' in challenge
    assert f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource/mcp"' in challenge
    allowed = await flow.http.post("/mcp", json=call("get_context", {"project": "api"}), headers=headers)
    assert allowed.status_code == 200 and not allowed.json()["result"].get("isError")  # reading passes
    full = tokens(await flow.redeem(client, await flow.code(client)))
    writer = {**headers, "authorization": f"Bearer {full['access_token']}"}
    written = await flow.http.post("/mcp", json=call("remember", {"project": "api", "content": "x"}), headers=writer)
    assert written.status_code == 200 and not written.json()["result"].get("isError")
