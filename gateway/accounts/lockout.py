"""Login backoff: how long a name or a source address waits after failed logins.

Theory of operation
-------------------
The first ``free`` failures cost nothing; each later one makes the next try wait twice
as long as the one before (from ``first``, at most ``longest``).  Failures alone never
lock anything for good: the wait is capped, so the owner of an account an attacker is
guessing at gets in between the attacker's tries, and an administrator can clear the
count at once (``reelgate users unlock``; a password reset clears it too).

An account's count lives on its row (``users.failed_logins`` / ``locked_until``,
counted in one ``UPDATE ... RETURNING``: :mod:`gateway.accounts.signin`).  Names that
are no account and source addresses are counted here, in memory, by :class:`Backoff`:
an unknown name backs off exactly as an account does (so the answers do not tell which
names exist), and a source address is slowed whatever names it tries.  A
:class:`Backoff` also admits at most ``in_flight`` attempts per key at once, so a burst
of concurrent tries is not all evaluated before the first failure is counted.

Pure: the caller passes the clock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

FREE_TRIES = 3
FIRST_DELAY = timedelta(seconds=2)
MAX_DELAY = timedelta(minutes=15)
# An admitted attempt holds its account until its verdict (at most this long), so
# concurrent tries are evaluated one at a time and each failure counts.
HOLD = timedelta(seconds=5)

# A source address (a desk's PC, a NAT) is shared by several people: more free tries.
SOURCE_FREE_TRIES = 10
# A key idle this long after its last failure is forgotten (its count starts afresh).
FORGET_AFTER = timedelta(hours=1)


def delay_after(failures: int, *, free: int = FREE_TRIES) -> timedelta | None:
    """The wait after ``failures`` failures in a row (None: none yet)."""
    if failures <= free:
        return None
    delay = FIRST_DELAY * int(2 ** min(failures - free - 1, 20))
    return min(delay, MAX_DELAY)


def locked_until_after(failures: int, now: datetime, *, free: int = FREE_TRIES) -> datetime | None:
    """When the next try is allowed after ``failures`` failures in a row."""
    delay = delay_after(failures, free=free)
    return None if delay is None else now + delay


def refusal(locked_until: datetime | None, now: datetime) -> str | None:
    """Why a login may not even be tried now, or None."""
    if locked_until is not None and now < locked_until:
        wait = int((locked_until - now).total_seconds()) + 1
        return f"login: too many failed attempts; try again in {wait} s"
    return None


@dataclass
class _Entry:
    failures: int = 0
    locked_until: datetime | None = None
    last_failure: datetime | None = None
    in_flight: int = 0


class Backoff:
    """Failed logins counted per key in memory (source addresses, unknown names).

    At most ``limit`` keys are kept (the least recently failed go first), so a flood
    of new keys costs bounded memory."""

    def __init__(self, *, free: int = FREE_TRIES, in_flight: int = 1, limit: int = 10_000) -> None:
        self.free = free
        self.in_flight = in_flight
        self.limit = limit
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def admit(self, key: str, now: datetime) -> datetime | None:
        """Take a turn for ``key``: None when admitted (the caller must then call
        :meth:`done`), else until when it must wait."""
        entry = self._entries.get(key)
        if (
            entry is not None
            and entry.last_failure is not None
            and now - entry.last_failure > FORGET_AFTER
            and entry.in_flight == 0
        ):
            del self._entries[key]
            entry = None
        if entry is None:
            entry = self._entries[key] = _Entry()
            self._trim()
        if entry.locked_until is not None and now < entry.locked_until:
            return entry.locked_until
        if entry.in_flight >= self.in_flight:
            return now + HOLD
        entry.in_flight += 1
        return None

    def done(self, key: str, now: datetime, *, failed: bool) -> tuple[int, datetime | None]:
        """The verdict of an admitted turn: the count of failures in a row and the new
        lock (None when this failure locked nothing, or on success)."""
        entry = self._entries.get(key)
        if entry is None:  # trimmed meanwhile: count afresh
            entry = self._entries[key] = _Entry(in_flight=1)
        entry.in_flight = max(entry.in_flight - 1, 0)
        if not failed:
            return entry.failures, None
        entry.failures += 1
        entry.last_failure = now
        entry.locked_until = locked_until_after(entry.failures, now, free=self.free)
        self._entries.move_to_end(key)
        self._trim()
        return entry.failures, entry.locked_until

    def clear(self, key: str) -> None:
        self._entries.pop(key, None)

    def failures(self, key: str) -> int:
        entry = self._entries.get(key)
        return 0 if entry is None else entry.failures

    def __len__(self) -> int:
        return len(self._entries)

    def _trim(self) -> None:
        while len(self._entries) > self.limit:
            self._entries.popitem(last=False)
