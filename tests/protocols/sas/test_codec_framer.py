"""Framer garbage and resync cases, one test per case listed in framer.py's docstring."""

from __future__ import annotations

import datetime as dt

from protocols.sas import (
    Ack,
    AftTransfer,
    Busy,
    Chirp,
    CrcError,
    CurrentCreditsReply,
    EscapeError,
    ExceptionReply,
    FieldError,
    GeneralPoll,
    HostFrameParser,
    Nack,
    OtherAddress,
    ReplyParser,
    SendCurrentCredits,
    SendSelectedMeters,
    SetDateTime,
    Shutdown,
    TournamentMode,
    TruncatedFrameError,
    UnexpectedReplyError,
    UnknownPollError,
    encode_host_message,
    escape,
)
from protocols.sas.codec import HOST_MESSAGES, REPLIES
from protocols.sas.polls import POLLS, ReplyKind

H = bytes.fromhex


def egm(data: bytes, addr: int = 1) -> tuple[list[object], HostFrameParser]:
    parser = HostFrameParser(addr)
    return list(parser.feed(data)), parser


def test_general_polls_ours_others_and_sync() -> None:
    events, _ = egm(H("FF 00 81 FF 00 82 FF 00 80"))
    assert events == [GeneralPoll(1), OtherAddress(2), OtherAddress(0)]


def test_long_poll_to_another_address_is_skipped_to_next_wakeup() -> None:
    wire = encode_host_message(Shutdown(2)) + encode_host_message(SendCurrentCredits(1))
    events, parser = egm(wire)
    assert events == [OtherAddress(2), SendCurrentCredits(1)]
    assert parser.stray == 3  # 01 CRC CRC of the poll to address 2


def test_unknown_poll_is_reported_and_skipped() -> None:
    events, parser = egm(H("FF 00 01 E7 12 34") + encode_host_message(Shutdown(1)))
    assert isinstance(events[0], UnknownPollError)
    assert events[0].raw == H("01 E7")
    assert events[1:] == [Shutdown(1)]
    assert parser.stray == 2


def test_frame_cut_by_a_wakeup_is_truncated_then_resyncs() -> None:
    cut = encode_host_message(TournamentMode(1, 1, 5, 0, 1000))[:8]
    events, _ = egm(cut + encode_host_message(GeneralPoll(1)))
    assert isinstance(events[0], TruncatedFrameError)
    assert events[1:] == [GeneralPoll(1)]


def test_bad_crc_carries_the_frame() -> None:
    events, _ = egm(H("FF 00 01 01 51 09"))
    assert isinstance(events[0], CrcError)
    assert events[0].raw == H("01 01 51 09")


def test_stray_bytes_outside_frames_are_counted_not_reported() -> None:
    events, parser = egm(H("01 1A 00 00 12 34 45 2D") + encode_host_message(GeneralPoll(1)))
    assert events == [GeneralPoll(1)]
    assert parser.stray == 8


def test_invalid_escape_aborts_the_frame() -> None:
    events, _ = egm(H("FF 00 01 8C 00 FF 37 01 05") + encode_host_message(Shutdown(1)))
    assert isinstance(events[0], EscapeError)
    assert events[1:] == [Shutdown(1)]


def test_broadcast_is_framed_and_read_poll_broadcast_is_refused() -> None:
    when = dt.datetime(2026, 11, 29, 21, 0, 0)
    events, _ = egm(encode_host_message(SetDateTime(0, when)) + H("FF 00 00 1A"))
    assert events[0] == SetDateTime(0, when)
    assert isinstance(events[1], FieldError)


def test_length_byte_frame_split_anywhere_and_ff_data() -> None:
    polls = [
        SendSelectedMeters(1, 3, (0x00, 0xFF, 0x0C)),
        AftTransfer(1, 0x00, 0, 100_000, 0, "heat-7-seat-3", 0xFFFF_FFFF, expiration=1, pool_id=7),
    ]
    for poll in polls:
        wire = encode_host_message(poll)
        assert b"\xff\xff" in wire  # data FF bytes are doubled on the wire
        parser = HostFrameParser(1)
        events = [e for i in range(len(wire)) for e in parser.feed(wire[i : i + 1])]
        assert events == [poll]


# --- host side -----------------------------------------------------------------------------


def host(poll: object, data: bytes) -> tuple[list[object], ReplyParser]:
    parser = ReplyParser()
    parser.expect(poll)  # type: ignore[arg-type]
    return list(parser.feed(data)), parser


def test_exception_reply_is_the_first_byte() -> None:
    events, parser = host(GeneralPoll(1), H("7E 7F"))
    assert events == [ExceptionReply(1, 0x7E)]
    assert parser.stray == 1


def test_nack_and_busy() -> None:
    assert host(Shutdown(1), H("81"))[0] == [Nack(1)]
    assert host(Shutdown(1), H("01 00"))[0] == [Busy(1)]
    assert host(SendCurrentCredits(1), H("01 00"))[0] == [Busy(1)]


def test_lone_ack_is_held_until_the_gap() -> None:
    events, parser = host(Shutdown(1), H("01"))
    assert events == []
    assert parser.awaiting
    assert parser.gap() == [Ack(1)]
    assert not parser.awaiting
    # a second byte that is not 00 settles it at once
    events, parser = host(Shutdown(1), H("01 55"))
    assert events == [Ack(1)]
    assert parser.stray == 1


def test_wrong_address_or_command_is_unexpected() -> None:
    events, _ = host(SendCurrentCredits(1), H("02 1A 00 00 12 34 45 2D"))
    assert isinstance(events[0], UnexpectedReplyError)
    events, _ = host(SendCurrentCredits(1), H("01 1F 00"))
    assert isinstance(events[0], UnexpectedReplyError)


def test_partial_reply_then_gap_is_truncated() -> None:
    events, parser = host(SendCurrentCredits(1), H("01 1A 00 00"))
    assert events == []
    (err,) = parser.gap()
    assert isinstance(err, TruncatedFrameError)
    assert err.raw == H("01 1A 00 00")


def test_chirp_and_stray_bytes_when_nothing_is_awaited() -> None:
    parser = ReplyParser()
    assert parser.feed(escape(H("05"), wakeup=True) + H("01 02")) == [Chirp(5)]
    assert parser.stray == 2


def test_invalid_escape_gives_the_reply_up() -> None:
    events, parser = host(SendCurrentCredits(1), H("01 1A FF 12 00 00"))
    assert isinstance(events[0], EscapeError)
    assert not parser.awaiting


def test_reply_split_byte_by_byte() -> None:
    parser = ReplyParser()
    parser.expect(SendCurrentCredits(1))
    wire = H("01 1A 00 00 12 34 45 2D")
    events = [e for i in range(len(wire)) for e in parser.feed(wire[i : i + 1])]
    assert events == [CurrentCreditsReply(1, 1234)]


def test_every_poll_has_one_message_class_and_every_data_reply_a_reply_class() -> None:
    # The codec's registries and the poll table (polls.py) must name the same polls.
    assert set(HOST_MESSAGES) == set(POLLS)
    assert {c for c, s in POLLS.items() if s.reply is not ReplyKind.ACK} == set(REPLIES)
