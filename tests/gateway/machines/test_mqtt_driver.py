"""The MQTT machine driver against emulated boards on the embedded broker."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import aiomqtt
import pytest

from gateway.errors import OperatorError
from gateway.machines.driver import (
    LinkTimeout,
    MachineDriver,
    MachineEventKind,
    MachineRefused,
    TournamentSupport,
)
from gateway.machines.mqtt import MqttEndpoint, MqttMachineDriver
from gateway.machines.registry import open_driver
from protocols.mqtt import codec
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.codec import Command
from protocols.mqtt.topics import Channel, board_topic

from ...protocols.mqtt.mqtt_boards import Boards


async def _until(predicate: object, what: str, within: float = 5.0) -> None:
    """Wait (bounded) for a condition that depends on messages still in flight."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def test_driver_runs_a_heat_and_scores_from_the_tournament_meter(boards: Boards) -> None:
    board = await boards.add("A01")
    driver = open_driver("A01", boards.endpoint("A01"))
    assert isinstance(driver, MqttMachineDriver)
    assert isinstance(driver, MachineDriver)
    await driver.open()
    try:
        ident = await driver.identity()
        assert ident.serial_number == "EMU-A01"
        assert ident.tournament is TournamentSupport.NATIVE
        when = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
        await driver.set_clock(when)
        assert abs((await driver.read_clock()) - when) < timedelta(seconds=2)

        await driver.enter_tournament(500, 60)
        assert board.machine.in_tournament
        assert board.machine.play_locked
        await driver.unlock()
        for _ in range(25):
            board.machine.spin(1)
        await driver.lock()
        score = await driver.heat_score()
        # T12: the score is the tournament credit meter, and the meters add up
        assert score.credits == board.machine.credits
        assert score.meters.games_played == 25
        assert score.credits == 500 - score.meters.credits_wagered + score.meters.credits_won
        assert await driver.credits() == score.credits
        await driver.exit_tournament()
        assert not board.machine.in_tournament
        events = await driver.poll_events()
        await _until(lambda: len(driver._events) + len(events) >= 50, "game events")
        events += await driver.poll_events()
        kinds = [e.kind for e in events]
        assert kinds.count(MachineEventKind.GAME_STARTED) == 25
        assert kinds.count(MachineEventKind.GAME_ENDED) == 25
        assert all(e.machine_id == "A01" for e in events)
    finally:
        await driver.close()


async def test_host_timed_board_loads_play_only_credits_and_sweeps_them(
    boards: Boards,
) -> None:
    board = await boards.add("H01", tournament_supported=False)  # no native mode on the EGM
    m = board.machine
    driver = MqttMachineDriver.from_uri("H01", boards.endpoint("H01"))
    await driver.open()
    try:
        assert (await driver.identity()).tournament is TournamentSupport.HOST_TIMED
        await driver.enter_tournament(300, 60)
        await driver.enter_tournament(300, 60)  # a retried entry loads nothing twice
        assert (m.restricted_credits, m.cashable_credits, m.play_locked) == (300, 0, True)
        await driver.unlock()
        for _ in range(30):
            m.spin(1)
        await driver.lock()
        score = await driver.heat_score()
        assert score.credits == m.credits  # T12: the credit meter is the score
        assert score.meters.games_played == 30
        assert score.meters.credits_wagered == 30
        assert score.credits == 300 - score.meters.credits_wagered + score.meters.credits_won
        await driver.exit_tournament()
        # T12/T18: tournament credits have no value and leave the machine
        assert (m.restricted_credits, m.cashable_credits) == (0, 0)
        assert (await driver.heat_score()).meters == score.meters  # still readable after
    finally:
        await driver.close()


async def test_machine_refusal_is_machine_refused(boards: Boards) -> None:
    board = await boards.add("A02")
    board.machine.insert_bill(100)  # cashable credits: no tournament mode (sas.md §5)
    driver = MqttMachineDriver.from_uri("A02", boards.endpoint("A02"))
    await driver.open()
    try:
        with pytest.raises(MachineRefused, match="cashable credits"):
            await driver.enter_tournament(500, 60)
        assert not board.machine.in_tournament
    finally:
        await driver.close()


async def test_no_board_times_out(boards: Boards) -> None:
    driver = MqttMachineDriver.from_uri("ghost", boards.endpoint("ghost", "timeout=0.3"))
    with pytest.raises(LinkTimeout, match="report-state"):
        await driver.open()


async def test_door_and_tilt_arrive_as_machine_events(boards: Boards) -> None:
    board = await boards.add("A03")
    driver = MqttMachineDriver.from_uri("A03", boards.endpoint("A03"))
    await driver.open()
    try:
        board.machine.open_slot_door()
        board.machine.tilt()
        got: list[MachineEventKind] = []

        async def drained() -> bool:
            got.extend(e.kind for e in await driver.poll_events())
            return MachineEventKind.TILT in got

        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while not await drained():
            assert loop.time() < deadline, got
            await asyncio.sleep(0.02)
        assert got == [MachineEventKind.DOOR_OPENED, MachineEventKind.TILT]
        await _until(lambda: driver.view.state is not None and driver.view.state.tilted, "state")
        assert driver.view.state is not None
        assert driver.view.state.door_open
    finally:
        await driver.close()


