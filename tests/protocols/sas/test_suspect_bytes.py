"""A malfunction-class exception from one general-poll byte (no CRC) is confirmed before
it is reported, so one flipped bit (00 -> 20) cannot void a seat (T20).

Pure tests of :class:`ExceptionGate` on an injected clock, then the SAS driver against an
emulated EGM over loopback TCP.

Clauses: docs/rules.md#t20.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from emulators.bank import Bank, BankMachine
from gateway.machines.driver import MachineEventKind
from gateway.machines.sas import SasDriver
from gateway.machines.suspect_bytes import ExceptionGate
from protocols.sas.endpoint import parse_endpoint

TILT, DOOR_OPEN, DOOR_CLOSED, GAME_STARTED = 0x20, 0x11, 0x12, 0x7E


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_lone_tilt_byte_is_held_then_counted_as_a_suspect() -> None:
    clock, seen = Clock(), list[int]()
    gate = ExceptionGate(polls=3, window_s=1.5, clock=clock, on_suspect=seen.append)
    assert gate.admit([TILT]) == []
    for _ in range(3):  # three following drains find nothing
        clock.now += 0.4
        assert gate.admit([]) == []
    assert (gate.suspects, gate.confirmed, gate.held, seen) == (1, 0, [], [TILT])


def test_a_repeated_tilt_is_reported_once() -> None:
    clock = Clock()
    gate = ExceptionGate(clock=clock)
    assert gate.admit([TILT]) == []
    clock.now += 0.4
    assert gate.admit([TILT]) == [TILT]
    assert gate.admit([TILT, TILT]) == [TILT]  # two bytes of one drain confirm too
    assert (gate.suspects, gate.confirmed) == (0, 2)


def test_the_window_is_bounded_in_time_and_polls() -> None:
    clock = Clock()
    gate = ExceptionGate(polls=3, window_s=1.0, clock=clock)
    gate.admit([TILT])
    clock.now += 1.1  # too late: the repeat starts a new suspect instead
    assert gate.admit([TILT]) == []
    assert gate.suspects == 1
    for _ in range(3):
        gate.admit([GAME_STARTED])  # other codes pass through at once, drains count
    clock.now += 0.1
    assert gate.admit([TILT]) == []  # three drains later: a fresh suspect again
    assert gate.suspects == 2


def test_a_partner_or_a_status_read_confirms() -> None:
    gate = ExceptionGate(clock=Clock())
    assert gate.admit([DOOR_OPEN, GAME_STARTED]) == [GAME_STARTED]
    assert gate.admit([DOOR_CLOSED]) == [DOOR_OPEN, DOOR_CLOSED]
    assert gate.admit([DOOR_OPEN]) == []
    assert gate.confirm(DOOR_OPEN) == DOOR_OPEN
    assert gate.confirm(DOOR_OPEN) is None  # reported once
    assert (gate.suspects, gate.confirmed) == (0, 2)


@pytest.fixture
async def machine() -> AsyncIterator[BankMachine]:
    async with Bank(1, seed=3) as b:
        yield b.machines[0]


async def _tournament_driver(b: BankMachine) -> SasDriver:
    driver = SasDriver(b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=0.005)
    await driver.open()
    await driver.enter_tournament(credits=300, seconds=60)
    await driver.unlock()
    return driver


async def test_over_tcp_a_lone_0x20_is_not_a_malfunction(machine: BankMachine) -> None:
    driver = await _tournament_driver(machine)
    try:
        machine.face.link.post_exception(TILT)  # as if 00 arrived with bit 5 flipped
        for _ in range(4):
            assert await driver.poll_events() == []
        assert driver.suspect_bytes == 1
    finally:
        await driver.close()


async def test_over_tcp_a_repeated_tilt_is_a_malfunction(machine: BankMachine) -> None:
    driver = await _tournament_driver(machine)
    try:
        machine.machine.tilt()
        assert await driver.poll_events() == []
        machine.machine.tilt()  # the EGM reports it again
        events = await driver.poll_events()
        assert [(e.kind, e.code) for e in events] == [(MachineEventKind.TILT, TILT)]
        assert driver.suspect_bytes == 0
    finally:
        await driver.close()


async def test_over_tcp_a_real_door_open_is_confirmed_by_the_next_poll(
    machine: BankMachine,
) -> None:
    driver = await _tournament_driver(machine)
    try:
        machine.machine.open_slot_door()  # 11 queued once; the LP 1C door meter moves
        events = await driver.poll_events()
        assert [(e.kind, e.code) for e in events] == [(MachineEventKind.DOOR_OPENED, DOOR_OPEN)]
        machine.face.link.post_exception(DOOR_OPEN)  # a second byte the meter does not show
        assert await driver.poll_events() == []
    finally:
        await driver.close()
