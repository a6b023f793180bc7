"""Golden vectors from sas.md §2-3, CRC, BCD, escaping and frame decoding errors."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols.sas import (
    POLLS,
    AftInterrogate,
    BcdError,
    CrcError,
    CurrentCreditsReply,
    EscapeError,
    FieldError,
    HostMessage,
    LengthError,
    PollType,
    RemoteHandpayReset,
    ReplyKind,
    SendCurrentCredits,
    SendTournamentMeters,
    Shutdown,
    Startup,
    StreamDecoder,
    TournamentMode,
    UnexpectedReplyError,
    UnknownPollError,
    append_crc,
    bcd_decode,
    bcd_encode,
    check_crc,
    crc16_kermit,
    crc_bytes,
    decode_host_frame,
    decode_reply,
    encode_host_message,
    escape,
    messages,
)
from protocols.sas.crc import crc16_kermit_table
from protocols.sas.wire import Chunk

H = bytes.fromhex

# sas.md §2: every frame listed there, byte for byte
GOLDEN_HOST = [
    (Shutdown(1), "01 01 51 08"),
    (Startup(1), "01 02 CA 3A"),
    (RemoteHandpayReset(1), "01 94 75 CB"),
    (AftInterrogate(1, 0), "01 72 02 FF 00 0F 22"),
    (SendTournamentMeters(1, 0), "01 99 00 00 DC 09"),
    # sas.md §3 [A] LP 8C example: game 1, 05:00, 1000 credits
    (
        TournamentMode(1, game=1, minutes=5, seconds=0, credits=1000),
        "01 8C 00 01 05 00 00 00 10 00 00 5B DA",
    ),
]


@pytest.mark.parametrize(("msg", "wire"), GOLDEN_HOST, ids=lambda v: v.__class__.__name__)
def test_golden_host_frames_encode_and_decode(msg: HostMessage, wire: str) -> None:
    frame = H(wire)
    assert msg.encode() == frame
    assert decode_host_frame(frame) == msg
    assert check_crc(frame)


def test_golden_lp1a_reply() -> None:
    frame = H("01 1A 00 00 12 34 45 2D")
    assert CurrentCreditsReply(1, 1234).encode() == frame
    assert decode_reply(frame, SendCurrentCredits(1)) == CurrentCreditsReply(1, 1234)


def test_crc_check_value_and_wire_order() -> None:
    assert crc16_kermit(b"123456789") == 0x2189
    assert crc_bytes(b"123456789") == b"\x89\x21"  # low byte first
    assert append_crc(H("01 01")) == H("01 01 51 08")
    assert crc16_kermit(H("01 01 51 08")) == 0  # a whole frame checks to 0


@given(st.binary(max_size=300), st.integers(0, 0xFFFF))
def test_fast_crc_matches_table_reference(data: bytes, init: int) -> None:
    assert crc16_kermit(data, init) == crc16_kermit_table(data, init)
    # continuing a CRC over a split buffer equals one pass
    cut = len(data) // 2
    assert crc16_kermit(data[cut:], crc16_kermit(data[:cut])) == crc16_kermit(data)


def test_exit_tournament_is_same_poll_with_zero_time_and_credits() -> None:
    # [A] exit = LP 8C with time 0000 and credits 0 (sas.md §3)
    frame = TournamentMode.exit(1, game=1).encode()
    assert frame[:11] == H("01 8C 00 01 00 00 00 00 00 00 00")
    decoded = decode_host_frame(frame)
    assert isinstance(decoded, TournamentMode)
    assert decoded.is_exit


def test_poll_table_lengths() -> None:
    for code in (0x01, 0x02, 0x0F, 0x1A, 0x1C, 0x1F, 0x2F, 0x54, 0x7E, 0x7F, 0xA0, 0x8C):
        assert code in POLLS
    for code in range(0x95, 0x9A):
        assert POLLS[code].type is PollType.M
    assert POLLS[0x1A].type is PollType.R
    assert POLLS[0x1A].reply_length == 8
    assert POLLS[0x1F].reply_length == 24
    assert POLLS[0x8C].host_length == 13
    assert POLLS[0x8C].reply is ReplyKind.ACK
    assert POLLS[0x99].reply_length == 22
    assert POLLS[0xA0].reply_length == 12
    assert POLLS[0x7F].broadcast
    assert POLLS[0x54].reply is ReplyKind.LENGTH_BYTE


# --- BCD -------------------------------------------------------------------------------------


def test_bcd_examples_and_errors() -> None:
    assert bcd_encode(1234, 4) == H("00 00 12 34")
    assert bcd_decode(H("00 00 12 34")) == 1234
    assert bcd_encode(0, 0) == b""
    with pytest.raises(BcdError, match="does not fit"):
        bcd_encode(100, 1)
    with pytest.raises(BcdError):
        bcd_encode(-1, 2)
    with pytest.raises(BcdError, match="invalid BCD nibble"):
        bcd_decode(H("12 3A"))
    with pytest.raises(BcdError):
        bcd_decode(H("F0"))


@given(
    st.integers(1, 8).flatmap(lambda w: st.tuples(st.just(w), st.integers(0, 10 ** (2 * w) - 1)))
)
def test_bcd_round_trip(wv: tuple[int, int]) -> None:
    width, value = wv
    raw = bcd_encode(value, width)
    assert len(raw) == width
    assert bcd_decode(raw) == value


# --- escaping ----------------------------------------------------------------------------------


def test_escape_examples() -> None:
    assert encode_host_message(SendCurrentCredits(1)) == H("FF 00 01 1A")
    assert escape(H("01 FF 02"), wakeup=False) == H("01 FF FF 02")
    assert escape(H("FF FF"), wakeup=True) == H("FF 00 FF FF FF")
    assert escape(b"") == b""


def test_decoder_split_escapes_across_feeds() -> None:
    wire = H("FF 00 01 1A FF FF 02")
    whole = StreamDecoder().feed(wire)
    assert whole == [(0x01, True), (0x1A, False), (0xFF, False), (0x02, False)]
    dec = StreamDecoder()
    pieces = [dec.feed(wire[i : i + 1]) for i in range(len(wire))]
    assert [e for p in pieces for e in p] == whole
    assert not dec.pending


def test_decoder_invalid_escape_is_typed_and_skipped() -> None:
    dec = StreamDecoder()
    events = dec.feed_chunks(H("01 02 FF 37 03 FF 00 81"))
    assert events[0] == Chunk(H("01 02"), False)
    assert isinstance(events[1], EscapeError)
    assert events[1].raw == H("FF 37")
    assert events[2:] == [Chunk(H("03"), False), Chunk(H("81"), True)]
    # the same across a split right after the FF
    dec = StreamDecoder()
    first = dec.feed_chunks(H("01 FF"))
    assert dec.pending
    second = dec.feed_chunks(H("37 02"))
    assert first == [Chunk(H("01"), False)]
    assert isinstance(second[0], EscapeError)
    assert second[1:] == [Chunk(H("02"), False)]


def test_decoder_fast_path_is_one_chunk() -> None:
    data = H("01 1A 00 00 12 34 45 2D")
    assert StreamDecoder().feed_chunks(data) == [Chunk(data, False)]


# --- decode errors -------------------------------------------------------------------------------


def test_host_frame_errors_are_typed() -> None:
    with pytest.raises(CrcError):
        decode_host_frame(H("01 01 51 09"))
    with pytest.raises(UnknownPollError):
        decode_host_frame(H("01 E7"))
    with pytest.raises(LengthError):
        decode_host_frame(H("01 1A 00"))
    with pytest.raises(LengthError):
        decode_host_frame(H("81 00"))
    with pytest.raises(FieldError, match="broadcast"):
        decode_host_frame(H("00 1A"))
    with pytest.raises(FieldError, match="broadcast"):
        decode_host_frame(append_crc(H("00 01")))
    bad_bcd = append_crc(H("01 99 00 0A"))  # game number nibble A
    with pytest.raises(BcdError) as info:
        decode_host_frame(bad_bcd)
    assert info.value.raw == bad_bcd  # the error carries the whole frame


def test_reply_errors_are_typed() -> None:
    poll = SendCurrentCredits(1)
    with pytest.raises(CrcError):
        decode_reply(H("01 1A 00 00 12 34 45 2E"), poll)
    with pytest.raises(LengthError):
        decode_reply(H("01 1A 00 00 12 34 45"), poll)
    with pytest.raises(UnexpectedReplyError):
        decode_reply(H("02 1A 00 00 12 34 45 2D"), poll)
    with pytest.raises(UnexpectedReplyError):
        decode_reply(append_crc(H("01 1B 00 00 12 34")), poll)
    with pytest.raises(BcdError):
        decode_reply(append_crc(H("01 1A 00 00 12 3F")), poll)


def test_message_field_validation() -> None:
    with pytest.raises(FieldError):
        Shutdown(128)
    with pytest.raises(BcdError):
        TournamentMode(1, game=1, minutes=100, seconds=0, credits=1)
    with pytest.raises(FieldError):
        TournamentMode(1, game=1, minutes=1, seconds=60, credits=1)
    with pytest.raises(FieldError, match="time zone"):  # noqa: PT012
        from protocols.sas import SetDateTime

        SetDateTime(1, dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


@pytest.mark.parametrize(
    ("features", "tournament", "aft"),
    [
        ("08 40 00 00 00 00", True, True),
        ("00 40 00 00 00 00", False, True),
        ("F7 BF 00 00 00 00", False, False),
    ],
)
def test_lp_a0_feature_bits(features: str, tournament: bool, aft: bool) -> None:
    """sas.md §3: features byte 1 bit 3 = tournament; byte 2 bit 6 = AFT (the fallback)."""
    assert (messages.TOURNAMENT_SUPPORTED_BIT, messages.AFT_SUPPORTED_BIT) == (0x08, 0x40)
    reply = messages.EnabledFeaturesReply(1, 0, bytes.fromhex(features))
    assert (reply.tournament_supported, reply.aft_supported) == (tournament, aft)
