"""One machine's link as the heat sees it: a driver plus retries on transient errors.

Transient link errors (timeouts, a dropped connection, garbage on the wire) are retried
with ``tenacity``; a dropped connection is re-opened before the next try.  What is left
after the retry budget is raised to the caller, who decides (usually: malfunction,
T20).  Commands to one machine are serialised: SAS is half duplex.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from gateway.machines.driver import TRANSIENT_ERRORS, DriverError, LinkDown, MachineDriver
from gateway.machines.fd_room import make_room_for

T = TypeVar("T")


class MachineLink:
    def __init__(
        self,
        machine_id: str,
        driver: MachineDriver,
        *,
        attempts: int = 3,
        budget_s: float = 2.0,
        first_wait_s: float = 0.05,
    ) -> None:
        self.machine_id = machine_id
        self.driver = driver
        self.attempts = attempts
        self.budget_s = budget_s
        self.first_wait_s = first_wait_s
        self._busy = asyncio.Lock()
        self.opened = False

    async def open(self) -> None:
        await self.call(self._open)

    async def _open(self) -> None:
        if not self.opened:
            await self.driver.open()
            self.opened = True

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.driver.close()
        self.opened = False

    async def call(self, op: Callable[[], Awaitable[T]]) -> T:
        """Run ``op`` (a driver call) with retries on transient errors.

        The first try runs bare: building the retry machinery costs about 30 us, paid on
        every poll of every machine (a thousand-machine heat makes thousands a second),
        while nearly every call succeeds at once.  Only a transient failure enters the
        retry loop, with the rest of the budget and the backoff one step on, so the
        tries, waits and deadline are those of one retry loop from the start."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            return await self._try(op)
        except TRANSIENT_ERRORS as exc:
            if self.attempts <= 1 or loop.time() - started >= self.budget_s:
                raise
            if isinstance(exc, LinkDown):
                await self.close()  # the connection is gone: reconnect on the next try
        await asyncio.sleep(min(self.first_wait_s, 0.5))
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TRANSIENT_ERRORS),
            stop=stop_after_attempt(self.attempts - 1)
            | stop_after_delay(max(0.0, self.budget_s - (loop.time() - started))),
            wait=wait_exponential(multiplier=self.first_wait_s * 2, max=0.5),
            before_sleep=self._before_retry,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._try(op)
        raise AssertionError("unreachable: tenacity reraises")  # pragma: no cover

    async def _try(self, op: Callable[[], Awaitable[T]]) -> T:
        async with self._busy:
            if not self.opened and op.__name__ != "_open":
                await self.driver.open()
                self.opened = True
            return await op()

    async def once(self, op: Callable[[], Awaitable[T]]) -> T:
        """Run ``op`` once, without retries (the start fire: a retry there is a late start)."""
        async with self._busy:
            return await op()

    async def _before_retry(self, state: RetryCallState) -> None:
        outcome = state.outcome
        if outcome is not None and isinstance(outcome.exception(), LinkDown):
            # The connection is gone: reconnect on the next try.
            await self.close()


async def open_links(
    machines: Mapping[str, str],
    factory: Callable[[str, str], Any],
    *,
    open_timeout_s: float = 3.0,
) -> tuple[dict[str, MachineLink], dict[str, str]]:
    """Open a link per machine (id -> endpoint).  Returns the links and who failed to open."""
    make_room_for(len(machines))  # a file per link: past 1,024 on a big floor
    links = {m: MachineLink(m, factory(m, uri)) for m, uri in machines.items()}

    async def opening(link: MachineLink) -> None:
        await asyncio.wait_for(link.open(), open_timeout_s)

    results = await asyncio.gather(*(opening(x) for x in links.values()), return_exceptions=True)
    failed: dict[str, str] = {}
    for machine_id, result in zip(links, results, strict=True):
        if isinstance(result, BaseException):
            if not isinstance(result, DriverError | TimeoutError | OSError):
                raise result
            failed[machine_id] = f"{type(result).__name__}: {result}"
    return links, failed


async def close_links(links: Mapping[str, MachineLink]) -> None:
    await asyncio.gather(*(link.close() for link in links.values()), return_exceptions=True)
