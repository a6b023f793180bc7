"""Replies of many emulated EGMs in one process, written together once the polls stop.

Many machines in one process (:mod:`emulators.bank`) share a :class:`ReplyOutbox`: each
machine acts on its poll at once (that is when it locks, enables play, reads its meters)
and its reply is written once the burst of polls has been acted on (within 10 ms).  On a
real floor each EGM has its own processor; without the outbox the two-hundredth emulated
machine would act only after the other 199 had also paid for a socket write, an artefact
of emulating a bank in one process, not of SAS.
"""

from __future__ import annotations

import asyncio

from protocols.sas.carriers import Carrier


class ReplyOutbox:
    """Replies of many emulated EGMs, written together once the polls stop coming.

    A reply waits until no poll has been acted on for ``quiet`` seconds, and never longer
    than ``hold`` (well inside the 20 ms an EGM has to start its reply, sas.md §1).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, *, quiet: float = 0.0005, hold: float = 0.010
    ) -> None:
        self.loop = loop
        self.quiet = quiet
        self.hold = hold
        self._pending: list[tuple[Carrier, bytes]] = []
        self._first_at = 0.0
        self._last_at = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def put(self, carrier: Carrier, out: bytes) -> None:
        now = self.loop.time()
        if not self._pending:
            self._first_at = now
        self._last_at = now
        self._pending.append((carrier, out))
        if self._timer is None:
            self._timer = self.loop.call_at(now + self.quiet, self._check)

    def _check(self) -> None:
        self._timer = None
        now = self.loop.time()
        due = min(self._last_at + self.quiet, self._first_at + self.hold)
        if now < due:
            self._timer = self.loop.call_at(due, self._check)
            return
        self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        for carrier, out in pending:
            if not carrier.closed:
                carrier.write(out)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
