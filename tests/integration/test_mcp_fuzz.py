"""Every tool, any arguments its schema allows and many it does not: a result or a 4xx error, never a crash.

Bounded and derandomized for `make test`: a fixed number of generated calls per listed tool, so every tool is
driven whatever the generator draws. `make fuzz` (tests/bench/fuzz.py) runs many more, tools drawn at random.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from tests.support import fuzz

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

CALLS_PER_TOOL = {"sqlite": 15, "dynamodb": 10}  # moto is slower; both stay within seconds
READS = 30


@pytest.fixture(params=["sqlite", "dynamodb"])
def store_services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Services]]:
    if request.param == "sqlite":
        store = SqliteStore(tmp_path / "notewell.db")
        try:
            yield request.param, bootstrap(Settings(data_dir=tmp_path), store=store)
        finally:
            store.close()
    else:
        from tests.support.dynamo import dynamodb_store

        with dynamodb_store() as dynamo:
            yield request.param, bootstrap(Settings(data_dir=tmp_path), store=dynamo)


def generate(examples: int, step: Callable[[st.DataObject], None]) -> None:
    @settings(
        max_examples=examples, derandomize=True, database=None, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )  # fmt: skip
    @given(st.data())
    def run(data: st.DataObject) -> None:
        step(data)

    run()


def test_every_tool_answers_generated_and_mutated_arguments_with_a_result_or_a_4xx_error(
    store_services: tuple[str, Services],
) -> None:
    kind, services = store_services
    with fuzz.session(services) as session:
        for tool in sorted(session.tools):
            generate(CALLS_PER_TOOL[kind], functools.partial(session.call_generated, tool))
        generate(READS, session.read_generated)
        tally = session.tally
    assert all(tally.by_tool[tool] >= CALLS_PER_TOOL[kind] for tool in session.tools), tally.by_tool
    assert tally.reads >= READS and tally.outcomes["ok"] > 0 and tally.outcomes["400 bad_argument"] > 0
