"""Bank supervision between heats: general polls at the SAS cadence, events, link health.

One task per machine (architecture.md: one supervised task per machine link) drains the
machine's events (SAS general poll until 00; MQTT queued events) every ``interval_s``
(SAS: at most every 200 ms, at least every 5 s) and keeps what a technician needs: is it
online, what is open (door, tilt, handpay, game).  Events go to the live feed.  A machine
in a heat is *claimed* by the heat runner, which does its own polling; the supervisor
leaves it alone until released, so two pollers never share one half-duplex link.
A silent machine is retried with a growing pause (up to 5 s), never given up on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gateway.feed import FeedPublisher
from gateway.heats.preflight import pending_conditions
from gateway.machines.driver import TRANSIENT_ERRORS, DriverError, MachineEvent
from gateway.machines.links import MachineLink

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 5.0  # SAS: poll each EGM at least every 5 s


@dataclass(slots=True)
class MachineStatus:
    online: bool = False
    conditions: list[str] = field(default_factory=list)
    last_seen: datetime | None = None
    events: int = 0
    history: list[MachineEvent] = field(default_factory=list)  # open conditions' trail


class BankSupervisor:
    def __init__(
        self,
        links: Mapping[str, MachineLink],
        *,
        interval_s: float = 0.2,
        feed: FeedPublisher | None = None,
    ) -> None:
        if interval_s < 0.2:
            raise ValueError("SAS allows one poll per machine every 200 ms at most")
        self.links = links
        self.interval_s = interval_s
        self.feed = feed
        self.status = {m: MachineStatus() for m in links}
        self.claimed: set[str] = set()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def claim(self, machines: Iterable[str]) -> None:
        self.claimed.update(machines)

    def release(self, machines: Iterable[str]) -> None:
        self.claimed.difference_update(machines)

    def start(self) -> None:
        self._stop.clear()
        self._tasks = [
            asyncio.create_task(self._watch(m), name=f"supervise-{m}") for m in self.links
        ]

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def poll_once(self, machine_id: str) -> bool:
        """One general-poll round for a machine; False if it did not answer."""
        link = self.links[machine_id]
        status = self.status[machine_id]
        try:
            events = await link.call(link.driver.poll_events)
        except TRANSIENT_ERRORS as exc:
            if status.online:
                log.warning("machine %s stopped answering: %s", machine_id, exc)
                await self._publish(machine_id, {"event": "link-down", "detail": str(exc)})
            status.online = False
            return False
        except DriverError as exc:
            log.info("machine %s refused a general poll: %s", machine_id, exc)
            return True
        if not status.online:
            await self._publish(machine_id, {"event": "link-up"})
        status.online = True
        status.last_seen = datetime.now(UTC)
        if events:
            status.events += len(events)
            status.history = (status.history + events)[-50:]
            status.conditions = pending_conditions(status.history)
            for e in events:
                await self._publish(
                    machine_id, {"event": e.kind.value, "at": e.at.isoformat(), "code": e.code}
                )
        return True

    async def _watch(self, machine_id: str) -> None:
        pause = self.interval_s
        while not self._stop.is_set():
            if machine_id not in self.claimed:
                answered = await self.poll_once(machine_id)
                pause = self.interval_s if answered else min(MAX_BACKOFF_S, pause * 2)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), pause)

    async def _publish(self, machine_id: str, payload: dict[str, object]) -> None:
        if self.feed is not None:
            await self.feed.publish(f"machine/{machine_id}/event", dict(payload))
