"""Live credits from SAS real-time events (capabilities.LiveCredits) against an emulated
bank over TCP: the bets and wins of every game move the credits with no meter read; a
machine without real-time reporting falls back to reads; the score still comes from the
meters."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from emulators.bank import Bank, BankMachine
from gateway.machines.capabilities import LiveCredits
from gateway.machines.sas import SasDriver
from gateway.machines.sas_live import LiveMeter
from protocols.sas import ExceptionReply, RealTimeEvent, SasException
from protocols.sas.endpoint import parse_endpoint

from ...sas_flood import flood


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=4, no_real_time=1) as b:
        yield b


def driver_for(b: BankMachine) -> SasDriver:
    return SasDriver(b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=0.005)


@contextlib.asynccontextmanager
async def live_heat(b: BankMachine, credits: int) -> AsyncIterator[SasDriver]:
    """A driver in a heat of ``credits`` on ``b``, reporting in real time; closed after."""
    driver = driver_for(b)
    await driver.open()
    try:
        await driver.enter_tournament(credits, 60)
        await driver.unlock()
        assert await driver.start_live_credits()
        yield driver
    finally:
        await driver.close()


async def test_every_game_moves_the_live_credits_with_the_drain(bank: Bank) -> None:
    b = bank.machines[0]
    driver = driver_for(b)
    assert isinstance(driver, LiveCredits)
    await driver.open()
    try:
        await driver.enter_tournament(1000, 60)
        await driver.unlock()
        assert await driver.start_live_credits()
        assert driver.live_credits() == 1000
        polls_before = driver.link_counters().polls
        for _ in range(5):
            b.machine.spin(bet=2)
            events = await driver.poll_events()
            assert [e.code for e in events] == [0x7E, 0x7F]
            assert driver.live_credits() == b.machine.credits
        # each drain is one LP 1A, answered by the two events and then the meter
        assert driver.link_counters().polls - polls_before == 15
        score = await driver.heat_score()  # the score: still read from the meters
        assert score.credits == b.machine.credits
        await driver.exit_tournament()
        assert driver.live_credits() is None
        assert not b.face.link.real_time
    finally:
        await driver.close()


async def test_events_a_base_read_met_are_not_counted_twice(bank: Bank) -> None:
    b = bank.machines[0]
    async with live_heat(b, 500) as driver:
        b.machine.spin(bet=3)  # 7E and 7F wait in the queue ...
        assert await driver.credits() == b.machine.credits  # ... and answer LP 1A first
        events = await driver.poll_events()
        assert [e.code for e in events] == [0x7E, 0x7F]  # still reported, once
        assert driver.live_credits() == b.machine.credits  # but not applied again


async def test_reporting_is_turned_on_again_after_a_reconnect(bank: Bank) -> None:
    b = bank.machines[0]
    async with live_heat(b, 500) as driver:
        b.face.drop_connection()
        await driver.close()  # the next call connects afresh
        assert driver.live_credits() is None
        await driver.poll_events()
        assert b.face.link.real_time
        assert driver.live_credits() == b.machine.credits


async def test_a_restarted_gateway_ends_reporting_it_did_not_start(bank: Bank) -> None:
    """A real EGM keeps reporting in real time across the host's restart: the new
    gateway, which never asked, turns it off at tournament exit, events pending or not;
    a machine without LP 0E is left as it is (silence, then the exit goes on)."""
    b, plain = bank.machines
    first = driver_for(b)
    await first.open()
    try:
        await first.enter_tournament(500, 60)
        await first.unlock()
        assert await first.start_live_credits()
    finally:
        await first.close()  # the gateway process ends (its connection with it)
    restarted = driver_for(b)
    await restarted.open()
    b.face.link.real_time = True  # the machine kept it (the emulator resets it)
    b.machine.spin(bet=3)  # events wait, to be reported ahead of the LP 0E's ACK
    try:
        await restarted.exit_tournament()
        assert not b.face.link.real_time
        assert b.machine.tournament is None
    finally:
        await restarted.close()
    other = driver_for(plain)
    await other.open()
    try:
        await other.enter_tournament(500, 60)
        await other.exit_tournament()  # LP 0E met silence: no such poll, no harm
        assert plain.machine.tournament is None
    finally:
        await other.close()


async def test_a_machine_without_real_time_reporting_falls_back(bank: Bank) -> None:
    b = bank.machines[1]
    driver = driver_for(b)
    await driver.open()
    try:
        await driver.enter_tournament(700, 60)
        await driver.unlock()
        assert not await driver.start_live_credits()
        assert not await driver.start_live_credits()  # asked once, not again
        b.machine.spin()
        assert [e.code for e in await driver.poll_events()] == [0x7E, 0x7F]
        assert driver.live_credits() is None
        assert await driver.credits() == b.machine.credits
    finally:
        await driver.close()


def test_live_meter_follows_bets_and_wins_and_forgets_on_lost_events() -> None:
    meter = LiveMeter()
    meter.apply(RealTimeEvent.game_started(1, 5, 0))
    assert meter.value is None  # no base yet
    meter.base(100)
    meter.apply(RealTimeEvent.game_started(1, 5, 0))
    meter.apply(RealTimeEvent(1, SasException.SLOT_DOOR_CLOSED))
    meter.apply(RealTimeEvent.game_ended(1, 20))
    assert meter.value == 115
    meter.apply(ExceptionReply(1, SasException.EXCEPTION_BUFFER_OVERFLOW))
    assert meter.value is None  # events lost: read again
    meter.base(3)
    meter.apply(RealTimeEvent.game_started(1, 5, 0))
    assert meter.value is None  # below zero cannot be


async def test_each_event_shows_its_credits_before_the_drain_ends(bank: Bank) -> None:
    """The live display follows a game poll by poll: the bet's credits are told before the
    win is asked for, the win's before the drain's last poll; no listener, no calls."""
    b = bank.machines[0]
    async with live_heat(b, 1000) as driver:
        told: list[tuple[int, int]] = []  # (credits, polls sent so far)
        driver.follow_live_credits(lambda v: told.append((v, driver.link_counters().polls)))
        for _ in range(20):  # bounded: until a game wins something
            told.clear()
            before = b.machine.credits
            result = b.machine.spin(bet=2)
            await driver.poll_events()
            if result.win:
                break
        assert result.win
        assert [v for v, _ in told] == [before - 2, before - 2 + result.win]
        assert told[0][1] < told[1][1] < driver.link_counters().polls
        assert driver.live_credits() == b.machine.credits
        driver.follow_live_credits(None)
        told.clear()
        b.machine.spin(bet=2)
        await driver.poll_events()
        assert told == []


async def test_a_players_flood_of_events_is_no_malfunction(bank: Bank) -> None:
    """More events in a row than one drain takes (SasEventFlood): the meter read gives the
    live value, the drains hand on every game once, the machine is not failed."""
    b = bank.machines[0]
    spins = 48
    async with live_heat(b, 500) as driver:
        flood(b.face, spins)
        assert await driver.credits() == driver.live_credits()  # no reply yet: the live value
        codes: list[int | None] = []
        for _ in range(8):  # bounded: the player stops after ``spins`` games
            codes += [e.code for e in await driver.poll_events()]
            if codes.count(0x7F) == spins:
                break
        assert codes == [0x7E, 0x7F] * spins
        assert driver.live_credits() == b.machine.credits


async def test_a_score_is_read_through_a_backlog_of_events(bank: Bank) -> None:
    """T12: the score's LP 1A may meet a flood before its reply; play stops, the backlog
    drains, and the score is the credit meter after it."""
    b = bank.machines[0]
    async with live_heat(b, 500) as driver:
        flood(b.face, 40)  # 80 events: more than one long poll's bound
        score = await driver.heat_score()
        assert score.credits == b.machine.credits
