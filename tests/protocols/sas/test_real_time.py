"""Real-time event reporting (LP 0E, event frames): golden vectors, round trips through
the host's parser, the EGM link's RTE mode, and the client against the emulated EGM."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulators.machine import EmulatedMachine
from protocols.sas import (
    Ack,
    CrcError,
    CurrentCreditsReply,
    ExceptionReply,
    GeneralPoll,
    HostState,
    LengthError,
    PollReply,
    ProtocolError,
    RealTimeEvent,
    RealTimeReporting,
    ReplyParser,
    SasException,
    SendCurrentCredits,
    Shutdown,
    decode_host_frame,
    decode_real_time,
    decode_reply,
    encode_egm_message,
)
from protocols.sas.carriers import memory_pair
from protocols.sas.client import MAX_EVENTS_PER_DRAIN, SasClient, SasEventFlood, SasTimeout
from protocols.sas.link import LinkSettings
from protocols.sas.real_time import (
    REAL_TIME_DATA_LENGTHS,
    IdleAnswer,
    RealTimeLiveness,
    data_length,
)

from ...sas_flood import flood
from .test_client_sas import paired

if TYPE_CHECKING:
    from .conftest import LinkPair


def kermit(data: bytes) -> bytes:
    """CRC-16/KERMIT bit by bit (independent of protocols.sas.crc), low byte first."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return bytes((crc & 0xFF, crc >> 8))


GOLDEN = [
    (RealTimeReporting(1, True), "01 0e 01 45 d1"),
    (RealTimeReporting(1, False), "01 0e 00 cc c0"),
    (RealTimeEvent.game_started(1, 5, 1234), "01 ff 7e 00 05 00 00 12 34 00 00 87 af"),
    (RealTimeEvent.game_ended(1, 40), "01 ff 7f 00 00 00 40 f4 5f"),
    (RealTimeEvent(1, 0), "01 ff 00 1c a5"),  # no activity, as one platform sends it
    (RealTimeEvent(1, SasException.SLOT_DOOR_OPENED), "01 ff 11 14 a4"),
]


@pytest.mark.parametrize(("msg", "wire"), GOLDEN)
def test_golden_frames(msg: RealTimeReporting | RealTimeEvent, wire: str) -> None:
    frame = bytes.fromhex(wire)
    assert msg.encode() == frame
    assert frame[-2:] == kermit(frame[:-2])  # the CRC checked by a second implementation


def test_lp_0e_decodes_on_the_egm_side_and_refuses_other_values() -> None:
    assert decode_host_frame(bytes.fromhex("01 0e 01 45 d1")) == RealTimeReporting(1, True)
    bad = b"\x01\x0e\x02"
    with pytest.raises(ProtocolError):
        decode_host_frame(bad + kermit(bad))


def test_event_fields() -> None:
    start = RealTimeEvent.game_started(3, 25, 99_999_999, wager_type=1, progressive_group=2)
    assert (start.credits_wagered, start.coin_in, start.win) == (25, 99_999_999, None)
    assert start.data[-2:] == b"\x01\x02"
    end = RealTimeEvent.game_ended(3, 1_000)
    assert (end.win, end.credits_wagered) == (1_000, None)
    with pytest.raises(LengthError):
        RealTimeEvent(1, SasException.GAME_ENDED, b"\x00")


def test_decode_refuses_bad_crc_length_and_bcd() -> None:
    good = RealTimeEvent.game_ended(1, 40).encode()
    with pytest.raises(CrcError):
        decode_real_time(good[:-1] + bytes((good[-1] ^ 1,)), 1)
    with pytest.raises(LengthError):
        decode_real_time(good[:-3] + kermit(good[:-3]), 1)
    nibble = b"\x01\xff\x7f\x00\x00\x00\x4a"
    with pytest.raises(ProtocolError):
        decode_real_time(nibble + kermit(nibble), 1)


def test_known_lengths_are_the_table() -> None:
    assert data_length(SasException.GAME_STARTED) == 8
    assert data_length(SasException.GAME_ENDED) == 4
    assert data_length(SasException.GENERAL_TILT) == 0
    assert data_length(0xE3) is None  # unknown: framed by the line going quiet


