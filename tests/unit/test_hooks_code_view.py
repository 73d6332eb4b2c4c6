"""What the session-start hook sends about the code in hand, pure: file hashes as anchors define them (the hook
imports only the standard library, so it computes them itself), only paths the server takes, and the changed files
folded into their directories past the server's cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notewell.domain import freshness, rules
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.hooks import (
    FILES_SENT,
    HASHES_SENT,
    MAX_PATH_BYTES,
    file_hash,
    files_in_view,
    relevant_line,
    sendable,
)


@given(st.binary(max_size=300) | st.lists(st.sampled_from([b"a", b"\n", b"\r\n", b"\r", b" "])).map(b"".join))
def test_the_hooks_file_hash_is_the_one_anchors_record(data: bytes) -> None:
    assert file_hash(data) == freshness.FileText.of("x.py", data).whole_hash


def test_the_hook_sends_no_more_than_the_server_takes() -> None:
    assert (FILES_SENT, HASHES_SENT, MAX_PATH_BYTES) == (
        freshness.MAX_FILES, freshness.MAX_HASHED_PATHS, rules.MAX_ANCHOR_PATH_BYTES,
    )  # fmt: skip


PATH_CHARS = st.sampled_from(["a", "é", "/", ".", "..", "\\", " ", "\t", "\x7f", "\x85", ":", "C:", "\ud800", "日"])


@given(st.lists(PATH_CHARS, max_size=12).map("".join))
def test_a_path_is_sent_only_when_the_server_would_take_it(path: str) -> None:
    try:
        freshness.check_files([path])
        taken = True
    except InvalidArgumentError:
        taken = False
    assert sendable(path) == taken, path


def test_a_path_too_long_for_an_anchor_is_not_sent() -> None:
    assert sendable("d/" * 300 + "x.py") and not sendable("d/" * 600 + "x.py")


def test_more_changed_files_than_the_server_takes_fold_into_their_directories_deepest_first() -> None:
    few = ["src/a.py", "src/a.py", "README.md"]
    assert files_in_view(few) == ("src/a.py", "README.md")
    many = [f"src/api/v{n}.py" for n in range(30)] + ["src/db/schema.sql", "docs/intro.md", "Makefile"]
    assert files_in_view(many) == ("src/api", "src/db", "docs/intro.md", "Makefile")  # level by level
    assert files_in_view(many, cap=3) == ("src", "docs", "Makefile")
    assert files_in_view([f"top{n}.py" for n in range(25)]) == tuple(f"top{n}.py" for n in range(20))


@pytest.mark.parametrize(("count", "said"), [(1, "the 1 file changed"), (3, "the 3 files changed")])
def test_the_briefing_says_why_the_relevant_notes_lead(count: int, said: str) -> None:
    assert said in relevant_line(count)
