"""`notewell anchor` and `notewell check`: anchor notes to code in a git working tree, and see which anchored notes
the code has moved on from. Only paths, symbols, line numbers and hashes are stored; the code stays on this machine.

    notewell anchor NOTE_ID PATH[:START-END|#SYMBOL]...  anchor a note to files, lines or symbols (working tree, HEAD)
    notewell anchor --print PATH[:START-END|#SYMBOL]...  print those anchors as JSON, for a tool call's `anchors`
    notewell check [--project P] [--no-record]           each anchored note's freshness: fresh, moved, changed, gone

cli.py wires them in: `register(verbs)` adds the verbs and returns their parsers (cli gives them its store options),
`run(args, session)` runs one, opening the store through `session` only when it needs it (`--print` never does).
`check` exits 1 when a note is changed or gone, so scripts can stop on it, and records its verdicts in the store it
checked against (the console lists the changed and gone notes), unless --no-record.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from notewell.adapters.git_tree import GitTree
from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError, UnavailableError
from notewell.domain.freshness import STALE, Freshness, NoteVerdict, facts_in_tree, judge_note
from notewell.domain.model import Anchor, LineRange
from notewell.domain.refs import parse_ref
from notewell.entrypoints.wire import AnchorOut

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from notewell.bootstrap import Services
    from notewell.domain.freshness import AnchorVerdict, Place
    from notewell.domain.model import Principal
    from notewell.services.notes import NoteView

    Session: TypeAlias = Callable[[], tuple[Services, Principal]]  # opens the store; who anchors and checks

VERBS = frozenset({"anchor", "check"})
_SPEC = re.compile(r"(?P<path>.+?)(?::(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?|#(?P<symbol>[^#]+))?")
_ORDER = [Freshness.GONE, Freshness.CHANGED, Freshness.MOVED, Freshness.FRESH]  # stalest first


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> list[argparse.ArgumentParser]:
    """Add `anchor` and `check` to the CLI's verbs; returns their parsers, for the options every store verb takes."""
    anchor = verbs.add_parser(
        "anchor",
        help="Anchor a note to code: a file, lines (path:12-30) or a symbol (path#name), from the working tree.",
        usage="notewell anchor NOTE_ID PATH[:START-END|#SYMBOL]... | notewell anchor --print PATH...",
    )
    anchor.add_argument("items", nargs="+", metavar="NOTE_ID PATH", help="The note's id or ref, then paths.")
    anchor.add_argument(
        "--print", action="store_true", help="Print the anchors as JSON (for a tool call's anchors); no note id."
    )
    check = verbs.add_parser("check", help="List each anchored note's freshness: fresh, moved, changed or gone.")
    check.add_argument("--project", default=None, help="Only this project (default: every project).")
    check.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        help="Only print the verdicts; by default they are recorded in the store, where the console lists the notes "
        "to re-check (paths and verdicts only, never code).",
    )
    for sub in (anchor, check):
        sub.add_argument(
            "--repo-dir",
            type=Path,
            default=None,
            help="A directory of the git checkout (default: the current one); paths are taken from it.",
        )
        sub.add_argument("--repo", default=None, help="The repository's name (default: from its origin remote).")
        sub.add_argument("--json", action="store_true", help="Print JSON instead of text.")
    return [anchor, check]


def run(args: argparse.Namespace, session: Session) -> int:
    """Run `anchor` or `check` (args.verb); `session()` opens the store and says who writes. Paths are taken from
    --repo-dir when it is given, else from the current directory."""
    cwd = args.repo_dir or Path.cwd()
    tree = GitTree.around(cwd, name=args.repo)
    if args.verb == "anchor":
        return _anchor(args, session, tree, cwd)
    services, principal = session()
    report = check(services, principal, tree, [args.project] if args.project else None)
    if args.record:
        try:
            report.recorded = services.freshness.record(principal, [(c.view.note, c.verdict) for c in report.notes])
        except UnavailableError as exc:  # the verdicts are still worth printing; the next check records them
            print(f"notewell: verdicts not recorded: {exc.message} Run notewell check again to record them.",
                  file=sys.stderr)  # fmt: skip
    print(json.dumps(report.as_json(), ensure_ascii=False) if args.json else report.as_text())
    return 1 if report.stale else 0


