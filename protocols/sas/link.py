"""The SAS link state machine for both roles: the host's poller and an EGM's answerer.

Theory of operation (sas.md §1)
-------------------------------
The host speaks first, one poll at a time.  An EGM starts its reply within 20 ms, leaves
at most 5 ms between bytes, and never acknowledges anything itself: the *host*
acknowledges a reply implicitly with its next message, provided it is a different poll,
a poll to another address, or a broadcast.  Sending the identical poll again means
"NACK, say that again": the EGM resends the very same reply (the same data, not a fresh
reading), up to 3 tries in all.

:class:`HostLink` therefore
    * keeps one poll in flight and frames the reply knowing that poll;
    * on silence (20 ms + transmit time), a corrupted/garbled reply, a truncated reply
      (5 ms gap) or a NACK, repeats the identical poll -- after the line has been quiet
      for one gap, so late bytes of the bad reply are not taken as the new one -- and
      after ``max_tries`` gives :class:`PollFailed`;
    * when a *new* poll would be byte-identical to the previous one (a general poll every
      200 ms to a single EGM), first sends a sync general poll to address 0 (byte 80,
      answered by nobody) so the EGM takes it as an implied ACK and not as a NACK --
      unless the previous poll failed: then the repeat is left a NACK on purpose, so the
      EGM resends the reply we never got (an exception is not lost by a bad line).
      A poll lost on its way *to* the EGM cannot be told from a lost reply, so after such
      a loss the EGM may repeat an answer the host already had (SAS's own limit).

:class:`EgmLink`
    * answers only its own address (and acts on, but never answers, broadcasts);
    * keeps its last reply and resends it when the identical poll comes again;
    * on an implied ACK commits the reply: an exception reported to a general poll leaves
      the queue only then, so a lost exception is never lost;
    * keeps the exception queue (>= 20 events, oldest dropped on overflow and 70 reported
      next, priority events ahead of the rest);
    * loop break: no poll to its address for 5 s -> :class:`LinkDown` and a chirp (its
      address with the wakeup bit) every 200 ms until polled again; 30 s without an
      implied ACK -> :class:`LinkDown` too.
    * optional inter-byte gap rule (``LinkSettings.enforce_gap``): when bytes arrive
      more than ``inter_byte_gap`` after the previous ones while a message of ours is half
      framed, that message is dropped (a :class:`TruncatedFrameError` event, never a
      reply) and the new bytes are taken afresh.  Times are those passed to
      ``receive_data``; a chunk's bytes count as arriving together.
    * optional whole-message fast path (``fast_polls``): a chunk of bytes that is exactly
      the wire form of one of the given polls, arriving while the frame parser is idle
      (:attr:`HostFrameParser.idle`), is exactly what the parser would decode from it, so
      the link acts on the prepared message without unescaping, framing and checking the
      CRC again.  Split or joined chunks, other polls and garbage take the full path; the
      state machine, implied ACKs, repeats and replies are the same either way.

Everything is driven by the caller: ``receive_data(data, now)``, ``send(...)``,
``handle_timers(now)`` at ``next_deadline()``; outgoing bytes from ``data_to_send()``
(``send`` returns them directly); events from ``next_event()``.  ``now`` is any monotonic
float in seconds; no clock is read here.  State changes go through a transition table
(:data:`HOST_TRANSITIONS`, :data:`EGM_TRANSITIONS`); a pair not in it raises
:class:`LinkStateError` (caller misuse) -- it is never reached from wire input.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from protocols.sas.codec import FramedPoll, encode_egm_message, encode_host_message, frame_poll
from protocols.sas.errors import (
    LinkStateError,
    ProtocolError,
    TruncatedFrameError,
    UnknownPollError,
)
from protocols.sas.exception_codes import SasException
from protocols.sas.framer import HostFrameParser, OtherAddress, ReplyParser, TrailingBytes
from protocols.sas.messages import (
    Ack,
    Chirp,
    EgmMessage,
    ExceptionReply,
    GeneralPoll,
    HostMessage,
    LongPoll,
    Nack,
)
from protocols.sas.real_time import RealTimeEvent, RealTimeReporting


@dataclass(frozen=True, slots=True)
class LinkSettings:
    """Timing rules of sas.md §1 as settings (seconds).  TCP carriers may need a longer
    ``reply_timeout`` than a serial loop."""

    reply_timeout: float = 0.020  # first reply byte within 20 ms of the poll's end
    inter_byte_gap: float = 0.005  # at most 5 ms between bytes of one message
    byte_time: float = 11 / 19_200  # one 11-bit character at 19 200 baud (~0.573 ms)
    max_tries: int = 3  # tries in all, the first included
    sync_before_repeat: bool = True  # host: byte 80 before a new identical poll
    loop_break: float = 5.0  # EGM: no poll to its address this long -> chirp
    chirp_interval: float = 0.200
    ack_timeout: float = 30.0  # EGM: no implied ACK this long -> link down
    # EGM: discard a host message whose bytes pause longer than inter_byte_gap, as a real
    # EGM does.  Off by default: a TCP carrier may deliver one message in late pieces.
    enforce_gap: bool = False
    exception_queue_size: int = 20  # sas.md: at least 20
    # Host: how long a lone address byte (ACK, or the first byte of busy ``addr 00``) is
    # held before it is taken as ACK.  None: the inter-byte gap, SAS's strict reading.  A
    # shared loop sets two character times (protocols.sas.line): the EGM's UART sends the
    # two bytes of a busy back to back, and on a loop every held ACK delays every machine
    # after it.
    ack_settle: float | None = None

    def __post_init__(self) -> None:
        if self.max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        if self.exception_queue_size < 20:
            raise ValueError("the SAS exception queue holds at least 20 events")


SYNC = GeneralPoll(0)
_SYNC_WIRE = encode_host_message(SYNC)


# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PollReply:
    """Host: the reply to ``poll`` (data reply, ACK, busy or exception code)."""

    poll: HostMessage
    reply: EgmMessage
    tries: int
    # RTE mode: a general poll that every try met with silence, settled as no activity
    # (SAS 6.02 §12.6); whether the EGM is still there is the caller's judgement
    # (protocols.sas.real_time.RealTimeLiveness).
    silent: bool = False


@dataclass(frozen=True, slots=True)
class Retrying:
    """Host: ``poll`` is being repeated (which the EGM reads as NACK)."""

    poll: HostMessage
    attempt: int  # the try about to be made, 2..max_tries
    reason: str  # "timeout", "nack", "corrupt"
    error: ProtocolError | None


@dataclass(frozen=True, slots=True)
class PollFailed:
    """Host: no good reply to ``poll`` after every try."""

    poll: HostMessage
    tries: int
    reason: str  # "timeout", "nack", "corrupt"
    error: ProtocolError | None


@dataclass(frozen=True, slots=True)
class PollHandled:
    """EGM: a message for us (or a broadcast) and what we answered (None: silence)."""

    poll: HostMessage
    reply: EgmMessage | None
    resent: bool  # True when the host repeated the poll and we resent our last reply


@dataclass(frozen=True, slots=True)
class ExceptionAcked:
    """EGM: the host implicitly acknowledged the exception we reported."""

    code: int


@dataclass(frozen=True, slots=True)
class LinkDown:
    reason: str  # "no address" or "no ack"


@dataclass(frozen=True, slots=True)
class LinkUp:
    pass


LinkEvent = (
    PollReply
    | Retrying
    | PollFailed
    | PollHandled
    | ExceptionAcked
    | LinkDown
    | LinkUp
    | Chirp
    | TrailingBytes
    | ProtocolError
)


# --- transition tables --------------------------------------------------------------------


class HostState(enum.Enum):
    IDLE = "idle"
    AWAITING_REPLY = "awaiting reply"
    RETRY_WAIT = "retry wait"  # bad reply: waiting for the line to go quiet


class HostInput(enum.Enum):
    SEND_POLL = "send poll"
    SEND_BROADCAST = "send broadcast"
    REPLY = "reply"
    BAD_REPLY = "bad reply"  # tries left: wait for quiet, then repeat
    TIMEOUT = "timeout"  # tries left: repeat now
    GIVE_UP = "give up"
    LINE_QUIET = "line quiet"


HOST_TRANSITIONS: dict[tuple[HostState, HostInput], HostState] = {
    (HostState.IDLE, HostInput.SEND_POLL): HostState.AWAITING_REPLY,
    (HostState.IDLE, HostInput.SEND_BROADCAST): HostState.IDLE,
    (HostState.AWAITING_REPLY, HostInput.REPLY): HostState.IDLE,
    (HostState.AWAITING_REPLY, HostInput.BAD_REPLY): HostState.RETRY_WAIT,
    (HostState.AWAITING_REPLY, HostInput.TIMEOUT): HostState.AWAITING_REPLY,
    (HostState.AWAITING_REPLY, HostInput.GIVE_UP): HostState.IDLE,
    (HostState.RETRY_WAIT, HostInput.LINE_QUIET): HostState.AWAITING_REPLY,
}
"""(state, input) -> new state for the host role; anything else is a LinkStateError."""


class EgmState(enum.Enum):
    UP = "up"
    CHIRPING = "chirping"  # loop break: no poll to our address for 5 s
    NO_ACK = "no ack"  # polled, but no implied ACK for 30 s


class EgmInput(enum.Enum):
    ADDRESSED = "addressed"
    ACKED = "acked"
    ADDRESS_SILENCE = "address silence"
    ACK_SILENCE = "ack silence"
    CHIRP_DUE = "chirp due"


EGM_TRANSITIONS: dict[tuple[EgmState, EgmInput], EgmState] = {
    (EgmState.UP, EgmInput.ADDRESSED): EgmState.UP,
    (EgmState.UP, EgmInput.ACKED): EgmState.UP,
    (EgmState.UP, EgmInput.ADDRESS_SILENCE): EgmState.CHIRPING,
    (EgmState.UP, EgmInput.ACK_SILENCE): EgmState.NO_ACK,
    (EgmState.CHIRPING, EgmInput.ADDRESSED): EgmState.UP,
    (EgmState.CHIRPING, EgmInput.ACKED): EgmState.CHIRPING,
    (EgmState.CHIRPING, EgmInput.CHIRP_DUE): EgmState.CHIRPING,
    (EgmState.NO_ACK, EgmInput.ADDRESSED): EgmState.NO_ACK,
    (EgmState.NO_ACK, EgmInput.ACKED): EgmState.UP,
    (EgmState.NO_ACK, EgmInput.ADDRESS_SILENCE): EgmState.CHIRPING,
}
"""(state, input) -> new state for the EGM role; anything else is a LinkStateError."""


class _Link:
    """Outbox and event queue shared by both roles."""

    def __init__(self, settings: LinkSettings | None) -> None:
        self.settings = settings or LinkSettings()
        self._out = bytearray()
        self._events: deque[LinkEvent] = deque()

    def data_to_send(self) -> bytes:
        """Bytes to write to the carrier now (escaped), draining the outbox."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def next_event(self) -> LinkEvent | None:
        return self._events.popleft() if self._events else None

    def events(self) -> list[LinkEvent]:
        """Every pending event, draining the queue."""
        out = list(self._events)
        self._events.clear()
        return out


