"""The MQTT driver's heat start and end framed ahead (capabilities.PreparedCommands):
the unlock / lock is encoded at prepare time and handed to the MQTT client with no await
when fired, so a bank of boards starts in one tight loop, as SAS machines do."""

from __future__ import annotations

import asyncio

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from gateway.machines.capabilities import PreparedCommands
from gateway.machines.driver import LinkDown
from gateway.machines.mqtt import MqttMachineDriver
from gateway.machines.registry import open_driver
from protocols.mqtt.client import MqttSettings

from ...protocols.mqtt.mqtt_boards import Boards


def mqtt_driver(boards: Boards, name: str) -> MqttMachineDriver:
    driver = open_driver(name, boards.endpoint(name))
    assert isinstance(driver, MqttMachineDriver)
    return driver


async def test_a_bank_of_boards_starts_and_stops_from_prepared_commands(boards: Boards) -> None:
    names = [f"P{i:02d}" for i in range(1, 9)]
    emulated = [await boards.add(n) for n in names]
    drivers = [mqtt_driver(boards, n) for n in names]
    for d in drivers:
        await d.open()
    try:
        assert all(isinstance(d, PreparedCommands) for d in drivers)
        for d in drivers:
            await d.enter_tournament(300, 60)
        assert all(b.machine.play_locked for b in emulated)
        triggers = [d.prepare_unlock() for d in drivers]
        assert all(b.machine.play_locked for b in emulated)  # prepared: nothing sent yet
        await asyncio.gather(*[t() for t in triggers])  # fired in one loop, then awaited
        assert not any(b.machine.play_locked for b in emulated)
        stops = [d.prepare_lock() for d in drivers]
        await asyncio.gather(*[t() for t in stops])
        assert all(b.machine.play_locked for b in emulated)
    finally:
        for d in drivers:
            await d.close()


async def test_a_prepared_command_needs_an_open_driver(boards: Boards) -> None:
    await boards.add("P20")
    driver = mqtt_driver(boards, "P20")
    with pytest.raises(LinkDown):  # nothing sent: the runner unlocks the plain way
        driver.prepare_unlock()


async def test_boards_that_say_so_start_and_stop_from_one_bank_wide_publish(
    boards: Boards,
) -> None:
    names = [f"B{i:02d}" for i in range(1, 7)]
    emulated = [await boards.add(n) for n in names]
    drivers = [mqtt_driver(boards, n) for n in names]
    for d in drivers:
        await d.open()
    try:
        for d in drivers:
            await d.identity()  # the board says it takes bank-wide commands
            await d.enter_tournament(300, 60)
        assert all(d.bank_commands for d in drivers)
        hub = drivers[0]._hub
        assert hub is not None
        triggers = [d.prepare_unlock() for d in drivers]
        assert all(b.machine.play_locked for b in emulated)  # prepared: nothing sent yet
        await asyncio.gather(*[t() for t in triggers])
        assert not any(b.machine.play_locked for b in emulated)
        assert hub.banks.publishes == 1
        await asyncio.gather(*[t() for t in [d.prepare_lock() for d in drivers]])
        assert all(b.machine.play_locked for b in emulated)
        assert hub.banks.publishes == 2
        assert [d.stats.bank for d in drivers] == [2] * len(drivers)
        assert [d.stats.bank_fallbacks for d in drivers] == [0] * len(drivers)
        assert [b.core.stats.bank_commands for b in emulated] == [2] * len(drivers)
    finally:
        for d in drivers:
            await d.close()


async def test_a_board_that_misses_the_bank_wide_start_gets_its_own_after_the_deadline(
    boards: Boards,
) -> None:
    """No machine silently left out: a board that did not see the bank's publish (it
    joined late, was reconnecting) gets the same command, same id, on its own topic."""
    hearing = await boards.add("B10")
    deaf = MqttBoard(EmulatedMachine("B11"), MqttSettings.from_url(boards.url), boards.site)
    deaf.core._on_bank_command = lambda topic, payload: None  # type: ignore[method-assign]
    boards.boards["B11"] = deaf  # stopped at teardown
    await deaf.start()
    drivers = [mqtt_driver(boards, n) for n in ("B10", "B11")]
    for d in drivers:
        d.bank_deadline = 0.2
        await d.open()
        await d.identity()
        await d.lock()
    try:
        await asyncio.gather(*[t() for t in [d.prepare_unlock() for d in drivers]])
        assert not hearing.machine.play_locked
        assert not deaf.machine.play_locked
        assert [d.stats.bank_fallbacks for d in drivers] == [0, 1]
        assert (deaf.core.stats.bank_commands, hearing.core.stats.bank_commands) == (0, 1)
    finally:
        for d in drivers:
            await d.close()


async def test_a_slow_board_runs_the_command_once_when_both_copies_arrive(
    boards: Boards,
) -> None:
    board = await boards.add("B20")
    driver = mqtt_driver(boards, "B20")
    driver.bank_deadline = 0.0  # the board's own copy follows the bank's at once
    await driver.open()
    try:
        await driver.identity()
        await driver.lock()
        executed = board.commands_executed
        await driver.prepare_unlock()()
        assert not board.machine.play_locked
        assert driver.stats.bank_fallbacks == 1
        await asyncio.sleep(0.2)  # the second copy's answer, from the cache
        assert board.commands_executed == executed + 1
        assert board.core.stats.replayed >= 1  # the later copy, answered from the cache
    finally:
        await driver.close()


async def test_bank_0_sends_each_board_its_own_start(boards: Boards) -> None:
    await boards.add("B30")
    driver = open_driver("B30", boards.endpoint("B30", "bank=0"))
    assert isinstance(driver, MqttMachineDriver)
    await driver.open()
    try:
        await driver.identity()
        await driver.prepare_unlock()()
        assert driver.stats.bank == 0
        assert driver._hub is not None
        assert driver._hub.banks.publishes == 0
    finally:
        await driver.close()


async def test_a_share_fired_after_the_bank_publish_left_goes_to_its_board_alone(
    boards: Boards,
) -> None:
    emulated = [await boards.add(n) for n in ("B40", "B41")]
    drivers = [mqtt_driver(boards, n) for n in ("B40", "B41")]
    for d in drivers:
        await d.open()
        await d.identity()
        await d.lock()
    try:
        first, late = (d.prepare_unlock() for d in drivers)
        started = first()
        await asyncio.sleep(0)  # the loop's next turn: the bank's publish leaves
        await asyncio.gather(started, late())
        assert not any(b.machine.play_locked for b in emulated)
        assert [d.stats.bank for d in drivers] == [1, 0]  # the late one went alone
        assert [d.stats.bank_fallbacks for d in drivers] == [0, 0]
    finally:
        for d in drivers:
            await d.close()
