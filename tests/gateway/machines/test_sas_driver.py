"""The SAS MachineDriver against an emulated bank over TCP: native and host-timed heats,
events, clock, error mapping, and the registry choosing by URI scheme."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from zoneinfo import ZoneInfo

import pytest

from emulators.bank import Bank, BankMachine
from gateway.errors import OperatorError
from gateway.machines.driver import (
    LinkDown,
    LinkTimeout,
    MachineDriver,
    MachineEventKind,
    MachineRefused,
    ProtocolFault,
    TournamentSupport,
)
from gateway.machines.registry import FACTORIES, open_driver
from gateway.machines.sas import SasDriver
from gateway.machines.sas_aft import AftHost
from protocols.sas.endpoint import parse_endpoint

ZONE = ZoneInfo("Africa/Johannesburg")


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=3, no_tournament_support=1) as b:
        yield b


AFT_HOST = AftHost(bytes(range(1, 21)), 7001)


def fast_driver(b: BankMachine) -> SasDriver:
    """A driver with a short poll spacing so tests do not wait 200 ms per poll, and the
    AFT host identity a floor file would give it."""
    return SasDriver(
        b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=0.005, aft_host=AFT_HOST
    )


async def test_registry_opens_a_sas_driver_by_scheme(bank: Bank) -> None:
    b = bank.machines[0]
    driver = open_driver("M1", b.endpoint)
    assert isinstance(driver, SasDriver)
    assert isinstance(driver, MachineDriver)
    assert {"sas+tcp", "sas+serial"} <= set(FACTORIES)
    await driver.open()
    try:
        ident = await driver.identity()
        assert ident.tournament is TournamentSupport.NATIVE
        assert (ident.game_id, ident.protocol_version, ident.serial_number) == (
            "RG",
            "602",
            f"{b.machine.machine_id}-3",
        )
    finally:
        await driver.close()


@pytest.mark.parametrize(
    ("uri", "complaint"),
    [
        ("mqtt+nothing://x", "unknown scheme"),
        ("sas+tcp://127.0.0.1?address=1", "missing port"),
        ("sas+tcp://127.0.0.1:7000?address=300", "1..127"),
    ],
)
def test_registry_rejects_bad_endpoints_in_one_line(uri: str, complaint: str) -> None:
    with pytest.raises(OperatorError, match=complaint) as info:
        open_driver("M9", uri)
    assert "M9" in str(info.value)
    assert "\n" not in str(info.value)


async def test_native_heat_through_the_driver(bank: Bank) -> None:
    b = bank.machines[0]
    driver = fast_driver(b)
    await driver.open()
    try:
        await driver.enter_tournament(credits=500, seconds=120)
        assert b.machine.in_tournament
        assert b.machine.play_locked
        await driver.unlock()
        spins = [b.machine.spin(bet=5) for _ in range(10)]
        await driver.lock()
        score = await driver.heat_score()
        # T12: the score is the tournament credit meter
        assert score.credits == 500 - 50 + sum(s.win for s in spins)
        assert (score.meters.games_played, score.meters.credits_wagered) == (10, 50)
        await driver.exit_tournament()
        assert not b.machine.in_tournament
        assert await driver.credits() == 0
    finally:
        await driver.close()


async def test_host_timed_heat_loads_restricted_credits_and_sweeps_them(bank: Bank) -> None:
    b = bank.machines[1]  # LP A0 bit 3 clear
    m = b.machine
    driver = fast_driver(b)
    await driver.open()
    try:
        assert (await driver.identity()).tournament is TournamentSupport.HOST_TIMED
        await driver.enter_tournament(credits=300, seconds=120)
        assert (m.restricted_credits, m.cashable_credits, m.play_locked) == (300, 0, True)
        await driver.enter_tournament(credits=300, seconds=120)  # a retry loads nothing more
        assert m.restricted_credits == 300
        await driver.unlock()
        spins = [m.spin(bet=3) for _ in range(12)]
        await driver.lock()
        score = await driver.heat_score()
        wins = sum(s.win for s in spins)
        assert score.credits == 300 - 36 + wins == m.credits
        assert (score.meters.games_played, score.meters.credits_wagered) == (12, 36)
        assert score.meters.credits_won == wins
        assert m.meters.coin_out == 0  # nothing was cashed out (T12, T18)
        await driver.exit_tournament()
        assert m.credits == 0
        assert m.restricted_credits == 0
        assert m.cashable_credits == 0
    finally:
        await driver.close()


async def test_host_timed_entry_refused_with_cashable_credits(bank: Bank) -> None:
    b = bank.machines[1]
    b.machine.insert_bill(40)
    driver = fast_driver(b)
    await driver.open()
    try:
        with pytest.raises(MachineRefused, match="cashable"):
            await driver.enter_tournament(credits=300, seconds=60)
        assert b.machine.restricted_credits == 0
        assert b.machine.cashable_credits == 40
    finally:
        await driver.close()


async def test_native_entry_refused_with_cashable_credits(bank: Bank) -> None:
    b = bank.machines[0]
    b.machine.insert_bill(40)
    driver = fast_driver(b)
    await driver.open()
    try:
        with pytest.raises(MachineRefused):
            await driver.enter_tournament(credits=300, seconds=60)
        assert not b.machine.in_tournament
    finally:
        await driver.close()


async def test_events_clock_and_error_mapping(bank: Bank) -> None:
    b = bank.machines[0]
    driver = fast_driver(b)
    await driver.open()
    try:
        b.machine.open_slot_door()
        b.machine.tilt()
        events = await driver.poll_events()  # not in a heat: no confirmation is waited for
        assert [(e.kind, e.code) for e in events] == [
            (MachineEventKind.DOOR_OPENED, 0x11),
            (MachineEventKind.TILT, 0x20),
        ]
        assert all(e.machine_id == b.machine.machine_id and e.at.tzinfo for e in events)

        when = dt.datetime(2026, 11, 29, 16, 0, 0, tzinfo=dt.UTC)
        await driver.set_clock(when)
        read = await driver.read_clock()
        assert read.tzinfo is not None
        assert abs(read - when) <= dt.timedelta(seconds=2)
        assert read.astimezone(ZONE).hour == 18  # EGMs keep venue wall time

        b.face.inject(no_reply=True)
        with pytest.raises(LinkTimeout):
            await driver.credits()
        b.face.inject(no_reply=False, corrupt_crc=3)
        with pytest.raises(ProtocolFault):
            await driver.credits()
        b.face.drop_connection()  # the close reaches the client during the next poll
        with pytest.raises(LinkDown):
            await driver.credits()
        assert await driver.credits() == 0  # the next call reconnects
    finally:
        await driver.close()


async def test_unreachable_endpoint_is_link_down() -> None:
    async with Bank(1) as b:
        uri = b.machines[0].endpoint
    driver = open_driver("gone", uri)
    with pytest.raises(LinkDown):
        await driver.open()


async def test_link_counters_survive_a_reconnect(bank: Bank) -> None:
    """Counters only grow (Prometheus counters): a new SAS client after a lost link starts
    from zero, the driver carries what the closed one counted."""
    driver = fast_driver(bank.machines[0])
    await driver.open()
    try:
        assert driver.link_connected()
        await driver.credits()
        first = driver.link_counters()
        assert first.polls >= 1
        assert first.replies == first.polls
        await driver.close()
        assert not driver.link_connected()
        assert driver.link_counters() == first
        await driver.credits()  # reconnects
        again = driver.link_counters()
        assert again.polls > first.polls
        assert again.replies > first.replies
        assert again.timeouts == 0
    finally:
        await driver.close()
