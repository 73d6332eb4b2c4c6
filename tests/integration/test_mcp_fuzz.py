"""Every tool, any arguments its schema allows and many it does not: a result or a 4xx error, never a crash.

Bounded and derandomized for `make test`; `make fuzz` (tests/bench/fuzz.py) runs many more examples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from tests.support import fuzz

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

EXAMPLES = {"sqlite": 300, "dynamodb": 200}  # moto is slower; both stay within seconds


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


def test_every_tool_answers_generated_and_mutated_arguments_with_a_result_or_a_4xx_error(
    store_services: tuple[str, Services],
) -> None:
    kind, services = store_services
    examples = EXAMPLES[kind]
    with fuzz.session(services) as session:

        @settings(
            max_examples=examples, derandomize=True, database=None, deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )  # fmt: skip
        @given(st.data())
        def one_call(data: st.DataObject) -> None:
            session.step(data)

        one_call()
        tally = session.tally
    assert tally.calls + tally.reads >= examples
    assert set(tally.by_tool) == set(session.tools)  # every listed tool was driven
    assert tally.outcomes["ok"] > 0 and tally.reads > 0