async def test_board_crash_reaches_the_gateway_as_link_down(boards: Boards) -> None:
    board = await boards.add("A04")
    driver = MqttMachineDriver.from_uri("A04", boards.endpoint("A04"))
    await driver.open()
    try:
        await _until(lambda: driver.view.online is True, "online status")
        await board.stop(crash=True)  # no goodbye: the broker publishes the last will
        await _until(lambda: driver.view.online is False, "last will")
        kinds = [e.kind for e in await driver.poll_events()]
        assert kinds == [MachineEventKind.LINK_DOWN]
    finally:
        await driver.close()


async def test_malformed_payloads_are_counted_and_dropped(
    boards: Boards, broker: EmbeddedBroker
) -> None:
    board = await boards.add("A05")
    driver = MqttMachineDriver.from_uri("A05", boards.endpoint("A05"))
    await driver.open()
    try:
        hub = driver._hub
        assert hub is not None
        async with aiomqtt.Client("127.0.0.1", broker.port) as rogue:
            site = boards.site
            await rogue.publish(board_topic(site, "A05", Channel.EVENT), b"not json", qos=1)
            await rogue.publish(board_topic(site, "A05", Channel.STATE), b'{"v":1}', qos=1)
            await rogue.publish(
                board_topic(site, "B99", Channel.STATUS),
                codec.encode(codec.Status(online=True, at=datetime.now(UTC))),
                qos=1,
            )
        await _until(
            lambda: hub.session.stats.dropped >= 2 and hub.stats.unknown_machine >= 1, "drops"
        )
        assert hub.session.stats.handler_errors.get("PayloadError") == 2
        assert hub.stats.unknown_machine == 1
        # the heat is not disturbed: the board still answers
        await driver.enter_tournament(100, 30)
        assert board.machine.in_tournament
    finally:
        await driver.close()


async def test_a_repeated_command_id_runs_once(boards: Boards, broker: EmbeddedBroker) -> None:
    board = await boards.add("A06")
    cmd = codec.CommandMessage(
        id="dup-1",
        cmd=Command.ENTER_TOURNAMENT,
        at=datetime.now(UTC),
        args={"credits": 100, "seconds": 30},
    )
    replies: list[codec.BoardMessage] = []
    async with aiomqtt.Client("127.0.0.1", broker.port) as gw:
        await gw.subscribe(board_topic(boards.site, "A06", Channel.REPLY), qos=1)
        for _ in range(2):  # QoS 1 redelivery, or the gateway's resend after a reconnect
            await gw.publish(board_topic(boards.site, "A06", Channel.CMD), codec.encode(cmd), qos=1)
        async with asyncio.timeout(5):
            async for message in gw.messages:
                assert isinstance(message.payload, bytes)
                replies.append(codec.decode(Channel.REPLY, message.payload))
                if len(replies) == 2:
                    break
    assert [r.id for r in replies if isinstance(r, codec.Reply)] == ["dup-1", "dup-1"]
    assert all(isinstance(r, codec.Reply) and r.ok for r in replies)
    assert board.commands_executed == 1


async def test_broker_restart_mid_heat_loses_no_score(
    boards: Boards, broker: EmbeddedBroker
) -> None:
    board = await boards.add("A07")
    # Reconnecting both sides is backoff plus load, not milliseconds: the lock may wait for
    # it up to 30 s (bounded), so a busy machine slows the test instead of failing it.
    driver = MqttMachineDriver.from_uri("A07", boards.endpoint("A07", "timeout=30"))
    await driver.open()
    try:
        await driver.enter_tournament(300, 60)
        await driver.unlock()
        for _ in range(10):
            board.machine.spin(1)
        await broker.restart()  # amqtt also forgets every retained message
        for _ in range(10):  # play goes on while the link is down
            board.machine.spin(1)
        await driver.lock()  # waits for the reconnect, resends with the same id
        # the board really lost the broker and came back (a condition, not a delay)
        await _until(lambda: board.session.stats.connects >= 2, "the board's reconnect", 30.0)
        score = await driver.heat_score()
        assert score.meters.games_played == 20
        assert score.credits == board.machine.credits
        # after resync the retained state is back on the new broker
        await _until(
            lambda: driver.view.meters is not None and driver.view.meters.games_played == 20,
            "resynced meters",
            within=30.0,
        )
    finally:
        await driver.close()


def test_endpoint_parsing_and_operator_errors() -> None:
    ep = MqttEndpoint.parse("mqtt://u:p@127.0.0.1:1884/ridge/A01?timeout=1.5&mqtt5=1")
    assert (ep.site, ep.machine, ep.command_timeout) == ("ridge", "A01", 1.5)
    assert (ep.settings.port, ep.settings.username, ep.settings.mqtt5) == (1884, "u", True)
    assert MqttEndpoint.parse("mqtts://127.0.0.1/ridge/A01").settings.tls
    for bad in (
        "mqtt://127.0.0.1/ridge",
        "mqtt://127.0.0.1/ri+dge/A01",
        "mqtt://127.0.0.1/ridge/A01?timeout=soon",
    ):
        with pytest.raises(OperatorError, match="machine A01"):
            open_driver("A01", bad)