events = st.one_of(
    st.builds(
        RealTimeEvent.game_started,
        st.integers(1, 127),
        st.integers(0, 9999),
        st.integers(0, 99_999_999),
        st.integers(0, 255),
        st.integers(0, 255),
    ),
    st.builds(RealTimeEvent.game_ended, st.integers(1, 127), st.integers(0, 99_999_999)),
    st.builds(
        RealTimeEvent,
        st.integers(1, 127),
        st.sampled_from([c for c in SasException if data_length(c) == 0]),
    ),
)


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@settings(max_examples=300)
@given(events, st.booleans(), st.lists(st.integers(0, 100), max_size=6))
def test_events_round_trip_through_the_host_parser(
    event: RealTimeEvent, general: bool, cuts: list[int]
) -> None:
    """An event frame, in any split, answering a general poll in RTE mode or standing in
    for a long poll's reply, comes out as itself (and decode_reply agrees)."""
    poll = GeneralPoll(event.addr) if general else SendCurrentCredits(event.addr)
    parser = ReplyParser()
    parser.expect(poll, real_time=True)
    out = [ev for piece in chunks(encode_egm_message(event), cuts) for ev in parser.feed(piece)]
    assert out == [event]
    assert decode_reply(event.encode(), poll) == event
    assert parser.stray == 0


@settings(max_examples=300)
@given(st.binary(max_size=40), st.booleans())
def test_garbage_gives_messages_or_typed_errors(data: bytes, general: bool) -> None:
    parser = ReplyParser()
    parser.expect(GeneralPoll(1) if general else Shutdown(1), real_time=True)
    for ev in [*parser.feed(data), *parser.gap()]:
        assert isinstance(ev, ProtocolError | RealTimeEvent | ExceptionReply) or ev is not None


def test_an_unknown_code_is_framed_by_the_gap() -> None:
    frame = b"\x01\xff\xe3\x07\x08"
    frame += kermit(frame)
    parser = ReplyParser()
    parser.expect(GeneralPoll(1), real_time=True)
    assert parser.feed(encode_egm_message(RealTimeEvent(1, 0xE3, b"\x07\x08"))) == []
    assert parser.gap() == [RealTimeEvent(1, 0xE3, b"\x07\x08")]


def test_without_rte_a_byte_equal_to_the_address_is_an_exception_code() -> None:
    parser = ReplyParser()
    parser.expect(GeneralPoll(0x11))
    assert parser.feed(b"\x11") == [ExceptionReply(0x11, 0x11)]


# -- the EGM link in RTE mode (in memory, simulated clock) ---------------------------------
def _rte_poll(pair: LinkPair, msg: GeneralPoll | SendCurrentCredits | Shutdown) -> list[object]:
    start = len(pair.host_events)
    out = pair.host.send(msg, pair.now, real_time=True)
    pair.egm.receive_data(out, pair.now)
    pair._pump()
    for _ in range(50):  # bounded
        if pair.host.state is HostState.IDLE:
            break
        assert pair._fire_next(pair.now + 1.0)
    return [e.reply for e in pair.host_events[start:] if isinstance(e, PollReply)]


def test_egm_link_reports_events_with_their_data_once_rte_is_on(pair: LinkPair) -> None:
    start = RealTimeEvent.game_started(1, 5, 100)
    pair.egm.post_exception(SasException.GAME_STARTED, data=start.data)
    assert pair.poll(GeneralPoll(1)) == [PollReply(GeneralPoll(1), ExceptionReply(1, 0x7E), 1)]
    pair.egm.post_exception(SasException.GAME_ENDED, data=RealTimeEvent.game_ended(1, 9).data)
    acked = pair.poll(RealTimeReporting(1, True))
    assert [e.reply for e in acked if isinstance(e, PollReply)] == [Ack(1)]
    assert _rte_poll(pair, GeneralPoll(1)) == [RealTimeEvent.game_ended(1, 9)]
    assert _rte_poll(pair, GeneralPoll(1)) == [RealTimeEvent(1, 0)]  # nothing left


