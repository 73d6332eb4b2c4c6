"""Freshness check of anchored notes: how long `notewell check` takes over 500 anchored notes (the target: 200 ms).

    python -m tests.bench.freshness_anchors [--notes 500] [--plain 1500] [--files 100] [--rounds 15]

(Not tests/bench/freshness.py, which measures how soon a write shows in the change feed.) A git repository of
`--files` generated source files (14 functions each) is made in a temp dir and committed; a SQLite store (the local
store `notewell check` runs on) gets one project holding `--notes` anchored notes (a third anchored to a function,
a third to lines, a third to a whole file; all anchoring made by `notewell anchor`'s code) among `--plain` notes
without anchors. Then a tenth of the files get a function edited, another tenth a function inserted above the
others (their anchors move), two files are deleted, and that is committed. Each round times the whole check as the
command runs it, in a fresh process state (a new GitTree: every file read again, git asked again): listing the
project's anchored notes (its change feed, read to the end), then each anchor's facts and the verdicts, then
recording them for the console as the command does: the first round writes every verdict, later rounds find them
unchanged and write none. Figures only: nothing fails on speed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from notewell.adapters.git_tree import GitTree
from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.entrypoints.anchors_cli import anchor_of, check
from tests.bench.common import PROJECT, log, new_principal

if TYPE_CHECKING:
    from collections.abc import Sequence

FUNCTIONS = 14
IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com"}  # fmt: skip


def source(module: int, edited: bool = False, inserted: bool = False) -> str:
    parts = [f'"""Module {module}: generated for the freshness benchmark."""\n\nimport math\n']
    if inserted:
        parts.append("\ndef inserted_helper(value):\n    return value * 2\n")
    for n in range(FUNCTIONS):
        scale = 3 if edited and n == 0 else 2
        parts.append(
            f"\n\ndef handler_{n}(request, retries={n}):\n"
            f'    """Handle request kind {n} of module {module}."""\n'
            f"    total = 0\n"
            f"    for attempt in range(retries):\n"
            f"        total += math.floor(attempt * {scale})\n"
            f"    if total > {n * 10}:\n"
            f"        return None\n"
            f"    return request, total\n"
        )
    return "".join(parts)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **IDENTITY})


def run(notes: int, plain: int, files: int, rounds: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (repo / "src").mkdir(parents=True)
        git(repo, "init", "-q")
        for module in range(files):
            (repo / "src" / f"module_{module}.py").write_text(source(module))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "generated")

        store = SqliteStore(Path(tmp) / "notewell.db")
        services = bootstrap(Settings(data_dir=Path(tmp)), store=store)
        me = new_principal(services)
        tree = GitTree.around(repo)
        head = tree.head()
        started = time.perf_counter()
        for n in range(notes + plain):
            anchors = []
            if n < notes:
                path = f"src/module_{n % files}.py"
                kind = n % 3
                spec = f"{path}#handler_{n % FUNCTIONS}" if kind == 0 else f"{path}:{5 + n % 40}-{12 + n % 40}"
                anchors = [anchor_of(tree, spec if kind < 2 else path, repo, head)]
            services.notes.create(me, PROJECT, title=f"Note {n}", body=f"What note {n} says about the code.",
                                  anchors=anchors)  # fmt: skip
        log(f"seeded {notes} anchored and {plain} plain notes in {time.perf_counter() - started:.1f} s")

        tenth = max(1, files // 10)
        for module in range(tenth):
            (repo / "src" / f"module_{module}.py").write_text(source(module, edited=True))
        for module in range(tenth, 2 * tenth):
            (repo / "src" / f"module_{module}.py").write_text(source(module, inserted=True))
        for module in (files - 1, files - 2):
            (repo / "src" / f"module_{module}.py").unlink()
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "edit, insert, delete")

        totals: list[float] = []
        listing: list[float] = []
        recording: list[tuple[float, int]] = []  # (ms, verdicts written)
        verdicts: Counter[str] = Counter()
        for _ in range(rounds):
            began = time.perf_counter()
            services.notes.anchored(me, PROJECT)
            listing.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            report = check(services, me, GitTree.around(repo), [PROJECT])
            judged = time.perf_counter()
            written = services.freshness.record(me, [(c.view.note, c.verdict) for c in report.notes])
            recording.append(((time.perf_counter() - judged) * 1000, written))
            totals.append((time.perf_counter() - began) * 1000)
            verdicts = Counter(c.verdict.freshness.value for c in report.notes)
        store.close()
        return {
            "anchored_notes": notes,
            "plain_notes": plain,
            "files": files,
            "rounds": rounds,
            "check_ms_median": round(statistics.median(totals), 1),
            "check_ms_max": round(max(totals), 1),
            "listing_ms_median": round(statistics.median(listing), 1),
            "verdicts": dict(verdicts),
            "record_first_ms": round(recording[0][0], 1),
            "record_first_written": recording[0][1],
            "record_again_ms_median": round(statistics.median(ms for ms, _ in recording[1:]), 1),
            "record_again_written": max(n for _, n in recording[1:]),
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--notes", type=int, default=500, help="anchored notes (default 500)")
    parser.add_argument("--plain", type=int, default=1500, help="notes without anchors in the same project")
    parser.add_argument("--files", type=int, default=100, help="source files in the repository")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print("== freshness check of anchored notes (notewell check, SQLite, a real git repository) ==", flush=True)
    result = run(args.notes, args.plain, args.files, args.rounds)
    print(
        f"{result['anchored_notes']} anchored notes (+{result['plain_notes']} plain) over {result['files']} files: "
        f"check median {result['check_ms_median']} ms, max {result['check_ms_max']} ms over {result['rounds']} rounds "
        f"(target <= 200 ms); of which listing the anchored notes {result['listing_ms_median']} ms; "
        f"verdicts {result['verdicts']}; recording them: first check {result['record_first_ms']} ms "
        f"({result['record_first_written']} written), later checks median {result['record_again_ms_median']} ms "
        f"({result['record_again_written']} written)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
