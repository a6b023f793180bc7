"""This host's clock against the central database's: measured, judged, corrected for.

Gateways at several venues fire one heat's start at one instant, each by its own clock,
so each must know how far its clock is from the one they share: the central database's.
A sample brackets one read of the database's clock (``clock_timestamp()``) between two
local reads; the database's instant is taken to be at the middle of the bracket, so the
sample's error is at most half its round trip.  Of several samples the one with the
shortest round trip is kept (the least queueing; NTP's clock filter does the same).

Both clocks are passed in: :func:`measure` is driven by fakes in the unit tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from storage.clock import database_now

DEFAULT_LIMIT_MS = 50.0  # more than this from the centre: the host's NTP needs a look
DEFAULT_SAMPLES = 9


@dataclass(frozen=True, slots=True)
class Sample:
    sent: datetime  # local clock before the read
    central: datetime  # the database's clock
    received: datetime  # local clock after the read

    @property
    def round_trip_s(self) -> float:
        return (self.received - self.sent).total_seconds()

    @property
    def offset_s(self) -> float:
        """Local minus central: positive when this host's clock is ahead."""
        middle = self.sent + (self.received - self.sent) / 2
        return (middle - self.central).total_seconds()


@dataclass(frozen=True, slots=True)
class ClockOffset:
    offset_s: float  # local minus central
    error_s: float  # at most this far out: half the kept sample's round trip

    def blockers(self, limit_ms: float) -> list[str]:
        """Preflight: a host whose offset (error included) is over the limit may not
        take part in a synchronised start."""
        worst_ms = (abs(self.offset_s) + self.error_s) * 1000
        if worst_ms <= limit_ms:
            return []
        return [
            f"host clock {self.offset_s * 1000:+.1f} ms from the central database's "
            f"(+/- {self.error_s * 1000:.1f} ms), over the {limit_ms:g} ms limit: check NTP"
        ]

    @property
    def correction_s(self) -> float:
        """What to correct by: the offset, or 0 when it is within its own error (a loaded
        host's scheduling delays the reads unevenly; correcting by that noise would move
        a start that was right -- hosts on NTP are within a millisecond or two)."""
        return self.offset_s if abs(self.offset_s) > self.error_s else 0.0

    def local(self, central: datetime) -> datetime:
        """The instant ``central`` (by the database's clock) as this host's clock reads it."""
        return central + timedelta(seconds=self.correction_s)


def best(samples: Iterable[Sample]) -> ClockOffset:
    kept = min(samples, key=lambda s: s.round_trip_s)
    return ClockOffset(kept.offset_s, kept.round_trip_s / 2)


async def measure(
    central_now: Callable[[], Awaitable[datetime]],
    local_now: Callable[[], datetime],
    *,
    samples: int = DEFAULT_SAMPLES,
) -> ClockOffset:
    """``samples`` bracketed reads of the central clock; the best of them."""
    if samples < 1:
        raise ValueError("samples: at least one")
    taken = []
    for _ in range(samples):
        sent = local_now()
        central = await central_now()
        taken.append(Sample(sent, central, local_now()))
    return best(taken)


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def central_offset(
    engine: AsyncEngine,
    *,
    samples: int = DEFAULT_SAMPLES,
    local_now: Callable[[], datetime] = _utc_now,
) -> ClockOffset:
    """This host's offset from the database's clock, on one connection held throughout."""
    async with engine.connect() as conn:
        await database_now(conn)  # the first read pays for the connection's set-up
        return await measure(lambda: database_now(conn), local_now, samples=samples)
