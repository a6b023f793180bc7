"""The board's clock, set by the gateway.

A small board at the machine often has no battery-backed clock and may boot long before
NTP answers on a casino network, if it ever does.  The gateway is the floor's time
source: its ``set-clock`` command sets the EGM (SAS LP 7F) and this clock together, and
every timestamp the board publishes is the gateway's time from then on.  Until then the
board uses its system clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


class GatewayClock:
    """Wall time as an offset from the system clock; :meth:`set` moves the offset."""

    def __init__(
        self,
        system: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._system = system
        self.monotonic = monotonic  # for durations (heat timers): never jumps
        self._offset = timedelta(0)
        self.set_by_gateway = False

    def now(self) -> datetime:
        return self._system() + self._offset

    def set(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("set-clock needs a timestamp with a UTC offset")
        self._offset = when - self._system()
        self.set_by_gateway = True

    @property
    def offset_seconds(self) -> float:
        return self._offset.total_seconds()
