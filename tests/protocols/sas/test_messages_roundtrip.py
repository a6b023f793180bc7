"""Hypothesis round trips for every message type, and fuzzing of both parsers.

encode -> escape -> chunked feed -> decode == original, for host messages (EGM-side parser)
and for EGM replies (host-side parser that knows the poll); random and mutated streams
give only messages or typed errors, never another exception.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import fields
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import protocols.sas as sas
from protocols.sas import (
    HOST_MESSAGES,
    POLLS,
    EgmMessage,
    HostFrameParser,
    HostMessage,
    LongPoll,
    OtherAddress,
    ProtocolError,
    ReplyKind,
    ReplyParser,
    encode_egm_message,
    encode_host_message,
)

addrs = st.integers(1, 127)
games = st.integers(0, 9999)
u8 = st.integers(0, 255)
meter4 = st.integers(0, 99_999_999)
cents = st.integers(0, 9_999_999_999)
wall = st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0)
)
ascii_text = st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=0, max_size=20)


def b(cls: type, *args: Any, **kwargs: Any) -> tuple[type, st.SearchStrategy[Any]]:
    """A strategy for ``cls`` tagged with the class, so coverage can be checked."""
    return cls, st.builds(cls, *args, **kwargs)


def fixed_ascii(n: int) -> st.SearchStrategy[str]:
    return st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=n, max_size=n)


SIMPLE_POLLS = sorted(
    (c for c in set(HOST_MESSAGES.values()) if [f.name for f in fields(c)] == ["addr"]),
    key=lambda c: c.__name__,
)

HOST_STRATEGIES: list[tuple[type, st.SearchStrategy[Any]]] = [
    b(sas.GeneralPoll, addrs),
    *(b(cls, addrs) for cls in SIMPLE_POLLS),
    b(sas.SetDateTime, st.integers(0, 127), wall),
    b(sas.SendEnabledFeatures, addrs, games),
    b(sas.RealTimeReporting, addrs, st.booleans()),
    b(sas.SendTournamentMeters, addrs, games),
    b(sas.SendTournamentMeter, addrs, st.sampled_from(sas.TOURNAMENT_METER_CODES), games),
    b(
        sas.TournamentMode,
        addrs,
        games,
        st.integers(0, 99),
        st.integers(0, 59),
        meter4,
        st.booleans(),
    ),
    b(sas.SendSelectedMeters, addrs, games, st.lists(u8, min_size=1, max_size=10).map(tuple)),
    b(sas.AftInterrogate, addrs, u8),
    b(sas.AftLockRequest, addrs, u8, u8, st.integers(0, 9999)),
    b(
        sas.AftTransfer,
        addrs,
        transfer_type=u8,
        cashable_cents=cents,
        restricted_cents=cents,
        nonrestricted_cents=cents,
        transaction_id=ascii_text.filter(bool),
        asset_number=st.integers(0, 2**32 - 1),
        transfer_code=st.sampled_from([0x00, 0x01]),
        transaction_index=u8,
        transfer_flags=u8,
        registration_key=st.binary(min_size=20, max_size=20),
        expiration=meter4,
        pool_id=st.integers(0, 0xFFFF),
        receipt_data=st.binary(max_size=40),
        lock_timeout_cs=st.integers(0, 9999),
    ),
]
u32 = st.integers(0, 2**32 - 1)
keys = st.binary(min_size=20, max_size=20)
HOST_STRATEGIES.append(
    (
        sas.AftRegister,
        st.one_of(
            st.builds(sas.AftRegister, addrs, st.sampled_from([0x00, 0x01, 0x40]), u32, keys, u32),
            st.builds(sas.AftRegister, addrs, st.sampled_from([0x80, 0xFF])),
        ),
    )
)
host_messages: st.SearchStrategy[HostMessage] = st.one_of([s for _, s in HOST_STRATEGIES])


def _poll_for(reply: EgmMessage) -> HostMessage:
    """A poll this reply can answer."""
    a = reply.addr
    if isinstance(reply, sas.ExceptionReply):
        return sas.GeneralPoll(a)
    if isinstance(reply, sas.TournamentMeterReply):
        return sas.SendTournamentMeter(a, reply.meter, reply.game)
    if isinstance(reply, sas.DataReply):
        code = reply.command()
        cls = HOST_MESSAGES[code]
        if code == 0x72:
            return sas.AftInterrogate(a)
        if code == 0x74:
            return sas.AftLockRequest(a)
        if code == 0x73:
            return sas.AftRegister.read(a)
        if code == 0x2F:
            return sas.SendSelectedMeters(a, 0, (0,))
        if issubclass(cls, (sas.SendEnabledFeatures, sas.SendTournamentMeters)):
            return cls(a, 0)
        return cls(a)
    return sas.Shutdown(a)  # ACK / NACK / busy


REPLY_STRATEGIES: list[tuple[type, st.SearchStrategy[Any]]] = [
    b(sas.Ack, addrs),
    b(sas.Nack, addrs),
    b(sas.Busy, addrs),
    b(sas.ExceptionReply, addrs, u8),
    b(sas.CurrentCreditsReply, addrs, meter4),
    b(sas.MetersReply, addrs, *[meter4] * 6),
    b(sas.GamingMachineMetersReply, addrs, *[meter4] * 8),
    b(
        sas.MachineInfoReply,
        addrs,
        fixed_ascii(2),
        fixed_ascii(3),
        u8,
        u8,
        u8,
        st.integers(0, 0xFFFF),
        fixed_ascii(6),
        st.text(st.sampled_from("0123456789"), min_size=4, max_size=4),  # base percent
    ),
    b(
        sas.VersionReply,
        addrs,
        fixed_ascii(3),
        st.text(st.characters(max_codepoint=127), max_size=40),
    ),
    b(sas.DateTimeReply, addrs, wall),
    b(sas.EnabledFeaturesReply, addrs, games, st.binary(min_size=6, max_size=6)),
    b(sas.TournamentMeterReply, addrs, st.sampled_from(sas.TOURNAMENT_METER_CODES), games, meter4),
    b(sas.TournamentMetersReply, addrs, games, meter4, meter4, meter4, meter4),
    b(
        sas.SelectedMetersReply,
        addrs,
        games,
        st.lists(st.tuples(u8, meter4), max_size=10).map(tuple),
    ),
    b(
        sas.AftTransferReply,
        addrs,
        u8,
        u8,
        u8,
        u8,
        cents,
        cents,
        cents,
        u8,
        st.integers(0, 2**32 - 1),
        ascii_text,
        st.none() | wall,
        meter4,
        st.integers(0, 0xFFFF),
        cents,
        cents,
        cents,
    ),
    b(
        sas.AftStatusReply,
        addrs,
        st.integers(0, 2**32 - 1),
        u8,
        u8,
        u8,
        u8,
        u8,
        cents,
        cents,
        cents,
        cents,
        meter4,
        st.integers(0, 0xFFFF),
    ),
]
REPLY_STRATEGIES.append(b(sas.AftRegistrationReply, addrs, u8, u32, keys, u32))
replies: st.SearchStrategy[EgmMessage] = st.one_of([s for _, s in REPLY_STRATEGIES])


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, prev = [], 0
    for p in [*points, len(data)]:
        out.append(data[prev:p])
        prev = p
    return out


def test_every_poll_and_reply_class_has_a_strategy() -> None:
    assert set(HOST_MESSAGES.values()) <= {cls for cls, _ in HOST_STRATEGIES}
    assert set(sas.REPLIES.values()) <= {cls for cls, _ in REPLY_STRATEGIES}


@settings(max_examples=400)
@given(
    st.lists(host_messages, min_size=1, max_size=6), st.lists(st.integers(0, 10_000), max_size=8)
)
def test_host_messages_round_trip_through_egm_parser(
    msgs: list[HostMessage], cuts: list[int]
) -> None:
    wire = b"".join(encode_host_message(m) for m in msgs)
    parser = HostFrameParser(None)  # promiscuous: every address
    events = [ev for piece in chunked(wire, cuts) for ev in parser.feed(piece)]
    assert events == msgs
    assert parser.stray == 0


@settings(max_examples=400)
@given(replies, st.lists(st.integers(0, 10_000), max_size=8))
def test_replies_round_trip_through_host_parser(reply: EgmMessage, cuts: list[int]) -> None:
    poll = _poll_for(reply)
    parser = ReplyParser()
    parser.expect(poll)
    wire = encode_egm_message(reply)
    events = [ev for piece in chunked(wire, cuts) for ev in parser.feed(piece)]
    events += parser.gap()  # a lone ACK byte is only settled by the line going quiet
    assert events == [reply]
    assert not parser.awaiting


@given(replies)
def test_data_reply_frames_respect_the_poll_table(reply: EgmMessage) -> None:
    if not isinstance(reply, sas.DataReply):
        return
    spec = POLLS[reply.command()]
    frame = reply.encode()
    assert frame[0] == reply.addr
    assert frame[1] == reply.command()
    assert spec.reply_frame_length(frame) == len(frame)
    assert sas.check_crc(frame)


@given(host_messages)
def test_host_frames_respect_the_poll_table(msg: HostMessage) -> None:
    frame = msg.encode()
    if isinstance(msg, LongPoll):
        spec = POLLS[msg.command()]
        assert (spec.host_frame_length(frame) if spec.type.value != "R" else 2) == len(frame)
        if spec.reply is ReplyKind.ACK:
            assert msg.command() not in sas.REPLIES


# --- fuzzing ---------------------------------------------------------------------------------

HOST_EVENT_TYPES = (HostMessage, OtherAddress, ProtocolError)


@settings(max_examples=500)
@given(
    st.binary(max_size=200),
    st.lists(st.integers(0, 300), max_size=6),
    st.sampled_from([None, 1, 5]),
)
def test_random_bytes_give_only_messages_or_typed_errors(
    data: bytes, cuts: list[int], addr: int | None
) -> None:
    parser = HostFrameParser(addr)
    for piece in chunked(data, cuts):
        for ev in parser.feed(piece):
            assert isinstance(ev, HOST_EVENT_TYPES)
    for poll in (
        sas.GeneralPoll(1),
        sas.Shutdown(1),
        sas.SendCurrentCredits(1),
        sas.AftInterrogate(1),
    ):
        rp = ReplyParser()
        rp.expect(poll)
        for piece in chunked(data, cuts):
            for rev in rp.feed(piece) + rp.gap():
                assert isinstance(rev, (EgmMessage, ProtocolError))
            if not rp.awaiting:
                rp.expect(poll)  # keep framing replies through the whole stream


@settings(max_examples=500)
@given(
    st.lists(host_messages, min_size=1, max_size=4),
    st.lists(
        st.tuples(st.integers(0, 500), st.sampled_from(["flip", "drop", "insert"]), u8),
        min_size=1,
        max_size=4,
    ),
    addrs,
)
def test_mutated_streams_resync_on_the_next_wakeup(
    msgs: list[HostMessage], mutations: list[tuple[int, str, int]], addr: int
) -> None:
    wire = bytearray(b"".join(encode_host_message(m) for m in msgs))
    for pos, kind, value in mutations:
        i = pos % (len(wire) + 1)
        if kind == "insert":
            wire[i:i] = bytes((value,))
        elif wire and i < len(wire):
            if kind == "flip":
                wire[i] ^= value or 1
            else:
                del wire[i]
    parser = HostFrameParser(None)
    for ev in parser.feed(bytes(wire)):
        assert isinstance(ev, HOST_EVENT_TYPES)
    if parser.escape_pending:
        return  # a dangling FF: its meaning depends on the next byte, by design
    # a clean message after the garbage is always recovered
    clean = sas.SendCurrentCredits(addr)
    events = parser.feed(encode_host_message(clean))
    assert events[-1] == clean
    assert all(isinstance(ev, ProtocolError) for ev in events[:-1])