# --- host role ------------------------------------------------------------------------------


class HostLink(_Link):
    """The host side of one SAS loop (one poll in flight across all its addresses)."""

    def __init__(self, settings: LinkSettings | None = None) -> None:
        super().__init__(settings)
        self.state = HostState.IDLE
        self._parser = ReplyParser()
        self._poll: HostMessage | None = None
        self._wire = b""  # escaped bytes of the poll in flight (repeated on retry)
        self._frame_len = 0  # its length in characters on a serial line
        self._last_frame: bytes | None = None  # frame of the previous poll sent
        self._last_failed = False  # the previous poll got no good reply
        self._tries = 0
        self._real_time = False  # the poll in flight goes to an EGM in RTE mode
        self._deadline: float | None = None
        self._quiet_cap = 0.0  # latest retry time while the line keeps babbling

    def _go(self, event: HostInput) -> None:
        try:
            self.state = HOST_TRANSITIONS[(self.state, event)]
        except KeyError:
            raise LinkStateError(
                f"host link: {event.value!r} in state {self.state.value!r}"
            ) from None

    @property
    def poll_in_flight(self) -> HostMessage | None:
        return self._poll

    @property
    def stray_bytes(self) -> int:
        return self._parser.stray

    @property
    def trailing_bytes(self) -> int:
        """Bytes an EGM sent after a complete reply (each run is a :class:`TrailingBytes`
        event; the reply stands, the state machine is not moved by them)."""
        return self._parser.trailing

    def send(
        self, message: HostMessage | FramedPoll, now: float, *, real_time: bool = False
    ) -> bytes:
        """Queue a poll (and a sync first if it repeats the previous poll); returns the
        bytes to write.  Raises :class:`LinkStateError` while another poll is in flight.
        A :class:`FramedPoll` is sent as framed, without encoding it again.
        ``real_time``: the EGM has real-time event reporting on (LP 0E), so a general
        poll may be answered by an event frame, or by nothing at all (no activity)."""
        framed = message if isinstance(message, FramedPoll) else frame_poll(message)
        poll, frame = framed.poll, framed.frame
        if poll.addr == 0:  # broadcast / sync: nobody answers, and it acknowledges all
            self._go(HostInput.SEND_BROADCAST)
            self._out += framed.wire
            self._last_frame = None
            self._last_failed = False
            return self.data_to_send()
        self._go(HostInput.SEND_POLL)
        sync = (
            self.settings.sync_before_repeat and frame == self._last_frame and not self._last_failed
        )
        if sync:
            self._out += _SYNC_WIRE
        self._poll = poll
        self._real_time = real_time
        self._wire = framed.wire
        self._frame_len = len(frame)
        self._last_frame = frame
        self._tries = 0
        self._transmit(now)
        if sync and self._deadline is not None:  # the sync character goes out first
            self._deadline += self.settings.byte_time
        return self.data_to_send()

    def _transmit(self, now: float) -> None:
        assert self._poll is not None
        self._tries += 1
        self._out += self._wire
        self._parser.expect(self._poll, real_time=self._real_time)
        s = self.settings
        self._deadline = now + self._frame_len * s.byte_time + s.reply_timeout

    def receive_data(self, data: bytes, now: float) -> None:
        if not data:
            return
        for ev in self._parser.feed(data):
            self._on_reply_event(ev, now)
        self._events.extend(self._parser.take_trailing())
        if self.state is HostState.AWAITING_REPLY and self._parser.partial:
            settle = self.settings.ack_settle
            if settle is not None and self._parser.holding_ack:
                self._deadline = now + settle
            else:
                self._deadline = now + self.settings.inter_byte_gap + self.settings.byte_time
        elif self.state is HostState.RETRY_WAIT:
            # still talking: wait for quiet, but a babbling line cannot hold the retry off
            self._deadline = min(now + self.settings.inter_byte_gap, self._quiet_cap)

    def _on_reply_event(self, ev: EgmMessage | ProtocolError, now: float) -> None:
        if isinstance(ev, Chirp):
            self._events.append(ev)
            return
        if self.state is not HostState.AWAITING_REPLY or self._poll is None:
            if isinstance(ev, ProtocolError):
                self._events.append(ev)
            return
        if isinstance(ev, ProtocolError):
            self._bad(now, "corrupt", ev)
        elif isinstance(ev, Nack):
            self._bad(now, "nack", None)
        else:
            self._go(HostInput.REPLY)
            self._events.append(PollReply(self._poll, ev, self._tries))
            self._finish()

    def _bad(self, now: float, reason: str, error: ProtocolError | None) -> None:
        assert self._poll is not None
        if self._tries >= self.settings.max_tries:
            self._go(HostInput.GIVE_UP)
            self._events.append(PollFailed(self._poll, self._tries, reason, error))
            self._finish(failed=True)
            return
        self._go(HostInput.BAD_REPLY)
        self._parser.expect(None)
        self._events.append(Retrying(self._poll, self._tries + 1, reason, error))
        self._deadline = now + self.settings.inter_byte_gap
        self._quiet_cap = now + self.settings.reply_timeout

    def _finish(self, failed: bool = False) -> None:
        self._poll = None
        self._deadline = None
        self._last_failed = failed

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timers` must next be called (None: no timer running)."""
        return self._deadline

    def handle_timers(self, now: float) -> None:
        if self._deadline is None or now < self._deadline:
            return
        if self.state is HostState.RETRY_WAIT:
            self._go(HostInput.LINE_QUIET)
            self._transmit(now)
            return
        assert self._poll is not None
        if self._parser.partial:  # the line went quiet mid-reply
            for ev in self._parser.gap():
                self._on_reply_event(ev, now)
            return
        if (
            self._tries >= self.settings.max_tries
            and self._real_time
            and isinstance(self._poll, GeneralPoll)
        ):
            # SAS 6.02 §12.6: in RTE mode an EGM with nothing to report sends nothing.
            # Only after every try: a slow answer is taken by a repeat, never left to
            # land on the next poll.  Marked silent: whether the EGM is still there is
            # the caller's judgement (real_time.RealTimeLiveness).
            self._go(HostInput.REPLY)
            self._parser.expect(None)
            reply = ExceptionReply(self._poll.addr, 0)
            self._events.append(PollReply(self._poll, reply, self._tries, silent=True))
            self._finish()
            return
        if self._tries >= self.settings.max_tries:
            self._go(HostInput.GIVE_UP)
            self._events.append(PollFailed(self._poll, self._tries, "timeout", None))
            self._finish(failed=True)
            return
        self._go(HostInput.TIMEOUT)
        self._events.append(Retrying(self._poll, self._tries + 1, "timeout", None))
        self._parser.expect(None)
        self._transmit(now)


# --- EGM role -------------------------------------------------------------------------------


class EgmHandler(Protocol):
    """The machine behind an :class:`EgmLink` (e.g. an emulator's SAS face).

    ``handle`` gets every long poll for this EGM and every broadcast, and returns the reply
    (ignored for broadcasts), or None for a poll the machine does not support -- the EGM
    then stays silent, as SAS requires.  General polls are answered by the link itself
    from its exception queue (fed with :meth:`EgmLink.post_exception`).
    """

    def handle(self, poll: LongPoll) -> EgmMessage | None: ...


class ExceptionQueue:
    """The EGM's exception FIFO: priority events first, oldest dropped on overflow and 70
    reported next (sas.md §1).  Each entry keeps the data its real-time event frame
    carries (:mod:`protocols.sas.real_time`), sent only while RTE is on."""

    def __init__(self, size: int = 20) -> None:
        self.size = size
        self._normal: deque[tuple[int, bytes]] = deque()
        self._priority: deque[tuple[int, bytes]] = deque()
        self.overflowed = False

    def __len__(self) -> int:
        return len(self._normal) + len(self._priority)

    def post(self, code: int, priority: bool = False, data: bytes = b"") -> None:
        if len(self) >= self.size:
            (self._normal or self._priority).popleft()
            self.overflowed = True
        (self._priority if priority else self._normal).append((code, data))

    def _head(self) -> tuple[int, bytes]:
        if self.overflowed:
            return SasException.EXCEPTION_BUFFER_OVERFLOW, b""
        if self._priority:
            return self._priority[0]
        if self._normal:
            return self._normal[0]
        return SasException.NO_ACTIVITY, b""

    def peek(self) -> int:
        return self._head()[0]

    def peek_event(self) -> tuple[int, bytes]:
        """The head's code and its real-time data."""
        return self._head()

    def remove(self, code: int) -> None:
        """Drop ``code`` once the host has acknowledged it (if it is still at the head)."""
        if code == SasException.EXCEPTION_BUFFER_OVERFLOW and self.overflowed:
            self.overflowed = False
        elif self._priority and self._priority[0][0] == code:
            self._priority.popleft()
        elif self._normal and self._normal[0][0] == code:
            self._normal.popleft()


class EgmLink(_Link):
    """One EGM's side of a SAS loop, answering polls through ``handler``."""

    def __init__(
        self,
        address: int,
        handler: EgmHandler,
        now: float = 0.0,
        settings: LinkSettings | None = None,
        *,
        fast_polls: Iterable[HostMessage] = (),
        real_time_capable: bool = True,
        real_time_idle_frame: bool = True,
    ) -> None:
        """``real_time_capable``: the EGM answers LP 0E and then reports in real time
        (else LP 0E goes to the handler, which may stay silent: unsupported).
        ``real_time_idle_frame``: in RTE mode, no activity is answered ``addr FF 00``
        (one platform's way); False: with silence, as SAS 6.02 §12.6 has it."""
        super().__init__(settings)
        if not 1 <= address <= 127:
            raise ValueError(f"EGM address must be 1..127, not {address}")
        self._fast: dict[bytes, FramedPoll] = {}  # by wire bytes; framed once, here
        for poll in fast_polls:
            if poll.addr != address:
                raise ValueError(f"fast poll {poll!r} is not for address {address}")
            framed = frame_poll(poll)
            self._fast[framed.wire] = framed
        self.fast_hits = 0  # chunks taken by the fast path
        self._last_rx = now  # when the previous bytes arrived (inter-byte gap rule)
        self.address = address
        self.handler = handler
        self.state = EgmState.UP
        self.queue = ExceptionQueue(self.settings.exception_queue_size)
        self.real_time_capable = real_time_capable
        self.real_time = False  # RTE on (LP 0E): events go out as event frames
        self.real_time_idle_frame = real_time_idle_frame
        self._parser = HostFrameParser(address)
        self._last_frame: bytes | None = None  # last poll we answered
        self._last_reply = b""  # its escaped reply, resent on repeat
        self._unacked: int | None = None  # exception code awaiting implied ACK
        self._awaiting_ack = False
        self._last_addressed = now
        self._unacked_since = now  # when the oldest reply still awaiting an ACK went out
        self._next_chirp = 0.0

    def _go(self, event: EgmInput) -> None:
        try:
            self.state = EGM_TRANSITIONS[(self.state, event)]
        except KeyError:
            raise LinkStateError(
                f"EGM link: {event.value!r} in state {self.state.value!r}"
            ) from None

    def post_exception(self, code: int, priority: bool = False, data: bytes = b"") -> None:
        """Queue an exception for the host's next general poll; ``data``: what its
        real-time event frame carries (7E, 7F: :mod:`protocols.sas.real_time`)."""
        if not 0 < code <= 0xFF:
            raise ValueError(f"exception code must be 01..FF, not {code}")
        self.queue.post(code, priority, data)

    def receive_data(self, data: bytes, now: float) -> None:
        if not data:
            return
        if self.settings.enforce_gap:
            if now - self._last_rx > self.settings.inter_byte_gap:
                for err in self._parser.gap():
                    self._events.append(err)
            self._last_rx = now
        if self._fast:
            framed = self._fast.get(data)
            if framed is not None and self._parser.idle:
                self.fast_hits += 1
                self._on_message(framed.poll, now, framed.frame)
                return
        for ev in self._parser.feed(data):
            if isinstance(ev, OtherAddress):
                self._implied_ack(now)
            elif isinstance(ev, ProtocolError):
                self._on_error(ev, now)
            else:
                self._on_message(ev, now)

    def _on_error(self, err: ProtocolError, now: float) -> None:
        self._events.append(err)
        # a damaged message to our address is NACKed; unknown polls get silence
        if err.raw[:1] == bytes((self.address,)) and not isinstance(
            err, UnknownPollError | TruncatedFrameError
        ):
            self._addressed(now)
            self._out += encode_egm_message(Nack(self.address))

    def _addressed(self, now: float) -> None:
        self._last_addressed = now
        was = self.state
        self._go(EgmInput.ADDRESSED)
        if was is EgmState.CHIRPING:
            self._events.append(LinkUp())

    def _implied_ack(self, now: float) -> None:
        if not self._awaiting_ack:
            return
        self._awaiting_ack = False
        self._last_frame = None
        was = self.state
        self._go(EgmInput.ACKED)
        if was is EgmState.NO_ACK:
            self._events.append(LinkUp())
        if self._unacked is not None:
            self.queue.remove(self._unacked)
            self._events.append(ExceptionAcked(self._unacked))
            self._unacked = None

    def _on_message(self, msg: HostMessage, now: float, frame: bytes | None = None) -> None:
        if frame is None:
            frame = msg.encode()
        if msg.addr == 0:  # broadcast: act, never answer; it is an implied ACK
            self._implied_ack(now)
            if isinstance(msg, LongPoll):
                self.handler.handle(msg)
                self._events.append(PollHandled(msg, None, False))
            return
        self._addressed(now)
        if frame == self._last_frame:  # the identical poll again = NACK: resend (sas.md §1)
            self._out += self._last_reply
            self._events.append(PollHandled(msg, None, True))
            return
        self._implied_ack(now)
        reply = self._reply(msg)
        if reply is None:  # unsupported: silence, nothing to repeat or acknowledge
            self._events.append(PollHandled(msg, None, False))
            return
        wire = encode_egm_message(reply)
        self._out += wire
        self._last_frame = frame
        self._last_reply = wire
        if not self._awaiting_ack:
            self._awaiting_ack = True
            self._unacked_since = now
        self._events.append(PollHandled(msg, reply, False))

    def _reply(self, msg: HostMessage) -> EgmMessage | None:
        code, data = self.queue.peek_event()
        pending = code != SasException.NO_ACTIVITY
        if isinstance(msg, GeneralPoll):
            self._unacked = code if pending else None
            if self.real_time and not pending and not self.real_time_idle_frame:
                return None  # §12.6: nothing to report, nothing sent
            if self.real_time:  # no activity too, as one platform sends it (real_time.py)
                return RealTimeEvent(self.address, code, data if pending else b"")
            return ExceptionReply(self.address, code)
        assert isinstance(msg, LongPoll)
        if isinstance(msg, RealTimeReporting) and self.real_time_capable:
            self.real_time = msg.enable
            return Ack(self.address)
        if self.real_time and pending:  # SAS 6.02 §12.3: the event before any reply
            self._unacked = code
            return RealTimeEvent(self.address, code, data)
        return self.handler.handle(msg)

    def next_deadline(self) -> float | None:
        s = self.settings
        if self.state is EgmState.CHIRPING:
            return self._next_chirp
        deadline = self._last_addressed + s.loop_break
        if self.state is EgmState.UP and self._awaiting_ack:
            deadline = min(deadline, self._unacked_since + s.ack_timeout)
        return deadline

    def handle_timers(self, now: float) -> None:
        s = self.settings
        if self.state is EgmState.CHIRPING:
            if now >= self._next_chirp:
                self._go(EgmInput.CHIRP_DUE)
                self._chirp(now)
            return
        if now >= self._last_addressed + s.loop_break:
            self._go(EgmInput.ADDRESS_SILENCE)
            self._events.append(LinkDown("no address"))
            self._chirp(now)
            return
        if (
            self.state is EgmState.UP
            and self._awaiting_ack
            and now >= self._unacked_since + s.ack_timeout
        ):
            self._go(EgmInput.ACK_SILENCE)
            self._events.append(LinkDown("no ack"))

    def _chirp(self, now: float) -> None:
        self._out += encode_egm_message(Chirp(self.address))
        self._next_chirp = now + self.settings.chirp_interval
