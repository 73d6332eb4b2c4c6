"""Fixtures every suite may use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.aoss import osmem_engine

if TYPE_CHECKING:
    from collections.abc import Iterator

    from osmem_server import OsmemServer


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("aws").addoption(
        "--stack",
        default=None,
        metavar="NAME",
        help="The deployed Notewell stack the aws suite tests (its CloudFormation outputs, in AWS_REGION); without "
        "it, NOTEWELL_AWS_MCP_URL, NOTEWELL_SEARCH_ENDPOINT and AWS_REGION. The key: NOTEWELL_AWS_API_KEY.",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The aws suite needs a deployed stack: it runs only when asked for by name (-m aws)."""
    if "aws" in (config.getoption("markexpr") or ""):
        return
    dropped = [item for item in items if item.get_closest_marker("aws") is not None]
    if dropped:
        items[:] = [item for item in items if item.get_closest_marker("aws") is None]
        config.hook.pytest_deselected(items=dropped)


@pytest.fixture(scope="session")
def osmem_server() -> Iterator[OsmemServer]:
    """One OpenSearch-compatible engine for the session (replaces the osmem package's fixture, which leaks a pipe);
    tests take a fresh clone of it each (tests/support/aoss.py stand_in_collection)."""
    with osmem_engine() as server:
        yield server
