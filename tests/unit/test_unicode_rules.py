"""Text no store can keep (a lone UTF-16 surrogate) is refused by the domain rules, whatever entrypoint sent it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import Link

LONE = "\ud800"
CHECKS: list[tuple[str, Callable[[], object]]] = [
    ("Title", lambda: rules.check_title(f"Deploy {LONE}")),
    ("Body", lambda: rules.check_body(f"Use SAM.{LONE}")),
    ("Tag 'ops\\ud800'", lambda: rules.check_tags(["api", f"ops{LONE}"])),
    ("Link relation", lambda: rules.check_links([Link("n_" + "0" * 26, f"needs{LONE}")])),
    ("Project summary", lambda: rules.check_project_text("summary", f"Sessions{LONE}")),
]


@pytest.mark.parametrize(("label", "check"), CHECKS, ids=[label for label, _ in CHECKS])
def test_a_lone_surrogate_is_refused_naming_the_field_and_the_character(
    label: str, check: Callable[[], object]
) -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        check()
    assert refused.value.message.startswith(f"{label} contains a lone surrogate (U+D800) at character ")
    assert "valid Unicode" in refused.value.message
    refused.value.message.encode("utf-8")  # the message itself can be sent


def test_surrogate_pairs_and_other_non_ascii_text_pass_unchanged() -> None:
    text = "Déploiement 🚀 with 日本語"  # 🚀 is a surrogate pair in UTF-16 (and in JSON escapes)
    assert rules.check_body(text) == text
    assert rules.check_title(text) == text
    assert rules.check_unicode("Body", text) == text
