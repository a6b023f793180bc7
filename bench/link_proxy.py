"""A venue's wide-area link to the central database (``emulators.wan_link.WanLink``) in a
thread of its own, for benchmarks run from synchronous code: cut, restore, close."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any

from emulators.wan_link import WanLink


class LinkProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self._link = WanLink(target_port, host)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._call(self._link.start())

    @property
    def host(self) -> str:
        return self._link.host

    @property
    def port(self) -> int:
        return self._link.port

    def _call(self, coro: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    def cut(self) -> None:
        self._call(self._link.cut())

    def restore(self) -> None:
        self._call(self._link.restore())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call(self._link.cut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
