"""One suite, every store: each contract test runs against SQLite and DynamoDB (moto)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.ports import Store


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        sqlite_store = SqliteStore(tmp_path / "notewell.db")
        try:
            yield sqlite_store
        finally:
            sqlite_store.close()
    else:
        from tests.support.dynamo import dynamodb_store

        with dynamodb_store() as dynamo_store:
            yield dynamo_store
