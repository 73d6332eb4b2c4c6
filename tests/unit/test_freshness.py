"""Freshness of anchored notes, pure: the text hash a client can compute, a symbol's block found without parsing its
language, and the verdict on each anchor from what the current tree holds."""

from __future__ import annotations

import hashlib

import pytest

from notewell.domain.freshness import (
    AnchorFacts,
    FileText,
    Freshness,
    Place,
    facts_from_file_hash,
    facts_in_tree,
    judge_anchor,
    judge_note,
    split_lines,
    symbol_range,
    text_hash,
)
from notewell.domain.model import Anchor, LineRange

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"


def lines_of(text: str) -> list[bytes]:
    return split_lines(text.encode())


def anchored(path: str, text: str, *, symbol: str | None = None, lines: LineRange | None = None) -> Anchor:
    """An anchor made as `notewell anchor` makes it, from the file's text then."""
    file = FileText.of(path, text.encode())
    if symbol is not None:
        lines = file.symbol(symbol)
        assert lines is not None
    content = file.hash_of(lines) if lines is not None else file.whole_hash
    assert content is not None
    return Anchor("acme/api", path, COMMIT, content, file.whole_hash, symbol, lines)


# ----- the hash a client computes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"a = 1\nb = 2\n", b"a = 1\r\nb = 2\r\n", b"a = 1\nb = 2"])
def test_a_whole_file_hashes_as_sha256_of_its_lf_text_without_the_last_newline(data: bytes) -> None:
    expected = hashlib.sha256(b"a = 1\nb = 2").hexdigest()
    assert text_hash(split_lines(data)) == expected
    assert expected == hashlib.sha256(data.replace(b"\r\n", b"\n").removesuffix(b"\n")).hexdigest()


def test_anchored_lines_hash_as_those_lines_joined_with_lf() -> None:
    file = FileText.of("a.py", b"one\r\ntwo\nthree\n")
    assert file.hash_of(LineRange(2, 3)) == hashlib.sha256(b"two\nthree").hexdigest()
    assert file.hash_of(LineRange(3, 4)) is None  # past the end of the file


# ----- a symbol's block ---------------------------------------------------------------------------------------------

PYTHON = '''"""The function parse_config is documented here, not defined."""

import os


@cache
def parse_config(
    path: str,
) -> dict:
    text = open(path).read()

    return json.loads(text)


def other():
    return parse_config("x")
'''


def test_a_python_function_is_its_def_line_signature_and_body_not_a_mention_in_a_docstring() -> None:
    assert symbol_range(lines_of(PYTHON), "parse_config") == LineRange(7, 12)


def test_a_method_is_found_inside_its_class_by_a_dotted_name() -> None:
    text = "class A:\n    def load(self):\n        return 1\n\nclass Config:\n    x = 1\n\n    def load(self):\n" \
           "        return 2\n\n    def save(self):\n        pass\n"  # fmt: skip
    assert symbol_range(lines_of(text), "Config.load") == LineRange(8, 9)
    assert symbol_range(lines_of(text), "Config") == LineRange(5, 12)
    assert symbol_range(lines_of(text), "Config.missing") is None


@pytest.mark.parametrize(
    ("text", "symbol", "lines"),
    [
        ("import { x } from 'y';\n\nexport async function handle(req) {\n  return x(req);\n}\n\nfunction other() {}\n",
         "handle", LineRange(3, 5)),
        ("package main\n\nfunc (s *Server) Handle(w W) {\n\tif x {\n\t\treturn\n\t}\n}\n", "Handle", LineRange(3, 7)),
        ("class Queue\n  def push(item)\n    @items << item\n  end\nend\n", "Queue.push", LineRange(2, 4)),
        ("public class Api\n{\n    public void Run()\n    {\n        Go();\n    }\n}\n", "Api.Run", LineRange(3, 6)),
        ("int helper(int x);\n\nint main(void) {\n    return helper(2);\n}\n", "helper", LineRange(1, 1)),
        ("pub(crate) fn parse(input: &str) -> Ast {\n    todo!()\n}\n", "parse", LineRange(1, 3)),
    ],
    ids=["javascript", "go-receiver", "ruby-end", "csharp-allman", "c-least-indented", "rust-modifier"],
)  # fmt: skip
def test_definitions_are_found_in_the_languages_agents_meet_without_parsing_them(
    text: str, symbol: str, lines: LineRange
) -> None:
    assert symbol_range(lines_of(text), symbol) == lines


def test_a_name_that_only_contains_the_symbol_is_not_the_symbol() -> None:
    assert symbol_range(lines_of("def parse_config_file():\n    pass\n"), "parse_config") is None


# ----- verdicts ----------------------------------------------------------------------------------------------------


