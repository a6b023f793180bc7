"""TCP carriers: an interface board's network port, and our emulators.

Built on :class:`asyncio.Protocol` rather than streams: a general poll is three bytes
out and one back, and at 5000 polls/s the stream machinery's per-call cost shows.
asyncio sets TCP_NODELAY on every TCP socket, so each write leaves at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from protocols.sas.carriers.base import Carrier


class TcpCarrier(Carrier, asyncio.Protocol):
    def __init__(self) -> None:
        Carrier.__init__(self)
        self._transport: asyncio.Transport | None = None
        self.peername: tuple[str, int] | None = None

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self.peername = transport.get_extra_info("peername")

    def data_received(self, data: bytes) -> None:
        self._deliver(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        self._mark_lost(exc if exc is not None else ConnectionResetError("peer closed"))

    # Carrier
    def _write(self, data: bytes) -> None:
        if self._transport is not None:
            self._transport.write(data)

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        """Drop the connection at once (fault injection: a cut cable)."""
        if self._transport is not None:
            self._transport.abort()


async def connect_tcp(host: str, port: int, *, connect_seconds: float = 5.0) -> TcpCarrier:
    """Connect to a SAS-over-TCP endpoint (an interface board or an emulator)."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(connect_seconds):
        _, protocol = await loop.create_connection(TcpCarrier, host, port)
    return protocol


async def serve_tcp(
    host: str, port: int, on_connection: Callable[[TcpCarrier], None], *, backlog: int = 100
) -> asyncio.Server:
    """Listen on ``host:port`` (port 0 picks a free one); each accepted connection is
    handed to ``on_connection`` as a carrier (the EGM side of the link)."""
    loop = asyncio.get_running_loop()

    def factory() -> TcpCarrier:
        carrier = TcpCarrier()
        loop.call_soon(on_connection, carrier)
        return carrier

    return await loop.create_server(factory, host, port, backlog=backlog)
