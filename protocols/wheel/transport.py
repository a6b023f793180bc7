"""Thin asyncio carriers for the wheel feed: serial (RS-232) and TCP.

URLs: ``wheel+serial:///dev/ttyUSB0`` (optional ``?baud=9600``; 8N1 with RTS/CTS, as
the reference gives) and ``wheel+tcp://HOST:PORT`` (a terminal server or the emulator).
The carrier only moves bytes; framing and debouncing are the sans-I/O parts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from protocols.wheel.codec import LineFramer
from protocols.wheel.debounce import Debouncer, WheelResult

READ_CHUNK = 256


@dataclass(frozen=True, slots=True)
class WheelEndpoint:
    kind: str  # "serial" or "tcp"
    target: str  # device path, or host
    port: int = 0
    baud: int = 9600


STANDARD_BAUDS = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)


def parse_wheel_url(url: str) -> WheelEndpoint:
    """Validate a wheel URL; raises ValueError naming the URL and what is wrong."""
    parts = urlsplit(url)
    try:
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise ValueError(f"wheel URL {url!r}: malformed query {parts.query!r}") from None
    allowed = {"baud"} if parts.scheme == "wheel+serial" else set()
    unknown = set(query) - allowed
    if unknown and parts.scheme in ("wheel+serial", "wheel+tcp"):
        raise ValueError(f"wheel URL {url!r}: unknown parameter(s) {', '.join(sorted(unknown))}")
    if parts.scheme == "wheel+serial":
        if not parts.path:
            raise ValueError(f"wheel URL {url!r} names no serial device")
        text = query.get("baud", ["9600"])[-1]
        if not text.isdigit() or int(text) not in STANDARD_BAUDS:
            bauds = ", ".join(map(str, STANDARD_BAUDS))
            raise ValueError(f"wheel URL {url!r}: baud must be one of {bauds}, not {text!r}")
        return WheelEndpoint("serial", parts.path, baud=int(text))
    if parts.scheme == "wheel+tcp":
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"wheel URL {url!r}: bad port ({exc})") from None
        if not parts.hostname or port is None:
            raise ValueError(f"wheel URL {url!r} needs HOST:PORT")
        return WheelEndpoint("tcp", parts.hostname, port=port)
    raise ValueError(f"wheel URL {url!r}: scheme must be wheel+serial or wheel+tcp")


@dataclass
class WheelLink:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


async def open_wheel(url: str) -> WheelLink:
    endpoint = parse_wheel_url(url)
    if endpoint.kind == "tcp":
        reader, writer = await asyncio.open_connection(endpoint.target, endpoint.port)
        return WheelLink(reader, writer)
    import serial_asyncio_fast  # only needed on a real serial line

    reader, writer = await serial_asyncio_fast.open_serial_connection(
        url=endpoint.target,
        baudrate=endpoint.baud,
        bytesize=8,
        parity="N",
        stopbits=1,
        rtscts=True,
    )
    return WheelLink(reader, writer)


async def read_results(
    reader: asyncio.StreamReader, debouncer: Debouncer | None = None
) -> AsyncIterator[WheelResult]:
    """Yield one result per wheel game until the link closes."""
    framer = LineFramer()
    bouncer = debouncer if debouncer is not None else Debouncer()
    while True:
        data = await reader.read(READ_CHUNK)
        if not data:
            return
        for line in framer.feed(data):
            result = bouncer.feed(line)
            if result is not None:
                yield result
