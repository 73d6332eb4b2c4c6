"""What an agent wrote is shown to a person as inert text: no markup, no script, no reordering by direction
overrides, and no invisible characters."""

from __future__ import annotations

import pytest

from notewell.entrypoints.console_pages import diff_lines, text

HOSTILE = [
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ('"><img src=x onerror=alert(1)>', "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"),
    ("safe\u202egnp.exe", 'safe<span class="cc">U+202E</span>gnp.exe'),
    ("a\u2066b\u2069c", 'a<span class="cc">U+2066</span>b<span class="cc">U+2069</span>c'),
    ("bell\x07 and escape\x1b[31m", 'bell<span class="cc">U+0007</span> and escape<span class="cc">U+001B</span>[31m'),
    ("zero\u200bwidth\ufeff", 'zero<span class="cc">U+200B</span>width<span class="cc">U+FEFF</span>'),
    ("line\u2028separator", 'line<span class="cc">U+2028</span>separator'),
    ("tabs\tand\nnewlines stay", "tabs\tand\nnewlines stay"),
]


@pytest.mark.parametrize(("hostile", "shown"), HOSTILE)
def test_untrusted_text_is_escaped_and_its_invisible_characters_shown(hostile: str, shown: str) -> None:
    assert text(hostile) == shown


def test_a_diff_of_hostile_bodies_is_inert_too() -> None:
    rendered = diff_lines("old <b>bold</b>", "new \u202e<script>x</script>")
    assert "<script>" not in rendered and "<b>" not in rendered
    assert "<del>-old &lt;b&gt;bold&lt;/b&gt;</del>" in rendered
    assert '<ins>+new <span class="cc">U+202E</span>&lt;script&gt;x&lt;/script&gt;</ins>' in rendered
