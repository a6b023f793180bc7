"""Frames <-> messages, and messages -> escaped wire bytes.

``decode_host_frame`` is the EGM's view (any host frame, unescaped), ``decode_reply`` the
host's (it knows the poll it sent).  Both raise a :class:`ProtocolError` subclass on bad
input; the framers turn those into events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from protocols.sas import aft, aft_registration, real_time
from protocols.sas import messages as m
from protocols.sas.crc import check_crc
from protocols.sas.errors import (
    CrcError,
    FieldError,
    LengthError,
    ProtocolError,
    UnexpectedReplyError,
    UnknownPollError,
)
from protocols.sas.polls import POLLS, PollType, ReplyKind
from protocols.sas.wire import escape

HOST_MESSAGES: dict[int, type[m.LongPoll]] = {
    0x01: m.Shutdown,
    0x02: m.Startup,
    0x0E: real_time.RealTimeReporting,
    0x0F: m.SendMeters,
    0x1A: m.SendCurrentCredits,
    0x1C: m.SendGamingMachineMeters,
    0x1F: m.SendMachineInfo,
    0x2F: m.SendSelectedMeters,
    0x54: m.SendVersion,
    0x72: aft.AftTransfer,
    0x73: aft_registration.AftRegister,
    0x74: aft.AftLockRequest,
    0x7E: m.SendDateTime,
    0x7F: m.SetDateTime,
    0x8C: m.TournamentMode,
    0x94: m.RemoteHandpayReset,
    0x95: m.SendTournamentMeter,
    0x96: m.SendTournamentMeter,
    0x97: m.SendTournamentMeter,
    0x98: m.SendTournamentMeter,
    0x99: m.SendTournamentMeters,
    0xA0: m.SendEnabledFeatures,
}
"""Long poll code -> host message class (one registry with :data:`REPLIES`)."""

REPLIES: dict[int, type[m.DataReply]] = {
    0x0F: m.MetersReply,
    0x1A: m.CurrentCreditsReply,
    0x1C: m.GamingMachineMetersReply,
    0x1F: m.MachineInfoReply,
    0x2F: m.SelectedMetersReply,
    0x54: m.VersionReply,
    0x72: aft.AftTransferReply,
    0x73: aft_registration.AftRegistrationReply,
    0x74: aft.AftStatusReply,
    0x7E: m.DateTimeReply,
    0x95: m.TournamentMeterReply,
    0x96: m.TournamentMeterReply,
    0x97: m.TournamentMeterReply,
    0x98: m.TournamentMeterReply,
    0x99: m.TournamentMetersReply,
    0xA0: m.EnabledFeaturesReply,
}
"""Long poll code -> data reply class, for polls whose reply is not ACK-only."""


_M = TypeVar("_M", m.HostMessage, m.EgmMessage)


def _from_body(
    parse: Callable[[int, int, bytes], _M], addr: int, code: int, frame: bytes, body: bytes
) -> _M:
    try:
        return parse(addr, code, bytes(body))
    except ProtocolError as exc:  # re-raise carrying the whole frame, not just the body
        raise type(exc)(str(exc.args[0]), frame) from None


def _check_size_and_crc(frame: bytes, expected: int | None, what: str) -> None:
    if expected != len(frame):
        raise LengthError(f"{what} is {len(frame)} bytes, expected {expected}", frame)
    if not check_crc(frame):
        raise CrcError(f"{what}: bad CRC", frame)


def decode_host_frame(frame: bytes) -> m.HostMessage:
    """A complete, unescaped host frame -> message (EGM side)."""
    n = len(frame)
    if n == 0:
        raise LengthError("empty host frame")
    first = frame[0]
    if first & 0x80:
        if n != 1:
            raise LengthError("a general poll is one byte", frame)
        return m.GeneralPoll(first & 0x7F)
    if n < 2:
        raise LengthError("long poll cut short after its address", frame)
    code = frame[1]
    spec = POLLS.get(code)
    if spec is None:
        raise UnknownPollError(f"unknown long poll {code:02X}", frame)
    cls = HOST_MESSAGES[code]
    if spec.type is PollType.R:
        if n != 2:
            raise LengthError(f"LP {code:02X} is a 2-byte read poll, not {n} bytes", frame)
        if first == 0:
            raise FieldError(f"LP {code:02X} cannot be broadcast", frame)
        return cls.from_body(first, code, b"")
    expected = spec.host_frame_length(frame)
    if expected != n:
        raise LengthError(f"LP {code:02X} frame is {n} bytes, expected {expected}", frame)
    if not check_crc(frame):
        raise CrcError(f"LP {code:02X}: bad CRC", frame)
    if first == 0 and not spec.broadcast:
        raise FieldError(f"LP {code:02X} cannot be broadcast", frame)
    body = frame[3:-2] if spec.host_length is None else frame[2:-2]
    return _from_body(cls.from_body, first, code, frame, body)


def decode_reply(frame: bytes, poll: m.HostMessage) -> m.EgmMessage:
    """A complete, unescaped EGM reply to ``poll`` -> message (host side).  An event
    frame (``addr FF ...``, real-time reporting) is decoded whatever the poll was."""
    addr = poll.addr
    n = len(frame)
    if n == 0:
        raise LengthError("empty reply")
    if n >= 5 and frame[0] == addr and frame[1] == real_time.REAL_TIME_EVENT:
        # RTE: a general poll's answer, or an event in place of a long poll's reply
        return real_time.decode_real_time(frame, addr)
    if isinstance(poll, m.GeneralPoll):
        if n != 1:
            raise LengthError("a general poll answer is one byte", frame)
        return m.ExceptionReply(addr, frame[0])
    if not isinstance(poll, m.LongPoll):
        raise UnexpectedReplyError(f"no reply expected to {poll!r}", frame)
    first = frame[0]
    if n == 1 and first == addr | 0x80:
        return m.Nack(addr)
    if first != addr:
        raise UnexpectedReplyError(f"reply from address {first:02X}, polled {addr:02X}", frame)
    code = poll.command()
    spec = POLLS[code]
    if n == 2 and frame[1] == 0:
        return m.Busy(addr)
    if spec.reply is ReplyKind.ACK:
        if n == 1:
            return m.Ack(addr)
        raise LengthError(f"LP {code:02X} expects ACK, got {n} bytes", frame)
    if n < 2 or frame[1] != code:
        raise UnexpectedReplyError(f"reply is not for LP {code:02X}", frame)
    _check_size_and_crc(frame, spec.reply_frame_length(frame), f"LP {code:02X} reply")
    body = frame[3:-2] if spec.reply is ReplyKind.LENGTH_BYTE else frame[2:-2]
    return _from_body(REPLIES[code].from_body, addr, code, frame, body)


def encode_host_message(msg: m.HostMessage) -> bytes:
    """Escaped wire bytes of a host message, wakeup bit on its first byte."""
    return escape(msg.encode(), wakeup=True)


@dataclass(frozen=True, slots=True)
class FramedPoll:
    """A host message encoded once: its frame (CRC included) and its escaped wire bytes.

    Encoding and the CRC cost more than the write itself; a poll framed ahead (the heat's
    start and end bursts) is sent without either, and a plain poll is framed only once."""

    poll: m.HostMessage
    frame: bytes
    wire: bytes


def frame_poll(poll: m.HostMessage) -> FramedPoll:
    """Frame ``poll`` now (a field it cannot carry raises here)."""
    frame = poll.encode()
    return FramedPoll(poll, frame, escape(frame, wakeup=True))


def encode_egm_message(msg: m.EgmMessage) -> bytes:
    """Escaped wire bytes of an EGM message (wakeup only on a loop-break chirp)."""
    return escape(msg.encode(), wakeup=isinstance(msg, m.Chirp))
