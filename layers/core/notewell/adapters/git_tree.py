"""A git working tree, read to anchor notes to code and to check their freshness (domain/freshness.py).

Runs the `git` command and reads files of the working tree; writes nothing, sends nothing anywhere. What leaves the
machine is only what the caller makes of the text: paths, names, line numbers and hashes.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from notewell.domain.errors import InvalidArgumentError, UnavailableError
from notewell.domain.freshness import FileText

GIT_SECONDS = 60.0
MAX_SEARCHED_FILES = 50  # files a moved symbol is looked for in: the first that git grep lists

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_SCP_LIKE = re.compile(r"^(?P<host>[^/:]+):(?!\d+/)(?P<path>.*)$")  # git@github.com:acme/api.git
_PORT = re.compile(r"^(?P<host>[^/:]+):\d+(?=/|$)")
_NAME_SPILL = re.compile(r"[^\w./-]+")


def repo_name(remote_url: str | None, top: Path) -> str:
    """The name a repository's anchors carry: its origin URL without scheme, user, password, port or '.git'
    ('github.com/acme/billing-api', the same for every clone), else its top directory's name."""
    url = (remote_url or "").strip()
    local = not url or url.startswith(("/", ".", "file:")) or re.match(r"^[A-Za-z]:[\\/]", url) is not None
    if local:
        name = (Path(url.removeprefix("file://")).name if url else "") or top.name
    else:
        rest = _SCHEME.sub("", url)
        rest = rest.rsplit("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest  # user[:password]@host
        scp = _SCP_LIKE.match(rest) if not _SCHEME.match(url) else None
        if scp is not None:
            rest = f"{scp['host']}/{scp['path']}"
        rest = _PORT.sub(lambda m: m["host"], rest)
        host, _, path = rest.partition("/")
        name = f"{host.lower()}/{path}" if path else host.lower()
    name = name.strip("/").removesuffix(".git")
    cleaned = "/".join(part for part in _NAME_SPILL.sub("-", name).split("/") if part.strip(".-"))
    return cleaned or "repo"


class GitTree:
    """The working tree around a directory. Files are read once each (`read` keeps them)."""

    def __init__(self, top: Path, name: str) -> None:
        self.top = top
        self.name = name
        self._files: dict[str, FileText | None] = {}
        self._mentions: dict[str, list[FileText]] = {}

    @classmethod
    def around(cls, directory: Path, *, name: str | None = None) -> GitTree:
        """The working tree `directory` is in; `name` overrides the repository's name (repo_name).

        Raises:
            InvalidArgumentError: `directory` is not in a git working tree.
            UnavailableError: git is not installed, or did not answer.
        """
        outside = f"{directory} is not in a git working tree; run this in your checkout, or pass --repo-dir."
        top = Path(_git(directory, "rev-parse", "--show-toplevel", what=outside).strip())
        if name is None:
            remote = _run(top, "config", "--get", "remote.origin.url")
            name = repo_name(remote.stdout.strip() if remote.returncode == 0 else None, top)
        return cls(top, name)

    def head(self) -> str:
        """The full id of the commit checked out.

        Raises:
            InvalidArgumentError: nothing is committed yet.
        """
        empty = f"{self.top} has no commit yet; commit the files to anchor first."
        return _git(self.top, "rev-parse", "--verify", "HEAD^{commit}", what=empty).strip()

    def relative(self, path: str, cwd: Path) -> str:
        """`path` (as typed, relative to `cwd`) from the top of the tree, with '/' separators.

        Raises:
            InvalidArgumentError: the path is outside the tree.
        """
        try:  # both resolved: a checkout reached through a symlink still matches git's top
            return (cwd / path).resolve().relative_to(self.top.resolve()).as_posix()
        except ValueError:
            raise InvalidArgumentError(
                f"{path} is outside the repository at {self.top}; anchor files inside it."
            ) from None

    def read(self, path: str) -> FileText | None:
        """The file at `path` (from the top) as it is in the working tree now; None when it is not a regular file."""
        if path not in self._files:
            self._files[path] = self._load(path)
        return self._files[path]

    def _load(self, path: str) -> FileText | None:
        target = self.top / path
        try:
            if not stat.S_ISREG(target.stat().st_mode):  # never open a FIFO or a device: it could block
                return None
            return FileText.of(path, target.read_bytes())
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
            return None

    def mentioning(self, word: str) -> list[FileText]:
        """Files of the tree (tracked, or new and not ignored) where `word` occurs as a word: where a moved symbol
        may now be defined."""
        if word not in self._mentions:
            found = _run(self.top, "grep", "-l", "-z", "-I", "-F", "-w", "--untracked", "-e", word)
            paths = [p for p in found.stdout.split("\0") if p][:MAX_SEARCHED_FILES] if found.returncode == 0 else []
            self._mentions[word] = [text for p in paths if (text := self.read(p)) is not None]
        return self._mentions[word]

    def has_local_changes(self, path: str) -> bool:
        """Whether the working tree's `path` differs from HEAD's (edited, new or deleted)."""
        return bool(_run(self.top, "status", "--porcelain", "-z", "--", path).stdout)


def _run(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # -c core.quotepath=off and -z: paths come back as they are; GIT_OPTIONAL_LOCKS=0: status takes no lock a
    # concurrent git command would trip over.
    command = ["git", "-c", "core.quotepath=off", "-C", str(directory), *args]
    try:
        return subprocess.run(
            command, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape", timeout=GIT_SECONDS,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, check=False,
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise UnavailableError("git is not installed or not on PATH; install git to anchor and check notes.") from exc
    except subprocess.TimeoutExpired as exc:
        raise UnavailableError(f"git did not answer within {GIT_SECONDS:.0f} s ({' '.join(args[:2])}); retry.") from exc


def _git(directory: Path, *args: str, what: str) -> str:
    """git's output; `what` is the message when git refuses."""
    done = _run(directory, *args)
    if done.returncode != 0:
        raise InvalidArgumentError(what)
    return done.stdout