# ----- anchor ----------------------------------------------------------------------------------------------------


def anchor_of(tree: GitTree, spec: str, cwd: Path, head: str) -> Anchor:
    """The anchor `spec` names (`path`, `path:START-END`, `path:LINE` or `path#Symbol.inner`, the path relative to
    `cwd`), from the working tree's text and the commit `head`. A path that is a file as typed is taken whole.

    Raises:
        InvalidArgumentError: the file, the lines or the symbol is not there.
    """
    match = _SPEC.fullmatch(spec)
    whole = (cwd / spec).is_file()
    if match is None or whole:
        path, symbol, start, end = spec, None, None, None
    else:
        path, symbol, start, end = match["path"], match["symbol"], match["start"], match["end"]
    relative = tree.relative(path, cwd)
    text = tree.read(relative)
    if text is None:
        raise InvalidArgumentError(f"{relative} is not a file in the working tree at {tree.top}; check the path.")
    lines: LineRange | None = None
    if symbol is not None:
        lines = text.symbol(symbol)
        if lines is None:
            raise InvalidArgumentError(
                f"No definition of {symbol!r} in {relative}; check the name (Outer.inner for a nested one), or anchor "
                f"its lines as {relative}:START-END."
            )
    elif start is not None:
        lines = LineRange(int(start), int(end or start))
        if not 1 <= lines.start <= lines.end <= len(text.lines):
            raise InvalidArgumentError(
                f"{relative} has lines 1 to {len(text.lines)}; lines {lines.start}-{lines.end} are not a range in it."
            )
    content_hash = text.whole_hash if lines is None else text.hash_of(lines)
    assert content_hash is not None  # the lines are inside the file
    return rules.check_anchor(Anchor(tree.name, relative, head, content_hash, text.whole_hash, symbol, lines))


def _note_named(value: str) -> str:
    """A note's id or ref (resolved by the service); a path given first is refused before the repository is read."""
    return value if parse_ref(value) is not None else rules.check_note_id(value)


def _anchor(args: argparse.Namespace, session: Session, tree: GitTree, cwd: Path) -> int:
    items: list[str] = args.items
    note_id, specs = (None, items) if args.print else (_note_named(items[0]), items[1:])
    if not specs:
        raise InvalidArgumentError("Name what to anchor after the note id: PATH, PATH:START-END or PATH#SYMBOL.")
    head = tree.head()
    anchors = [anchor_of(tree, spec, cwd, head) for spec in specs]
    for anchor in anchors:
        if tree.has_local_changes(anchor.path):
            print(
                f"notewell: {anchor.path} differs from HEAD ({head[:12]}); the anchor records the working tree.",
                file=sys.stderr,
            )
    described = [rules.anchor_json(anchor) for anchor in anchors]
    if note_id is None:
        print(json.dumps(described, ensure_ascii=False, separators=(",", ":")))
        return 0
    services, principal = session()
    view = services.notes.anchor(principal, note_id, anchors)
    if args.json:
        print(json.dumps({"id": view.note.id, "version": view.note.version, "anchors": described}, ensure_ascii=False))
    else:
        labels = ", ".join(AnchorOut.of(anchor).label() for anchor in anchors)
        print(f"Anchored {view.note.id} (now v{view.note.version}) to {labels} at {head[:12]} in {tree.name}.")
    return 0


# ----- check -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckedNote:
    project: str
    view: NoteView
    verdict: NoteVerdict


