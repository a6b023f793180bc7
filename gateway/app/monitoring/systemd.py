"""systemd's service notifications (sd_notify) and its watchdog, for ``reelgate serve``.

The protocol is one datagram per message, ``KEY=VALUE`` lines, sent to the Unix socket
named by ``$NOTIFY_SOCKET`` (a leading ``@`` is the abstract namespace).  Without that
variable (not under systemd, or ``Type=simple``) every call does nothing.  A message that
cannot be sent is logged once and dropped: the floor never waits for the service manager.

:func:`watch` is the service's side of ``Type=notify`` with ``WatchdogSec=``:

* ``READY=1`` once the gateway is serving and every bank's recovery from the journal is
  done (a heat under way at the last stop is back in hand);
* then ``WATCHDOG=1`` every half ``$WATCHDOG_USEC`` while the liveness checks pass (the
  event loop turns), with ``STATUS=`` saying what ``/readyz`` says, so ``systemctl
  status`` shows "ready" or which check is failing;
* ``STOPPING=1`` when it ends.

Why liveness and not readiness gates the watchdog: a restart cures a stuck process, not
a database outage, a broker away or a machine switched off.  The gateway rides those out
by design (the journal spool, the feed's queue, the supervisor's retries) and a heat
under way goes on; a watchdog restart then would stop the heat clock's owner mid-heat and,
with the database away, fail to start again.  Readiness is reported, not enforced.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence

from gateway.web.api.ops import Check

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify datagrams to ``address`` (None: does nothing)."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self._sock: socket.socket | None = None
        self._warned = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        return cls((env if env is not None else os.environ).get("NOTIFY_SOCKET") or None)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, **fields: str | int) -> bool:
        """Send ``KEY=VALUE`` lines (``notify(READY=1, STATUS="...")``); True if sent."""
        if self.address is None:
            return False
        text = "\n".join(f"{key}={_one_line(value)}" for key, value in fields.items())
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.setblocking(False)  # a full queue drops the message, never waits
            self._sock.sendto(text.encode("utf-8"), target)
        except OSError as exc:
            if not self._warned:
                log.warning("systemd notification to %s not sent: %s", self.address, exc)
                self._warned = True
            return False
        return True

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


def _one_line(value: str | int) -> str:
    return " ".join(str(value).split())


def watchdog_interval(env: Mapping[str, str] | None = None) -> float | None:
    """Half of ``$WATCHDOG_USEC`` in seconds (None: no watchdog asked for).  A
    ``$WATCHDOG_PID`` naming another process means the watchdog is not ours."""
    env = env if env is not None else os.environ
    raw, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
    if not raw.isdigit() or int(raw) == 0:
        return None
    if pid and pid != str(os.getpid()):
        return None
    return int(raw) / 1_000_000 / 2


def status_line(checks: Sequence[Check]) -> str:
    failing = [c for c in checks if not c.ok]
    if not failing:
        return "ready"
    return "not ready: " + "; ".join(f"{c.name}: {c.detail}" for c in failing)


async def watch(
    notifier: Notifier,
    *,
    recovered: Callable[[], Awaitable[object]],
    liveness: Callable[[], Sequence[Check]],
    readiness: Callable[[], Awaitable[Sequence[Check]]],
    interval_s: float | None,
    status_every_s: float = 5.0,
) -> None:
    """READY=1 after ``recovered``, then the watchdog (see the module docstring); runs
    until cancelled, then STOPPING=1.  Not under systemd: returns at once."""
    if not notifier.enabled:
        return
    try:
        await recovered()
        notifier.notify(READY=1, STATUS=status_line(await readiness()))
        tick = interval_s if interval_s is not None else status_every_s
        while True:  # until cancelled at the end of serve
            await asyncio.sleep(tick)
            live = liveness()
            if interval_s is not None and all(c.ok for c in live):
                notifier.notify(WATCHDOG=1)
            notifier.notify(STATUS=status_line([*live, *(await readiness())]))
    finally:
        notifier.notify(STOPPING=1)
