"""The interface-board agent in front of an emulated EGM (SAS over loopback TCP), driven
by the gateway's own MQTT driver on the embedded broker."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import aiomqtt
import pytest

from emulators.bank import Bank
from gateway.board.clock import GatewayClock
from gateway.machines.driver import LinkTimeout, MachineEventKind, TournamentSupport
from gateway.machines.mqtt import MqttMachineDriver
from protocols.mqtt import codec
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.codec import BoardEventKind, Command
from protocols.mqtt.topics import Channel, board_topic

from .agents import agents_on_bank, make_agent, until

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _driver(
    broker: EmbeddedBroker, site: str, board_id: str, query: str = "timeout=5"
) -> MqttMachineDriver:
    return MqttMachineDriver.from_uri(board_id, f"{broker.url}/{site}/{board_id}?{query}")


@pytest.mark.parametrize("native", [True, False], ids=["native", "host-timed"])
async def test_a_heat_through_the_agent_scores_from_the_egm(
    broker: EmbeddedBroker, site: str, native: bool
) -> None:
    async with agents_on_bank(broker.url, site, no_tournament_support=0 if native else 1) as (
        bank,
        [agent],
    ):
        egm = bank.machines[0].machine
        driver = _driver(broker, site, egm.machine_id)
        await driver.open()
        try:
            ident = await driver.identity()
            assert ident.tournament is (
                TournamentSupport.NATIVE if native else TournamentSupport.HOST_TIMED
            )
            assert ident.serial_number == egm.identity.serial_number
            await driver.enter_tournament(200, 60)
            assert egm.play_locked
            assert egm.credits == 200  # T12: the heat's credits, loaded once
            await driver.unlock()
            for _ in range(6):
                egm.spin(2)
            await driver.lock()
            score = await driver.heat_score()
            assert score.credits == egm.credits  # the score is the credit meter (T12)
            assert score.meters.games_played == 6
            assert score.meters.credits_wagered == 12
            assert score.credits == 200 - 12 + score.meters.credits_won
            await driver.exit_tournament()
            assert not egm.in_tournament
            assert egm.credits == 0  # host-timed: swept back (T12, T18)
            # The retained meters followed the game ends and the score.
            await until(lambda: driver.view.meters is not None, "meters")
        finally:
            await driver.close()
        assert agent.core.stats.deferred == 0


async def test_door_and_tilt_arrive_in_order_and_fold_into_state(
    broker: EmbeddedBroker, site: str
) -> None:
    async with agents_on_bank(broker.url, site) as (bank, _agents):
        egm = bank.machines[0].machine
        driver = _driver(broker, site, egm.machine_id)
        await driver.open()
        try:
            egm.open_slot_door()
            egm.tilt()
            got: list[MachineEventKind] = []

            async def seen_tilt() -> bool:
                got.extend(e.kind for e in await driver.poll_events())
                return MachineEventKind.TILT in got

            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10
            while not await seen_tilt():
                assert loop.time() < deadline, got
                await asyncio.sleep(0.02)
            assert got == [MachineEventKind.DOOR_OPENED, MachineEventKind.TILT]
            await until(lambda: driver.view.state is not None and driver.view.state.tilted, "state")
            assert driver.view.state is not None
            assert driver.view.state.door_open
        finally:
            await driver.close()


async def test_events_queue_while_the_broker_is_away_oldest_dropped_with_a_counted_gap(
    broker: EmbeddedBroker, site: str
) -> None:
    async with Bank(1, seed=4) as bank:
        agent = make_agent(bank, 0, broker.url, site, event_queue=4)
        await agent.start()
        try:
            egm = bank.machines[0].machine
            await until(lambda: agent.egm_up, "the EGM answering")
            await broker.stop()
            await until(lambda: not agent.core.link_up, "the broker gone")
            for _ in range(5):  # ten events, one at a time through the EGM's queue
                drains = agent.drains
                egm.open_slot_door()
                egm.close_slot_door()
                await until(lambda d=drains: agent.drains > d + 1, "a drain")  # type: ignore[misc]
            await until(lambda: agent.core.stats.events_dropped == 7, "the gap counted")
            kinds = [kind for _, kind in agent.core.pending_events()]
            # One marker for the gap, then the newest three, in order.
            assert kinds == [
                BoardEventKind.QUEUE_OVERFLOW,
                BoardEventKind.DOOR_CLOSED,
                BoardEventKind.DOOR_OPENED,
                BoardEventKind.DOOR_CLOSED,
            ]
            seqs = [seq for seq, _ in agent.core.pending_events()]
            assert seqs == sorted(seqs)
            await broker.start()
            await until(lambda: not agent.core.pending_events(), "the queue sent", within=20)
        finally:
            await agent.stop()


async def test_a_repeated_command_id_runs_once(broker: EmbeddedBroker, site: str) -> None:
    async with agents_on_bank(broker.url, site, no_tournament_support=1) as (bank, [agent]):
        egm = bank.machines[0].machine
        cmd = codec.CommandMessage(
            id="dup-1",
            cmd=Command.ENTER_TOURNAMENT,
            at=datetime.now(UTC),
            args={"credits": 100, "seconds": 30},
        )
        replies: list[codec.BoardMessage] = []
        async with aiomqtt.Client("127.0.0.1", broker.port) as gw:
            await gw.subscribe(board_topic(site, egm.machine_id, Channel.REPLY), qos=1)
            for _ in range(2):  # QoS 1 redelivery, or the gateway's resend after a reconnect
                await gw.publish(
                    board_topic(site, egm.machine_id, Channel.CMD), codec.encode(cmd), qos=1
                )
            async with asyncio.timeout(10):
                async for message in gw.messages:
                    assert isinstance(message.payload, bytes)
                    replies.append(codec.decode(Channel.REPLY, message.payload))
                    if len(replies) == 2:
                        break
        assert [r.id for r in replies if isinstance(r, codec.Reply)] == ["dup-1", "dup-1"]
        assert all(isinstance(r, codec.Reply) and r.ok for r in replies)
        assert agent.core.stats.commands_executed == 1
        assert agent.core.stats.replayed == 1
        assert egm.credits == 100  # one AFT load, not two


async def test_the_board_takes_its_clock_from_the_gateway(
    broker: EmbeddedBroker, site: str
) -> None:
    board_time = datetime(2026, 1, 1, tzinfo=UTC)  # a board that booted without a clock
    clock = GatewayClock(system=lambda: board_time)
    async with Bank(1, seed=5) as bank:
        agent = make_agent(bank, 0, broker.url, site, clock=clock)
        await agent.start()
        driver = _driver(broker, site, bank.machines[0].machine.machine_id)
        try:
            await driver.open()
            when = datetime(2031, 5, 4, 10, 30, tzinfo=UTC)
            await driver.set_clock(when)
            assert clock.set_by_gateway
            assert clock.now() == when  # every "at" the board sends is the gateway's time
            egm_now = await driver.read_clock()  # LP 7F set the EGM's own clock too
            assert egm_now.year == 2031
            assert abs((egm_now - when).total_seconds()) < 120
        finally:
            await driver.close()
            await agent.stop()


async def test_an_egm_that_does_not_answer_gets_no_reply_so_the_gateway_times_out(
    broker: EmbeddedBroker, site: str, unused_tcp_port: int
) -> None:
    from gateway.board.agent import BoardAgent
    from gateway.machines.sas import SasDriver
    from protocols.mqtt.client import MqttSettings

    sas = SasDriver.from_uri("Z01", f"sas+tcp://127.0.0.1:{unused_tcp_port}?address=1")
    agent = BoardAgent("Z01", sas, MqttSettings.from_url(broker.url), site, poll_interval=0.05)
    await agent.start()
    try:
        driver = _driver(broker, site, "Z01", "timeout=0.5")
        with pytest.raises(LinkTimeout, match="report-state"):
            await driver.open()
        assert agent.core.stats.deferred >= 1
        assert not agent.egm_up
    finally:
        await agent.stop()
