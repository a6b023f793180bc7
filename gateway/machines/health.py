"""Board health wired into the gateway: SNMP results (:mod:`protocols.snmp.manager`) as
:class:`~gateway.machines.driver.MachineEvent` values, trap marks, and the floor's machines.

How the rest of the gateway uses it::

    monitor = HealthMonitor(TrapReceiver(), HealthPoller())
    await monitor.start()                       # trap port: monitor.receiver.port
    await monitor.add_board(SnmpTarget("A01", "127.0.0.1", 1161, V3User(...)))
    async for event in monitor.events():        # gateway.machines.driver.MachineEvent values
        ...                                     # same kinds as SAS exceptions / MQTT events
    monitor.is_marked("A01")                    # a trap marked it (link, power, door)
    monitor.clear("A01")                        # a technician checked it: the marks cleared
    await monitor.preflight(["A01", "A02"])     # {machine: [problems]} before a heat

Trap -> :class:`~gateway.machines.driver.MachineEvent` kind: ``rgLinkDown`` -> LINK_DOWN,
``rgPowerLost`` -> POWER_LOST, ``rgDoorOpened`` -> DOOR_OPENED, ``rgLinkUp`` -> LINK_UP.
LINK_DOWN, POWER_LOST and DOOR_OPENED also *mark* the machine (:class:`TrapMarks`) until
cleared: the heat engine treats a marked seat as a malfunction candidate (T20/T21)
and preflight refuses it.  With a :class:`~storage.marks.MarkStore` (``TrapMarks.load``)
every mark is also a database row, so it survives a restart; a technician clears one
with ``reelgate bank clear-mark`` (audited), and preflight re-reads the table first.
``events()`` gives every subscriber its own bounded queue; a subscriber that falls far
behind gets a QUEUE_OVERFLOW event in place of what was dropped.

The boards come from the caller as machine id -> :class:`BoardEndpoint` (the floor's
resolved SNMP endpoints, ``gateway.floor.model.resolve_snmp``: a machine knows no floor
file): :func:`watch_boards` adds every such board to a monitor,
:func:`board_problems` is the one-shot preflight ``bank check`` uses, and
:func:`route_events` hands each trap event to whoever runs the heat
(``HeatRunner.report_event``: T20/T21).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from gateway.machines.driver import MachineEvent, MachineEventKind
from protocols.snmp.errors import SnmpError
from protocols.snmp.manager import HealthPoller, SnmpTarget, TrapReceiver
from protocols.snmp.mib import BoardTrap, Notification
from protocols.snmp.security import Security
from storage.marks import MarkRow, MarkStore

log = logging.getLogger(__name__)

SUBSCRIBER_BACKLOG = 1000

_EVENT_KIND = {
    Notification.LINK_DOWN: MachineEventKind.LINK_DOWN,
    Notification.POWER_LOST: MachineEventKind.POWER_LOST,
    Notification.DOOR_OPENED: MachineEventKind.DOOR_OPENED,
    Notification.LINK_UP: MachineEventKind.LINK_UP,
}
_MARKING = frozenset({Notification.LINK_DOWN, Notification.POWER_LOST, Notification.DOOR_OPENED})


class BoardEndpoint(Protocol):
    """Where a board's SNMP agent listens and how to talk to it, secrets included (the
    floor's ``SnmpEndpoint`` is one)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def security(self) -> Security: ...


def trap_event(trap: BoardTrap, at: datetime) -> MachineEvent:
    """A board's trap as the event a driver would report (code: the notification's
    sub-identifier, for the record)."""
    return MachineEvent(
        machine_id=trap.machine_id,
        kind=_EVENT_KIND[trap.notification],
        at=at,
        code=trap.notification.value[1],
    )


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MachineEventKind
    at: datetime
    heat_id: str
    mid_heat: bool


