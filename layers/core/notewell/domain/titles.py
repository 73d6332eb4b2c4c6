"""A note's title when the writer gave none: its first sentence, cut at a clause or word boundary."""

from __future__ import annotations

import re

TITLE_LIMIT = 80
_LINE_MARKS = re.compile(r"^[#>*+\-\s\d.)]+")
# Emphasis, not an identifier's underscores (max_retries, x86_64); a link keeps its text. Code spans are kept whole.
_INLINE_MARKS = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|\[([^\]]*)\]\([^)]*\)")
_CODE_SPAN = re.compile(r"`+([^`]*)`+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A title never ends on a word that leads into what was cut ("Deploys go to the", "Sessions expire because").
_TRAILING = frozenset(
    {"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is",
     "are", "was", "were", "be", "because", "since", "while", "if", "via", "per", "not", "no", "instead", "than",
     "that", "which", "who", "into"}
)  # fmt: skip


def derive_title(content: str, limit: int = TITLE_LIMIT) -> str:
    """A short title from the content's first sentence, cut at a clause or word boundary, never mid-phrase."""
    line = next((x for x in (_plain(raw) for raw in content.splitlines()) if x), "")
    sentence = _SENTENCE_END.split(line, maxsplit=1)[0].strip().rstrip(".!?;:, ")
    if not sentence:
        return "Untitled note"
    if len(sentence) > limit:
        cut = sentence[:limit]
        clause = max(cut.rfind(sep) for sep in (";", ":", " — ", " - ", ",", " ("))
        if clause >= 25:
            sentence = cut[:clause]
        else:
            words = cut[: cut.rfind(" ")].split() if " " in cut else [cut]
            while len(words) > 2 and words[-1].casefold().strip(",;:") in _TRAILING:
                words.pop()
            sentence = " ".join(words)
    sentence = sentence.rstrip(".!?;:,- ")
    if not sentence:
        return "Untitled note"
    first = sentence.split(maxsplit=1)[0]
    # A word of letters starts a sentence; a name with dots, slashes or digits (app.py, src/x, k8s) stays as written.
    return sentence[0].upper() + sentence[1:] if first.isalpha() else sentence


def _plain(markdown_line: str) -> str:
    """The line's words without Markdown marks; what sits in a code span is taken as written."""
    if markdown_line.lstrip().startswith(("```", "~~~")):  # a code fence's opening line names a language, no more
        return ""
    line = _LINE_MARKS.sub("", markdown_line)
    pieces = _CODE_SPAN.split(line)  # even indexes are prose, odd ones code
    return "".join(p if i % 2 else _INLINE_MARKS.sub(r"\1", p) for i, p in enumerate(pieces)).strip()
