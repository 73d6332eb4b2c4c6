from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    store = SqliteStore(tmp_path / "notewell.db")
    try:
        yield bootstrap(Settings(data_dir=tmp_path), store=store)
    finally:
        store.close()
