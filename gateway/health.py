"""Device health over SNMP: a poller for board state and a trap receiver.

How the rest of the gateway uses it::

    monitor = HealthMonitor(TrapReceiver(), HealthPoller())
    await monitor.start()                       # trap port: monitor.receiver.port
    await monitor.add_board(SnmpTarget("A01", "127.0.0.1", 1161, V3User(...)))
    async for event in monitor.events():        # gateway.machines.driver.MachineEvent values
        ...                                     # same kinds as SAS exceptions / MQTT events
    monitor.is_marked("A01")                    # a trap marked it (link, power, door)
    await monitor.preflight(["A01", "A02"])     # {machine: [problems]} before a heat

Trap -> :class:`~gateway.machines.driver.MachineEvent` kind: ``rgLinkDown`` -> LINK_DOWN,
``rgPowerLost`` -> POWER_LOST, ``rgDoorOpened`` -> DOOR_OPENED, ``rgLinkUp`` -> LINK_UP.
LINK_DOWN, POWER_LOST and DOOR_OPENED also *mark* the machine until cleared: the heat
engine treats a marked seat as a malfunction candidate (rules 20/21) and preflight
refuses it.  ``events()`` gives every subscriber its own bounded queue; a subscriber
that falls far behind gets a QUEUE_OVERFLOW event in place of what was dropped.

Security: SNMPv3 authPriv by default.  v3 traps are authenticated against each board's
engine id, which :meth:`HealthMonitor.add_board` learns by polling ``snmpEngineID.0``;
a v3 trap below authPriv is dropped and counted.  SNMPv2c is used only when a
community is configured (tests, legacy boards).

Errors: every pysnmp failure becomes a :mod:`protocols.snmp.errors` exception;
:data:`~protocols.snmp.errors.RETRYABLE` ones are retried here with ``tenacity``.

From the floor (``snmp = "udp://host:port"`` on a machine, :mod:`gateway.floor`; its
passphrases or community come from the run's :class:`~gateway.floor.SnmpSecrets`, never
from the database): :func:`watch_boards` adds every such board to a monitor,
:func:`board_problems` is the one-shot preflight ``bank check`` uses, and
:func:`route_events` hands each trap event to whoever runs the heat
(``HeatRunner.report_event``: rules 20/21).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pysnmp.carrier.asyncio.dgram import udp
from pysnmp.entity import config, engine
from pysnmp.entity.rfc3413 import ntfrcv
from pysnmp.hlapi.v3arch.asyncio import (
    ContextData,
    ObjectIdentity,
    ObjectType,
    SnmpEngine,
    UdpTransportTarget,
    get_cmd,
    walk_cmd,
)
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from gateway.machines.driver import MachineEvent, MachineEventKind
from protocols.snmp import mib
from protocols.snmp.errors import RETRYABLE, SnmpError, SnmpProtocolError, raise_for
from protocols.snmp.mib import (
    BoardTrap,
    DoorState,
    LinkState,
    Notification,
    PowerState,
    TournamentMode,
    TrapError,
)
from protocols.snmp.security import Security, V2cCommunity, V3User, add_user, auth_data

if TYPE_CHECKING:
    from gateway.floor.model import MachineSpec
    from gateway.floor.snmp import SnmpSecrets

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SUBSCRIBER_BACKLOG = 1000
AUTH_PRIV = 3  # USM securityLevel

_EVENT_KIND = {
    Notification.LINK_DOWN: MachineEventKind.LINK_DOWN,
    Notification.POWER_LOST: MachineEventKind.POWER_LOST,
    Notification.DOOR_OPENED: MachineEventKind.DOOR_OPENED,
    Notification.LINK_UP: MachineEventKind.LINK_UP,
}
_MARKING = frozenset({Notification.LINK_DOWN, Notification.POWER_LOST, Notification.DOOR_OPENED})


@dataclass(frozen=True, slots=True)
class SnmpTarget:
    machine_id: str
    host: str
    port: int
    security: Security


@dataclass(frozen=True, slots=True)
class BoardHealth:
    machine_id: str
    mode: TournamentMode
    heat_id: str
    link: LinkState
    credits: int
    last_exception: str
    uptime_s: float
    door: DoorState
    power: PowerState

    def problems(self) -> list[str]:
        """What stops this machine from being seated in a heat."""
        found = []
        if self.link is LinkState.DOWN:
            found.append("link to gateway down")
        if self.power is PowerState.OFF:
            found.append("no mains power")
        if self.door is DoorState.OPEN:
            found.append("slot door open")
        return found


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MachineEventKind
    at: datetime
    heat_id: str
    mid_heat: bool


def _plain(value: Any) -> int | str:
    """A pysnmp value as int or str (OCTET STRING -> text, OID -> dotted, numbers -> int)."""
    if isinstance(value, int | str):
        return value
    tag = getattr(value, "tagSet", None)
    universal = tag[0][2] if tag is not None and tag[0][0] == 0 else None
    if universal == 4:  # OCTET STRING (DisplayString)
        return bytes(value.asOctets()).decode("utf-8", "replace")
    if universal == 6:  # OBJECT IDENTIFIER
        return ".".join(str(x) for x in value)
    try:
        return int(value)
    except (TypeError, ValueError):
        return str(value)


class HealthPoller:
    def __init__(
        self,
        *,
        timeout: float = 1.0,
        attempts: int = 3,
        budget_s: float = 5.0,
    ) -> None:
        self.timeout = timeout
        self.attempts = attempts
        self.budget_s = budget_s
        self._engine: Any = None

    @property
    def engine(self) -> Any:
        if self._engine is None:
            self._engine = SnmpEngine()
        return self._engine

    async def _target(self, target: SnmpTarget) -> Any:
        return await UdpTransportTarget.create(
            (target.host, target.port), timeout=self.timeout, retries=0
        )

    async def get(self, target: SnmpTarget, *oids: tuple[int, ...]) -> dict[tuple[int, ...], Any]:
        """One GET, no retries; typed errors."""
        result = await get_cmd(
            self.engine,
            auth_data(target.security),
            await self._target(target),
            ContextData(),
            *(ObjectType(ObjectIdentity(o)) for o in oids),
        )
        error_indication, error_status, error_index, varbinds = result
        raise_for(error_indication, error_status, error_index, f"{target.machine_id} GET")
        out: dict[tuple[int, ...], Any] = {}
        for vb in varbinds:
            oid, value = vb[0], vb[1]
            if value.tagSet in _EXCEPTION_TAGS:
                raise SnmpProtocolError(f"{target.machine_id}: {tuple(oid)} not served")
            out[tuple(oid)] = value
        return out

    async def _retry(self, op: Callable[[], Any]) -> Any:
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(RETRYABLE),
            stop=stop_after_attempt(self.attempts) | stop_after_delay(self.budget_s),
            wait=wait_exponential(multiplier=0.05, max=0.5),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await op()
        raise AssertionError("unreachable: tenacity reraises")  # pragma: no cover

    async def poll(self, target: SnmpTarget) -> BoardHealth:
        """Read every REELGATE-MIB scalar (retrying transient errors)."""
        raw = await self._retry(lambda: self.get(target, *(o.instance for o in mib.SCALARS)))
        v = {mib.BY_INSTANCE[oid].name: _plain(value) for oid, value in raw.items()}
        try:
            return BoardHealth(
                machine_id=str(v["rgMachineId"]),
                mode=TournamentMode(int(v["rgTournamentMode"])),
                heat_id=str(v["rgHeatId"]),
                link=LinkState(int(v["rgLinkState"])),
                credits=int(v["rgCredits"]),
                last_exception=str(v["rgLastException"]),
                uptime_s=int(v["rgUptime"]) / 100,
                door=DoorState(int(v["rgDoorState"])),
                power=PowerState(int(v["rgPowerState"])),
            )
        except (KeyError, ValueError) as exc:
            raise SnmpProtocolError(
                f"{target.machine_id}: bad REELGATE-MIB value ({exc})"
            ) from None

    async def engine_id(self, target: SnmpTarget) -> bytes:
        raw = await self._retry(lambda: self.get(target, mib.SNMP_ENGINE_ID_0))
        return bytes(raw[mib.SNMP_ENGINE_ID_0].asOctets())

    async def walk(
        self, target: SnmpTarget, root: tuple[int, ...] = mib.REELGATE_MIB, *, limit: int = 1000
    ) -> list[tuple[tuple[int, ...], int | str]]:
        """Walk the subtree under ``root`` (bounded by ``limit`` var-binds)."""
        rows: list[tuple[tuple[int, ...], int | str]] = []
        async for error_indication, error_status, error_index, varbinds in walk_cmd(
            self.engine,
            auth_data(target.security),
            await self._target(target),
            ContextData(),
            ObjectType(ObjectIdentity(root)),
            lexicographicMode=False,
        ):
            raise_for(error_indication, error_status, error_index, f"{target.machine_id} WALK")
            for vb in varbinds:
                rows.append((tuple(vb[0]), _plain(vb[1])))
            if len(rows) >= limit:
                break
        return rows

    def close(self) -> None:
        if self._engine is not None:
            with contextlib.suppress(Exception):
                self._engine.close_dispatcher()
            self._engine = None


def _exception_tags() -> frozenset[Any]:
    from pysnmp.proto import rfc1905

    return frozenset(
        {rfc1905.NoSuchObject.tagSet, rfc1905.NoSuchInstance.tagSet, rfc1905.EndOfMibView.tagSet}
    )


_EXCEPTION_TAGS = _exception_tags()


@dataclass(slots=True)
class ReceiverStats:
    received: int = 0
    malformed: int = 0
    below_auth_priv: int = 0


class TrapReceiver:
    """SNMPv2 trap listener on UDP (loopback, port 0 unless told)."""

    def __init__(
        self,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        v2c: V2cCommunity | None = None,
        on_trap: Callable[[BoardTrap], None] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.v2c = v2c
        self.on_trap = on_trap
        self.stats = ReceiverStats()
        self._engine: Any = None
        self._known: set[tuple[str, bytes]] = set()

    async def start(self) -> int:
        snmp = engine.SnmpEngine()
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config.add_transport(
            snmp, udp.DOMAIN_NAME, udp.UdpAsyncioTransport().open_server_mode(sock=sock)
        )
        if self.v2c is not None:
            add_user(snmp, self.v2c)
        ntfrcv.NotificationReceiver(snmp, self._received)
        self._engine = snmp
        return self.port

    def accept_v2c(self, community: V2cCommunity) -> None:
        """Accept v2c traps carrying ``community`` (as many communities as boards use)."""
        if self._engine is None:
            raise RuntimeError("receiver not started")
        if (community.community, b"") not in self._known:
            add_user(self._engine, community)
            self._known.add((community.community, b""))

    def accept_v3(self, user: V3User, engine_id: bytes) -> None:
        """Accept authPriv traps from ``user`` sent by the engine ``engine_id``."""
        if self._engine is None:
            raise RuntimeError("receiver not started")
        if (user.user, engine_id) not in self._known:
            add_user(self._engine, user, engine_id=engine_id)
            self._known.add((user.user, engine_id))

    def close(self) -> None:
        if self._engine is not None:
            with contextlib.suppress(Exception):
                self._engine.close_dispatcher()
            self._engine = None

    def _received(
        self,
        snmp_engine: Any,
        state_reference: Any,
        context_engine_id: Any,
        context_name: Any,
        varbinds: Sequence[Any],
        cb_ctx: Any,
    ) -> None:
        self.stats.received += 1
        ctx = snmp_engine.observer.get_execution_context("rfc3412.receiveMessage:request")
        if int(ctx.get("securityModel", 0)) == 3 and int(ctx.get("securityLevel", 0)) < AUTH_PRIV:
            self.stats.below_auth_priv += 1
            log.warning("dropped SNMPv3 trap below authPriv from %s", ctx.get("transportAddress"))
            return
        try:
            trap = mib.parse_trap([(tuple(oid), _plain(value)) for oid, value in varbinds])
        except TrapError as exc:
            self.stats.malformed += 1
            log.warning("dropped trap: %s", exc)
            return
        if self.on_trap is not None:
            self.on_trap(trap)


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
    ) -> None:
        self.receiver = receiver
        self.poller = poller or HealthPoller()
        self.clock = clock
        self.targets: dict[str, SnmpTarget] = {}
        self.unreachable: dict[str, str] = {}  # boards add_board could not reach, and why
        self.marks: dict[str, list[Mark]] = {}
        self.unknown_machine = 0
        self._subscribers: list[_Subscriber] = []
        receiver.on_trap = self._on_trap

    async def start(self) -> int:
        return await self.receiver.start()

    def close(self) -> None:
        self.receiver.close()
        self.poller.close()

    async def add_board(self, target: SnmpTarget) -> None:
        """Watch a board: poll it and accept its traps (v3: learns its engine id)."""
        if isinstance(target.security, V3User):
            self.receiver.accept_v3(target.security, await self.poller.engine_id(target))
        elif self.receiver.v2c != target.security:
            self.receiver.accept_v2c(target.security)
        self.targets[target.machine_id] = target
        self.unreachable.pop(target.machine_id, None)

    # -- traps -> events ---------------------------------------------------------------
    def _on_trap(self, trap: BoardTrap) -> None:
        if trap.machine_id not in self.targets:
            self.unknown_machine += 1
            log.warning("trap from unknown machine %r", trap.machine_id)
            return
        kind = _EVENT_KIND[trap.notification]
        at = self.clock()
        if trap.notification in _MARKING:
            self.marks.setdefault(trap.machine_id, []).append(
                Mark(kind=kind, at=at, heat_id=trap.heat_id, mid_heat=trap.mid_heat)
            )
        event = MachineEvent(
            machine_id=trap.machine_id, kind=kind, at=at, code=trap.notification.value[1]
        )
        for sub in self._subscribers:
            if len(sub.queue) >= SUBSCRIBER_BACKLOG:
                sub.queue.popleft()
                sub.queue.append(MachineEvent(trap.machine_id, MachineEventKind.QUEUE_OVERFLOW, at))
            sub.queue.append(event)
            sub.wake.set()

    async def events(self) -> AsyncIterator[MachineEvent]:
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
        return bool(self.marks.get(machine_id))

    def clear(self, machine_id: str) -> None:
        """A technician has checked the machine (the caller audits who and why)."""
        self.marks.pop(machine_id, None)

    async def preflight(self, machine_ids: Sequence[str]) -> dict[str, list[str]]:
        """Problems per machine before a heat: marks, and a fresh poll of each board."""
        out: dict[str, list[str]] = {}

        async def check(machine_id: str) -> None:
            problems = [f"marked: {m.kind.value}" for m in self.marks.get(machine_id, [])]
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
    monitor: HealthMonitor, machines: Iterable[MachineSpec], secrets: SnmpSecrets
) -> dict[str, str]:
    """Watch every machine of ``machines`` that has an SNMP agent on the floor.  Returns
    the boards that could not be reached (machine -> why); they stay in
    ``monitor.unreachable`` so preflight refuses them until they answer.  A machine whose
    secret is missing is an OperatorError before any board is touched."""
    from gateway.floor.model import resolve_snmp

    boards = list(resolve_snmp(machines, secrets).items())

    async def add(machine_id: str, host: str, port: int, security: Security) -> None:
        try:
            await monitor.add_board(SnmpTarget(machine_id, host, port, security))
        except SnmpError as exc:
            monitor.unreachable[machine_id] = f"{type(exc).__name__}: {exc}"

    await asyncio.gather(
        *(add(mid, e.host, e.port, e.security) for mid, e in boards if e is not None)
    )
    return {mid: monitor.unreachable[mid] for mid, _ in boards if mid in monitor.unreachable}


async def rewatch(
    monitor: HealthMonitor,
    machines: Sequence[MachineSpec],
    secrets: SnmpSecrets,
    *,
    every_s: float = 10.0,
) -> None:
    """Until cancelled: every ``every_s``, try again the boards :func:`watch_boards` could
    not reach (an SNMPv3 board's traps are only accepted once its engine id is known)."""
    while True:
        await asyncio.sleep(every_s)
        missing = [m for m in machines if m.id in monitor.unreachable]
        if missing:
            still = await watch_boards(monitor, missing, secrets)
            for m in missing:
                if m.id not in still:
                    log.info("SNMP: %s watched now", m.id)


async def board_problems(
    machines: Sequence[MachineSpec], secrets: SnmpSecrets, *, snmp_timeout: float = 1.0
) -> dict[str, list[str]]:
    """One-shot health preflight of the machines that have an SNMP agent (``bank check``):
    machine -> problems (link down, no power, door open, or SNMP unreachable)."""
    from gateway.floor.model import resolve_snmp

    with_snmp = [m for m in machines if m.snmp is not None]
    if not with_snmp:
        return {}
    resolve_snmp(with_snmp, secrets)  # a missing secret: OperatorError before any socket
    monitor = HealthMonitor(TrapReceiver(), HealthPoller(timeout=snmp_timeout))
    await monitor.start()
    try:
        await watch_boards(monitor, with_snmp, secrets)
        return await monitor.preflight([m.id for m in with_snmp])
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
    malfunction, rules 20/21).  A LINK_DOWN is held back ``link_grace_s`` and dropped if
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
