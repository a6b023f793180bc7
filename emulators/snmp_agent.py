"""The SNMP face of an emulated board: a pysnmp 7 agent serving REELGATE-MIB live from
:class:`EmulatedMachine`, and sending its notifications.

* UDP on loopback, port 0 by default; :attr:`SnmpAgent.port` tells the port it got.
* SNMPv3 authPriv users and, for tests, SNMPv2c communities (read-only).
* Every read calls back into the machine, so a GET always shows the machine as it is.
* Traps (unconfirmed SNMPv2 notifications) on power loss, slot door opened, and link
  down/up to the gateway, sent from an engine with this agent's engine id so an SNMPv3
  receiver can authenticate them (it registers the board's engine id, see
  ``gateway.machines.health``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

from pysnmp.carrier.asyncio.dgram import udp
from pysnmp.entity import config, engine
from pysnmp.entity.rfc3413 import cmdrsp, context
from pysnmp.hlapi.v3arch.asyncio import (
    ContextData,
    NotificationType,
    ObjectIdentity,
    ObjectType,
    SnmpEngine,
    UdpTransportTarget,
    send_notification,
)
from pysnmp.proto import rfc1902

from emulators.machine import EmulatedMachine, Event, ModelEvent
from protocols.snmp import mib
from protocols.snmp.mib import DoorState, LinkState, Notification, PowerState, TournamentMode
from protocols.snmp.security import Security, add_user, auth_data

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
LINK_WATCH_INTERVAL = 0.1  # seconds between link-state checks

# Machine events worth a trap, and their last-exception text.
_TRAPS: dict[Event, Notification] = {
    Event.POWER_LOST: Notification.POWER_LOST,
    Event.SLOT_DOOR_OPENED: Notification.DOOR_OPENED,
}
_EXCEPTIONS = {
    Event.SLOT_DOOR_OPENED: "door-opened",
    Event.SLOT_DOOR_CLOSED: "door-closed",
    Event.POWER_LOST: "power-lost",
    Event.POWER_APPLIED: "power-applied",
    Event.TILT: "tilt",
    Event.HANDPAY_PENDING: "handpay-pending",
    Event.HANDPAY_RESET: "handpay-reset",
    Event.TOURNAMENT_TIME_UP: "tournament-time-up",
}


def tournament_mode(machine: EmulatedMachine) -> TournamentMode:
    t = machine.tournament
    if t is None:
        return TournamentMode.OFF
    if t.time_up:
        return TournamentMode.TIME_UP
    return TournamentMode.PLAYING if t.started_at is not None else TournamentMode.ARMED


class SnmpAgent:
    def __init__(
        self,
        machine: EmulatedMachine,
        *,
        users: Sequence[Security],
        link_up: Callable[[], bool] = lambda: True,
        heat_id: Callable[[], str] = lambda: "",
        mode: Callable[[], TournamentMode] | None = None,
        trap_targets: Sequence[tuple[str, int]] = (),
        trap_security: Security | None = None,
        host: str = LOOPBACK,
        port: int = 0,
        engine_id: bytes | None = None,
    ) -> None:
        if not users:
            raise ValueError("an SNMP agent needs at least one user or community")
        self.machine = machine
        self.users = list(users)
        self.link_up = link_up
        self.heat_id = heat_id
        self.mode = mode or (lambda: tournament_mode(machine))
        self.trap_targets = list(trap_targets)
        self.trap_security = trap_security or self.users[0]
        self.host = host
        self.port = port
        # RFC 3411 engine id: 0x80 | enterprise, format 5 (octets), then 8 random bytes.
        self.engine_id = engine_id or bytes.fromhex("80007ed905") + os.urandom(8)
        self.last_exception = ""
        self.traps_sent = 0
        self.trap_errors = 0
        self._started = time.monotonic()
        self._engine: Any = None
        self._sender: Any = None
        self._targets: list[Any] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._watch: asyncio.Task[None] | None = None

    @classmethod
    def for_board(cls, board: Any, **kw: Any) -> SnmpAgent:
        """An agent for an :class:`emulators.mqtt_board.MqttBoard` (link = its MQTT session)."""
        from protocols.snmp.security import V2cCommunity

        kw.setdefault("users", [V2cCommunity("public")])

        def mode() -> TournamentMode:
            heat = board.host_heat  # a host-timed heat run by the board itself
            if heat is None:
                return tournament_mode(board.machine)
            return TournamentMode.PLAYING if heat.started else TournamentMode.ARMED

        kw.setdefault("mode", mode)
        return cls(
            board.machine, link_up=lambda: board.link_up, heat_id=lambda: board.heat_id, **kw
        )

    # -- values ------------------------------------------------------------------------
    def values(self) -> dict[str, int | str]:
        m = self.machine
        return {
            "rgMachineId": m.machine_id,
            "rgTournamentMode": int(self.mode()),
            "rgHeatId": self.heat_id()[:32],
            "rgLinkState": int(LinkState.UP if self.link_up() else LinkState.DOWN),
            "rgCredits": max(0, m.credits),
            "rgLastException": self.last_exception,
            "rgUptime": int((time.monotonic() - self._started) * 100),
            "rgDoorState": int(DoorState.OPEN if m.slot_door_open else DoorState.CLOSED),
            "rgPowerState": int(PowerState.ON if m.powered else PowerState.OFF),
        }

    @staticmethod
    def _syntax(obj: mib.MibObject, value: int | str | None = None) -> Any:
        if obj.syntax is mib.Syntax.DISPLAY_STRING:
            return rfc1902.OctetString("" if value is None else str(value))
        if obj.syntax is mib.Syntax.UNSIGNED32:
            return rfc1902.Unsigned32(0 if value is None else int(value))
        if obj.syntax is mib.Syntax.TIMETICKS:
            return rfc1902.TimeTicks(0 if value is None else int(value))
        return rfc1902.Integer32(1 if value is None else int(value))

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> None:
        snmp = engine.SnmpEngine(snmpEngineID=rfc1902.OctetString(self.engine_id))
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config.add_transport(
            snmp, udp.DOMAIN_NAME, udp.UdpAsyncioTransport().open_server_mode(sock=sock)
        )
        for user in self.users:
            add_user(snmp, user, read_view=(1, 3, 6, 1))
        snmp_context = context.SnmpContext(snmp)
        builder = snmp_context.get_mib_instrum().get_mib_builder()
        scalar_cls, instance_cls = builder.import_symbols(
            "SNMPv2-SMI", "MibScalar", "MibScalarInstance"
        )
        agent = self

        class LiveInstance(instance_cls):  # type: ignore[misc, valid-type]
            """Reads the machine at every GET (no cached copy to go stale)."""

            def getValue(self, name: Any, **ctx: Any) -> Any:
                obj = mib.BY_INSTANCE[tuple(self.name)]
                return agent._syntax(obj, agent.values()[obj.name])

        symbols: list[Any] = []
        for obj in mib.SCALARS:
            symbols.append(scalar_cls(obj.oid, self._syntax(obj)).setMaxAccess("read-only"))
            symbols.append(LiveInstance(obj.oid, (0,), self._syntax(obj)))
        builder.export_symbols("__REELGATE-MIB", *symbols)
        cmdrsp.GetCommandResponder(snmp, snmp_context)
        cmdrsp.NextCommandResponder(snmp, snmp_context)
        cmdrsp.BulkCommandResponder(snmp, snmp_context)
        self._engine = snmp
        # Notifications go out from a second engine with the same engine id (the agent's
        # own engine has a server-mode transport the hlapi sender cannot share).
        self._sender = SnmpEngine(snmpEngineID=rfc1902.OctetString(self.engine_id))
        self._targets = [
            await UdpTransportTarget.create(target, timeout=1, retries=0)
            for target in self.trap_targets
        ]
        self.machine.subscribe(self._on_event)
        self._watch = asyncio.create_task(
            self._watch_link(), name=f"snmp-link-{self.machine.machine_id}"
        )

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.machine.unsubscribe(self._on_event)
        if self._watch is not None:
            self._watch.cancel()
        for task in list(self._tasks):
            task.cancel()
        for eng in (self._engine, self._sender):
            if eng is not None:
                with contextlib.suppress(Exception):
                    eng.close_dispatcher()
        self._engine = self._sender = None

    async def add_trap_target(self, host: str, port: int) -> None:
        self.trap_targets.append((host, port))
        if self._sender is not None:
            self._targets.append(
                await UdpTransportTarget.create((host, port), timeout=1, retries=0)
            )

    # -- notifications -----------------------------------------------------------------
    def _on_event(self, note: ModelEvent) -> None:
        text = _EXCEPTIONS.get(note.event)
        if text:
            self.last_exception = text
        notification = _TRAPS.get(note.event)
        if notification is not None:
            self.notify(notification)

    async def _watch_link(self) -> None:
        was = self.link_up()
        while True:  # until close(): one cheap check every LINK_WATCH_INTERVAL
            await asyncio.sleep(LINK_WATCH_INTERVAL)
            now = self.link_up()
            if now != was:
                was = now
                if not now:
                    self.last_exception = "link-down"
                self.notify(Notification.LINK_UP if now else Notification.LINK_DOWN)

    def notify(self, notification: Notification) -> None:
        """Send ``notification`` to every trap target (fire and forget, as traps are)."""
        if self._sender is None or not self._targets:
            return
        task = asyncio.get_running_loop().create_task(self._send(notification))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, notification: Notification) -> None:
        values = self.values()
        varbinds = [
            ObjectType(
                ObjectIdentity(mib.BY_NAME[name].instance),
                self._syntax(mib.BY_NAME[name], values[name]),
            )
            for name in mib.NOTIFICATION_OBJECTS[notification]
        ]
        ntf = NotificationType(ObjectIdentity(notification.oid)).add_varbinds(*varbinds)
        for target in self._targets:
            error, _, _, _ = await send_notification(
                self._sender, auth_data(self.trap_security), target, ContextData(), "trap", ntf
            )
            if error:
                self.trap_errors += 1
                log.warning("trap %s to %s failed: %s", notification.mib_name, target, error)
            else:
                self.traps_sent += 1
