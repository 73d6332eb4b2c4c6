"""The real clock and id source, a settable clock for tests and benchmarks, and the private files of a data
directory (the directory itself and the cursor key)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from notewell.config import ConfigError

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _base32(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to; thread-safe."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment


class UlidIdSource:
    """ULID-style ids: 48 bits of milliseconds then 80 random bits, so ids sort by creation time.

    Within one millisecond the random part is incremented, keeping ids from one process strictly increasing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def _ulid(self) -> str:
        with self._lock:
            ms = time.time_ns() // 1_000_000
            if ms <= self._last_ms:
                ms = self._last_ms
                self._last_rand += 1
            else:
                self._last_rand = secrets.randbits(80) >> 1  # headroom for increments
            self._last_ms = ms
            return _base32(ms, 10) + _base32(self._last_rand, 16)

    def note_id(self) -> str:
        return "n_" + self._ulid()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{self._ulid().lower()}"

    def secret(self) -> str:
        return secrets.token_urlsafe(32)


# ----- the data directory ----------------------------------------------------------------------------------

KEY_BYTES = 32


def private_directory(path: Path) -> None:
    """Create the data directory for its owner only (0700): other local users must not read the notes."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError as exc:  # exist_ok still refuses a path that is a file
        raise ConfigError(
            f"The data directory {path} is a file; set --data-dir or NOTEWELL_HOME to a directory."
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"Cannot create the data directory {path} ({exc.strerror}); set --data-dir or NOTEWELL_HOME to a "
            "directory you can write."
        ) from exc


def owner_only(path: Path) -> None:
    """Take group and other permissions off a file an older Notewell (or a loose umask) left readable."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            path.chmod(mode & 0o700)
    except OSError:  # absent, or not ours to change: nothing we can do here
        pass


def load_or_create_key(path: Path) -> bytes:
    """The secret kept in `path` (0600), created on first use.

    The key is written and synced in a temporary file created exclusively (0600) beside it, then hard-linked into
    place: a crash never leaves a short key behind, and of two processes starting together the first link wins
    and both use its key.
    """
    existing = _read_key(path)
    if existing is not None and len(existing) >= KEY_BYTES:
        owner_only(path)
        return existing
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:  # too short: an older Notewell crashed while writing it, so it sealed nothing
            temporary.replace(path)
        else:
            with contextlib.suppress(FileExistsError):  # another process linked its key first: use that one
                path.hardlink_to(temporary)  # creates `path`, failing if it exists
        _sync_directory(path.parent)
    except OSError as exc:
        raise ConfigError(
            f"Cannot create the key file {path} ({exc.strerror}); set --data-dir or NOTEWELL_HOME to a directory "
            "you can write."
        ) from exc
    finally:
        temporary.unlink(missing_ok=True)
    key = _read_key(path)
    if key is None or len(key) < KEY_BYTES:
        raise ConfigError(f"The key file {path} holds no usable key; delete it and start again.")
    return key


def _read_key(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"Cannot read the key file {path} ({exc.strerror}); check its permissions.") from exc


def _sync_directory(path: Path) -> None:
    # The new name is durable only once its directory is synced.
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
