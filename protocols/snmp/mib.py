"""REELGATE-MIB as Python data (mirrors ``REELGATE-MIB.mib``), and pure helpers that turn
notification var-binds into typed traps.  No pysnmp here: values arrive as plain
``(oid tuple, int | str)`` pairs so the mapping is tested without sockets.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from importlib import resources

ENTERPRISE = (1, 3, 6, 1, 4, 1, 32473)  # RFC 5612 documentation PEN, until Reelgate has one
REELGATE_MIB = (*ENTERPRISE, 1)
NOTIFICATIONS = (*REELGATE_MIB, 0)
OBJECTS = (*REELGATE_MIB, 1)

SYS_UPTIME_0 = (1, 3, 6, 1, 2, 1, 1, 3, 0)
SNMP_TRAP_OID_0 = (1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0)
SNMP_ENGINE_ID_0 = (1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0)


class TournamentMode(enum.IntEnum):
    OFF = 1
    ARMED = 2
    PLAYING = 3
    TIME_UP = 4


class LinkState(enum.IntEnum):
    UP = 1
    DOWN = 2


class DoorState(enum.IntEnum):
    CLOSED = 1
    OPEN = 2


class PowerState(enum.IntEnum):
    ON = 1
    OFF = 2


class Syntax(enum.Enum):
    DISPLAY_STRING = "DisplayString"
    INTEGER = "INTEGER"
    UNSIGNED32 = "Unsigned32"
    TIMETICKS = "TimeTicks"


@dataclass(frozen=True, slots=True)
class MibObject:
    name: str
    sub_id: int
    syntax: Syntax

    @property
    def oid(self) -> tuple[int, ...]:
        return (*OBJECTS, self.sub_id)

    @property
    def instance(self) -> tuple[int, ...]:
        return (*self.oid, 0)


SCALARS: tuple[MibObject, ...] = (
    MibObject("rgMachineId", 1, Syntax.DISPLAY_STRING),
    MibObject("rgTournamentMode", 2, Syntax.INTEGER),
    MibObject("rgHeatId", 3, Syntax.DISPLAY_STRING),
    MibObject("rgLinkState", 4, Syntax.INTEGER),
    MibObject("rgCredits", 5, Syntax.UNSIGNED32),
    MibObject("rgLastException", 6, Syntax.DISPLAY_STRING),
    MibObject("rgUptime", 7, Syntax.TIMETICKS),
    MibObject("rgDoorState", 8, Syntax.INTEGER),
    MibObject("rgPowerState", 9, Syntax.INTEGER),
)
BY_NAME = {o.name: o for o in SCALARS}
BY_INSTANCE = {o.instance: o for o in SCALARS}


class Notification(enum.Enum):
    LINK_DOWN = ("rgLinkDown", 1)
    POWER_LOST = ("rgPowerLost", 2)
    DOOR_OPENED = ("rgDoorOpened", 3)
    LINK_UP = ("rgLinkUp", 4)

    @property
    def mib_name(self) -> str:
        return self.value[0]

    @property
    def oid(self) -> tuple[int, ...]:
        return (*NOTIFICATIONS, self.value[1])


BY_NOTIFICATION_OID = {n.oid: n for n in Notification}

#: The objects each notification carries (after sysUpTime.0 and snmpTrapOID.0).
NOTIFICATION_OBJECTS: dict[Notification, tuple[str, ...]] = {
    Notification.LINK_DOWN: ("rgMachineId", "rgLinkState", "rgHeatId", "rgTournamentMode"),
    Notification.POWER_LOST: ("rgMachineId", "rgPowerState", "rgHeatId", "rgTournamentMode"),
    Notification.DOOR_OPENED: ("rgMachineId", "rgDoorState", "rgHeatId", "rgTournamentMode"),
    Notification.LINK_UP: ("rgMachineId", "rgLinkState", "rgHeatId", "rgTournamentMode"),
}


def mib_text() -> str:
    """The SMIv2 module as shipped in the package (load it into any NMS)."""
    return resources.files("protocols.snmp").joinpath("REELGATE-MIB.mib").read_text()


class TrapError(ValueError):
    """A notification that is not a well-formed REELGATE-MIB notification."""


@dataclass(frozen=True, slots=True)
class BoardTrap:
    notification: Notification
    machine_id: str
    heat_id: str
    mode: TournamentMode
    uptime_ticks: int

    @property
    def mid_heat(self) -> bool:
        """Armed or playing: the machine is seated in a heat right now."""
        return self.mode in (TournamentMode.ARMED, TournamentMode.PLAYING)


def parse_trap(varbinds: list[tuple[tuple[int, ...], int | str]]) -> BoardTrap:
    """SNMPv2 notification var-binds (values as int or str) -> :class:`BoardTrap`."""
    values = dict(varbinds)
    trap_oid = values.get(SNMP_TRAP_OID_0)
    if not isinstance(trap_oid, str):
        raise TrapError("no snmpTrapOID.0")
    try:
        notification = BY_NOTIFICATION_OID[tuple(int(x) for x in trap_oid.split("."))]
    except (KeyError, ValueError):
        raise TrapError(f"not a REELGATE-MIB notification: {trap_oid}") from None
    by_name = {BY_INSTANCE[o].name: v for o, v in values.items() if o in BY_INSTANCE}
    for name in NOTIFICATION_OBJECTS[notification]:
        if name not in by_name:
            raise TrapError(f"{notification.mib_name} without {name}")
    machine_id = str(by_name["rgMachineId"])
    if not machine_id:
        raise TrapError(f"{notification.mib_name} with an empty rgMachineId")
    try:
        mode = TournamentMode(int(by_name["rgTournamentMode"]))
    except ValueError:
        raise TrapError(f"bad rgTournamentMode {by_name['rgTournamentMode']!r}") from None
    uptime = values.get(SYS_UPTIME_0, 0)
    return BoardTrap(
        notification=notification,
        machine_id=machine_id,
        heat_id=str(by_name["rgHeatId"]),
        mode=mode,
        uptime_ticks=int(uptime) if isinstance(uptime, int) else 0,
    )