@dataclass(slots=True)
class CheckReport:
    repo: str
    head: str
    notes: list[CheckedNote] = field(default_factory=list)
    elsewhere: dict[str, int] = field(default_factory=dict)  # other repositories: notes anchored only there
    recorded: int | None = None  # verdicts that changed and were recorded for the console; None: not recorded

    @property
    def stale(self) -> bool:
        return any(checked.verdict.freshness in STALE for checked in self.notes)

    def as_text(self) -> str:
        counts = {kind: sum(1 for c in self.notes if c.verdict.freshness is kind) for kind in _ORDER}
        summary = ", ".join(f"{n} {kind.value}" for kind, n in counts.items() if n) or "none anchored here"
        noun = "note" if len(self.notes) == 1 else "notes"
        lines = [f"{len(self.notes)} anchored {noun} in {self.repo} at {self.head[:12]}: {summary}."]
        for checked in self.notes:
            note = checked.view.note
            lines.append(f"{checked.verdict.freshness.value:<8} {note.id}  {checked.project}  {note.title}")
            lines += [f"  {_anchor_line(note.id, judged)}" for judged in checked.verdict.anchors]
        for repo, count in sorted(self.elsewhere.items()):
            lines.append(f"{count} more anchored to {repo} only: run notewell check in that checkout.")
        if self.recorded is not None and self.notes:
            changed = f"{self.recorded} changed since the last check" if self.recorded else "none changed"
            lines.append(f"Verdicts recorded for the console ({changed}).")
        return "\n".join(lines)

    def as_json(self) -> dict[str, object]:
        return {
            "repo": self.repo,
            "head": self.head,
            "stale": self.stale,
            "notes": [
                {
                    "id": c.view.note.id, "project": c.project, "title": c.view.note.title,
                    "version": c.view.note.version, "freshness": c.verdict.freshness.value,
                    "anchors": [_anchor_json(judged) for judged in c.verdict.anchors],
                }
                for c in self.notes
            ],
            "elsewhere": self.elsewhere,
            "recorded": self.recorded,
        }  # fmt: skip


def check(services: Services, principal: Principal, tree: GitTree, projects: Sequence[str] | None) -> CheckReport:
    """The freshness of every live anchored note of the projects (None: all the caller sees) against `tree`, stalest
    first. Anchors to other repositories are left for a check in their own checkout."""
    slugs = projects if projects is not None else [p.slug for p in services.projects.list(principal)]
    report = CheckReport(tree.name, tree.head())
    for slug in slugs:
        for view in services.notes.anchored(principal, slug):
            mine = [anchor for anchor in view.note.anchors if anchor.repo == tree.name]
            verdict = judge_note((a, facts_in_tree(a, tree.read(a.path), tree.mentioning)) for a in mine)
            if verdict is not None:
                report.notes.append(CheckedNote(slug, view, verdict))
                continue
            for repo in {anchor.repo for anchor in view.note.anchors}:
                report.elsewhere[repo] = report.elsewhere.get(repo, 0) + 1
    report.notes.sort(key=lambda c: (_ORDER.index(c.verdict.freshness), c.project, c.view.note.title))
    return report


def _where(place: Place) -> str:
    return f"{place.path}:{place.lines.start}-{place.lines.end}" if place.lines else place.path


def _anchor_line(note_id: str, judged: AnchorVerdict) -> str:
    anchor, place = judged.anchor, judged.place
    label = AnchorOut.of(anchor).label()
    again = f"notewell anchor {note_id} {anchor.path}" + (f"#{anchor.symbol}" if anchor.symbol else "")
    if judged.freshness is Freshness.FRESH:
        return f"fresh    {label}"
    if judged.freshness is Freshness.MOVED:
        return f"moved    {label}: now at {_where(place) if place else '?'}, unchanged; re-anchor: {again}"
    if judged.freshness is Freshness.CHANGED:
        now = f" (now {_where(place)})" if place is not None and place.lines != anchor.lines else ""
        return (
            f"changed  {label}{now}: see git diff {anchor.commit[:12]} -- {anchor.path}; re-check the note, then "
            f"re-anchor: {again}"
        )
    what = f"{anchor.symbol!r} is no longer in it, nor unchanged elsewhere" if anchor.symbol else "not in the tree"
    return f"gone     {label}: {what}; update or retire the note"


def _anchor_json(judged: AnchorVerdict) -> dict[str, object]:
    place = judged.place
    now = None
    if place is not None and judged.freshness is not Freshness.FRESH:
        now = {
            "path": place.path,
            "lines": {"start": place.lines.start, "end": place.lines.end} if place.lines else None,
        }
    return {**rules.anchor_json(judged.anchor), "freshness": judged.freshness.value, "now": now}