def test_an_unchanged_file_leaves_every_kind_of_anchor_fresh() -> None:
    file = FileText.of("src/retry.py", PYTHON.encode())
    for anchor in (
        anchored("src/retry.py", PYTHON),
        anchored("src/retry.py", PYTHON, lines=LineRange(3, 3)),
        anchored("src/retry.py", PYTHON, symbol="parse_config"),
    ):
        verdict = judge_anchor(anchor, facts_in_tree(anchor, file))
        assert verdict.freshness is Freshness.FRESH, anchor


def test_a_symbol_whose_lines_moved_down_the_file_is_moved_and_says_where_it_is_now() -> None:
    anchor = anchored("src/retry.py", PYTHON, symbol="parse_config")
    now = FileText.of("src/retry.py", ("X = 1\n\n" + PYTHON).encode())
    verdict = judge_anchor(anchor, facts_in_tree(anchor, now))
    assert verdict.freshness is Freshness.MOVED
    assert verdict.place == Place("src/retry.py", LineRange(9, 14), anchor.content_hash)


def test_anchored_lines_found_further_down_are_moved_and_other_text_there_is_changed() -> None:
    anchor = anchored("a.py", "one\ntwo\nthree\n", lines=LineRange(2, 3))
    moved = judge_anchor(anchor, facts_in_tree(anchor, FileText.of("a.py", b"zero\none\ntwo\nthree\n")))
    assert (moved.freshness, moved.place and moved.place.lines) == (Freshness.MOVED, LineRange(3, 4))
    changed = judge_anchor(anchor, facts_in_tree(anchor, FileText.of("a.py", b"one\ntwo\nTHREE\n")))
    assert changed.freshness is Freshness.CHANGED


def test_a_symbol_whose_body_changed_is_changed_even_when_it_also_moved() -> None:
    anchor = anchored("src/retry.py", PYTHON, symbol="parse_config")
    edited = ("X = 1\n\n" + PYTHON).replace("json.loads(text)", "yaml.safe_load(text)")
    verdict = judge_anchor(anchor, facts_in_tree(anchor, FileText.of("src/retry.py", edited.encode())))
    assert verdict.freshness is Freshness.CHANGED
    assert verdict.place is not None and verdict.place.lines == LineRange(9, 14)


def test_a_symbol_moved_to_another_file_is_moved_there_and_one_defined_nowhere_is_gone() -> None:
    anchor = anchored("src/retry.py", PYTHON, symbol="parse_config")
    left = FileText.of("src/retry.py", b"def other():\n    return 1\n")
    target = FileText.of("src/config.py", PYTHON.encode())
    verdict = judge_anchor(anchor, facts_in_tree(anchor, left, lambda name: [left, target]))
    assert verdict.freshness is Freshness.MOVED and verdict.place is not None
    assert verdict.place.path == "src/config.py"
    assert judge_anchor(anchor, facts_in_tree(anchor, left)).freshness is Freshness.GONE


def test_another_definition_of_the_same_name_elsewhere_does_not_make_a_removed_symbol_changed() -> None:
    anchor = anchored("src/retry.py", PYTHON, symbol="parse_config")
    namesake = FileText.of("src/yaml_config.py", b"def parse_config(path):\n    return yaml.load(path)\n")
    verdict = judge_anchor(anchor, facts_in_tree(anchor, None, lambda name: [namesake]))
    assert verdict.freshness is Freshness.GONE


def test_a_file_that_is_not_in_the_tree_is_gone() -> None:
    anchor = anchored("src/retry.py", PYTHON)
    assert judge_anchor(anchor, facts_in_tree(anchor, None)).freshness is Freshness.GONE


def test_a_note_is_as_stale_as_its_stalest_anchor_and_unjudged_when_no_anchor_could_be() -> None:
    fresh = anchored("a.py", "a\n")
    changed = anchored("b.py", "b\n")
    verdict = judge_note([(fresh, AnchorFacts(True, (Place("a.py", None, fresh.content_hash),))),
                          (changed, AnchorFacts(True, (Place("b.py", None, "0" * 64),)))])  # fmt: skip
    assert verdict is not None and verdict.freshness is Freshness.CHANGED
    assert [v.freshness for v in verdict.anchors] == [Freshness.FRESH, Freshness.CHANGED]
    gone = judge_note([(fresh, AnchorFacts(True)), (changed, AnchorFacts(False))])
    assert gone is not None and gone.freshness is Freshness.GONE
    assert judge_note([]) is None


def test_a_client_sending_only_file_hashes_gets_fresh_changed_or_gone_per_file() -> None:
    anchor = anchored("src/retry.py", PYTHON, symbol="parse_config")
    same, other = anchor.file_hash, hashlib.sha256(b"edited").hexdigest()
    assert judge_anchor(anchor, facts_from_file_hash(anchor, same.upper())).freshness is Freshness.FRESH
    assert judge_anchor(anchor, facts_from_file_hash(anchor, other)).freshness is Freshness.CHANGED
    assert judge_anchor(anchor, facts_from_file_hash(anchor, None)).freshness is Freshness.GONE
