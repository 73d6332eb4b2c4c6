"""What an anchor may hold: repository-relative paths, full commit ids, SHA-256 hashes, a line range, a symbol name;
refused with a message that says what to send instead."""

from __future__ import annotations

import pytest

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Anchor, LineRange

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def anchor(path: str = "src/app.py", **fields: object) -> Anchor:
    values: dict[str, object] = {"repo": "github.com/acme/api", "path": path, "commit": COMMIT, "content_hash": HASH,
                                 "file_hash": HASH, **fields}  # fmt: skip
    return Anchor(**values)  # type: ignore[arg-type]


def test_paths_are_kept_from_the_repository_top_with_dot_segments_and_doubled_slashes_removed() -> None:
    assert rules.check_anchor(anchor("./src//app.py")).path == "src/app.py"
    assert rules.check_anchor(anchor("src/./app.py")).path == "src/app.py"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/home/me/api/src/app.py", "from the repository's top directory"),
        ("C:/api/app.py", "from the repository's top directory"),
        ("src/../../etc/passwd", "uses '..'"),
        ("src\\app.py", "separate directories with '/'"),
        ("src/a\x07pp.py", "control character"),
        ("./", "empty"),
        ("a/" * 600, "bytes of UTF-8"),
    ],
)
def test_paths_that_escape_or_do_not_name_a_file_are_refused_with_what_to_send(path: str, says: str) -> None:
    with pytest.raises(InvalidArgumentError, match=says):
        rules.check_anchor(anchor(path))


def test_hex_is_kept_in_lower_case_and_a_short_commit_or_a_non_sha256_hash_is_refused() -> None:
    checked = rules.check_anchor(anchor(commit=COMMIT.upper(), content_hash=HASH.upper()))
    assert (checked.commit, checked.content_hash) == (COMMIT, HASH)
    with pytest.raises(InvalidArgumentError, match="git rev-parse HEAD"):
        rules.check_anchor(anchor(commit=COMMIT[:12]))
    with pytest.raises(InvalidArgumentError, match="fileHash .* SHA-256"):
        rules.check_anchor(anchor(file_hash="da39a3ee5e6b4b0d3255bfef95601890afd80709"))  # a SHA-1


def test_a_clone_url_with_credentials_is_not_a_repository_name() -> None:
    with pytest.raises(InvalidArgumentError, match="no scheme, user or password"):
        rules.check_anchor(anchor(repo="https://me:token@github.com/acme/api.git"))
    assert rules.check_anchor(anchor(repo="github.com/acme/api")).repo == "github.com/acme/api"


def test_lines_are_a_range_from_one_and_a_symbol_is_a_dotted_name() -> None:
    assert rules.check_anchor(anchor(lines=LineRange(3, 3), symbol="Config.load")).lines == LineRange(3, 3)
    with pytest.raises(InvalidArgumentError, match="start <= end"):
        rules.check_anchor(anchor(lines=LineRange(9, 3)))
    with pytest.raises(InvalidArgumentError, match="counted from 1"):
        rules.check_anchor(anchor(lines=LineRange(0, 3)))
    with pytest.raises(InvalidArgumentError, match="no spaces"):
        rules.check_anchor(anchor(symbol="parse config"))


def test_a_note_keeps_one_anchor_per_file_and_symbol_the_last_given_winning() -> None:
    first, again = anchor(lines=LineRange(1, 4)), anchor(lines=LineRange(2, 9))
    symbol = anchor(symbol="load")
    kept = rules.check_anchors([first, symbol, again])
    assert kept == (again, symbol)


def test_at_most_twenty_anchors_and_the_error_names_the_bad_one() -> None:
    many = [anchor(f"src/{n}.py") for n in range(rules.MAX_ANCHORS + 1)]
    with pytest.raises(InvalidArgumentError, match="at most 20 anchors"):
        rules.check_anchors(many)
    with pytest.raises(InvalidArgumentError, match=r"^anchors\[1\]: Anchor path"):
        rules.check_anchors([anchor(), anchor("../x.py")])


def test_anchor_json_round_trips_and_leaves_out_what_is_not_set() -> None:
    whole = rules.check_anchor(anchor())
    assert set(rules.anchor_json(whole)) == {"repo", "path", "commit", "contentHash", "fileHash"}
    lined = rules.check_anchor(anchor(symbol="load", lines=LineRange(4, 9)))
    assert rules.anchor_json(lined)["lines"] == {"start": 4, "end": 9}
    assert rules.anchors_of_json([rules.anchor_json(whole), rules.anchor_json(lined)]) == (whole, lined)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("src/app.py", "An anchor is an object"),
        ({"repo": "r", "path": "a.py", "commit": COMMIT, "contentHash": HASH, "fileHash": HASH, "text": "x"},
         "Unknown anchor field 'text'"),
        ({"repo": "r", "path": "a.py", "commit": COMMIT, "contentHash": HASH}, "fileHash is missing"),
        ({"repo": "r", "path": "a.py", "commit": COMMIT, "contentHash": HASH, "fileHash": HASH, "lines": [1, 2]},
         'lines must be {"start": N, "end": M}'),
        ({"repo": "r", "path": "a.py", "commit": COMMIT, "contentHash": HASH, "fileHash": HASH,
          "lines": {"start": True, "end": 2}}, "lines must be"),
    ],
)  # fmt: skip
def test_json_that_is_not_an_anchor_is_refused_naming_its_index_and_the_fields_anchors_take(
    value: object, says: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=r"^anchors\[0\]: ") as raised:
        rules.anchors_of_json([value])
    assert says in raised.value.message
