"""One suite, every store: each contract test runs against SQLite and DynamoDB (moto)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services
from notewell.domain.model import Principal
from notewell.ports import Store
from tests.support.stores import STORES, open_store


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with open_store(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def me(services: Services) -> Principal:
    """A workspace-wide read-write principal in a fresh workspace (each test module defines `services`)."""
    workspace = services.auth.create_workspace("acme")
    principal = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
    assert principal is not None
    return principal
