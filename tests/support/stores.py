"""The stores every suite runs against, opened the same way everywhere: SQLite in a directory, DynamoDB on moto."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from notewell.adapters.sqlite import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from notewell.ports import Store

STORES = ["sqlite", "dynamodb"]


@contextlib.contextmanager
def open_store(kind: str, directory: Path) -> Iterator[Store]:
    """A fresh store of `kind`: a SQLite file in `directory`, or a moto table built from template.yaml."""
    if kind == "sqlite":
        sqlite_store = SqliteStore(directory / "notewell.db")
        try:
            yield sqlite_store
        finally:
            sqlite_store.close()
        return
    from tests.support.dynamo import dynamodb_store

    with dynamodb_store() as dynamo_store:
        yield dynamo_store
