"""A heat across gateways starts at one instant: the agreed start and how to hit it.

The gateways agree on the start through the one thing they share, the central database:
the tournament heat's ``scheduled_start``.  Each gateway picks the heat up a lead time
ahead (``serve --start-lead``), measures its clock's offset from the database's
(:mod:`gateway.clocks.central`; over the limit is a blocker: the heat is not started
there), journals the agreed instant and its offset with the ARMED step, arms its
machines, journals RUNNING just ahead of the instant and fires the pre-framed unlock
burst at it, by its own clock corrected for the offset.  Each gateway's heat ends by its
heat clock from that instant; the scores of every bank land in the one stage standings.

Waiting is in two parts: an ``asyncio.sleep`` to a few milliseconds before the instant
(the loop keeps serving the links), then a bounded spin on ``time.perf_counter`` inside
the burst itself, after the frames are built, so the first byte leaves on the instant.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.clocks.central import ClockOffset

# RUNNING is journaled this far ahead: a commit on a loaded host took over 500 ms.
JOURNAL_LEAD = timedelta(seconds=1)
SPIN_S = 0.004  # the last few ms are spun, not slept (a sleep wakes up to ~1 ms late)


@dataclass(frozen=True, slots=True)
class SyncStart:
    at: datetime  # the agreed instant, by the central database's clock
    offset: ClockOffset  # this host's clock minus the central one

    @property
    def local(self) -> datetime:
        """The instant by this host's clock (corrected only by an offset the measurement
        can tell from zero: see :meth:`ClockOffset.correction_s`)."""
        return self.at + timedelta(seconds=self.offset.correction_s)

    def note(self) -> str:
        return (
            f"synchronised start at {self.at.isoformat()} (central clock); host clock "
            f"{self.offset.offset_s * 1000:+.1f} ms +/- {self.offset.error_s * 1000:.1f} ms"
        )


def perf_deadline(at: datetime, now: datetime, perf_now: float) -> float:
    """``at`` (wall clock) as a ``time.perf_counter`` reading, from a pair read together."""
    return perf_now + (at - now).total_seconds()


def spin_until(deadline: float, clock: Callable[[], float] = time.perf_counter) -> None:
    """Busy-wait to ``deadline`` (perf counter): the last :data:`SPIN_S` before a burst."""
    limit = 1_000_000  # bounded: a clock that never moves cannot hold the loop for ever
    while clock() < deadline and limit:
        limit -= 1


@dataclass(frozen=True, slots=True)
class SyncPolicy:
    """A gateway taking part in synchronised starts (``serve --start-lead``)."""

    lead_s: float  # heats are picked up this far ahead of their scheduled start
    limit_ms: float  # a host clock further than this from the centre is a blocker
    measure: Callable[[], Awaitable[ClockOffset]]  # this host's offset, measured now
