"""A lean read keeps the start of a body (rules.lean_text); every excerpt get_context shows from it must be the one
the whole body gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.domain import rules


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab .,\n\t\u00e9"), max_size=1_200),
    st.integers(min_value=0, max_value=rules.LEAN_BODY_CHARS),
)
def test_the_start_of_a_body_gives_the_whole_bodys_excerpt(body: str, limit: int) -> None:
    assert rules.shorten(rules.lean_text(body), limit) == rules.excerpt(body, limit)
