"""The gateway's SNMP wiring (``gateway/machines/health.py``) without sockets: traps as
MachineEvents, trap marks and clearing them, preflight, floor machines and event routing.
T20/T21: a marked seat is a malfunction candidate and preflight refuses it.

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gateway.errors import OperatorError
from gateway.floor.model import MachineSpec, resolve_snmp
from gateway.floor.snmp import SnmpSecrets
from gateway.machines import health
from gateway.machines.driver import MachineEvent, MachineEventKind
from gateway.machines.health import (
    HealthMonitor,
    Mark,
    TrapMarks,
    route_events,
    trap_event,
    watch_boards,
)
from protocols.snmp import mib
from protocols.snmp.errors import SnmpError, SnmpTimeout
from protocols.snmp.manager import BoardHealth, HealthPoller, SnmpTarget, TrapReceiver
from protocols.snmp.mib import (
    SNMP_TRAP_OID_0,
    BoardTrap,
    DoorState,
    LinkState,
    Notification,
    PowerState,
    TournamentMode,
)
from protocols.snmp.security import V2cCommunity

PUBLIC = V2cCommunity("public")
T0 = datetime(2024, 5, 1, 20, 0, tzinfo=UTC)


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class _Boards(HealthPoller):
    """A poller answering from a table: machine -> BoardHealth or the error to raise."""

    def __init__(self, answers: dict[str, BoardHealth | SnmpError] | None = None) -> None:
        super().__init__()
        self.answers = answers or {}

    async def poll(self, target: SnmpTarget) -> BoardHealth:
        answer = self.answers[target.machine_id]
        if isinstance(answer, SnmpError):
            raise answer
        return answer

    async def engine_id(self, target: SnmpTarget) -> bytes:
        answer = self.answers.get(target.machine_id)
        if isinstance(answer, SnmpError):
            raise answer
        return b"\x80\x00\x1f\x88\x04" + target.machine_id.encode()


def _healthy(machine_id: str, **change: Any) -> BoardHealth:
    fields: dict[str, Any] = {
        "machine_id": machine_id,
        "mode": TournamentMode.PLAYING,
        "heat_id": "17",
        "link": LinkState.UP,
        "credits": 300,
        "last_exception": "",
        "uptime_s": 1.0,
        "door": DoorState.CLOSED,
        "power": PowerState.ON,
    }
    return BoardHealth(**(fields | change))


def _trap(
    notification: Notification,
    machine_id: str = "A01",
    mode: TournamentMode = TournamentMode.PLAYING,
) -> BoardTrap:
    return BoardTrap(notification, machine_id, "17", mode, 100)


async def _monitor(
    *machines: str, poller: HealthPoller | None = None, marks: TrapMarks | None = None
) -> HealthMonitor:
    """A monitor watching ``machines`` over v2c (the receiver's own community: no socket)."""
    monitor = HealthMonitor(TrapReceiver(v2c=PUBLIC), poller or _Boards(), clock=_Clock(),
                            marks=marks)  # fmt: skip
    for machine_id in machines:
        await monitor.add_board(SnmpTarget(machine_id, "127.0.0.1", 1, PUBLIC))
    return monitor


@pytest.mark.parametrize(
    ("notification", "kind"),
    [
        (Notification.LINK_DOWN, MachineEventKind.LINK_DOWN),
        (Notification.POWER_LOST, MachineEventKind.POWER_LOST),
        (Notification.DOOR_OPENED, MachineEventKind.DOOR_OPENED),
        (Notification.LINK_UP, MachineEventKind.LINK_UP),
    ],
)
def test_each_notification_is_the_event_a_driver_would_report(
    notification: Notification, kind: MachineEventKind
) -> None:
    event = trap_event(_trap(notification), T0)
    assert event == MachineEvent("A01", kind, T0, code=notification.oid[-1])


async def test_door_power_and_link_down_mark_the_machine_link_up_does_not() -> None:
    monitor = await _monitor("A01", "A02")
    assert monitor.note_trap(_trap(Notification.LINK_UP, "A02")) is not None
    assert not monitor.is_marked("A02")
    for n in (Notification.DOOR_OPENED, Notification.POWER_LOST, Notification.LINK_DOWN):
        monitor.note_trap(_trap(n))
    assert monitor.is_marked("A01")
    assert [m.kind for m in monitor.marks["A01"]] == [
        MachineEventKind.DOOR_OPENED,
        MachineEventKind.POWER_LOST,
        MachineEventKind.LINK_DOWN,
    ]
    first = monitor.marks["A01"][0]
    assert first == Mark(MachineEventKind.DOOR_OPENED, T0 + timedelta(seconds=2), "17", True)
    assert list(monitor.marks) == ["A01"]
    assert len(monitor.marks) == 1


async def test_a_trap_outside_a_heat_marks_it_as_not_mid_heat() -> None:
    monitor = await _monitor("A01")
    monitor.note_trap(_trap(Notification.DOOR_OPENED, mode=TournamentMode.OFF))
    assert monitor.marks["A01"][0].mid_heat is False


async def test_a_trap_from_an_unwatched_machine_is_counted_and_ignored() -> None:
    monitor = await _monitor("A01")
    assert monitor.note_trap(_trap(Notification.DOOR_OPENED, "Z99")) is None
    assert monitor.unknown_machine == 1
    assert not monitor.is_marked("Z99")
    assert len(monitor.marks) == 0


async def test_the_receiver_hands_its_traps_to_the_monitor() -> None:
    monitor = await _monitor("A01")
    varbinds: list[tuple[tuple[int, ...], int | str]] = [
        (SNMP_TRAP_OID_0, ".".join(str(x) for x in Notification.POWER_LOST.oid)),
        (mib.BY_NAME["rgMachineId"].instance, "A01"),
        (mib.BY_NAME["rgPowerState"].instance, 2),
        (mib.BY_NAME["rgHeatId"].instance, ""),
        (mib.BY_NAME["rgTournamentMode"].instance, 1),
    ]
    monitor.receiver.note(varbinds, security_model=2, security_level=1)
    assert [m.kind for m in monitor.marks["A01"]] == [MachineEventKind.POWER_LOST]


async def test_clearing_a_machine_returns_its_marks_and_preflight_takes_it_again() -> None:
    boards = _Boards({"A01": _healthy("A01"), "A02": _healthy("A02")})
    monitor = await _monitor("A01", "A02", poller=boards)
    monitor.note_trap(_trap(Notification.DOOR_OPENED))
    monitor.note_trap(_trap(Notification.LINK_DOWN))
    assert await monitor.preflight(["A01", "A02"]) == {
        "A01": ["marked: door-opened", "marked: link-down"],
        "A02": [],
    }
    cleared = monitor.clear("A01")
    assert [m.kind for m in cleared] == [MachineEventKind.DOOR_OPENED, MachineEventKind.LINK_DOWN]
    assert not monitor.is_marked("A01")
    assert monitor.clear("A01") == ()  # nothing left to clear
    assert (await monitor.preflight(["A01"]))["A01"] == []


def test_marks_seeded_from_a_store_and_read_only_as_a_mapping() -> None:
    door = Mark(MachineEventKind.DOOR_OPENED, T0, "9", True)
    marks = TrapMarks({"A03": [door], "A04": []})
    assert marks.is_marked("A03")
    assert not marks.is_marked("A04")
    assert dict(marks) == {"A03": (door,)}
    assert marks.get("A05", ()) == ()
    snapshot = marks["A03"]
    marks.add("A03", door)
    assert len(snapshot) == 1
    assert len(marks["A03"]) == 2  # readers get copies


async def test_preflight_lists_marks_board_faults_and_why_a_board_is_not_watched() -> None:
    seeded = TrapMarks({"A01": [Mark(MachineEventKind.POWER_LOST, T0, "8", False)]})
    boards = _Boards({"A01": _healthy("A01", door=DoorState.OPEN), "A02": SnmpTimeout("silent")})
    monitor = await _monitor("A01", "A02", poller=boards, marks=seeded)
    monitor.unreachable["A03"] = "SnmpTimeout: no answer"
    assert await monitor.preflight(["A01", "A02", "A03", "A04"]) == {
        "A01": ["marked: power-lost", "slot door open"],
        "A02": ["SNMP: silent"],
        "A03": ["SNMP: SnmpTimeout: no answer"],
        "A04": ["not watched over SNMP"],
    }


async def test_every_subscriber_gets_every_event_and_a_slow_one_an_overflow() -> None:
    monitor = await _monitor("A01")
    events = monitor.events()
    first = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)  # subscribed
    for _ in range(health.SUBSCRIBER_BACKLOG + 1):  # one more than a subscriber holds
        monitor.note_trap(_trap(Notification.LINK_UP))
    got = [await first]
    got += [await events.__anext__() for _ in range(health.SUBSCRIBER_BACKLOG)]
    await events.aclose()
    kinds = [e.kind for e in got]
    assert kinds.count(MachineEventKind.QUEUE_OVERFLOW) == 1
    assert kinds.count(MachineEventKind.LINK_UP) == health.SUBSCRIBER_BACKLOG
    assert got[-1].at == T0 + timedelta(seconds=health.SUBSCRIBER_BACKLOG + 1)  # the newest kept


