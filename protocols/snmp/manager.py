"""SNMP manager for board health: a GET/WALK poller of REELGATE-MIB and a trap receiver
(pysnmp 7, asyncio).  Protocol only: results are REELGATE-MIB values
(:class:`BoardHealth`, :class:`~protocols.snmp.mib.BoardTrap`), never gateway events;
``gateway/machines/health.py`` maps them to the gateway's vocabulary.

::

    poller = HealthPoller()                      # one SnmpEngine for every GET
    health = await poller.poll(SnmpTarget("A01", "127.0.0.1", 1161, V3User(...)))
    health.door, health.problems()               # MIB enums, what stops seating it

    receiver = TrapReceiver(on_trap=print)       # each trap as a BoardTrap
    await receiver.start()                       # trap port: receiver.port
    await receiver.accept(target, poller)        # believe this board's traps

Security: SNMPv3 authPriv by default.  v3 traps are authenticated against each board's
engine id, which :meth:`TrapReceiver.accept` learns by polling ``snmpEngineID.0``; a v3
trap below authPriv is dropped and counted.  SNMPv2c is used only when a community is
configured (tests, legacy boards).

Errors: every pysnmp failure becomes a :mod:`protocols.snmp.errors` exception;
:data:`~protocols.snmp.errors.RETRYABLE` ones are retried by the poller with
``tenacity`` (``attempts`` tries within ``budget_s``, exponential back-off).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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

from protocols.snmp import mib
from protocols.snmp.errors import RETRYABLE, SnmpProtocolError, raise_for
from protocols.snmp.mib import (
    BoardTrap,
    DoorState,
    LinkState,
    PowerState,
    TournamentMode,
    TrapError,
)
from protocols.snmp.security import Security, V2cCommunity, V3User, add_user, auth_data

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
AUTH_PRIV = 3  # USM securityLevel


@dataclass(frozen=True, slots=True)
class SnmpTarget:
    machine_id: str
    host: str
    port: int
    security: Security


@dataclass(frozen=True, slots=True)
class BoardHealth:
    """One poll of every REELGATE-MIB scalar, as MIB values."""

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


def decode_value(value: Any) -> int | str:
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


def board_health(machine_id: str, values: dict[str, int | str]) -> BoardHealth:
    """Decoded REELGATE-MIB scalars (by MIB name) -> :class:`BoardHealth`; a missing or
    out-of-range value is an :class:`SnmpProtocolError`."""
    try:
        return BoardHealth(
            machine_id=str(values["rgMachineId"]),
            mode=TournamentMode(int(values["rgTournamentMode"])),
            heat_id=str(values["rgHeatId"]),
            link=LinkState(int(values["rgLinkState"])),
            credits=int(values["rgCredits"]),
            last_exception=str(values["rgLastException"]),
            uptime_s=int(values["rgUptime"]) / 100,
            door=DoorState(int(values["rgDoorState"])),
            power=PowerState(int(values["rgPowerState"])),
        )
    except (KeyError, ValueError) as exc:
        raise SnmpProtocolError(f"{machine_id}: bad REELGATE-MIB value ({exc})") from None


class HealthPoller:
    """GET/WALK client for REELGATE-MIB.  :meth:`get` and :meth:`walk` try once;
    :meth:`poll` and :meth:`engine_id` retry :data:`RETRYABLE` errors."""

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
        values = {mib.BY_INSTANCE[oid].name: decode_value(value) for oid, value in raw.items()}
        return board_health(target.machine_id, values)

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
                rows.append((tuple(vb[0]), decode_value(vb[1])))
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
    """SNMPv2 trap listener on UDP (loopback, port 0 unless told).  Each well-formed,
    authenticated REELGATE-MIB notification goes to ``on_trap`` as a :class:`BoardTrap`;
    the rest are counted in :attr:`stats` and dropped."""

    def __init__(
        self,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        v2c: V2cCommunity | None = None,
        on_trap: Callable[[BoardTrap], object] | None = None,
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

    async def accept(self, target: SnmpTarget, poller: HealthPoller) -> None:
        """Believe ``target``'s traps: v3 learns its engine id through ``poller`` (typed
        SNMP errors if the board does not answer), v2c adds its community."""
        if isinstance(target.security, V3User):
            self.accept_v3(target.security, await poller.engine_id(target))
        elif self.v2c != target.security:
            self.accept_v2c(target.security)

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
        ctx = snmp_engine.observer.get_execution_context("rfc3412.receiveMessage:request")
        self.note(
            [(tuple(oid), decode_value(value)) for oid, value in varbinds],
            security_model=int(ctx.get("securityModel", 0)),
            security_level=int(ctx.get("securityLevel", 0)),
            source=ctx.get("transportAddress"),
        )

    def note(
        self,
        varbinds: list[tuple[tuple[int, ...], int | str]],
        *,
        security_model: int,
        security_level: int,
        source: object = None,
    ) -> BoardTrap | None:
        """One notification pysnmp accepted (decoded var-binds, its USM security) ->
        the :class:`BoardTrap` handed to ``on_trap``, or None if dropped."""
        self.stats.received += 1
        if security_model == 3 and security_level < AUTH_PRIV:
            self.stats.below_auth_priv += 1
            log.warning("dropped SNMPv3 trap below authPriv from %s", source)
            return None
        try:
            trap = mib.parse_trap(varbinds)
        except TrapError as exc:
            self.stats.malformed += 1
            log.warning("dropped trap: %s", exc)
            return None
        if self.on_trap is not None:
            self.on_trap(trap)
        return trap
