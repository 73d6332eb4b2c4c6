"""`pytest -m aws --stack NAME`: the suite against the named stack (tests/aws/deployment.py; the option is declared
in tests/conftest.py, which pytest reads at start-up)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from notewell.adapters.opensearch import SignedHttp
from tests.aws.deployment import Deployment, deployment_of

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def deployment(request: pytest.FixtureRequest) -> Deployment:
    return deployment_of(request.config.getoption("stack"), os.environ)


@pytest.fixture
def collection(deployment: Deployment) -> Iterator[SignedHttp]:
    """The stack's search collection, signed with the credentials in use (the stack's ReindexPrincipal's)."""
    http = SignedHttp.from_environment(deployment.search_endpoint, deployment.region)
    try:
        yield http
    finally:
        http.close()
