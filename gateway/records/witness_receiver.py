"""The receiving end of a syslog witness, for the venue's second gateway (or a test).

``reelgate audit witness-receive --listen HOST:PORT --file FILE`` accepts RFC 5424
messages over TCP (octet-counted frames, RFC 6587) and UDP on the same port, and
appends each message's MSG as one line to FILE — the file ``audit verify --witness
FILE`` reads.  It needs no key (it cannot tell a forged entry; ``audit verify`` does,
by the tag) and never reads the database: it only keeps what it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime

from gateway.records import syslog
from gateway.records.witness_sinks import FileSink

log = logging.getLogger("reelgate.records.witness")


def _line(message: bytes) -> str:
    text = syslog.message_text(message)
    return (
        "".join(c if c.isprintable() else " " for c in text)
        .encode("ascii", errors="replace")
        .decode("ascii")
    )


class WitnessReceiver:
    """Listens on one host and port (TCP and UDP) and appends what arrives to ``sink``."""

    def __init__(self, sink: FileSink) -> None:
        self.sink = sink
        self.received = 0
        self._tcp: asyncio.Server | None = None
        self._udp: asyncio.DatagramTransport | None = None

    def keep(self, messages: list[bytes]) -> None:
        if messages:
            self.sink.write([_line(m) for m in messages], datetime.now(UTC))
            self.received += len(messages)

    async def start(self, host: str, port: int) -> int:
        """Listen; the port (a free one for 0; UDP on the same number)."""
        self._tcp = await asyncio.start_server(self._client, host, port)
        bound = int(self._tcp.sockets[0].getsockname()[1])
        loop = asyncio.get_running_loop()
        receiver = self

        class Datagrams(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
                receiver.keep([data])

        transport, _ = await loop.create_datagram_endpoint(Datagrams, local_addr=(host, bound))
        self._udp = transport
        return bound

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = b""
        try:
            while chunk := await reader.read(65536):
                messages, buffer = syslog.unframe(buffer + chunk)
                self.keep(messages)
        except ValueError as exc:
            log.warning("witness receiver: dropped a sender: %s", exc)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def close(self) -> None:
        if self._udp is not None:
            self._udp.close()
        if self._tcp is not None:
            self._tcp.close()
            await self._tcp.wait_closed()
        self.sink.close()
