"""The SAS host client against the emulated EGM, in memory and over loopback TCP.

Every test runs on both carriers (the same body, as asyncua does for its two sides).
:func:`paired` is also used by the emulator tests.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulators.machine import EmulatedMachine
from emulators.sas_aft import AftSettings
from emulators.sas_face import SasFace
from protocols.sas import (
    EgmMessage,
    EgmState,
    HostMessage,
    LinkSettings,
    SendCurrentCredits,
    SendEnabledFeatures,
    TournamentMode,
)
from protocols.sas.carriers import Carrier, connect_tcp, memory_pair, serve_tcp
from protocols.sas.client import (
    SasBusy,
    SasClient,
    SasClientError,
    SasLinkLost,
    SasProtocolFault,
    SasRefused,
    SasTimeout,
    SasUnsupported,
)

# Loopback is fast, but the test machine is shared: leave room before a try counts as lost.
TEST_SETTINGS = LinkSettings(reply_timeout=0.15, inter_byte_gap=0.02)
TEST_SPACING = 0.005


@dataclass
class Pair:
    machine: EmulatedMachine
    face: SasFace
    client: SasClient
    kind: str
    server: asyncio.Server | None = None

    async def reconnect(self) -> SasClient:
        """A fresh host connection (after a dropped one)."""
        carrier = await _host_carrier(self)
        self.client = SasClient(carrier, 1, settings=TEST_SETTINGS, min_spacing=TEST_SPACING)
        return self.client


async def _host_carrier(pair: Pair) -> Carrier:
    if pair.server is None:
        host, egm = memory_pair()
        pair.face.attach(egm)
        return host
    port = pair.server.sockets[0].getsockname()[1]
    return await connect_tcp("127.0.0.1", port)


@asynccontextmanager
async def paired(
    kind: str,
    *,
    tournament_supported: bool = True,
    seed: int = 5,
    aft: AftSettings | None = None,
    real_time_idle_frame: bool = True,
) -> AsyncIterator[Pair]:
    machine = EmulatedMachine("T1", seed=seed, tournament_supported=tournament_supported)
    face = SasFace(machine, 1, aft=aft, real_time_idle_frame=real_time_idle_frame)
    server = await serve_tcp("127.0.0.1", 0, face.attach) if kind == "tcp" else None
    pair = Pair(machine, face, None, kind, server)  # type: ignore[arg-type]
    await pair.reconnect()
    try:
        yield pair
    finally:
        await pair.client.close()
        face.close()
        if server is not None:
            server.close()
            await server.wait_closed()


async def eventually(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Wait (bounded) until ``condition()`` holds; fail the test if it never does."""
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached in time")


# --- the tests -------------------------------------------------------------------------------

KINDS = ["memory", "tcp"]


@pytest.fixture(params=KINDS)
async def sas_pair(request: pytest.FixtureRequest) -> AsyncIterator[Pair]:
    async with paired(str(request.param)) as p:
        yield p


async def test_identity_version_features_credits_clock(sas_pair: Pair) -> None:
    c, m = sas_pair.client, sas_pair.machine
    m.insert_bill(250)
    info = await c.machine_info()
    assert (info.game_id, info.paytable_id, info.denomination, info.max_bet) == (
        "RG",
        "RG0001",
        0x01,
        5,
    )
    version = await c.version()
    assert (version.version, version.serial) == ("602", "EMU-T1")
    assert (await c.capabilities()).tournament
    assert await c.credits() == 250
    when = dt.datetime(2026, 11, 29, 18, 30, 5)
    await c.set_clock(when)
    assert abs(await c.read_clock() - when) <= dt.timedelta(seconds=2)


async def test_lock_and_unlock(sas_pair: Pair) -> None:
    c, m = sas_pair.client, sas_pair.machine
    await c.lock()
    assert m.play_locked
    assert not m.play_enabled()
    await c.unlock()
    assert not m.play_locked
    assert m.play_enabled()


async def test_tournament_enter_play_meters_exit(sas_pair: Pair) -> None:
    c, m = sas_pair.client, sas_pair.machine
    live_before = await c.meters()
    await c.enter_tournament(1000, 300)
    assert m.in_tournament
    assert m.play_locked  # stays locked until the start (LP 02)
    await c.unlock()
    results = [m.spin(bet=2) for _ in range(25)]
    assert await c.credits() == 1000 - 50 + sum(r.win for r in results)
    t = await c.tournament_meters()
    assert (t.games_played, t.credits_wagered, t.credits_won) == (
        25,
        50,
        sum(r.win for r in results),
    )
    assert t.games_won == sum(1 for r in results if r.win)
    # sas.md §5: live accounting meters untouched by tournament play
    assert await c.meters() == live_before
    await c.lock()
    await c.exit_tournament()
    assert not m.in_tournament
    assert await c.credits() == 0


