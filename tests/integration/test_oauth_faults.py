"""OAuth under faults: a store that cannot answer while a token is checked, a refresh racing a revocation, and a
token exchange that loses a transaction to a concurrent one (the checklist's remaining cases)."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.oauth import OAuthError
from notewell.entrypoints.http import build_app
from notewell.entrypoints.mcp_tools import build_server
from notewell.ports import Store
from tests.support.mcp_harness import make_keys, running
from tests.support.oauth import FORM, issue_tokens

ISSUER = "http://testserver"


def issue(services: Services) -> tuple[str, dict[str, Any]]:
    return issue_tokens(services, make_keys(services).full, "faults")


@pytest.mark.anyio
async def test_a_store_failure_while_a_token_is_checked_is_503_never_200(tmp_path: Path) -> None:
    from tests.support.dynamo import dynamodb_store, inject_faults, throttled

    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)
        _, tokens = issue(services)

        def fault(request: Any) -> Any:
            key = json.loads(request.body).get("Key", {})
            return throttled()(request) if key.get("pk", {}).get("S", "").startswith("AUTH#FAM#") else None

        inject_faults(store.client, lambda operation, attempt: fault if operation == "GetItem" else None)
        app = build_app(build_server(services), services, allowed_hosts=["testserver"])
        async with running(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ISSUER) as http:
            answer = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"authorization": f"Bearer {tokens['access_token']}", "content-type": "application/json",
                         "accept": "application/json, text/event-stream"},
            )  # fmt: skip
    assert answer.status_code == 503 and answer.headers["retry-after"]
    assert tokens["access_token"] not in answer.text


@pytest.fixture
def oauth_services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path, issuer=ISSUER), store=store)


def test_a_revocation_racing_a_rotation_leaves_no_token_of_the_family_valid(oauth_services: Services) -> None:
    for _ in range(3):  # the interleaving differs from run to run: each must end the same
        race_once(oauth_services)


def race_once(services: Services) -> None:
    oauth, grants = services.oauth, services.grants
    assert oauth is not None and grants is not None
    client, tokens = issue(services)
    workspace = grant_workspace(services, tokens)
    (grant,) = [g for g in grants.list(workspace) if g.status == "active"]
    start = threading.Barrier(2, timeout=10)
    refreshed: list[dict[str, Any]] = []

    def rotate() -> None:
        start.wait()
        refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client}
        with contextlib.suppress(OAuthError):  # losing to the revocation is one of the two endings
            refreshed.append(oauth.token(list(refresh.items()), FORM, False))

    def revoke() -> None:
        start.wait()
        grants.revoke(workspace, grant.id)

    threads = [threading.Thread(target=rotate), threading.Thread(target=revoke)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    everything = [tokens, *refreshed]
    assert all(oauth.authenticate_access(t["access_token"]) is None for t in everything)
    for t in everything:
        refresh = {"grant_type": "refresh_token", "refresh_token": t["refresh_token"], "client_id": client}
        with pytest.raises(OAuthError, match="invalid_grant"):
            oauth.token(list(refresh.items()), FORM, False)


def grant_workspace(services: Services, tokens: dict[str, Any]) -> str:
    assert services.oauth is not None
    principal = services.oauth.authenticate_access(tokens["access_token"])
    assert principal is not None
    return principal.workspace_id