def test_a_pending_event_answers_a_long_poll_first(pair: LinkPair) -> None:
    pair.poll(RealTimeReporting(1, True))
    pair.egm.post_exception(SasException.GAME_ENDED, data=RealTimeEvent.game_ended(1, 7).data)
    assert _rte_poll(pair, SendCurrentCredits(1)) == [RealTimeEvent.game_ended(1, 7)]
    # asked again (the host's sync ahead of the identical poll acknowledges the event)
    assert _rte_poll(pair, SendCurrentCredits(1)) == [CurrentCreditsReply(1, 500)]


def test_an_egm_without_rte_stays_silent_to_lp_0e(make_pair: type[LinkPair]) -> None:
    p = make_pair()
    p.egm.real_time_capable = False
    assert not any(isinstance(e, PollReply) for e in p.poll(RealTimeReporting(1, True)))
    assert not p.egm.real_time


def test_silence_to_a_general_poll_in_rte_mode_is_no_activity(pair: LinkPair) -> None:
    """SAS 6.02 §12.6: an EGM with nothing to report may send nothing at all; the link
    settles it as no activity, marked silent (whether the EGM is there is the caller's
    judgement, RealTimeLiveness)."""
    pair.poll(RealTimeReporting(1, True))
    pair.to_host = lambda b: b""  # this EGM says nothing when idle
    assert _rte_poll(pair, GeneralPoll(1)) == [ExceptionReply(1, 0)]
    settled = [e for e in pair.host_events if isinstance(e, PollReply)][-1]
    assert settled.silent
    assert settled.tries == 3


def test_an_idle_frame_is_an_answer_not_silence(pair: LinkPair) -> None:
    pair.poll(RealTimeReporting(1, True))
    assert _rte_poll(pair, GeneralPoll(1)) == [RealTimeEvent(1, 0)]
    settled = [e for e in pair.host_events if isinstance(e, PollReply)][-1]
    assert not settled.silent


def test_an_egm_silent_when_idle_sends_nothing_but_its_events(pair: LinkPair) -> None:
    """The emulator's §12.6 behaviour (real_time_idle_frame False): silence with nothing
    to report, the event frame otherwise, and an unchanged answer to a long poll."""
    pair.egm.real_time_idle_frame = False
    pair.poll(RealTimeReporting(1, True))
    wire = len(pair.egm_wire)
    assert _rte_poll(pair, GeneralPoll(1)) == [ExceptionReply(1, 0)]
    assert len(pair.egm_wire) == wire  # not one byte sent
    pair.egm.post_exception(SasException.GAME_ENDED, data=RealTimeEvent.game_ended(1, 3).data)
    assert _rte_poll(pair, GeneralPoll(1)) == [RealTimeEvent.game_ended(1, 3)]
    assert _rte_poll(pair, SendCurrentCredits(1)) == [CurrentCreditsReply(1, 500)]


# -- RealTimeLiveness: silence judged with an injected clock --------------------------------
F = 0.625  # a poll's failure time outside RTE mode (~3 tries x 200 ms over TCP; exact in binary)


def test_liveness_drains_by_long_poll_until_the_egm_shows_an_idle_frame() -> None:
    live = RealTimeLiveness(100.0, F)
    assert live.idle.value == "unknown"
    assert live.drain_by_long_poll
    live.said_no_activity(100.1)
    assert live.idle is IdleAnswer.FRAME
    assert not live.drain_by_long_poll


def test_liveness_silence_after_an_idle_frame_is_a_failed_poll() -> None:
    """An EGM that says "no activity" explicitly: its silence is what it is outside RTE
    mode, even right after an answer (found as fast as without RTE)."""
    live = RealTimeLiveness(0.0, F)
    live.said_no_activity(1.0)
    assert not live.silence(1.0 + F)
    assert not live.probe_due(50.0)  # its general polls answer for it


def test_liveness_silence_is_no_activity_only_while_the_egm_answered_recently() -> None:
    live = RealTimeLiveness(0.0, F)
    assert live.silence(2 * F)  # answered (LP 0E) within the window: idle
    assert live.idle is IdleAnswer.SILENCE
    assert live.drain_by_long_poll
    assert not live.silence(2 * F + 0.001)  # nothing answered for longer: failed
    live.answered(5.0)
    assert live.silence(5.0 + F)