class TrapMarks(Mapping[str, tuple[Mark, ...]]):
    """Machine -> the marks traps left on it, oldest first; only marked machines are keys.

    Read it as a mapping; change it only with :meth:`add` and :meth:`clear`.  ``initial``
    seeds it.  With a ``store`` each :meth:`add` is also written to the database (in the
    background: a trap handler cannot wait; :meth:`flush` awaits the writes), and
    :meth:`refresh` reloads from it (a mark cleared by another process)."""

    def __init__(
        self,
        initial: Mapping[str, Iterable[Mark]] | None = None,
        *,
        store: MarkStore | None = None,
    ) -> None:
        self._marks: dict[str, list[Mark]] = {}
        self.store = store
        self._writes: set[asyncio.Task[None]] = set()
        for machine_id, marks in (initial or {}).items():
            for mark in marks:
                self._marks.setdefault(machine_id, []).append(mark)

    @classmethod
    async def load(cls, store: MarkStore) -> TrapMarks:
        """The marks kept in the database (those left before a restart), written back to it."""
        marks = cls(store=store)
        await marks.refresh()
        return marks

    async def refresh(self) -> None:
        """Replace the marks in memory with the stored ones (no store: nothing to do)."""
        if self.store is None:
            return
        await self.flush()
        loaded: dict[str, list[Mark]] = {}
        for row in await self.store.load():
            mark = Mark(MachineEventKind(row.kind), row.at, row.heat_id, row.mid_heat)
            loaded.setdefault(row.machine_id, []).append(mark)
        self._marks = loaded

    def add(self, machine_id: str, mark: Mark) -> None:
        self._marks.setdefault(machine_id, []).append(mark)
        if self.store is not None:
            row = MarkRow(machine_id, mark.kind.value, mark.at, mark.heat_id, mark.mid_heat)
            task = asyncio.get_running_loop().create_task(self._write(self.store, row))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    @staticmethod
    async def _write(store: MarkStore, row: MarkRow) -> None:
        try:
            await store.add(row)
        except Exception:  # the mark still holds in memory; a lost row must not kill traps
            log.exception("machine %s: trap mark not stored", row.machine_id)

    async def flush(self) -> None:
        """Wait until every mark added so far is stored."""
        while self._writes:
            await asyncio.gather(*list(self._writes))

    def clear(self, machine_id: str) -> tuple[Mark, ...]:
        """Remove every mark of ``machine_id`` from memory; returns what was cleared (empty
        if none).  The stored rows go with :meth:`clear_stored` (audited)."""
        return tuple(self._marks.pop(machine_id, ()))

    async def clear_stored(self, machine_id: str, *, actor: str, reason: str) -> tuple[Mark, ...]:
        """A technician checked the machine: its marks go, from the database too, audited."""
        if self.store is not None:
            await self.flush()
            await self.store.clear(machine_id, actor=actor, reason=reason)
        return self.clear(machine_id)

    def is_marked(self, machine_id: str) -> bool:
        return machine_id in self._marks

    def __getitem__(self, machine_id: str) -> tuple[Mark, ...]:
        return tuple(self._marks[machine_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)


@dataclass(slots=True)
class _Subscriber:
    queue: deque[MachineEvent] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class HealthMonitor:
    def __init__(
        self,
        receiver: TrapReceiver,
        poller: HealthPoller | None = None,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        marks: TrapMarks | None = None,
    ) -> None:
        self.receiver = receiver
        self.poller = poller or HealthPoller()
        self.clock = clock
        self.targets: dict[str, SnmpTarget] = {}
        self.unreachable: dict[str, str] = {}  # boards add_board could not reach, and why
        self.marks = TrapMarks() if marks is None else marks
        self.unknown_machine = 0
        self._subscribers: list[_Subscriber] = []
        receiver.on_trap = self.note_trap

    async def start(self) -> int:
        return await self.receiver.start()

    def close(self) -> None:
        self.receiver.close()
        self.poller.close()

    async def add_board(self, target: SnmpTarget) -> None:
        """Watch a board: poll it and accept its traps (v3: learns its engine id)."""
        await self.receiver.accept(target, self.poller)
        self.targets[target.machine_id] = target
        self.unreachable.pop(target.machine_id, None)

    # -- traps -> events ---------------------------------------------------------------
    def note_trap(self, trap: BoardTrap) -> MachineEvent | None:
        """A trap the receiver believed: mark the machine if it says so and hand the event
        to every subscriber.  None for a machine that is not watched (counted)."""
        if trap.machine_id not in self.targets:
            self.unknown_machine += 1
            log.warning("trap from unknown machine %r", trap.machine_id)
            return None
        event = trap_event(trap, self.clock())
        if trap.notification in _MARKING:
            self.marks.add(
                trap.machine_id,
                Mark(kind=event.kind, at=event.at, heat_id=trap.heat_id, mid_heat=trap.mid_heat),
            )
        for sub in self._subscribers:
            if len(sub.queue) >= SUBSCRIBER_BACKLOG:
                sub.queue.popleft()
                sub.queue.append(
                    MachineEvent(trap.machine_id, MachineEventKind.QUEUE_OVERFLOW, event.at)
                )
            sub.queue.append(event)
            sub.wake.set()
        return event

    async def events(self) -> AsyncGenerator[MachineEvent, None]:
        """Every trap as a :class:`MachineEvent`, from now on, until the caller stops."""
        sub = _Subscriber()
        self._subscribers.append(sub)
        try:
            while True:
                while sub.queue:
                    yield sub.queue.popleft()
                sub.wake.clear()
                await sub.wake.wait()
        finally:
            self._subscribers.remove(sub)

    def is_marked(self, machine_id: str) -> bool:
        return self.marks.is_marked(machine_id)

    def clear(self, machine_id: str) -> tuple[Mark, ...]:
        """A technician has checked the machine (the caller audits who and why): its
        marks are removed and returned."""
        return self.marks.clear(machine_id)

    async def preflight(self, machine_ids: Sequence[str]) -> dict[str, list[str]]:
        """Problems per machine before a heat: marks, and a fresh poll of each board."""
        await self.marks.refresh()  # a mark a technician cleared meanwhile is gone
        out: dict[str, list[str]] = {}

        async def check(machine_id: str) -> None:
            problems = [f"marked: {m.kind.value}" for m in self.marks.get(machine_id, ())]
            target = self.targets.get(machine_id)
            if target is None:
                why = self.unreachable.get(machine_id)
                problems.append(f"SNMP: {why}" if why else "not watched over SNMP")
            else:
                try:
                    problems += (await self.poller.poll(target)).problems()
                except SnmpError as exc:
                    problems.append(f"SNMP: {exc}")
            out[machine_id] = problems

        await asyncio.gather(*(check(m) for m in machine_ids))
        return out


async def watch_boards(
    monitor: HealthMonitor, boards: Mapping[str, BoardEndpoint]
) -> dict[str, str]:
    """Watch every board of ``boards`` (machine -> its agent).  Returns the boards that
    could not be reached (machine -> why); they stay in ``monitor.unreachable`` so
    preflight refuses them until they answer."""

    async def add(machine_id: str, host: str, port: int, security: Security) -> None:
        try:
            await monitor.add_board(SnmpTarget(machine_id, host, port, security))
        except SnmpError as exc:
            monitor.unreachable[machine_id] = f"{type(exc).__name__}: {exc}"

    await asyncio.gather(*(add(mid, e.host, e.port, e.security) for mid, e in boards.items()))
    return {mid: monitor.unreachable[mid] for mid in boards if mid in monitor.unreachable}


async def rewatch(
    monitor: HealthMonitor,
    boards: Mapping[str, BoardEndpoint],
    *,
    every_s: float = 10.0,
) -> None:
    """Until cancelled: every ``every_s``, try again the boards :func:`watch_boards` could
    not reach (an SNMPv3 board's traps are only accepted once its engine id is known)."""
    while True:
        await asyncio.sleep(every_s)
        missing = {mid: e for mid, e in boards.items() if mid in monitor.unreachable}
        if missing:
            still = await watch_boards(monitor, missing)
            for mid in missing:
                if mid not in still:
                    log.info("SNMP: %s watched now", mid)


async def board_problems(
    boards: Mapping[str, BoardEndpoint], *, snmp_timeout: float = 1.0
) -> dict[str, list[str]]:
    """One-shot health preflight of the boards (``bank check``): machine -> problems
    (link down, no power, door open, or SNMP unreachable)."""
    if not boards:
        return {}
    monitor = HealthMonitor(TrapReceiver(), HealthPoller(timeout=snmp_timeout))
    await monitor.start()
    try:
        await watch_boards(monitor, boards)
        return await monitor.preflight(list(boards))
    finally:
        monitor.close()


async def route_events(
    monitor: HealthMonitor,
    deliver: Callable[[MachineEvent], object],
    *,
    link_grace_s: float = 3.0,
) -> None:
    """Hand every trap event to ``deliver`` until cancelled (``reelgate serve`` gives it
    to the heat under way: a door opened, power lost or link down mid-heat is a
    malfunction, T20/T21).  A LINK_DOWN is held back ``link_grace_s`` and dropped if
    LINK_UP follows in time: a broker restarting takes every MQTT board's link down for
    a moment, which is the tournament system's trouble, not a machine's.  A failing
    consumer is logged, never stops the stream."""
    held: dict[str, asyncio.Task[None]] = {}

    def hand_over(event: MachineEvent) -> None:
        try:
            deliver(event)
        except Exception:
            log.exception("handling SNMP event %s failed", event)

    async def later(event: MachineEvent) -> None:
        await asyncio.sleep(link_grace_s)
        held.pop(event.machine_id, None)
        log.warning("SNMP: machine %s link still down after %.0f s", event.machine_id,
                    link_grace_s)  # fmt: skip
        hand_over(event)

    try:
        async for event in monitor.events():
            log.warning("SNMP trap: machine %s %s", event.machine_id, event.kind.value)
            if event.kind is MachineEventKind.LINK_DOWN:
                if event.machine_id not in held:
                    held[event.machine_id] = asyncio.create_task(later(event))
                continue
            if event.kind is MachineEventKind.LINK_UP:
                pending = held.pop(event.machine_id, None)
                if pending is not None:
                    pending.cancel()
            hand_over(event)
    finally:
        for task in held.values():
            task.cancel()
