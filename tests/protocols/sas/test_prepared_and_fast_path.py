"""The heat-start and heat-end helpers of the SAS stack.

* A prepared LP 02 (``SasDriver.prepare_unlock``) sends nothing until it is fired, then
  unlocks like a plain LP 02; it refuses (nothing sent) inside the poll spacing or on a
  closed link, so the heat runner can fall back to the plain path.
* ``SasDriver.tournament_meters`` reads LP 99 alone (native machines only).
* The EGM link's whole-message fast path (``EgmLink(fast_polls=...)``, as the emulator
  uses it) behaves exactly like the plain :class:`EgmLink` for any chunking of any byte
  stream: same replies, same events.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulators.bank import Bank, BankMachine
from emulators.sas_face import fast_polls
from gateway.machines.driver import DriverError, LinkDown, MachineRefused
from gateway.machines.sas import SasDriver
from protocols.sas import (
    EgmLink,
    GeneralPoll,
    LinkSettings,
    SendCurrentCredits,
    SendGamingMachineMeters,
    SendTournamentMeters,
    Shutdown,
    Startup,
    TournamentMode,
    encode_host_message,
)
from protocols.sas.endpoint import parse_endpoint

from .conftest import TestMachine


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=5, no_tournament_support=1) as b:
        yield b


def driver_for(b: BankMachine, spacing: float = 0.005) -> SasDriver:
    return SasDriver(b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=spacing)


async def test_prepared_unlock_sends_nothing_until_fired(bank: Bank) -> None:
    b = bank.machines[0]
    driver = driver_for(b)
    await driver.open()
    try:
        await driver.enter_tournament(credits=300, seconds=60)
        await asyncio.sleep(0.02)  # let the spacing run out
        seen = b.face.polls_seen
        trigger = driver.prepare_unlock()
        await asyncio.sleep(0.05)  # a prepared poll waits for its trigger, however long
        assert b.face.polls_seen == seen
        assert b.machine.play_locked
        assert not b.machine.play_enabled()
        pending = trigger()  # the write happens here, synchronously
        await pending  # the EGM's ACK
        assert b.face.polls_seen == seen + 1
        assert not b.machine.play_locked
        assert b.machine.play_enabled()
        # the link is usable as before: the next poll is spaced after the fired one
        assert await driver.credits() == 300
    finally:
        await driver.close()


async def test_prepared_unlock_refuses_inside_the_spacing_and_sends_nothing(
    bank: Bank,
) -> None:
    b = bank.machines[0]
    driver = driver_for(b, spacing=0.5)
    await driver.open()
    try:
        await driver.lock()
        seen = b.face.polls_seen
        trigger = driver.prepare_unlock()
        with pytest.raises(DriverError, match="spacing"):
            trigger()
        assert b.face.polls_seen == seen
        assert b.machine.play_locked
        await driver.unlock()  # the plain path waits out the spacing and unlocks
        assert not b.machine.play_locked
    finally:
        await driver.close()


async def test_a_prepared_poll_fires_once(bank: Bank) -> None:
    b = bank.machines[0]
    driver = driver_for(b)
    await driver.open()
    try:
        client = driver._client
        assert client is not None
        prepared = client.prepare_unlock()
        await prepared.fire()
        with pytest.raises(RuntimeError, match="once"):
            prepared.fire().close()
    finally:
        await driver.close()


async def test_a_poll_is_encoded_once_and_a_prepared_one_not_at_fire(
    bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Encoding and the CRC cost more than the write: the burst must not pay them."""
    b = bank.machines[0]
    driver = driver_for(b)
    await driver.open()
    encoded: list[str] = []
    for cls in (Startup, SendCurrentCredits):
        plain = cls.encode

        def counting(self: object, plain: object = plain, name: str = cls.__name__) -> bytes:
            encoded.append(name)
            return plain(self)  # type: ignore[operator, no-any-return]

        monkeypatch.setattr(cls, "encode", counting)
    try:
        await asyncio.sleep(0.02)
        encoded.clear()
        trigger = driver.prepare_unlock()
        assert encoded == ["Startup"]  # framed (and checked) when prepared
        await trigger()
        assert encoded == ["Startup"]  # sent without encoding again
        await asyncio.sleep(0.02)
        encoded.clear()
        assert await driver.credits() == b.machine.credits
        assert encoded == ["SendCurrentCredits"]  # a plain poll: framed once
    finally:
        await driver.close()


async def test_prepare_unlock_needs_an_open_link(bank: Bank) -> None:
    driver = driver_for(bank.machines[0])
    with pytest.raises(LinkDown, match="not open"):
        driver.prepare_unlock()


