"""The real clock and id source, plus a settable clock for tests and benchmarks."""

from __future__ import annotations

import secrets
import threading
import time
from datetime import UTC, datetime, timedelta

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
