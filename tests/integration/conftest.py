"""The MCP-client integration suite runs on every store: each test that takes `services` runs on SQLite and on
DynamoDB (moto, the table from template.yaml), with ids such as `[sqlite-legacy]` and `[dynamodb-2026-07-28]`.

The protocol era is a transport matter, the same whatever the store: SQLite runs every era a test names, DynamoDB
(moto costs about half a second a test) only the newest of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from tests.support.mcp_harness import MODES
from tests.support.stores import STORES, open_store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from notewell.ports import Store


HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the DynamoDB runs of all but the newest era each test names (see the module docstring)."""
    newest: dict[tuple[str, str], int] = {}  # (test, its other parameters) -> index in MODES of its newest era
    runs: list[tuple[pytest.Item, tuple[str, str], int]] = []
    for item in items:
        params = item.callspec.params if isinstance(item, pytest.Function) and hasattr(item, "callspec") else {}
        if item.path.parent != HERE or params.get("store") != "dynamodb" or params.get("mode") not in MODES:
            continue
        others = repr(sorted((k, repr(v)) for k, v in params.items() if k != "mode"))
        test = (item.nodeid.split("[")[0], others)
        era = MODES.index(params["mode"])
        newest[test] = max(newest.get(test, era), era)
        runs.append((item, test, era))
    dropped = {id(item) for item, test, era in runs if era != newest[test]}
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in dropped])
        items[:] = [item for item in items if id(item) not in dropped]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with open_store(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture
def services(store: Store, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store)