async def test_tournament_meters_alone_native_only(bank: Bank) -> None:
    native, host_timed = bank.machines
    d = driver_for(native)
    await d.open()
    try:
        await d.enter_tournament(credits=200, seconds=60)
        await d.unlock()
        for _ in range(5):
            native.machine.spin(1)
        meters = await d.tournament_meters()
        t = native.machine.tournament_meters()
        assert (meters.games_played, meters.games_won) == (t.games_played, t.games_won)
        assert (meters.credits_wagered, meters.credits_won) == (5, t.credits_won)
        # T12: start - wagered + won is the tournament credit meter
        assert 200 - meters.credits_wagered + meters.credits_won == await d.credits()
    finally:
        await d.close()
    h = driver_for(host_timed)
    await h.open()
    try:
        with pytest.raises(MachineRefused, match="host-timed"):
            await h.tournament_meters()
    finally:
        await h.close()


# -- the EGM link's fast receive path ------------------------------------------------------

_POLLS = [
    GeneralPoll(1),
    Shutdown(1),
    Startup(1),
    SendCurrentCredits(1),
    SendGamingMachineMeters(1),
    SendTournamentMeters(1, 0),
    SendTournamentMeters(1, 2),  # not on the fast path (game 2)
    TournamentMode.enter(1, 0, 60, 500, False),
    Startup(2),  # another address: an implied ACK
    GeneralPoll(2),
]
_WIRES = [encode_host_message(p) for p in _POLLS]
_piece = st.one_of(
    st.sampled_from(_WIRES),
    st.binary(min_size=1, max_size=4),  # garbage, stray bytes, broken escapes
)


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(_piece, min_size=1, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
)
def test_fast_path_link_equals_the_plain_link(pieces: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(pieces)
    # chunks: whole pieces (the fast path's case) and the same stream cut anywhere
    chunkings = [pieces]
    points = sorted({c for c in cuts if 0 < c < len(stream)})
    bounds = [0, *points, len(stream)]
    chunkings.append([stream[a:b] for a, b in itertools.pairwise(bounds)])
    # and with the 5 ms gap rule on: chunks 10 ms apart, so a split poll is dropped
    runs = [(c, s) for c in chunkings for s in (None, LinkSettings(enforce_gap=True))]
    for chunks, link_settings in runs:
        plain = EgmLink(1, TestMachine(1), 0.0, link_settings)
        fast = EgmLink(1, TestMachine(1), 0.0, link_settings, fast_polls=fast_polls(1))
        now = 0.0
        for chunk in chunks:
            now += 0.01
            plain.receive_data(chunk, now)
            fast.receive_data(chunk, now)
            assert fast.data_to_send() == plain.data_to_send()
            assert repr(fast.events()) == repr(plain.events())
            assert fast.state is plain.state


def test_fast_path_is_taken_for_whole_short_polls() -> None:
    fast = EgmLink(1, TestMachine(1), 0.0, fast_polls=fast_polls(1))
    fast.receive_data(encode_host_message(Startup(1)), 0.1)
    fast.receive_data(encode_host_message(SendTournamentMeters(1, 0)), 0.3)
    assert fast.fast_hits == 2
    split = encode_host_message(Shutdown(1))
    fast.receive_data(split[:3], 0.5)
    fast.receive_data(split[3:], 0.5)  # a split poll goes the full way
    assert fast.fast_hits == 2
    assert fast.data_to_send() != b""


def test_fast_polls_must_be_for_the_links_own_address() -> None:
    with pytest.raises(ValueError, match="address 1"):
        EgmLink(1, TestMachine(1), 0.0, fast_polls=fast_polls(2))
    plain = EgmLink(1, TestMachine(1), 0.0)  # the fast path is off unless asked for
    plain.receive_data(encode_host_message(Startup(1)), 0.1)
    assert plain.fast_hits == 0
    assert plain.data_to_send() == b"\x01"


async def test_the_client_records_its_shortest_gap_between_polls(bank: Bank) -> None:
    driver = driver_for(bank.machines[0], spacing=0.05)
    await driver.open()
    try:
        assert driver.stats is not None
        assert driver.stats.min_gap is None
        for _ in range(3):
            await driver.credits()
        await asyncio.sleep(0.06)
        trigger = driver.prepare_unlock()
        await trigger()  # a fired poll counts like any other
        stats = driver.stats
        assert stats.polls == 4
        assert stats.min_gap is not None
        assert stats.min_gap >= 0.05  # the spacing held
    finally:
        await driver.close()
    assert driver.stats is None  # no open link, no counters


async def test_prepared_lock_sends_nothing_until_fired(bank: Bank) -> None:
    b = bank.machines[0]
    driver = driver_for(b)
    await driver.open()
    try:
        await driver.unlock()
        await asyncio.sleep(0.02)
        seen = b.face.polls_seen
        trigger = driver.prepare_lock()
        await asyncio.sleep(0.05)
        assert b.face.polls_seen == seen
        assert not b.machine.play_locked
        await trigger()
        assert b.face.polls_seen == seen + 1
        assert b.machine.play_locked
    finally:
        await driver.close()
