"""Escaped byte stream -> frames -> messages, one parser per role.

Both parsers own a :class:`~protocols.sas.wire.StreamDecoder`, take raw carrier bytes in
any split (``feed()``), and return a list of events: decoded messages, typed
:class:`~protocols.sas.errors.ProtocolError` instances, and a few framing facts.  They
never raise on bad input.

EGM side (:class:`HostFrameParser`) -- garbage and resync cases
    * A wakeup byte always starts a new host message.  A frame still incomplete when it
      arrives is reported as :class:`TruncatedFrameError` and dropped (resync point).
    * Wakeup ``80|a`` is a general poll (one byte, no CRC): ours -> :class:`GeneralPoll`;
      address 0 (sync) or another address -> :class:`OtherAddress` (implied ACK).
    * Wakeup ``a`` (long poll) to another address -> :class:`OtherAddress`; its bytes
      are skipped up to the next wakeup.  Address 0 (broadcast) and ours are framed.
    * The command byte selects the length from the poll table: 2 bytes for type R, the
      fixed length, or ``5 + len`` once the length byte is in.  An unknown command gives
      :class:`UnknownPollError` and the rest is skipped up to the next wakeup (a real EGM
      stays silent).
    * A complete frame with a bad CRC, length or field -> that error, carrying the frame.
    * Bytes with no wakeup outside a frame (other EGMs' replies on a multi-drop loop, line
      noise, bytes after a complete frame) are counted in ``stray`` and dropped silently.
    * An invalid escape (``FF x``) is reported and aborts the frame being collected.
    * ``gap()`` (the caller saw the line go quiet mid-message) drops a partial frame,
      reporting it as :class:`TruncatedFrameError`.

Host side (:class:`ReplyParser`) -- call ``expect(poll)`` after sending each poll
    * General poll: the first byte is the exception code, the reply is complete.
    * Otherwise ``addr|80`` -> :class:`Nack`; ``addr 00`` -> :class:`Busy`; an ACK-only
      poll answered ``addr`` -> :class:`Ack` (a lone ``addr`` may still become ``addr 00``,
      so it is held until the next byte or until ``gap()`` says the line went quiet);
      ``addr cmd ...`` -> a data reply framed by the poll table and decoded.
    * First byte neither ``addr`` nor ``addr|80``, or a wrong command byte ->
      :class:`UnexpectedReplyError`; the reply is given up (the link retries the poll).
    * ``gap()`` with a partial data reply -> :class:`TruncatedFrameError`.
    * A wakeup byte from an EGM is a loop-break :class:`Chirp`.
    * Bytes when no reply is awaited, and bytes after a complete reply, go to ``stray``.
      Those that follow a complete reply (in its chunk, or before the next ``expect``)
      are also kept as :class:`TrailingBytes` (``take_trailing()``) and counted in
      ``trailing``: a real EGM that sends more than SAS says (an ACK followed by an echo
      of the poll, say) is a quirk to show, not to drop without a word.
    * An invalid escape while a reply is awaited is reported and the reply given up.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocols.sas.codec import decode_host_frame, decode_reply
from protocols.sas.errors import (
    EscapeError,
    ProtocolError,
    TruncatedFrameError,
    UnexpectedReplyError,
    UnknownPollError,
)
from protocols.sas.messages import (
    Ack,
    Busy,
    Chirp,
    EgmMessage,
    ExceptionReply,
    GeneralPoll,
    HostMessage,
    LongPoll,
    Nack,
)
from protocols.sas.polls import POLLS, PollType, ReplyKind
from protocols.sas.real_time import REAL_TIME_EVENT, data_length, decode_real_time
from protocols.sas.wire import StreamDecoder


@dataclass(frozen=True, slots=True)
class OtherAddress:
    """The host addressed someone else (0 = sync/broadcast): an implied ACK for us."""

    addr: int


@dataclass(frozen=True, slots=True)
class TrailingBytes:
    """Bytes an EGM sent after a complete reply to ``poll`` (and before the next poll):
    not part of any SAS message.  The reply stands; the bytes are a quirk to report."""

    poll: HostMessage
    reply: EgmMessage
    data: bytes


HostEvent = HostMessage | OtherAddress | ProtocolError
ReplyEvent = EgmMessage | ProtocolError


class HostFrameParser:
    """EGM side: host messages for ``address`` (or for any address when it is None)."""

    __slots__ = ("_buf", "_decoder", "_need", "address", "stray")

    def __init__(self, address: int | None) -> None:
        self.address = address
        self._decoder = StreamDecoder()
        self._buf: bytearray | None = None  # frame being collected (ours or broadcast)
        self._need = 0  # its total length once known
        self.stray = 0

    def reset(self) -> None:
        self._decoder.reset()
        self._buf = None

    @property
    def escape_pending(self) -> bool:
        """The stream ended inside an ``FF`` escape (its meaning needs the next byte)."""
        return self._decoder.pending

    @property
    def idle(self) -> bool:
        """Between frames: no frame of ours half collected and no escape half read, so
        the next bytes are taken afresh.  Fed the whole escaped bytes of one host message
        while idle, :meth:`feed` returns exactly that message and is idle again."""
        return self._buf is None and not self._decoder.pending

    def gap(self) -> list[TruncatedFrameError]:
        """The line went quiet mid-message (inter-byte gap): drop the frame half read,
        reporting it as :class:`TruncatedFrameError`.  A half-read escape is kept: its
        bytes stand for one character on the line, which has no gap inside it."""
        buf, self._buf = self._buf, None
        if buf is None:
            return []
        return [TruncatedFrameError("host message cut by the inter-byte gap", bytes(buf))]

    def _ours(self, addr: int) -> bool:
        return self.address is None or addr == self.address

    def feed(self, data: bytes | bytearray) -> list[HostEvent]:
        out: list[HostEvent] = []
        for ev in self._decoder.feed_chunks(data):
            if isinstance(ev, EscapeError):
                out.append(ev)
                self._buf = None
                continue
            chunk = ev.data
            if ev.wakeup:
                if self._buf is not None:
                    out.append(TruncatedFrameError("host frame cut by a wakeup", self._buf))
                    self._buf = None
                first = chunk[0]
                chunk = chunk[1:]
                if first & 0x80:
                    addr = first & 0x7F
                    out.append(
                        GeneralPoll(addr) if addr and self._ours(addr) else OtherAddress(addr)
                    )
                elif first == 0 or self._ours(first):
                    self._buf = bytearray((first,))
                    self._need = 0
                else:
                    out.append(OtherAddress(first))
            if not chunk:
                continue
            if self._buf is None:
                self.stray += len(chunk)
                continue
            self._buf += chunk
            self._complete(out)
        return out

    def _complete(self, out: list[HostEvent]) -> None:
        buf = self._buf
        assert buf is not None
        if not self._need:
            if len(buf) < 2:
                return
            spec = POLLS.get(buf[1])
            if spec is None:
                out.append(UnknownPollError(f"unknown long poll {buf[1]:02X}", buf[:2]))
                self.stray += len(buf) - 2
                self._buf = None
                return
            need = 2 if spec.type is PollType.R else spec.host_frame_length(buf)
            if need is None:
                return
            self._need = need
        if len(buf) < self._need:
            return
        frame = bytes(buf[: self._need])
        self.stray += len(buf) - self._need
        self._buf = None
        try:
            out.append(decode_host_frame(frame))
        except ProtocolError as exc:
            out.append(exc)


class ReplyParser:
    """Host side: the EGM's answer to the poll given to :meth:`expect`."""

    __slots__ = (
        "_after",
        "_buf",
        "_decoder",
        "_poll",
        "_real_time",
        "_tails",
        "stray",
        "trailing",
    )

    def __init__(self) -> None:
        self._decoder = StreamDecoder()
        self._poll: HostMessage | None = None
        self._real_time = False
        self._buf = bytearray()
        self.stray = 0
        self.trailing = 0  # bytes after a complete reply (a subset of ``stray``)
        # the poll and answer the latest complete reply settled, until the next expect()
        self._after: tuple[HostMessage, EgmMessage] | None = None
        self._tails: list[TrailingBytes] = []

    def take_trailing(self) -> list[TrailingBytes]:
        """The trailing byte runs seen since the last call (oldest first)."""
        tails, self._tails = self._tails, []
        return tails

    def _trail(self, data: bytes) -> None:
        if data and self._after is not None:
            self.trailing += len(data)
            self._tails.append(TrailingBytes(self._after[0], self._after[1], data))

    @property
    def awaiting(self) -> bool:
        return self._poll is not None

    @property
    def escape_pending(self) -> bool:
        """The stream ended inside an ``FF`` escape (its meaning needs the next byte)."""
        return self._decoder.pending

    @property
    def partial(self) -> bool:
        """Some bytes of the awaited reply are in."""
        return bool(self._buf)

    @property
    def holding_ack(self) -> bool:
        """A lone address byte answers an ACK-only poll: an ACK unless ``00`` follows."""
        poll = self._poll
        return (
            isinstance(poll, LongPoll)
            and self._buf == bytes((poll.addr,))
            and POLLS[poll.command()].reply is ReplyKind.ACK
        )

    def expect(self, poll: HostMessage | None, *, real_time: bool = False) -> None:
        """Frame the next reply as an answer to ``poll`` (None: nothing is awaited).
        ``real_time``: the EGM reports events in real time (LP 0E), so a general poll's
        answer that starts with its address is an event frame, not one exception byte."""
        if poll is not None and poll.addr == 0:
            poll = None  # broadcasts and the sync general poll have no reply
        self._poll = poll
        self._after = None
        self._real_time = real_time
        self._buf = bytearray()

    def feed(self, data: bytes | bytearray) -> list[ReplyEvent]:
        out: list[ReplyEvent] = []
        for ev in self._decoder.feed_chunks(data):
            if isinstance(ev, EscapeError):
                out.append(ev)
                if self._poll is not None:
                    self.expect(None)
                continue
            chunk = ev.data
            if ev.wakeup:
                first = chunk[0]
                chunk = chunk[1:]
                if 1 <= first <= 127:
                    out.append(Chirp(first))
                else:
                    self.stray += 1
            if not chunk:
                continue
            if self._poll is None:
                self.stray += len(chunk)
                self._trail(chunk)
                continue
            self._buf += chunk
            self._complete(out)
        return out

    def gap(self) -> list[ReplyEvent]:
        """The line went quiet (inter-byte gap): settle a held ACK or a partial reply."""
        poll = self._poll
        if poll is None or not self._buf:
            return []
        buf = bytes(self._buf)
        self.expect(None)
        if (
            buf == bytes((poll.addr,))
            and isinstance(poll, LongPoll)
            and POLLS[poll.command()].reply is ReplyKind.ACK
        ):
            self._after = (poll, Ack(poll.addr))
            return [Ack(poll.addr)]
        if len(buf) >= 5 and buf[1] == REAL_TIME_EVENT and data_length(buf[2]) is None:
            # an event of a code we cannot frame by length: the quiet line ended it
            try:
                return [decode_real_time(buf, poll.addr)]
            except ProtocolError as exc:
                return [exc]
        return [TruncatedFrameError("reply cut short by the inter-byte gap", buf)]

    def _event_frame(self, out: list[ReplyEvent]) -> None:
        """``addr FF code [data] CRC``: its length follows from the code; an unknown
        code waits for :meth:`gap`."""
        buf = self._buf
        assert self._poll is not None
        if len(buf) < 3:
            return
        if buf[1] != REAL_TIME_EVENT:
            err = UnexpectedReplyError(f"byte {buf[1]:02X} where an event frame has FF", buf)
            self._done(out, err, len(buf))
            return
        want = data_length(buf[2])
        if want is None or len(buf) < 5 + want:
            return
        need = 5 + want
        try:
            event: ReplyEvent = decode_real_time(bytes(buf[:need]), self._poll.addr)
        except ProtocolError as exc:
            event = exc
        self._done(out, event, need)

    def _done(self, out: list[ReplyEvent], event: ReplyEvent, used: int) -> None:
        tail = bytes(self._buf[used:])
        poll = self._poll
        self.stray += len(tail)
        self.expect(None)
        out.append(event)
        if poll is not None and not isinstance(event, ProtocolError):
            self._after = (poll, event)  # only a good reply has a tail: a bad one is given up
            self._trail(tail)

    def _complete(self, out: list[ReplyEvent]) -> None:
        poll = self._poll
        assert poll is not None
        buf = self._buf
        addr = poll.addr
        if isinstance(poll, GeneralPoll):
            if self._real_time and buf[0] == addr:
                self._event_frame(out)
            else:  # one exception byte (a lone 00 in RTE mode too: no activity)
                self._done(out, ExceptionReply(addr, buf[0]), 1)
            return
        assert isinstance(poll, LongPoll)
        first = buf[0]
        if first == addr | 0x80:
            self._done(out, Nack(addr), 1)
            return
        if first != addr:
            err = UnexpectedReplyError(f"reply byte {first:02X} to address {addr:02X}", buf)
            self._done(out, err, len(buf))
            return
        if len(buf) < 2:
            return  # a lone address: ACK, or the start of busy / a data reply
        if buf[1] == 0:
            self._done(out, Busy(addr), 2)
            return
        if buf[1] == REAL_TIME_EVENT:  # RTE: a pending event answers in place of the reply
            self._event_frame(out)
            return
        code = poll.command()
        spec = POLLS[code]
        if spec.reply is ReplyKind.ACK:
            self._done(out, Ack(addr), 1)
            return
        if buf[1] != code:
            err = UnexpectedReplyError(f"reply command {buf[1]:02X} to LP {code:02X}", buf)
            self._done(out, err, len(buf))
            return
        need = spec.reply_frame_length(buf)
        if need is None or len(buf) < need:
            return
        frame = bytes(buf[:need])
        try:
            event: ReplyEvent = decode_reply(frame, poll)
        except ProtocolError as exc:
            event = exc
        self._done(out, event, need)
