"""Serial carrier: a real SAS loop through a UART with no 9-bit mode.

Receive
    The port runs with *space* parity checked and marked (``PARENB|CMSPAR`` with
    ``INPCK|PARMRK``, ``ISTRIP`` and ``IGNPAR`` off).  A byte whose 9th bit is set is then
    a parity error, which Linux hands us as ``FF 00 b``, and a data ``FF`` comes as
    ``FF FF``: exactly the escaped SAS stream, so the bytes go to the decoder untouched.
    (A line break also arrives as ``FF 00 00``, which reads as a wakeup on broadcast
    address 0 and is harmless to a host.)

Send
    One :meth:`write` is one message (the host line writes each poll whole, a sync
    general poll and the poll after it together).  The worker thread takes the writes one
    at a time, in order, and splits each into *parity runs* (:func:`split_wakeup`): the
    wakeup byte(s) with MARK parity, the rest with SPACE.  Each run is one ``os.write``;
    between two runs of different parity the UART is drained -- only until the
    transmitter is empty, no longer -- and the parity set without waiting
    (:mod:`protocols.sas.carriers.uart` says why, in wire terms, and which ports cannot
    keep the switch inside the 5 ms inter-byte gap: at 19,200 baud an 11-bit character is
    0.57 ms; polling the transmitter-empty flag switches in about 0.1-0.2 ms on a
    16550-class port, where ``tcdrain`` would sleep a jiffy per check, 4-8 ms at HZ=250;
    ``stats.worst_switch`` shows what a port does).  A message never shares a run with
    another, and nothing else runs on the thread between its address byte and its body:
    the only idle line inside a host message is that one switch.  An EGM's replies carry
    no wakeup bit (SPACE throughout: no switch); its chirp is a MARK run of its own.

pyserial opens the port in raw mode without parity; we then set the stick parity and
the input flags ourselves (pyserial clears PARMRK, sets ISTRIP for any parity, and its
own PARITY_SPACE set-up is rejected by some drivers).
"""

from __future__ import annotations

import asyncio
import contextlib
import termios
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import serial
import serial_asyncio_fast

from protocols.sas.carriers.base import Carrier
from protocols.sas.carriers.uart import TermiosUart, Uart, configure_sas_termios

BAUD_RATE = 19_200  # SAS line speed (sas.md §1)

UartFactory = Callable[[int], Uart]  # the port's fd -> its UART operations


def split_wakeup(escaped: bytes) -> Iterator[tuple[bool, bytes]]:
    """Split an escaped SAS stream into parity runs of (wakeup bit, raw bytes).

    ``FF 00 b`` is a byte with the wakeup bit (consecutive ones form one run, e.g. a sync
    general poll ``80`` and the next poll's address); ``FF FF`` a data ``FF``.  A dangling
    or malformed escape is a programming error on our own send side and raises.
    """
    run = bytearray()
    wakeup = False
    i, n = 0, len(escaped)
    while i < n:
        b, bit = escaped[i], False
        if b == 0xFF:
            if i + 1 >= n:
                raise ValueError("escaped stream ends inside an FF escape")
            nxt = escaped[i + 1]
            if nxt == 0x00 and i + 2 < n:
                b, bit, i = escaped[i + 2], True, i + 3
            elif nxt == 0xFF:
                i += 2
            else:
                raise ValueError(f"bad escape FF {nxt:02X} at offset {i}")
        else:
            i += 1
        if run and bit != wakeup:
            yield wakeup, bytes(run)
            run.clear()
        wakeup = bit
        run.append(b)
    if run:
        yield wakeup, bytes(run)


@dataclass(slots=True)
class SerialStats:
    """What the send side did, for a site checking its port against the 5 ms gap."""

    messages: int = 0  # writes taken by the worker (one message, or a sync and its poll)
    runs: int = 0  # parity runs written
    switches: int = 0  # parity changes (drain + set)
    # Longest time from the end of a MARK run's write to the start of the SPACE run's
    # write after it (drain + parity change): the idle line inside a host message is
    # about this minus one character time.  Seconds; None before the first switch.
    worst_switch: float | None = None


class _Reader(asyncio.Protocol):
    def __init__(self, carrier: SerialCarrier) -> None:
        self.carrier = carrier

    def data_received(self, data: bytes) -> None:
        self.carrier._deliver(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.carrier._mark_lost(exc)


class SerialCarrier(Carrier):
    """One end of a SAS serial loop (host or EGM: the same code serves both)."""

    def __init__(self, port: serial.Serial, *, uart: UartFactory = TermiosUart) -> None:
        super().__init__()
        self.port = port
        self.uart = uart(port.fileno())
        self.stats = SerialStats()
        self._parity_wakeup: bool | None = None
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._transport: asyncio.Transport | None = None
        self._writer_task = asyncio.get_running_loop().create_task(self._writer())

    def _write(self, data: bytes) -> None:
        self._queue.put_nowait(bytes(data))

    def _close(self) -> None:
        self._queue.put_nowait(None)
        if self._transport is not None:
            self._transport.close()

    async def _writer(self) -> None:
        while (data := await self._queue.get()) is not None:
            try:
                await asyncio.to_thread(self._write_blocking, data)
            except (OSError, termios.error, ValueError) as exc:
                self._mark_lost(exc)
                if self._transport is not None:
                    self._transport.close()
                return

    def _write_blocking(self, escaped: bytes) -> None:
        """One message, on the worker thread: its runs back to back, a drain and a
        parity change between two runs of different parity and nowhere else."""
        uart, stats = self.uart, self.stats
        stats.messages += 1
        for wakeup, raw in split_wakeup(escaped):
            if wakeup != self._parity_wakeup:
                was = self._parity_wakeup
                started = time.perf_counter()
                uart.drain()
                uart.set_wakeup(wakeup)
                self._parity_wakeup = wakeup
                if was and not wakeup:  # address byte -> body: inside a message
                    self._note_switch(time.perf_counter() - started)
            uart.write(raw)
            stats.runs += 1

    def _note_switch(self, seconds: float) -> None:
        stats = self.stats
        stats.switches += 1
        if stats.worst_switch is None or seconds > stats.worst_switch:
            stats.worst_switch = seconds

    async def aclose(self) -> None:
        self.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer_task


async def open_serial(
    path: str,
    *,
    baudrate: int = BAUD_RATE,
    uart: UartFactory = TermiosUart,
    **serial_kwargs: Any,
) -> SerialCarrier:
    """Open ``path`` (e.g. ``/dev/ttyUSB0``) as a SAS loop."""
    loop = asyncio.get_running_loop()

    def _open() -> serial.Serial:
        port = serial.Serial(
            path,
            baudrate=baudrate,
            bytesize=serial.EIGHTBITS,
            parity=serial.PARITY_NONE,
            stopbits=serial.STOPBITS_ONE,
            timeout=0,
            **serial_kwargs,
        )
        return port

    port = await loop.run_in_executor(None, _open)
    carrier = SerialCarrier(port, uart=uart)
    transport, _ = await serial_asyncio_fast.connection_for_serial(
        loop, lambda: _Reader(carrier), port
    )
    carrier._transport = transport
    # After the transport: it sets port.timeout, and every pyserial setter rewrites termios.
    configure_sas_termios(port.fileno())
    return carrier
