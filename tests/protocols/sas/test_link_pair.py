"""Host and EGM link state machines paired in memory (conftest.LinkPair), no sockets."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from protocols.sas import (
    EGM_TRANSITIONS,
    HOST_TRANSITIONS,
    Ack,
    Busy,
    Chirp,
    CrcError,
    CurrentCreditsReply,
    EgmState,
    ExceptionAcked,
    ExceptionReply,
    GeneralPoll,
    HostLink,
    HostState,
    LinkDown,
    LinkSettings,
    LinkStateError,
    LinkUp,
    PollFailed,
    PollHandled,
    PollReply,
    Retrying,
    SasException,
    SendCurrentCredits,
    SendEnabledFeatures,
    SendMeters,
    SendTournamentMeters,
    SendVersion,
    SetDateTime,
    Shutdown,
    Startup,
    TournamentMetersReply,
    TournamentMode,
)
from protocols.sas.link import EgmInput, HostInput

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import LinkPair


def replies(events: Sequence[object]) -> list[Any]:
    return [e.reply for e in events if isinstance(e, PollReply)]


def test_lock_and_unlock(pair: LinkPair) -> None:
    events = pair.poll(Shutdown(1))
    assert events == [PollReply(Shutdown(1), Ack(1), 1)]
    assert pair.machine.locked
    assert replies(pair.poll(Startup(1))) == [Ack(1)]
    assert not pair.machine.locked


def test_enter_and_exit_tournament(pair: LinkPair) -> None:
    assert replies(pair.poll(SendEnabledFeatures(1, 0)))[0].tournament_supported
    enter = TournamentMode.enter(1, game=1, seconds_total=300, credits=1000)
    assert replies(pair.poll(enter)) == [Ack(1)]
    assert pair.machine.tournament == enter
    assert pair.machine.credits == 1000
    pair.machine.tournament_meters = (12, 5, 600, 900)
    assert replies(pair.poll(SendTournamentMeters(1, 1))) == [
        TournamentMetersReply(1, 1, 12, 5, 600, 900)
    ]
    assert replies(pair.poll(TournamentMode.exit(1, game=1))) == [Ack(1)]
    assert pair.machine.tournament is None


def test_busy_while_a_game_finishes(pair: LinkPair) -> None:
    pair.machine.game_in_progress = True
    enter = TournamentMode.enter(1, game=1, seconds_total=300, credits=1000)
    assert pair.poll(enter) == [PollReply(enter, Busy(1), 1)]
    assert pair.machine.tournament is None
    pair.machine.game_in_progress = False
    pair.advance(0.2)
    assert replies(pair.poll(enter)) == [Ack(1)]  # a sync went first: not taken as a NACK


def test_meters_and_credits(pair: LinkPair) -> None:
    pair.machine.games_played = 42
    (meters,) = replies(pair.poll(SendMeters(1)))
    assert meters.games_played == 42
    assert replies(pair.poll(SendCurrentCredits(1))) == [CurrentCreditsReply(1, 500)]


def test_exception_delivery_with_implied_ack(pair: LinkPair) -> None:
    pair.egm.post_exception(SasException.GAME_STARTED)
    pair.egm.post_exception(SasException.GAME_ENDED)
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0x7E)]
    assert len(pair.egm.queue) == 2  # kept until the host acknowledges it
    pair.advance(0.2)
    # the identical general poll goes out behind a sync (byte 80): an implied ACK
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0x7F)]
    assert ExceptionAcked(0x7E) in pair.egm_events
    pair.advance(0.2)
    assert replies(pair.poll(SendCurrentCredits(1))) == [CurrentCreditsReply(1, 500)]
    assert ExceptionAcked(0x7F) in pair.egm_events
    assert len(pair.egm.queue) == 0
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0)]


def test_identical_general_poll_without_sync_is_a_nack(make_pair: Callable[..., LinkPair]) -> None:
    pair = make_pair(LinkSettings(sync_before_repeat=False))
    pair.egm.post_exception(SasException.GAME_STARTED)
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0x7E)]
    pair.advance(0.2)
    # repeating the identical poll means NACK: the EGM resends the same exception
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0x7E)]
    assert PollHandled(GeneralPoll(1), None, True) in pair.egm_events
    assert len(pair.egm.queue) == 1


def test_poll_to_another_address_is_an_implied_ack(pair: LinkPair) -> None:
    pair.egm.post_exception(SasException.SLOT_DOOR_OPENED)
    assert replies(pair.poll(GeneralPoll(1))) == [ExceptionReply(1, 0x11)]
    failed = pair.poll(GeneralPoll(2))  # nobody at address 2
    assert isinstance(failed[-1], PollFailed)
    assert failed[-1].reason == "timeout"
    assert ExceptionAcked(0x11) in pair.egm_events


def corrupt_first(n: int) -> object:
    """A filter that flips one bit in the first ``n`` EGM transmissions with data."""
    count = itertools.count()

    def filt(data: bytes) -> bytes:
        if len(data) > 2 and next(count) < n:
            return data[:-1] + bytes((data[-1] ^ 0x01,))
        return data

    return filt


def test_retry_on_corrupted_reply_and_resend_of_the_same_data(pair: LinkPair) -> None:
    pair.to_host = corrupt_first(1)  # type: ignore[assignment]
    pair.send(SendCurrentCredits(1))
    pair.machine.credits = 999  # changes after the first reply went out
    for _ in range(10):
        if pair.host.state is HostState.IDLE:
            break
        pair.advance(0.01)
    events = pair.host_events
    assert isinstance(events[0], Retrying)
    assert events[0].reason == "corrupt"
    assert isinstance(events[0].error, CrcError)
    # the repeat is a NACK: the EGM resends the very same data, not a new reading
    assert events[1] == PollReply(SendCurrentCredits(1), CurrentCreditsReply(1, 500), 2)
    assert PollHandled(SendCurrentCredits(1), None, True) in pair.egm_events
    assert len(pair.machine.calls) == 1
    assert pair.egm_wire == [CurrentCreditsReply(1, 500).encode()] * 2  # byte for byte


def test_three_corrupted_replies_fail_the_poll(pair: LinkPair) -> None:
    pair.to_host = corrupt_first(3)  # type: ignore[assignment]
    events = pair.poll(SendCurrentCredits(1))
    assert [type(e) for e in events] == [Retrying, Retrying, PollFailed]
    assert events[-1] == PollFailed(SendCurrentCredits(1), 3, "corrupt", events[-1].error)  # type: ignore[union-attr]


def test_unsupported_poll_times_out_after_three_tries(pair: LinkPair) -> None:
    events = pair.poll(SendVersion(1))  # the test machine does not answer LP 54
    assert [(type(e), getattr(e, "reason", None)) for e in events] == [
        (Retrying, "timeout"),
        (Retrying, "timeout"),
        (PollFailed, "timeout"),
    ]
    # 3 tries, each given 20 ms + transmit time
    assert pair.now == pytest.approx(3 * (0.020 + 2 * 11 / 19_200))


def test_corrupted_host_message_is_nacked_and_retried(pair: LinkPair) -> None:
    count = itertools.count()

    def flip_once(data: bytes) -> bytes:
        return data[:-1] + bytes((data[-1] ^ 0x40,)) if next(count) == 0 else data

    pair.to_egm = flip_once
    events = pair.poll(Shutdown(1))
    assert isinstance(events[0], Retrying)
    assert events[0].reason == "nack"
    assert events[1] == PollReply(Shutdown(1), Ack(1), 2)
    assert any(isinstance(e, CrcError) for e in pair.egm_events)
    assert pair.machine.locked


def test_broadcast_set_clock_gets_no_reply(pair: LinkPair) -> None:
    when = dt.datetime(2026, 11, 29, 19, 30, 0)
    pair.send(SetDateTime(0, when))
    assert pair.host.state is HostState.IDLE
    assert pair.machine.clock_set == [SetDateTime(0, when)]
    assert pair.egm_wire == []


def test_chirp_after_five_seconds_without_address(pair: LinkPair) -> None:
    pair.poll(GeneralPoll(1))
    pair.advance(4.9)
    assert pair.egm.state is EgmState.UP
    pair.advance(1.15)  # 6.05 s after the poll: chirping since 5.0 s
    assert LinkDown("no address") in pair.egm_events
    assert pair.egm.state is EgmState.CHIRPING
    chirps = [e for e in pair.host_events if isinstance(e, Chirp)]
    assert len(chirps) == 6  # at 5.0, 5.2, 5.4, 5.6, 5.8, 6.0
    assert all(w == b"\xff\x00\x01" for w in pair.egm_wire[1:])  # address with wakeup
    pair.poll(GeneralPoll(1))
    assert pair.egm.state is EgmState.UP
    assert pair.egm_events[-2:] == [
        LinkUp(),
        PollHandled(GeneralPoll(1), ExceptionReply(1, 0), False),
    ]


def test_link_down_after_thirty_seconds_without_ack(make_pair: Callable[..., LinkPair]) -> None:
    pair = make_pair(LinkSettings(sync_before_repeat=False))
    for _ in range(160):  # 32 s of identical general polls, each a NACK
        pair.poll(GeneralPoll(1))
        pair.advance(0.2)
    assert LinkDown("no ack") in pair.egm_events
    assert pair.egm.state is EgmState.NO_ACK
    pair.poll(SendCurrentCredits(1))  # a different poll acknowledges
    assert pair.egm.state is EgmState.UP
    assert LinkUp() in pair.egm_events


def test_exception_queue_overflow_reports_70_then_keeps_newest(pair: LinkPair) -> None:
    for code in range(0x21, 0x21 + 25):  # 25 events into a queue of 20
        pair.egm.post_exception(code)
    pair.egm.post_exception(SasException.HANDPAY_PENDING, priority=True)
    got = []
    for _ in range(30):  # bounded
        (reply,) = replies(pair.poll(GeneralPoll(1)))
        got.append(reply.code)
        if reply.code == 0:
            break
        pair.advance(0.2)
    assert got[0] == SasException.EXCEPTION_BUFFER_OVERFLOW
    assert got[1] == SasException.HANDPAY_PENDING  # priority jumps the queue
    assert got[2:-1] == list(range(0x21 + 6, 0x21 + 25))  # the 6 oldest were dropped
    assert got[-1] == 0


def test_second_poll_in_flight_is_refused() -> None:
    host = HostLink()
    host.send(GeneralPoll(1), 0.0)
    with pytest.raises(LinkStateError):
        host.send(GeneralPoll(1), 0.001)


@pytest.mark.parametrize(("state", "event"), list(itertools.product(HostState, HostInput)))
def test_host_transition_table_is_total(state: HostState, event: HostInput) -> None:
    host = HostLink()
    host.state = state
    if (state, event) in HOST_TRANSITIONS:
        host._go(event)
        assert host.state is HOST_TRANSITIONS[(state, event)]
    else:
        with pytest.raises(LinkStateError):
            host._go(event)
        assert host.state is state


@pytest.mark.parametrize(("state", "event"), list(itertools.product(EgmState, EgmInput)))
def test_egm_transition_table_is_total(pair: LinkPair, state: EgmState, event: EgmInput) -> None:
    pair.egm.state = state
    if (state, event) in EGM_TRANSITIONS:
        pair.egm._go(event)
        assert pair.egm.state is EGM_TRANSITIONS[(state, event)]
    else:
        with pytest.raises(LinkStateError):
            pair.egm._go(event)
        assert pair.egm.state is state


def test_babbling_line_cannot_hold_off_the_retry() -> None:
    host = HostLink()
    host.send(SendCurrentCredits(1), 0.0)
    host.receive_data(b"\x01\x1a\x00\x00\x12\x34\x00\x00", 0.001)  # bad CRC
    assert host.state is HostState.RETRY_WAIT
    now = 0.001
    for _ in range(100):  # noise every 2 ms, never 5 ms of quiet
        now += 0.002
        host.handle_timers(now)
        if host.state is not HostState.RETRY_WAIT:
            break
        host.receive_data(b"\x55", now)
    assert host.state is HostState.AWAITING_REPLY
    assert now <= 0.001 + LinkSettings().reply_timeout + 0.002
    assert host.data_to_send().endswith(b"\xff\x00\x01\x1a")  # the identical poll again