def _spec(machine_id: str, snmp: str | None) -> MachineSpec:
    return MachineSpec(machine_id, "sas+tcp://127.0.0.1:1", "A", 1, snmp=snmp)


async def test_watch_boards_watches_the_floor_machines_with_an_agent() -> None:
    machines = [
        _spec("A01", "udp://127.0.0.1:1161?version=2c"),
        _spec("A02", None),  # no agent
    ]
    monitor = await _monitor()
    boards = resolve_snmp(machines, SnmpSecrets(machines={"A01": "public"}))
    assert await watch_boards(monitor, boards) == {}
    assert monitor.targets == {"A01": SnmpTarget("A01", "127.0.0.1", 1161, PUBLIC)}


async def test_watch_boards_records_boards_it_cannot_reach() -> None:
    machines = [_spec("A01", "udp://127.0.0.1:1161?user=ops")]
    secrets = SnmpSecrets(users={"ops": ("auth-pass-123", "priv-pass-456")})
    monitor = await _monitor(poller=_Boards({"A01": SnmpTimeout("no answer")}))
    boards = resolve_snmp(machines, secrets)
    assert await watch_boards(monitor, boards) == {"A01": "SnmpTimeout: no answer"}
    assert monitor.unreachable == {"A01": "SnmpTimeout: no answer"}
    assert monitor.targets == {}


