"""Serial carrier: a real SAS loop through a UART with no 9-bit mode.

Receive
    The port runs with *space* parity checked and marked (``PARENB|CMSPAR`` with
    ``INPCK|PARMRK``, ``ISTRIP`` and ``IGNPAR`` off).  A byte whose 9th bit is set is then
    a parity error, which Linux hands us as ``FF 00 b``, and a data ``FF`` comes as
    ``FF FF``: exactly the escaped SAS stream, so the bytes go to the decoder untouched.
    (A line break also arrives as ``FF 00 00``, which reads as a wakeup on broadcast
    address 0 and is harmless to a host.)

Send
    Wakeup bytes go out with *mark* parity, the rest with *space* parity.  Parity is
    switched with ``tcsetattr(TCSADRAIN)`` so the previous bytes have left the UART
    first.  That call blocks (about one character time), so the whole message is
    written from a worker thread, one message at a time, in order.  Switching parity
    mid-message risks the SAS 5 ms inter-byte gap on slow drivers (sas.md §1); a UART
    with a native 9-bit mode avoids that and can plug in here later.

pyserial opens the port in raw mode without parity; we then set the stick parity and
the input flags ourselves (pyserial clears PARMRK, sets ISTRIP for any parity, and its
own PARITY_SPACE set-up is rejected by some drivers).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from collections.abc import Callable, Iterator
from typing import Any

import serial
import serial_asyncio_fast

from protocols.sas.carriers.base import Carrier

BAUD_RATE = 19_200  # SAS line speed (sas.md §1)
CMSPAR = getattr(termios, "CMSPAR", 0o10000000000)  # Linux "stick" parity

# (cflag index, iflag index) in the termios attribute list
_IFLAG, _CFLAG = 0, 2


def split_wakeup(escaped: bytes) -> Iterator[tuple[bool, bytes]]:
    """Split an escaped SAS stream into runs of (wakeup bit, raw bytes).

    ``FF 00 b`` becomes a one-byte wakeup run; ``FF FF`` a data ``FF``.  A dangling or
    malformed escape is a programming error on our own send side and raises.
    """
    run = bytearray()
    i, n = 0, len(escaped)
    while i < n:
        b = escaped[i]
        if b != 0xFF:
            run.append(b)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("escaped stream ends inside an FF escape")
        nxt = escaped[i + 1]
        if nxt == 0xFF:
            run.append(0xFF)
            i += 2
        elif nxt == 0x00 and i + 2 < n:
            if run:
                yield False, bytes(run)
                run.clear()
            yield True, bytes((escaped[i + 2],))
            i += 3
        else:
            raise ValueError(f"bad escape FF {nxt:02X} at offset {i}")
    if run:
        yield False, bytes(run)


def configure_sas_termios(fd: int) -> None:
    """Space parity, checked and marked, 8 data bits: the SAS receive setting."""
    attrs = termios.tcgetattr(fd)
    attrs[_IFLAG] |= termios.INPCK | termios.PARMRK
    attrs[_IFLAG] &= ~(termios.ISTRIP | termios.IGNPAR | termios.IGNBRK | termios.BRKINT)
    attrs[_CFLAG] |= termios.PARENB | CMSPAR
    attrs[_CFLAG] &= ~termios.PARODD
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def set_wakeup_parity(fd: int, wakeup: bool) -> None:
    """MARK parity (9th bit set) or SPACE (clear) for the bytes written next.  Waits
    for bytes already written to leave (TCSADRAIN)."""
    attrs = termios.tcgetattr(fd)
    if wakeup:
        attrs[_CFLAG] |= termios.PARODD
    else:
        attrs[_CFLAG] &= ~termios.PARODD
    termios.tcsetattr(fd, termios.TCSADRAIN, attrs)


class _Reader(asyncio.Protocol):
    def __init__(self, carrier: SerialCarrier) -> None:
        self.carrier = carrier

    def data_received(self, data: bytes) -> None:
        self.carrier._deliver(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.carrier._mark_lost(exc)


class SerialCarrier(Carrier):
    """One end of a SAS serial loop (host or EGM: the same code serves both)."""

    def __init__(
        self,
        port: serial.Serial,
        *,
        set_parity: Callable[[int, bool], None] = set_wakeup_parity,
    ) -> None:
        super().__init__()
        self.port = port
        self._fd: int = port.fileno()
        self._set_parity = set_parity
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
        for wakeup, raw in split_wakeup(escaped):
            if wakeup != self._parity_wakeup:
                self._set_parity(self._fd, wakeup)
                self._parity_wakeup = wakeup
            view = memoryview(raw)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    async def aclose(self) -> None:
        self.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer_task


async def open_serial(
    path: str,
    *,
    baudrate: int = BAUD_RATE,
    set_parity: Callable[[int, bool], None] = set_wakeup_parity,
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
    carrier = SerialCarrier(port, set_parity=set_parity)
    transport, _ = await serial_asyncio_fast.connection_for_serial(
        loop, lambda: _Reader(carrier), port
    )
    carrier._transport = transport
    # After the transport: it sets port.timeout, and every pyserial setter rewrites termios.
    configure_sas_termios(port.fileno())
    return carrier
