"""The carrier interface: callbacks in, plain writes out (no streams on the hot path)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

DataHandler = Callable[[bytes], None]
LostHandler = Callable[[Exception | None], None]


class CarrierClosed(ConnectionError):
    """The carrier is closed (by us, by the peer, or because the link broke)."""


def _ignore_data(data: bytes) -> None:
    pass


def _ignore_lost(exc: Exception | None) -> None:
    pass


class Carrier:
    """A duplex pipe for the escaped SAS byte stream.

    Received bytes are pushed to the handler set with :meth:`set_handlers` as they
    arrive (possibly split or merged anyhow); the SAS framer above reassembles them.
    Bytes arriving before a handler is set are kept and delivered when it is set.
    """

    def __init__(self) -> None:
        self._on_data: DataHandler = _ignore_data
        self._on_lost: LostHandler = _ignore_lost
        self._pending: list[bytes] = []
        self._has_handler = False
        self._closed = False
        self._lost_exc: Exception | None = None
        self._closed_event = asyncio.Event()

    # -- for users -------------------------------------------------------------------
    def set_handlers(self, on_data: DataHandler, on_lost: LostHandler | None = None) -> None:
        self._on_data = on_data
        self._on_lost = on_lost or _ignore_lost
        self._has_handler = True
        pending, self._pending = self._pending, []
        for chunk in pending:
            on_data(chunk)
        if self._closed:
            self._on_lost(self._lost_exc)

    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, data: bytes) -> None:
        """Queue bytes for sending; raises :class:`CarrierClosed` once closed."""
        if self._closed:
            raise CarrierClosed("carrier is closed")
        self._write(data)

    def close(self) -> None:
        if not self._closed:
            self._close()
            self._mark_lost(None)

    async def wait_closed(self) -> None:
        await self._closed_event.wait()

    # -- for implementations ---------------------------------------------------------
    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _deliver(self, data: bytes) -> None:
        if self._closed:
            return
        if self._has_handler:
            self._on_data(data)
        else:
            self._pending.append(data)

    def _mark_lost(self, exc: Exception | None) -> None:
        if self._closed and self._closed_event.is_set():
            return
        self._closed = True
        self._lost_exc = exc
        self._closed_event.set()
        if self._has_handler:
            self._on_lost(exc)