async def test_a_missing_secret_is_refused_before_any_board_is_watched() -> None:
    machines = [_spec("A01", "udp://127.0.0.1:1161?version=2c")]
    monitor = await _monitor()
    with pytest.raises(OperatorError, match="A01"):
        await watch_boards(monitor, resolve_snmp(machines, SnmpSecrets()))
    assert monitor.targets == {}
    assert monitor.unreachable == {}


async def _routed(
    monitor: HealthMonitor,
    traps: list[BoardTrap],
    deliver: Callable[[MachineEvent], object],
    *,
    grace: float,
    want: int,
    got: list[MachineEvent],
) -> None:
    router = asyncio.create_task(route_events(monitor, deliver, link_grace_s=grace))
    await asyncio.sleep(0)  # subscribed
    for trap in traps:
        monitor.note_trap(trap)
    for _ in range(200):  # bounded: until ``want`` events were handed over
        if len(got) >= want:
            break
        await asyncio.sleep(0)
    router.cancel()
    await asyncio.gather(router, return_exceptions=True)


async def test_route_events_drops_a_link_blink_within_the_grace() -> None:
    monitor = await _monitor("A01")
    got: list[MachineEvent] = []
    traps = [_trap(Notification.LINK_DOWN), _trap(Notification.LINK_UP),
             _trap(Notification.DOOR_OPENED)]  # fmt: skip
    await _routed(monitor, traps, got.append, grace=3600, want=2, got=got)
    assert [e.kind for e in got] == [MachineEventKind.LINK_UP, MachineEventKind.DOOR_OPENED]


async def test_route_events_hands_over_a_link_that_stays_down() -> None:
    monitor = await _monitor("A01")
    got: list[MachineEvent] = []
    await _routed(monitor, [_trap(Notification.LINK_DOWN)], got.append, grace=0, want=1, got=got)
    assert [e.kind for e in got] == [MachineEventKind.LINK_DOWN]


async def test_a_failing_consumer_does_not_stop_the_stream() -> None:
    monitor = await _monitor("A01")
    got: list[MachineEvent] = []

    def deliver(event: MachineEvent) -> None:
        got.append(event)
        if len(got) == 1:
            raise RuntimeError("the heat runner broke")

    traps = [_trap(Notification.DOOR_OPENED), _trap(Notification.POWER_LOST)]
    await _routed(monitor, traps, deliver, grace=3600, want=2, got=got)
    assert [e.kind for e in got] == [MachineEventKind.DOOR_OPENED, MachineEventKind.POWER_LOST]
