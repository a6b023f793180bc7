"""The emulated board's SNMP agent and the gateway's health poller and trap receiver,
over real UDP on loopback."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from emulators.snmp_agent import SnmpAgent
from gateway.machines.driver import MachineEvent, MachineEventKind
from gateway.machines.health import HealthMonitor
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSettings
from protocols.snmp import mib
from protocols.snmp.errors import SnmpAuthError, SnmpTimeout
from protocols.snmp.manager import HealthPoller, SnmpTarget, TrapReceiver
from protocols.snmp.mib import DoorState, LinkState, TournamentMode
from protocols.snmp.security import V2cCommunity, V3User

OPS = V3User("ops", "auth-pass-123", "priv-pass-456")
PUBLIC = V2cCommunity("public")


@dataclass
class Rig:
    machine: EmulatedMachine
    agent: SnmpAgent
    monitor: HealthMonitor

    def target(self, security: V3User | V2cCommunity = OPS) -> SnmpTarget:
        return SnmpTarget(self.machine.machine_id, "127.0.0.1", self.agent.port, security)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    machine = EmulatedMachine("A01", seed=3)
    monitor = HealthMonitor(TrapReceiver(), HealthPoller(timeout=0.5))
    trap_port = await monitor.start()
    agent = SnmpAgent(
        machine, users=[OPS, PUBLIC], trap_targets=[("127.0.0.1", trap_port)], heat_id=lambda: "17"
    )
    await agent.start()
    await monitor.add_board(SnmpTarget("A01", "127.0.0.1", agent.port, OPS))
    try:
        yield Rig(machine, agent, monitor)
    finally:
        agent.close()
        monitor.close()


async def _next_event(monitor: HealthMonitor, action: object) -> MachineEvent:
    events = monitor.events()
    first = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)  # subscribed before the trap can arrive
    action()  # type: ignore[operator]
    try:
        return await asyncio.wait_for(first, 5)
    finally:
        await events.aclose()


async def test_walk_shows_the_mib(rig: Rig) -> None:
    rig.machine.enter_tournament(500, 60)
    rows = await rig.monitor.poller.walk(rig.target(PUBLIC))
    names = {mib.BY_INSTANCE[oid].name: value for oid, value in rows}
    assert [oid for oid, _ in rows] == [o.instance for o in mib.SCALARS]
    assert names["rgMachineId"] == "A01"
    assert names["rgTournamentMode"] == TournamentMode.ARMED
    assert names["rgHeatId"] == "17"
    assert names["rgCredits"] == 500
    assert names["rgLinkState"] == LinkState.UP


async def test_v3_auth_priv_poll_reads_the_machine_live(rig: Rig) -> None:
    rig.machine.enter_tournament(500, 60)
    rig.machine.unlock_play()
    rig.machine.spin(1)
    health = await rig.monitor.poller.poll(rig.target())
    assert health.mode is TournamentMode.PLAYING
    assert health.credits == rig.machine.credits
    assert health.problems() == []
    rig.machine.open_slot_door()
    health = await rig.monitor.poller.poll(rig.target())
    assert health.door is DoorState.OPEN
    assert health.last_exception == "door-opened"
    assert health.problems() == ["slot door open"]


async def test_wrong_keys_are_an_auth_error_not_retried(rig: Rig) -> None:
    wrong = V3User("ops", "auth-pass-123", "not-the-priv-key")
    with pytest.raises(SnmpAuthError):
        await rig.monitor.poller.get(rig.target(wrong), mib.BY_NAME["rgCredits"].instance)
    # A wrong community gets no answer at all (RFC 3584: counted and dropped by the
    # agent), so for us it looks like a timeout.
    with pytest.raises(SnmpTimeout):
        await rig.monitor.poller.get(
            rig.target(V2cCommunity("private")), mib.BY_NAME["rgCredits"].instance
        )


async def test_silent_agent_is_a_timeout_retried_by_tenacity() -> None:
    poller = HealthPoller(timeout=0.2, attempts=3, budget_s=5)
    calls = 0
    real_get = poller.get

    async def counting_get(
        target: SnmpTarget, *oids: tuple[int, ...]
    ) -> dict[tuple[int, ...], Any]:
        nonlocal calls
        calls += 1
        return await real_get(target, *oids)

    poller.get = counting_get  # type: ignore[method-assign]
    # a bound UDP socket that never answers: a board whose agent hangs
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0)
    )
    port = transport.get_extra_info("sockname")[1]
    try:
        with pytest.raises(SnmpTimeout):
            await poller.poll(SnmpTarget("A09", "127.0.0.1", port, PUBLIC))
        assert calls == 3
    finally:
        transport.close()
        poller.close()


async def test_door_opened_mid_heat_trap_marks_the_machine(rig: Rig) -> None:
    rig.machine.enter_tournament(500, 60)
    rig.machine.unlock_play()
    event = await _next_event(rig.monitor, rig.machine.open_slot_door)
    # the same internal event a SAS exception 11 (slot door opened) becomes
    assert (event.machine_id, event.kind) == ("A01", MachineEventKind.DOOR_OPENED)
    assert rig.monitor.is_marked("A01")
    mark = rig.monitor.marks["A01"][0]
    assert mark.mid_heat
    assert mark.heat_id == "17"
    problems = (await rig.monitor.preflight(["A01"]))["A01"]
    assert "marked: door-opened" in problems
    assert "slot door open" in problems
    rig.monitor.clear("A01")
    assert not rig.monitor.is_marked("A01")


async def test_power_loss_trap(rig: Rig) -> None:
    event = await _next_event(rig.monitor, rig.machine.power_off)
    assert event.kind is MachineEventKind.POWER_LOST
    assert rig.monitor.is_marked("A01")
    health = await rig.monitor.poller.poll(rig.target())
    assert health.problems() == ["no mains power"]


async def test_v2c_traps_are_ignored_unless_configured(rig: Rig) -> None:
    quiet = EmulatedMachine("A01")
    trap_port = rig.monitor.receiver.port
    sender = SnmpAgent(quiet, users=[PUBLIC], trap_targets=[("127.0.0.1", trap_port)])
    await sender.start()
    try:
        quiet.open_slot_door()
        await asyncio.sleep(0.3)
        assert sender.traps_sent == 1  # it went out ...
        assert not rig.monitor.is_marked("A01")  # ... and was not believed
    finally:
        sender.close()


async def test_mqtt_link_down_becomes_a_link_down_event() -> None:
    site = f"t{uuid.uuid4().hex[:10]}"
    async with EmbeddedBroker() as broker:
        board = MqttBoard(EmulatedMachine("B01"), MqttSettings.from_url(broker.url), site)
        await board.start()
        monitor = HealthMonitor(TrapReceiver(v2c=PUBLIC), HealthPoller(timeout=0.5))
        port = await monitor.start()
        agent = SnmpAgent.for_board(board, users=[PUBLIC], trap_targets=[("127.0.0.1", port)])
        await agent.start()
        try:
            await monitor.add_board(SnmpTarget("B01", "127.0.0.1", agent.port, PUBLIC))
            assert (
                await monitor.poller.poll(SnmpTarget("B01", "127.0.0.1", agent.port, PUBLIC))
            ).link is LinkState.UP

            async def cut() -> None:
                await broker.stop()

            events = monitor.events()
            first = asyncio.ensure_future(events.__anext__())
            await asyncio.sleep(0)
            await cut()
            event = await asyncio.wait_for(first, 5)
            await events.aclose()
            assert (event.machine_id, event.kind) == ("B01", MachineEventKind.LINK_DOWN)
            assert monitor.is_marked("B01")
        finally:
            agent.close()
            monitor.close()
            await board.stop()


async def test_board_agent_shows_a_host_timed_heat_and_its_link() -> None:
    from protocols.mqtt.codec import Command

    # An EGM without tournament mode: the board runs the heat itself (never connected
    # to a broker here, so its link reads down).
    board = MqttBoard(
        EmulatedMachine("H01", tournament_supported=False), MqttSettings("127.0.0.1", 1), "s1"
    )
    board._run(Command.ENTER_TOURNAMENT, {"credits": 100, "seconds": 60, "heat": "H-9"})
    agent = SnmpAgent.for_board(board, users=[PUBLIC])
    await agent.start()
    poller = HealthPoller(timeout=0.5)
    target = SnmpTarget("H01", "127.0.0.1", agent.port, PUBLIC)
    try:
        health = await poller.poll(target)
        assert (health.mode, health.heat_id, health.credits) == (TournamentMode.ARMED, "H-9", 100)
        assert health.problems() == ["link to gateway down"]
        board._run(Command.UNLOCK, {})
        assert (await poller.poll(target)).mode is TournamentMode.PLAYING
    finally:
        agent.close()
        poller.close()