async def test_entry_with_cashable_credits_is_refused(sas_pair: Pair) -> None:
    # sas.md §5: no tournament mode while cashable credits are on the machine (NACK)
    c, m = sas_pair.client, sas_pair.machine
    m.insert_bill(20)
    with pytest.raises(SasRefused):
        await c.enter_tournament(1000, 300)
    assert not m.in_tournament
    assert m.cashable_credits == 20


async def test_entry_while_tilted_is_busy(sas_pair: Pair) -> None:
    c, m = sas_pair.client, sas_pair.machine
    m.tilt()
    with pytest.raises(SasBusy):
        await c.enter_tournament(1000, 300)
    m.clear_tilt()
    await c.enter_tournament(1000, 300)
    assert m.in_tournament


async def test_exceptions_delivered_in_order_with_implied_ack(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    m.open_slot_door()
    m.close_slot_door()
    m.raise_handpay()
    assert len(face.link.queue) == 3
    assert await c.general_poll() == 0x11
    assert len(face.link.queue) == 3  # not acknowledged yet: only the next poll does
    assert await c.events() == [0x12, 0x51]
    assert len(face.link.queue) == 0  # the final 00 poll acknowledged the handpay


async def test_exception_is_not_lost_when_the_reply_is(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    m.open_slot_door()
    face.inject(no_reply=True)
    with pytest.raises(SasTimeout):
        await c.general_poll()
    face.inject(no_reply=False)
    assert await c.events() == [0x11]


async def test_corrupted_reply_is_retried_with_the_same_data(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    m.insert_bill(1234)
    face.inject(corrupt_crc=2)
    assert await c.credits() == 1234
    assert c.stats.retries == 2
    assert c.stats.corrupt == 2  # the garbled tries, counted for the gateway's metrics
    assert face.faults.corrupt_crc == 0


async def test_corrupted_every_try_is_a_protocol_fault(sas_pair: Pair) -> None:
    c, face = sas_pair.client, sas_pair.face
    face.inject(corrupt_crc=3)
    with pytest.raises(SasProtocolFault):
        await c.credits()
    assert await c.credits() == 0  # the link recovers on the next poll


async def test_busy_is_retried_then_reported(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    face.inject(busy=2)
    await c.lock()
    assert m.play_locked
    assert c.stats.busy == 2
    face.inject(busy=5)
    with pytest.raises(SasBusy):
        await c.unlock()
    assert m.play_locked


async def test_no_reply_is_a_typed_timeout_after_three_tries(sas_pair: Pair) -> None:
    c, face = sas_pair.client, sas_pair.face
    face.inject(no_reply=True)
    with pytest.raises(SasTimeout, match="3 tries"):
        await c.credits()
    assert c.stats.retries == 2
    assert c.stats.failures == 1
    assert c.stats.timeouts == 3  # every try


async def test_late_reply_times_out_and_leaves_the_link_clean(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    m.insert_bill(7)
    face.inject(reply_delay=1.0)
    with pytest.raises(SasTimeout):
        await c.machine_info()
    face.inject(reply_delay=0.0)
    await asyncio.sleep(1.0)  # the late replies arrive now, unasked for
    assert await c.credits() == 7


async def test_chirping_egm_is_seen_and_recovers(sas_pair: Pair) -> None:
    c, face = sas_pair.client, sas_pair.face
    face.inject(chirp=True)
    with pytest.raises(SasTimeout):
        await c.general_poll()
    await eventually(lambda: c.stats.chirps >= 2)
    face.inject(chirp=False)
    assert await c.general_poll() == 0


async def test_dropped_connection_is_link_lost(sas_pair: Pair) -> None:
    c, face = sas_pair.client, sas_pair.face
    face.drop_connection()
    await eventually(lambda: c.closed)
    with pytest.raises(SasLinkLost):
        await c.credits()
    c2 = await sas_pair.reconnect()
    assert await c2.credits() == 0


async def test_power_cycle_goes_silent_then_reports_and_comes_back_locked(
    sas_pair: Pair,
) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    await c.unlock()
    face.power_cycle(off_seconds=0.6)
    with pytest.raises(SasTimeout):
        await c.credits()
    await eventually(lambda: m.powered)
    assert await c.events() == [0x18, 0x17]  # AC power lost, AC power applied
    assert m.play_locked  # back locked until the host enables play
    await c.unlock()
    assert m.play_enabled()


async def test_poll_spacing_is_enforced_per_machine(sas_pair: Pair) -> None:
    # sas.md §1: at most one poll to an EGM every 200 ms
    c, face = sas_pair.client, sas_pair.face
    c.min_spacing = 0.2
    sent: list[float] = []
    answer = face.answers.answer

    def timed(poll: HostMessage) -> EgmMessage | None:
        # One poll in flight: the poll answered now is the one the client sent last, at the
        # instant of its own clock it recorded.  When the bytes arrive is load, not spacing.
        sent.append(c.last_poll_at)
        return answer(poll)

    face.answers.answer = timed  # type: ignore[method-assign]
    await asyncio.gather(*(c.credits() for _ in range(4)))
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    assert len(sent) == 4, gaps
    assert all(g >= 0.2 - 1e-9 for g in gaps), gaps  # float rounding only
    assert c.stats.min_gap is not None
    assert c.stats.min_gap >= 0.2 - 1e-9


async def test_capability_check_blocks_tournament_polls_on_unsupported_machine() -> None:
    for kind in KINDS:
        async with paired(kind, tournament_supported=False) as p:
            caps = await p.client.capabilities()
            assert not caps.tournament
            assert caps.aft
            seen = p.face.polls_seen
            with pytest.raises(SasUnsupported):
                await p.client.enter_tournament(1000, 300)
            assert p.face.polls_seen == seen  # nothing was sent
            # sent anyway, LP 8C meets silence, as SAS prescribes for unsupported polls
            with pytest.raises(SasTimeout):
                await p.client.request(TournamentMode.enter(1, 0, 300, 1000))


async def test_request_rejects_a_poll_for_another_address(sas_pair: Pair) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        await sas_pair.client.request(SendCurrentCredits(2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replies=st.lists(st.binary(min_size=0, max_size=30), min_size=1, max_size=4),
    which=st.sampled_from(["general", "credits", "info", "lock", "clock"]),
)
def test_garbage_from_the_egm_gives_values_or_typed_errors(
    replies: list[bytes], which: str
) -> None:
    """Whatever bytes come back, a call returns a typed value or raises SasClientError."""

    async def scenario() -> None:
        host, egm = memory_pair()
        answers = iter(replies)
        egm.set_handlers(lambda data: egm.write(next(answers, b"")))
        client = SasClient(
            host, 1, settings=LinkSettings(reply_timeout=0.01, inter_byte_gap=0.005),
            min_spacing=0.0,
        )  # fmt: skip
        calls = {
            "general": client.general_poll,
            "credits": client.credits,
            "info": client.machine_info,
            "lock": client.lock,
            "clock": client.read_clock,
        }
        try:
            async with asyncio.timeout(5):
                await calls[which]()
        except SasClientError:
            pass
        finally:
            await client.close()

    asyncio.run(scenario())


async def test_egm_without_lp_a0_has_no_features_and_keeps_its_exception(
    sas_pair: Pair,
) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    answer = face.answers.answer

    def no_a0(poll: HostMessage) -> EgmMessage | None:
        return None if isinstance(poll, SendEnabledFeatures) else answer(poll)

    face.answers.answer = no_a0  # type: ignore[method-assign]
    m.open_slot_door()
    caps = await c.capabilities()
    assert not caps.tournament
    assert not caps.aft
    with pytest.raises(SasUnsupported):
        await c.enter_tournament(100, 60)
    assert await c.events() == [0x11]  # read during the check, reported, not lost


async def test_a_cancelled_request_does_not_tangle_the_next_one(sas_pair: Pair) -> None:
    c, m, face = sas_pair.client, sas_pair.machine, sas_pair.face
    m.insert_bill(42)
    face.inject(reply_delay=0.1)  # the reply is still on its way when the caller gives up
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await c.machine_info()
    face.inject(reply_delay=0.0)
    assert await c.credits() == 42  # waits for the abandoned poll to settle first


async def test_egm_chirps_after_loop_break_and_recovers_when_polled() -> None:
    # sas.md §1: no address byte for 5 s -> the EGM chirps every 200 ms (shortened here)
    quick = LinkSettings(loop_break=0.2, chirp_interval=0.05)
    machine = EmulatedMachine("LB", seed=1)
    face = SasFace(machine, 1, settings=quick)
    host, egm = memory_pair()
    face.attach(egm)
    client = SasClient(host, 1, settings=TEST_SETTINGS, min_spacing=TEST_SPACING)
    try:
        await eventually(lambda: client.stats.chirps >= 2)
        assert face.link.state is EgmState.CHIRPING
        assert await client.general_poll() == 0
        assert face.link.state is EgmState.UP
    finally:
        await client.close()
        face.close()


async def test_counters_tell_a_nack_from_a_timeout() -> None:
    """What the gateway's metrics read per machine: polls, replies, and each bad try by
    its kind (sas.md §1: a NACK is answered by repeating the identical poll)."""
    host, egm = memory_pair()
    answers = iter([b"\x81", b"\x01"])  # NACK (address | 80), then the ACK of LP 01
    egm.set_handlers(lambda data: egm.write(next(answers, b"")))
    client = SasClient(
        host, 1, settings=LinkSettings(reply_timeout=0.01, inter_byte_gap=0.005), min_spacing=0.0
    )
    try:
        await client.lock()
        s = client.stats
        assert (s.polls, s.replies, s.nacks, s.retries, s.timeouts, s.failures) == (
            1, 1, 1, 1, 0, 0,
        )  # fmt: skip
        with pytest.raises(SasTimeout):  # silence from now on
            await client.lock()
        assert (s.polls, s.replies, s.nacks, s.retries, s.timeouts, s.failures) == (
            2, 1, 1, 3, 3, 1,
        )  # fmt: skip
    finally:
        await client.close()
