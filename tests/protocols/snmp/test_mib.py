"""REELGATE-MIB: the module text and its Python mirror agree; trap var-binds parse."""

from __future__ import annotations

import re

import pytest

from protocols.snmp import mib
from protocols.snmp.mib import (
    SNMP_TRAP_OID_0,
    SYS_UPTIME_0,
    Notification,
    TournamentMode,
    TrapError,
    parse_trap,
)

TEXT = mib.mib_text()


def test_module_is_under_the_documentation_enterprise() -> None:
    assert re.search(r"::= \{ enterprises 32473 1 \}", TEXT)
    assert mib.REELGATE_MIB == (1, 3, 6, 1, 4, 1, 32473, 1)
    assert TEXT.strip().endswith("END")


def test_every_scalar_is_declared_with_its_number_and_syntax() -> None:
    declared = dict(re.findall(r"^(rg\w+) OBJECT-TYPE\n\s+SYNTAX\s+(\w+)", TEXT, re.M))
    numbers = {
        name: int(n)
        for name, n in re.findall(
            r"^(rg\w+) OBJECT-TYPE.*?::= \{ rgObjects (\d+) \}", TEXT, re.M | re.S
        )
    }
    assert set(declared) == set(mib.BY_NAME)
    for obj in mib.SCALARS:
        assert numbers[obj.name] == obj.sub_id
        assert declared[obj.name] == obj.syntax.value


def test_enumerations_match() -> None:
    def named(obj: str) -> dict[str, int]:
        block = re.search(rf"^{obj} OBJECT-TYPE\n\s+SYNTAX\s+INTEGER \{{([^}}]*)\}}", TEXT, re.M)
        assert block, obj
        return {k: int(v) for k, v in re.findall(r"(\w+)\((\d+)\)", block.group(1))}

    assert named("rgTournamentMode") == {"off": 1, "armed": 2, "playing": 3, "timeUp": 4}
    assert [m.value for m in TournamentMode] == [1, 2, 3, 4]
    assert named("rgLinkState") == {"up": 1, "down": 2}
    assert named("rgDoorState") == {"closed": 1, "open": 2}
    assert named("rgPowerState") == {"on": 1, "off": 2}


def test_notifications_match() -> None:
    found = re.findall(
        r"^(rg\w+) NOTIFICATION-TYPE\n\s+OBJECTS\s+\{([^}]*)\}.*?::= \{ rgNotifications (\d+) \}",
        TEXT,
        re.M | re.S,
    )
    assert len(found) == len(Notification)
    for name, objects, number in found:
        n = next(x for x in Notification if x.mib_name == name)
        assert n.oid[-1] == int(number)
        assert tuple(o.strip() for o in objects.split(",")) == mib.NOTIFICATION_OBJECTS[n]


def _varbinds(notification: Notification, mode: int = 3) -> list[tuple[tuple[int, ...], int | str]]:
    by = mib.BY_NAME
    return [
        (SYS_UPTIME_0, 1234),
        (SNMP_TRAP_OID_0, ".".join(map(str, notification.oid))),
        (by["rgMachineId"].instance, "A01"),
        (by["rgDoorState"].instance, 2),
        (by["rgPowerState"].instance, 2),
        (by["rgLinkState"].instance, 2),
        (by["rgHeatId"].instance, "17"),
        (by["rgTournamentMode"].instance, mode),
    ]


def test_door_opened_mid_heat() -> None:
    trap = parse_trap(_varbinds(Notification.DOOR_OPENED))
    assert (trap.notification, trap.machine_id, trap.heat_id, trap.uptime_ticks) == (
        Notification.DOOR_OPENED,
        "A01",
        "17",
        1234,
    )
    assert trap.mid_heat
    assert not parse_trap(_varbinds(Notification.DOOR_OPENED, mode=1)).mid_heat


@pytest.mark.parametrize(
    ("mutate", "complaint"),
    [
        (lambda vb: [x for x in vb if x[0] != SNMP_TRAP_OID_0], "no snmpTrapOID"),
        (
            lambda vb: [
                (o, "1.3.6.1.4.1.9.9.0.1") if o == SNMP_TRAP_OID_0 else (o, v) for o, v in vb
            ],
            "not a REELGATE-MIB notification",
        ),
        (
            lambda vb: [x for x in vb if x[0] != mib.BY_NAME["rgHeatId"].instance],
            "without rgHeatId",
        ),
        (
            lambda vb: [
                (o, 9) if o == mib.BY_NAME["rgTournamentMode"].instance else (o, v) for o, v in vb
            ],
            "bad rgTournamentMode",
        ),
        (
            lambda vb: [
                (o, "") if o == mib.BY_NAME["rgMachineId"].instance else (o, v) for o, v in vb
            ],
            "empty rgMachineId",
        ),
    ],
)
def test_malformed_traps_are_refused(mutate: object, complaint: str) -> None:
    with pytest.raises(TrapError, match=complaint):
        parse_trap(mutate(_varbinds(Notification.POWER_LOST)))  # type: ignore[operator]
