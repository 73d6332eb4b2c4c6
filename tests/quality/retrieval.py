"""search_notes on a public conversational-memory retrieval set: recall@10 of full-text against hybrid.

    python -m tests.quality.retrieval [--data /work/data/quality] [--split report|tune] [--limit 100]
                                      [--weights 0.55] [--json out.json]

Each question gets its own project holding its haystack: every session cut into notes of a few turns (as an agent
would remember a conversation), each note tagged with its session and dated. The question is asked with
search_notes (limit 10), once by keywords (`fulltext`) and once with semantic: true (`hybrid`, for each vector
weight given); a question's recall@10 is the share of its evidence sessions that some top-10 note comes from.
Tune the weight on `tune`, report on `report`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from notewell.domain import hybrid
from notewell.domain.model import NoteType
from tests.quality.harness import DEFAULT_DATA, fresh_services, read_jsonl

NOTE_CHARS = 1_200  # a note holds consecutive lines of a session up to about this size
K = 10


def notes_of(session: dict[str, Any]) -> list[str]:
    """Consecutive lines of the session's text, packed into notes of at most about NOTE_CHARS characters."""
    notes: list[str] = []
    current = ""
    for line in str(session["text"]).splitlines():
        line = line.strip()
        if not line:
            continue
        if current and len(current) + len(line) + 1 > NOTE_CHARS:
            notes.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line[: NOTE_CHARS * 4]
    if current:
        notes.append(current)
    return notes


def run(data: Path, split: str, limit: int | None, weights: list[float]) -> dict[str, Any]:
    questions = read_jsonl(data / "retrieval.jsonl", split=split, sets=None, limit=limit)
    modes = ["fulltext", *(f"hybrid@{w}" for w in weights)]
    recall: dict[str, list[float]] = {mode: [] for mode in modes}
    answered_by: dict[str, set[str]] = {mode: set() for mode in modes}
    notes_written = 0
    started = time.perf_counter()
    with fresh_services("local") as (services, principal):
        for number, question in enumerate(questions):
            project = f"q-{number}"
            session_of: dict[str, str] = {}
            for session in question["sessions"]:
                for index, text in enumerate(notes_of(session)):
                    title = f"{session.get('date') or ''} {text.splitlines()[0][:60]}".strip()
                    view = services.notes.create(
                        principal, project, title=title, body=text, type=NoteType.NOTE,
                        tags=[f"part-{index}"],
                    )  # fmt: skip
                    session_of[view.note.id] = str(session["id"])
                    notes_written += 1
            relevant = {str(s) for s in question["relevant"]}
            for mode in modes:
                semantic = mode != "fulltext"
                if semantic:
                    hybrid.VECTOR_WEIGHT = float(mode.split("@")[1])
                outcome = services.search.run(
                    principal, project, question["question"][:500], semantic=semantic, limit=K
                )
                answered_by[mode].add(outcome.mode.value)
                found = {session_of[h.note.id] for h in outcome.hits}
                recall[mode].append(len(found & relevant) / len(relevant) if relevant else 0.0)
            if number % 10 == 9:
                print(f"  {number + 1}/{len(questions)} questions, {notes_written} notes, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip
    return {
        "split": split, "questions": len(questions), "notes": notes_written,
        "recall_at_10": {mode: round(sum(v) / len(v), 4) if v else None for mode, v in recall.items()},
        "answered_by": {mode: sorted(v) for mode, v in answered_by.items()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=["tune", "report"], default="report")
    parser.add_argument("--limit", type=int, default=None, help="At most this many questions.")
    parser.add_argument("--weights", default=str(hybrid.VECTOR_WEIGHT), help="Vector weights to try, comma-separated.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args.data, args.split, args.limit, [float(w) for w in args.weights.split(",")])
    print(f"search_notes recall@{K}, split {result['split']}: {result['questions']} questions, {result['notes']} notes")
    base = result["recall_at_10"]["fulltext"]
    for mode, value in result["recall_at_10"].items():
        gain = "" if mode == "fulltext" or value is None else f"  ({100 * (value - base):+.1f} points)"
        print(f"  {mode:14} {value:.3f}  answered by {', '.join(result['answered_by'][mode])}{gain}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
