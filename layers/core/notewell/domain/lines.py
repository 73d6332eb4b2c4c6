"""One line per note, as a model reads it in a result's text: each thing said once.

`- ref [flags] title: excerpt`: the note named as its answer names it (refs.names: by ref, or by whole id), flags
only where they say something (the type where it is not implied, a status other than current), the excerpt alone
when it starts by repeating the title (a derived title is the body's first words), times to the minute. Pure, so the
services that budget a page charge exactly the line that is sent.
"""

from __future__ import annotations


def flags(*shown: str | None) -> str:
    kept = [flag for flag in shown if flag]
    return f" [{', '.join(kept)}]" if kept else ""


LABEL_WORDS = 2  # "Handoff", "Failed approach": a label, not a clause of the title


def said_once(title: str, text: str) -> str:
    """Title and text as one phrase: the text alone when it starts by repeating the title, the title alone when
    the text is its start cut short (a title taken from the body's first sentence, an excerpt shorter than it)."""
    if not text:
        return title
    head = title.rstrip("…").strip().casefold().replace("`", "")
    # A markdown heading's marks and code's backticks aside (a derived title leaves them out).
    start = text.lstrip("…").rstrip("…").lstrip("# ").strip().casefold().replace("`", "")
    if head and start.startswith(head):
        return text
    if start and text.endswith("…") and head.startswith(start):
        return title
    # A title that labels the text it was taken from ("Handoff: " + the session's first request) says the label once.
    label, colon, rest = title.partition(": ")
    if colon and rest and len(label.split()) <= LABEL_WORDS:
        labelled = said_once(rest, text)
        if labelled != f"{rest}: {text}":
            return f"{label}: {labelled}"
    return f"{title}: {text}"


def minute(timestamp: str) -> str:
    """'2026-03-01T12:34:56.789Z' as '2026-03-01 12:34': what a reader needs of a time (UTC)."""
    return timestamp[:16].replace("T", " ")


def status_flag(status: str) -> str | None:
    return status if status != "current" else None


def search_line(name: str, kind: str, status: str, title: str, snippet: str) -> str:
    return f"- {name}{flags(kind, status_flag(status))} {said_once(title, snippet)}"


def change_line(
    name: str, change: str, version: int, updated_at: str, kind: str, status: str, title: str, excerpt: str
) -> str:
    head = f"- {name} {change} v{version} {minute(updated_at)}"
    return f"{head}{flags(kind, status_flag(status))} {said_once(title, excerpt)}"
