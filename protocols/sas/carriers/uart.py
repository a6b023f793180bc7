"""The UART under the serial carrier: write bytes, drain the transmitter, set the 9th bit.

Theory of operation (the wire, sas.md §1)
-----------------------------------------
At 19,200 baud an 11-bit SAS character (start, 8 data, wakeup, stop) takes 0.573 ms; LP 01
is 4 characters, 2.3 ms.  Between two characters of one message an EGM tolerates at most
5 ms of idle line, then drops the message.  A UART with no 9-bit mode sends the wakeup bit
as the parity bit: MARK for the address byte, SPACE for the rest, so inside every host
message there is one parity switch, between the address byte and the second byte.

The UART takes the parity from its line control register when it shifts a character out.
Changing it while the address byte still waits in the FIFO or the shift register sends
that byte with SPACE parity (no wakeup: the EGM ignores the message), so the switch waits
until the transmitter is empty -- and should wait no longer, since every microsecond after
the address byte's stop bit is idle line counted against the 5 ms.  The gap on the wire is
then: the time to notice "transmitter empty" + one termios call + the write of the body.

* ``tcdrain`` / ``TCSADRAIN`` is the obvious drain and the wrong one.  The Linux serial
  core's ``uart_wait_until_sent`` checks the transmitter, and while it is busy (it always
  is right after the address byte went in) sleeps ``msleep_interruptible`` of one jiffy
  per check: 1-2 ms at HZ=1000, 4-8 ms at HZ=250, 10-20 ms at HZ=100
  (``grep CONFIG_HZ /boot/config-$(uname -r)``).  At HZ=250 or below that alone can break
  the 5 ms gap.
* :meth:`TermiosUart.drain` instead polls ``TIOCSERGETLSR`` every ``poll_interval``
  (50 µs): ``TIOCSER_TEMT`` is the UART's own "transmitter empty", and the serial core
  clears it while bytes are still in the kernel's buffer.  On a 16550-class port
  (on-board or PCIe) the switch then costs about 0.1-0.2 ms (estimated: poll interval,
  sleep overshoot, one termios call; not measured on hardware): well under 5 ms whatever
  the kernel's HZ.
* A port without ``TIOCSERGETLSR`` (a pseudo-terminal, most USB adapters) falls back to
  ``tcdrain`` -- with the jiffy granularity above, and on USB with a driver-dependent idea
  of "sent".  FTDI chips answer ``TIOCSERGETLSR`` but each answer, like each parity
  change, is a USB control transfer (1 ms frames): expect 2-4 ms, close to the limit.
  Such a port cannot be relied on to switch within the gap; use a 16550-class port or a
  board with a 9-bit UART.  :class:`~protocols.sas.carriers.serial.SerialCarrier` keeps
  the worst switch it saw (``stats.worst_switch``) so a site can check its port.

Every call here blocks; the serial carrier makes them from one worker thread.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import struct
import termios
import time
from collections.abc import Callable
from typing import Protocol

CMSPAR = getattr(termios, "CMSPAR", 0o10000000000)  # Linux "stick" parity
TIOCSERGETLSR = getattr(termios, "TIOCSERGETLSR", 0x5459)
TIOCSER_TEMT = getattr(termios, "TIOCSER_TEMT", 0x01)
LSR_POLL_INTERVAL = 50e-6  # seconds between transmitter checks (~1/10 of a character)
DRAIN_LIMIT = 0.250  # longest LSR polling before falling back to tcdrain (a full buffer)
WRITE_TIMEOUT_MS = 1000  # a tty whose buffer stays full this long is treated as broken

# (iflag, cflag) indices in the termios attribute list
_IFLAG, _CFLAG = 0, 2
_NO_LSR = (errno.ENOTTY, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


class Uart(Protocol):
    """What the serial carrier needs of a port (tests inject their own)."""

    def write(self, data: bytes) -> None:
        """Hand all of ``data`` to the port, in order."""

    def drain(self) -> None:
        """Return once every byte written so far has left the transmitter."""

    def set_wakeup(self, wakeup: bool) -> None:
        """MARK parity (9th bit set) or SPACE for bytes written next; no draining."""


def configure_sas_termios(fd: int) -> None:
    """Space parity, checked and marked, 8 data bits: the SAS receive setting."""
    attrs = termios.tcgetattr(fd)
    attrs[_IFLAG] |= termios.INPCK | termios.PARMRK
    attrs[_IFLAG] &= ~(termios.ISTRIP | termios.IGNPAR | termios.IGNBRK | termios.BRKINT)
    attrs[_CFLAG] |= termios.PARENB | CMSPAR
    attrs[_CFLAG] &= ~termios.PARODD
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def _ioctl_lsr(fd: int) -> int:
    (lsr,) = struct.unpack("I", fcntl.ioctl(fd, TIOCSERGETLSR, bytes(4)))
    return int(lsr)


class TermiosUart:
    """A Linux tty: ``os.write``, ``TIOCSERGETLSR`` polling (else ``tcdrain``), and stick
    parity by ``tcsetattr(TCSANOW)``."""

    def __init__(
        self,
        fd: int,
        *,
        poll_interval: float = LSR_POLL_INTERVAL,
        drain_limit: float = DRAIN_LIMIT,
        read_lsr: Callable[[int], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``read_lsr``, ``clock``, ``sleep``: the ``TIOCSERGETLSR`` call and the time
        functions of the transmitter polling, replaceable by tests."""
        self.fd = fd
        self.poll_interval = poll_interval
        self.drain_limit = drain_limit
        self._read_lsr = read_lsr or _ioctl_lsr
        self._clock = clock
        self._sleep = sleep
        self.has_lsr: bool | None = None  # unknown until the first drain
        self.write_calls = 0  # os.write calls made (one per run unless the tty was full)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:  # the port is non-blocking: wait for room
                written = 0
            self.write_calls += 1
            view = view[written:]
            if view and not select.select([], [self.fd], [], WRITE_TIMEOUT_MS / 1000)[1]:
                raise TimeoutError("serial port accepted no bytes for 1 s")

    def drain(self) -> None:
        if self.has_lsr is not False and self._poll_transmitter_empty():
            return
        termios.tcdrain(self.fd)

    def _poll_transmitter_empty(self) -> bool:
        """True once TIOCSER_TEMT is set; False when the port has no such ioctl or it
        stayed busy past ``drain_limit`` (the caller then uses tcdrain)."""
        deadline = self._clock() + self.drain_limit
        while True:
            try:
                lsr = self._read_lsr(self.fd)
            except OSError as exc:
                if exc.errno not in _NO_LSR:
                    raise
                self.has_lsr = False
                return False
            self.has_lsr = True
            if lsr & TIOCSER_TEMT:
                return True
            if self._clock() > deadline:
                return False
            self._sleep(self.poll_interval)

    def set_wakeup(self, wakeup: bool) -> None:
        attrs = termios.tcgetattr(self.fd)
        if wakeup:
            attrs[_CFLAG] |= termios.PARODD
        else:
            attrs[_CFLAG] &= ~termios.PARODD
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
