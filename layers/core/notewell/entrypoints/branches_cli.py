"""`notewell branches sync`: record on a project its git default branch and which branches are merged into it, so
the notes written on them show on the default branch (domain/branches.py). The session-start hook does the same each
start; this is for a merge made outside a session (a pull request merged on the forge, then pulled), and for the
merges git cannot see: a squash or rebase merge leaves the branch's own commits out of the default branch, so
`git branch --merged` never lists it, and `--merged BRANCH` records it by name.

Reads the repository with git (entrypoints/hooks.py's helpers: read-only, standard library); writes one project
record, and nothing when nothing is new.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from notewell.entrypoints.hooks import current_branch, git_default_branch, merged_branches, project_for

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from notewell.bootstrap import Services
    from notewell.domain.model import Principal

    Session: TypeAlias = Callable[[], tuple[Services, Principal]]  # opens the store; who records the merges

VERBS = frozenset({"branches"})
GIT_SECONDS = 10.0  # not a hook: git may take its time on a large repository


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> list[argparse.ArgumentParser]:
    """Add `branches sync` to the CLI's verbs; returns its parser, for the options every store verb takes."""
    branches = verbs.add_parser("branches", help="Branch-aware notes: record which branches are merged.")
    actions = branches.add_subparsers(dest="branches_action", required=True)
    sync = actions.add_parser("sync", help="Ask git which branches are merged into the default one and record them.")
    sync.add_argument("--project", default=None, help="Notewell project (default: the repository's name).")
    sync.add_argument("--repo-dir", type=Path, default=None, help="A directory of the checkout (default: here).")
    sync.add_argument(
        "--default-branch",
        default=None,
        help="Record this as the default branch (default: git's, origin/HEAD else main or master; else the project's).",
    )
    sync.add_argument(
        "--merged",
        action="append",
        default=[],
        metavar="BRANCH",
        help="Record BRANCH as merged, as git cannot tell after a squash or rebase merge (repeatable).",
    )
    return [sync]


def run(args: argparse.Namespace, session: Session) -> int:
    directory = (args.repo_dir or Path.cwd()).resolve()
    project = args.project or project_for(directory)
    services, principal = session()
    known = next((p for p in services.projects.list(principal) if p.slug == project), None)
    # git's own default first: a project made before its first sync says `main`, whatever the repository uses.
    default = (
        args.default_branch or git_default_branch(directory, GIT_SECONDS) or (known.default_branch if known else "main")
    )
    merged = list(dict.fromkeys([*merged_branches(directory, default, GIT_SECONDS), *args.merged]))
    recorded = services.projects.update(principal, project, default_branch=default, merged_branches=merged)
    new = [name for name in recorded.merged_branches if known is None or name not in known.merged_branches]
    on = current_branch(directory)
    print(
        f"{project}: default branch {recorded.default_branch}; {len(recorded.merged_branches)} merged branch(es) "
        "recorded" + (f" (new: {', '.join(new)})" if new else "") + (f"; this checkout is on {on}" if on else "")
    )
    return 0
