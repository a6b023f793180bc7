"""An in-memory "null modem": two carriers wired back to back, for tests."""

from __future__ import annotations

import asyncio

from protocols.sas.carriers.base import Carrier


class MemoryCarrier(Carrier):
    """One end of :func:`memory_pair`.  Delivery is deferred to the next loop turn, as a
    socket's would be, so nothing re-enters the writer's call stack."""

    def __init__(self) -> None:
        super().__init__()
        self._peer: MemoryCarrier | None = None
        self._loop = asyncio.get_running_loop()

    def _write(self, data: bytes) -> None:
        peer = self._peer
        if peer is not None and data:
            self._loop.call_soon(peer._deliver, bytes(data))

    def _close(self) -> None:
        peer, self._peer = self._peer, None
        if peer is not None:
            peer._peer = None
            self._loop.call_soon(peer._mark_lost, ConnectionResetError("peer closed"))


def memory_pair() -> tuple[MemoryCarrier, MemoryCarrier]:
    """Return (host end, EGM end).  Must be called with a running event loop."""
    a, b = MemoryCarrier(), MemoryCarrier()
    a._peer, b._peer = b, a
    return a, b
