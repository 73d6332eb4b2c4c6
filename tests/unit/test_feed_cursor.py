"""The change-feed cursor: compact for the agent that carries it, sealed, and still reading what was issued before."""

from __future__ import annotations

import bpe_openai
import pytest

from notewell.domain import cursor as feed_cursor
from notewell.domain.errors import InvalidCursorError
from notewell.domain.model import FeedPosition

KEY = b"k" * 32
WS, PROJECT = "ws_01m8zsx83k51y2kba08antwdga", "prj_01m8zsx83m0yzz4q3hz6fhewv2"


def cursor(seq: int, types: tuple[str, ...] = (), statuses: tuple[str, ...] = ()) -> feed_cursor.FeedCursor:
    return feed_cursor.FeedCursor(WS, PROJECT, types, statuses, position=None, seq=seq)


@pytest.mark.parametrize("seq", [0, 1, 127, 128, 300, 2**31, 2**62])
@pytest.mark.parametrize("filters", [((), ()), (("decision", "failed_approach"), ("current", "pending"))])
def test_a_sequence_cursor_is_compact_and_reads_back(seq: int, filters: tuple[tuple[str, ...], ...]) -> None:
    made = cursor(seq, *filters)
    token = feed_cursor.seal(made, KEY)
    assert "." not in token and len(token) <= (24 if seq < 2**21 else 36)
    assert feed_cursor.unseal(token, KEY, workspace_id=WS, project_ids=(PROJECT,)) == made


def test_a_compact_cursor_costs_a_seventh_of_the_json_one() -> None:
    encoding = bpe_openai.get_encoding("cl100k_base")
    made = cursor(4_210, ("decision",), ("current",))
    compact = len(encoding.encode(feed_cursor.seal(made, KEY)))
    json_form = len(encoding.encode(feed_cursor.seal(made, KEY, compact=False)))
    assert compact * 5 <= json_form, (compact, json_form)


def test_a_compact_cursor_does_not_verify_for_another_workspace_or_project() -> None:
    token = feed_cursor.seal(cursor(9), KEY)
    for workspace, projects in ((WS, ("prj_other",)), ("ws_other", (PROJECT,)), (WS, ())):
        with pytest.raises(InvalidCursorError, match="another project"):
            feed_cursor.unseal(token, KEY, workspace_id=workspace, project_ids=projects)
    with pytest.raises(InvalidCursorError):
        feed_cursor.unseal(token, b"x" * 32, workspace_id=WS, project_ids=(PROJECT,))
    # The empty project of a cursor made before the project existed is one of the ids tried.
    early = feed_cursor.seal(feed_cursor.FeedCursor(WS, "", (), (), None, seq=0), KEY)
    assert feed_cursor.unseal(early, KEY, workspace_id=WS, project_ids=(PROJECT, "")).project_id == ""


def test_cursors_issued_before_the_compact_form_still_read() -> None:
    for made in (
        cursor(77, ("note",), ()),  # a version-2 sequence cursor
        feed_cursor.FeedCursor(WS, PROJECT, (), (), FeedPosition("2026-03-01T12:00:00.000Z", "n_1"), None),  # 1
    ):
        token = feed_cursor.seal(made, KEY, compact=False)
        assert token.count(".") == 1
        assert feed_cursor.unseal(token, KEY, workspace_id=WS, project_ids=(PROJECT,)) == made


def test_a_floor_or_an_unknown_filter_name_keeps_the_json_form() -> None:
    floored = feed_cursor.FeedCursor(WS, PROJECT, (), (), None, seq=3, floor=FeedPosition("2026-01-01", "n_2"))
    assert "." in feed_cursor.seal(floored, KEY)
    assert "." in feed_cursor.seal(cursor(3, ("a_type_from_the_future",)), KEY)
