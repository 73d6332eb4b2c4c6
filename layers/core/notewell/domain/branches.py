"""Which notes a session on a git branch sees: its branch's, the default branch's and merged branches'. Pure.

A note records the branch it was written on (Note.branch; None: the default branch). A project records its
default branch and the branches merged into it (Project.default_branch, Project.merged_branches): a merged
branch's notes count as the default branch's from then on, without rewriting them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from notewell.domain import rules

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from notewell.domain.model import Note, Project


@dataclass(frozen=True, slots=True)
class BranchScope:
    """The notes a reader on `branch` sees; `branch` None: every note (a client that does not say its branch)."""

    branch: str | None
    default: str
    merged: frozenset[str]

    @classmethod
    def of(cls, project: Project, branch: str | None, *, all_branches: bool = False) -> BranchScope:
        return cls(None if all_branches else branch, project.default_branch, frozenset(project.merged_branches))

    def admits(self, note: Note) -> bool:
        if self.branch is None or note.branch is None:
            return True
        return note.branch in (self.branch, self.default) or note.branch in self.merged

    def split(self, notes: Iterable[Note]) -> tuple[list[Note], set[str]]:
        """The notes admitted, in order, and the ids of those left out."""
        shown: list[Note] = []
        hidden: set[str] = set()
        for note in notes:
            if self.admits(note):
                shown.append(note)
            else:
                hidden.add(note.id)
        return shown, hidden


def note_branch(project: Project, branch: str | None) -> str | None:
    """What a note written on `branch` records: None on the default branch (as a note written without one)."""
    if branch is None:
        return None
    rules.check_branch(branch)
    return None if branch == project.default_branch else branch


def merged_record(known: Sequence[str], merged: Iterable[str], default: str) -> tuple[str, ...]:
    """The project's merged branches after a sync reports `merged`: new ones appended (oldest first), the default
    branch never among them, the oldest forgotten past rules.MAX_MERGED_BRANCHES."""
    record = list(known)
    seen = set(record)
    for name in merged:
        rules.check_branch(name)
        if name != default and name not in seen:
            record.append(name)
            seen.add(name)
    return tuple(record[-rules.MAX_MERGED_BRANCHES :])


def hidden_line(count: int) -> str:
    """What get_context and search_notes say about the notes they left out."""
    noun = "note" if count == 1 else "notes"
    return f"{count} {noun} of other unmerged branches left out; allBranches: true shows them."
