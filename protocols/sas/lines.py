"""Lines by port: the EGMs of one serial port (or one board's TCP port) share one line.

A serial device can be opened once, and an interface board that fronts a multi-drop
loop takes one host connection; so every :class:`SasClient` for an endpoint on the same
port must talk through the same :class:`SasLine`, which owns the line time
(:mod:`protocols.sas.line_schedule`).  :class:`LinePool` hands those clients out,
opening a port on first use, reopening it after it was lost, and closing it when its
last client leaves.

:func:`shared_lines` is the pool of the running event loop: a port is a process-wide
resource, so every driver of a process that reaches the same port must find the same
line whoever created it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from protocols.sas.carriers import Carrier
from protocols.sas.client import SAS_MIN_SPACING, SasClient, settings_for
from protocols.sas.endpoint import TCP_SCHEME, Endpoint, parse_endpoint
from protocols.sas.line import SasLine
from protocols.sas.link import LinkSettings


def port_key(endpoint: Endpoint) -> str:
    """The port an endpoint is on, whatever its address."""
    if endpoint.scheme == TCP_SCHEME:
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        return f"{TCP_SCHEME}://{host}:{endpoint.port}"
    return f"{endpoint.scheme}://{endpoint.device}"


class LinePool:
    """Open lines by port (see the module doc)."""

    def __init__(self) -> None:
        self._lines: dict[str, SasLine] = {}
        self._opening: dict[str, asyncio.Lock] = {}
        # Wraps each carrier as its port opens (port key, carrier): a capture's thin tap
        # (protocols.sas.carriers.tap); None: the carrier as opened.
        self.tap: Callable[[str, Carrier], Carrier] | None = None

    async def client(
        self,
        endpoint: str | Endpoint,
        *,
        connect_seconds: float = 5.0,
        settings: LinkSettings | None = None,
        min_spacing: float = SAS_MIN_SPACING,
        busy_tries: int = 3,
    ) -> SasClient:
        """A client for the endpoint's address on its port's line (opened if need be)."""
        ep = parse_endpoint(endpoint) if isinstance(endpoint, str) else endpoint
        key = port_key(ep)
        async with self._opening.setdefault(key, asyncio.Lock()):
            line = self._lines.get(key)
            if line is None or line.closed:
                carrier = await ep.open_carrier(connect_seconds=connect_seconds)
                if self.tap is not None:
                    carrier = self.tap(key, carrier)
                line = SasLine(
                    carrier,
                    settings=settings or settings_for(ep),
                    account_line_time=ep.scheme != TCP_SCHEME,
                    on_close=lambda lost: self._drop(key, lost),
                )
                self._lines[key] = line
        return SasClient(line, ep.address, min_spacing=min_spacing, busy_tries=busy_tries)

    def line(self, endpoint: str | Endpoint) -> SasLine | None:
        """The open line of an endpoint's port, if any."""
        ep = parse_endpoint(endpoint) if isinstance(endpoint, str) else endpoint
        line = self._lines.get(port_key(ep))
        return None if line is None or line.closed else line

    def _drop(self, key: str, line: SasLine) -> None:
        if self._lines.get(key) is line:
            del self._lines[key]

    async def close(self) -> None:
        lines, self._lines = list(self._lines.values()), {}
        for line in lines:
            await line.close()


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LinePool] = weakref.WeakKeyDictionary()


def shared_lines() -> LinePool:
    """The line pool of the running event loop."""
    loop = asyncio.get_running_loop()
    pool = _POOLS.get(loop)
    if pool is None:
        pool = _POOLS[loop] = LinePool()
    return pool