def test_liveness_asks_for_a_probe_once_the_egm_said_nothing_for_a_poll_failure() -> None:
    live = RealTimeLiveness(8.0, F)
    assert not live.probe_due(8.0 + F - 0.001)
    assert live.probe_due(8.0 + F)
    live.answered(8.0 + F)
    assert not live.probe_due(8.0 + F + 0.125)


def test_liveness_keeps_the_latest_answer() -> None:
    live = RealTimeLiveness(0.0, F)
    live.answered(3.0)
    live.answered(2.0)  # a late note cannot move the evidence back
    assert live.last_answer == 3.0
    with pytest.raises(ValueError, match="failure_after"):
        RealTimeLiveness(0.0, 0.0)


# -- the client and the emulated EGM (TCP on loopback) --------------------------------------
async def test_client_reads_every_games_bet_and_win_from_its_event_reports() -> None:
    async with paired("tcp") as p:
        machine: EmulatedMachine = p.machine
        await p.client.unlock()
        machine.insert_bill(100)
        await p.client.real_time_reporting(True)
        assert p.client.real_time
        result = machine.spin(bet=3)
        reports = await p.client.reports()
        assert [r.code for r in reports] == [0x7E, 0x7F]
        assert isinstance(reports[0], RealTimeEvent)
        assert isinstance(reports[1], RealTimeEvent)
        assert reports[0].credits_wagered == 3
        assert reports[1].win == result.win
        assert await p.client.credits() == 100 - 3 + result.win
        await p.client.real_time_reporting(False)
        machine.spin(bet=1)
        assert await p.client.events() == [0x7E, 0x7F]  # one byte each again


async def test_client_holds_events_that_answer_a_long_poll() -> None:
    async with paired("tcp") as p:
        await p.client.unlock()
        p.machine.insert_bill(50)
        await p.client.real_time_reporting(True)
        p.machine.spin(bet=2)
        credits = await p.client.credits()  # answered by 7E and 7F first, then the meter
        assert credits == p.machine.credits
        assert [r.code for r in p.client.take_held()] == [0x7E, 0x7F]
        assert await p.client.reports() == []


@pytest.mark.parametrize("idle_frame", [True, False], ids=["idle-frame", "silent-idle"])
async def test_client_drains_events_by_one_long_poll_and_never_waits_out_silence(
    idle_frame: bool,
) -> None:
    """In RTE mode the drain is LP 1A: events in place of its reply, then the meter after
    them; an idle EGM silent to general polls costs no reply timeouts."""
    async with paired("tcp", real_time_idle_frame=idle_frame) as p:
        await p.client.unlock()
        p.machine.insert_bill(80)
        await p.client.real_time_reporting(True)
        assert await p.client.reports() == []
        assert p.client.drain_credits == 80
        result = p.machine.spin(bet=4)
        assert [r.code for r in await p.client.reports()] == [0x7E, 0x7F]
        assert p.client.drain_credits == 80 - 4 + result.win == p.machine.credits
        assert p.client.stats.silent == 0
        assert p.client.stats.timeouts == 0
        assert p.client.stats.probes == 2


@pytest.mark.parametrize("idle_frame", [True, False], ids=["idle-frame", "silent-idle"])
async def test_client_in_rte_mode_finds_an_egm_that_stopped_answering(idle_frame: bool) -> None:
    """T20: a machine that stops answering is a failed poll in RTE mode too, after one
    poll's tries, as outside it -- never silence read as "no activity"."""
    async with paired("tcp", real_time_idle_frame=idle_frame) as p:
        await p.client.real_time_reporting(True)
        await p.client.reports()
        p.face.inject(no_reply=True)
        with pytest.raises(SasTimeout, match="LP 1A"):
            await p.client.reports()
        assert p.client.stats.silent == 0


async def test_client_takes_silence_from_an_egm_with_idle_frames_as_a_failed_poll() -> None:
    async with paired("tcp") as p:
        await p.client.real_time_reporting(True)
        assert await p.client.general_poll() == 0  # addr FF 00: learnt
        p.face.inject(no_reply=True)
        with pytest.raises(SasTimeout, match="general poll"):
            await p.client.general_poll()


