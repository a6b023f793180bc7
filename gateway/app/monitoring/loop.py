"""Is the event loop turning?  A heartbeat task that measures its own lateness.

Everything in a Reelgate process (the machines' polls, the heat clock, the HTTP API)
runs on one event loop, so a callback that blocks it stops the floor.  :class:`LoopWatch`
sleeps ``interval_s`` at a time and notes how late each wake-up was (the *lag*).  The
process is live while the latest wake-up is recent and was not late by more than
``stuck_after_s``; a handler that can answer but finds the heartbeat old has caught a
loop that was stuck until a moment ago.  Time is read from ``clock`` (tests pass their own
and call :meth:`beat`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from gateway.web.api.ops import Check


class LoopWatch:
    def __init__(
        self,
        *,
        interval_s: float = 1.0,
        stuck_after_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval_s = interval_s
        self.stuck_after_s = stuck_after_s
        self.clock = clock
        self.last_beat = clock()
        self.lag_s = 0.0  # how late the latest wake-up was
        self.max_lag_s = 0.0
        self._task: asyncio.Task[None] | None = None

    def beat(self, expected_at: float | None = None) -> None:
        """One heartbeat: now, and (if given) when it was due."""
        now = self.clock()
        self.lag_s = 0.0 if expected_at is None else max(0.0, now - expected_at)
        self.max_lag_s = max(self.max_lag_s, self.lag_s)
        self.last_beat = now

    def check(self) -> Check:
        age = self.clock() - self.last_beat
        if age > self.stuck_after_s:
            return Check("event_loop", False, f"no heartbeat for {age:.1f} s")
        if self.lag_s > self.stuck_after_s:
            return Check("event_loop", False, f"last heartbeat {self.lag_s:.1f} s late")
        return Check("event_loop", True, f"lag {self.lag_s * 1000:.0f} ms")

    def start(self) -> None:
        if self._task is None:
            self.beat()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-watch")

    async def _run(self) -> None:
        while True:  # until cancelled by close()
            due = self.clock() + self.interval_s
            await asyncio.sleep(self.interval_s)
            self.beat(due)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
