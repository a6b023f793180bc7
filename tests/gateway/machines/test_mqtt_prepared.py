"""The MQTT driver's heat start and end framed ahead (capabilities.PreparedCommands):
the unlock / lock is encoded at prepare time and handed to the MQTT client with no await
when fired, so a bank of boards starts in one tight loop, as SAS machines do."""

from __future__ import annotations

import asyncio

import pytest

from gateway.machines.capabilities import PreparedCommands
from gateway.machines.driver import LinkDown
from gateway.machines.mqtt import MqttMachineDriver
from gateway.machines.registry import open_driver

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