def test_table_lists_only_codes_with_data_or_no_activity() -> None:
    assert all(n >= 0 for n in REAL_TIME_DATA_LENGTHS.values())


async def test_an_event_answering_a_cancelled_drain_is_held_not_lost() -> None:
    """A watcher stopped at a heat's end cancels its drain after the poll went out; the
    EGM's answer still arrives, and the next poll acknowledges it (implied ACK): the
    event is held for the next drain, never dropped with the cancelled request."""
    host, egm = memory_pair()
    received: list[bytes] = []
    egm.set_handlers(received.append, lambda exc: None)
    client = SasClient(host, 1, settings=LinkSettings(reply_timeout=5.0), min_spacing=0.0)
    client.line.real_time.add(1)  # as after LP 0E's ACK
    try:
        drain = asyncio.create_task(client.reports())
        for _ in range(100):  # bounded: until the LP 1A has gone out
            if received:
                break
            await asyncio.sleep(0)
        assert received
        drain.cancel()
        with pytest.raises(asyncio.CancelledError):
            await drain
        ended = RealTimeEvent.game_ended(1, 25)
        egm.write(encode_egm_message(ended))
        for _ in range(100):  # bounded: until the line has settled the poll
            if not client.line.busy_with(1):
                break
            await asyncio.sleep(0)
        assert client.take_held() == [ended]
    finally:
        await client.close()


@pytest.mark.parametrize("idle_frame", [True, False], ids=["idle-frame", "silent-idle"])
async def test_client_tells_each_event_once_as_it_is_read(idle_frame: bool) -> None:
    """``on_report`` hears a game's bet before its win is asked for (poll by poll, not when
    the drain returns), and each event once: held events handed on later are not told
    again."""
    async with paired("tcp", real_time_idle_frame=idle_frame) as p:
        await p.client.unlock()
        p.machine.insert_bill(60)
        await p.client.real_time_reporting(True)
        await p.client.reports()
        told: list[tuple[int, int]] = []  # (code, polls sent so far)
        p.client.on_report = lambda r: told.append((r.code, p.client.stats.polls))
        polls = p.client.stats.polls
        p.machine.spin(bet=2)
        reports = await p.client.reports()
        assert [r.code for r in reports] == [0x7E, 0x7F]
        assert [code for code, _ in told] == [0x7E, 0x7F]
        assert told[0][1] < told[1][1] < p.client.stats.polls  # each before the next poll
        assert told[0][1] == polls + 1
        p.machine.spin(bet=1)
        await p.client.credits()  # answered by the events first: held, told now
        assert [code for code, _ in told[2:]] == [0x7E, 0x7F]
        assert [r.code for r in await p.client.reports()] == [0x7E, 0x7F]  # handed on
        assert len(told) == 4  # ... and not told again


async def test_a_flood_of_events_is_held_whole_and_drained_next() -> None:
    """A player whose games queue events as fast as the link drains them (SAS 6.02
    §12.4: events answer every long poll first): the LP 1A ends in SasEventFlood after
    64 events in a row, every one held -- the 64th too, which the next poll acknowledges
    -- and the next drain hands them on ahead of the rest and the meter: none lost,
    none twice."""
    async with paired("tcp") as p:
        await p.client.unlock()
        p.machine.insert_bill(200)
        await p.client.real_time_reporting(True)
        await p.client.reports()
        spins = MAX_EVENTS_PER_DRAIN // 2 + 8  # two events a game, one game every two polls
        flood(p.face, spins)
        with pytest.raises(SasEventFlood, match="64 in a row"):
            await p.client.credits()
        held = p.client.take_held()
        assert len(held) == MAX_EVENTS_PER_DRAIN
        drained = held + await p.client.reports()
        assert [r.code for r in drained] == [0x7E, 0x7F] * spins
        assert (
            p.client.drain_credits
            == p.machine.credits
            == 200
            - spins
            + sum(r.win or 0 for r in drained if isinstance(r, RealTimeEvent) and r.code == 0x7F)
        )
        assert await p.client.reports() == []
