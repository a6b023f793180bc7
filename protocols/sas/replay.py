"""Replay a capture through the host's decoders and link state machine (pure).

``reelgate sas replay FILE`` (docs/sas.md, *Real machines*).  The host's bytes are
framed by the EGM-side parser (what did the host send?), then handed to a fresh
:class:`~protocols.sas.link.HostLink` as Reelgate would send them; the EGM's bytes go
into that link exactly as a carrier would deliver them.  Every link event becomes part of
the report: what each message was, what was odd, and what Reelgate would have done.

Time: the link's own timers run only when the capture moves on -- when the host of the
capture sent its next message, the link is first settled as Reelgate would have settled
it (a held ACK taken, a partial reply cut by the gap, silence repeated up to the tries
and given up).  A repeat in the capture (the identical poll again) is matched with the
link's own repeat.  A reply slower than the link's reply timeout is flagged, not failed:
a capture's own host may wait longer, and the report says what it would mean here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocols.sas.capture import EGM, HOST, CaptureRecord
from protocols.sas.codec import frame_poll
from protocols.sas.errors import ProtocolError
from protocols.sas.exception_codes import describe_exception
from protocols.sas.framer import HostFrameParser, OtherAddress, TrailingBytes
from protocols.sas.link import (
    HostLink,
    HostState,
    LinkSettings,
    PollFailed,
    PollReply,
    Retrying,
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
from protocols.sas.real_time import RealTimeEvent, RealTimeReporting

_FAILED = {
    "timeout": "no reply after every try: the request fails (SasTimeout)",
    "corrupt": "garbled on every try: the request fails (SasProtocolFault)",
    "nack": "NACK on every try: the request is refused (SasRefused)",
}


@dataclass(slots=True)
class Entry:
    """One line of the report: a run of bytes from the capture, or the link's own timer."""

    t: float
    direction: str  # "host", "egm" or "timer" (the link settled on its own)
    data: bytes
    what: list[str] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)
    action: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "t": round(self.t, 6),
            "dir": self.direction,
            "hex": self.data.hex(" "),
            "what": self.what,
            "odd": self.odd,
            "action": self.action,
        }


@dataclass(slots=True)
class Replay:
    entries: list[Entry] = field(default_factory=list)
    polls: int = 0
    replies: int = 0
    failures: int = 0
    retries: int = 0
    odd: int = 0
    trailing_bytes: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "polls": self.polls,
            "replies": self.replies,
            "retries": self.retries,
            "failures": self.failures,
            "odd": self.odd,
            "trailing_bytes": self.trailing_bytes,
        }


def describe(msg: HostMessage | EgmMessage) -> str:
    """A message in a few words: its kind and its fields."""
    if isinstance(msg, GeneralPoll):
        return f"general poll to {msg.addr}" if msg.addr else "sync (general poll to 0)"
    if isinstance(msg, ExceptionReply):
        return f"exception {msg.code:02X} {describe_exception(msg.code)}"
    if isinstance(msg, RealTimeEvent):
        return f"real-time event {msg.code:02X} {describe_exception(msg.code)}"
    if isinstance(msg, Ack | Nack | Busy | Chirp):
        return f"{type(msg).__name__.upper()} from {msg.addr}"
    values = [
        f"{f.name}={_value(getattr(msg, f.name))}"
        for f in dataclasses.fields(msg)
        if f.name not in ("addr", "quirks")
    ]
    name = type(msg).__name__
    if isinstance(msg, LongPoll):
        name = f"LP {msg.command():02X} {name}"
        if msg.addr == 0:
            name += " (broadcast)"
    text = f"{name}({', '.join(values)})"
    return text if len(text) <= 160 else text[:157] + "..."


class Replayer:
    """Feed records in order; :attr:`replay` holds the report (see the module doc)."""

    def __init__(self, settings: LinkSettings) -> None:
        self.settings = settings
        self.link = HostLink(settings)
        self.replay = Replay()
        self._host = HostFrameParser(None)
        self._real_time: set[int] = set()
        self._sent_at = 0.0  # when the poll in flight was (last) sent
        self._timer: Entry | None = None

    def feed(self, record: CaptureRecord) -> None:
        entry = Entry(record.t, record.direction, record.data)
        if record.error is not None:
            entry.odd.append(f"escaped stream broken: {record.error}")
        if record.direction == HOST:
            for ev in self._host.feed(record.escaped()):
                self._host_message(ev, entry)
        elif record.direction == EGM:
            self.link.receive_data(record.escaped(), record.t)
            self._events(entry)
        self._add(entry)

    def finish(self, t: float) -> Replay:
        """The capture ended: settle what is still in flight, as the link would."""
        self._settle(t, repeat_of=None)
        return self.replay

    # -- host side ---------------------------------------------------------------------
    def _host_message(self, ev: HostMessage | OtherAddress | ProtocolError, entry: Entry) -> None:
        if isinstance(ev, ProtocolError):
            entry.odd.append(f"host bytes that are no poll: {ev}")
            return
        if isinstance(ev, OtherAddress):
            entry.what.append("sync (general poll to 0): implied ACK")
            return
        entry.what.append(describe(ev))
        in_flight = self.link.poll_in_flight
        if in_flight is not None and frame_poll(in_flight).frame == frame_poll(ev).frame:
            # the capture's host repeated the poll: match it with the link's own repeat
            self._settle(entry.t, repeat_of=ev)
            if self.link.poll_in_flight is not None:
                entry.what[-1] += " (repeat: NACK)"
                self._sent_at = entry.t
                return
        self._settle(entry.t, repeat_of=None)
        real_time = ev.addr in self._real_time
        self.link.send(ev, entry.t, real_time=real_time)
        self._sent_at = entry.t
        if ev.addr:
            self.replay.polls += 1
        self._events(entry)

    def _settle(self, t: float, repeat_of: HostMessage | None) -> None:
        """Run the link's timers until it is idle, or (``repeat_of``) until it has sent
        its repeat of the poll in flight: what Reelgate does while the line is quiet."""
        link = self.link
        for _ in range(4 * self.settings.max_tries + 4):  # bounded: tries and gaps
            if link.state is HostState.IDLE:
                return
            deadline = link.next_deadline()
            if deadline is None:
                return
            before = link.data_to_send()
            assert not before
            entry = Entry(max(deadline, 0.0), "timer", b"")
            link.handle_timers(deadline)
            sent = link.data_to_send()
            self._events(entry)
            if entry.what or entry.odd or entry.action:
                self._add(entry)
            if sent and repeat_of is not None:
                return

    # -- what the link said ------------------------------------------------------------
    def _events(self, entry: Entry) -> None:
        r = self.replay
        for ev in self.link.events():
            if isinstance(ev, PollReply):
                r.replies += 1
                self._reply(ev, entry)
            elif isinstance(ev, TrailingBytes):
                r.trailing_bytes += len(ev.data)
                entry.odd.append(
                    f"{len(ev.data)} byte(s) after the reply to {_poll_name(ev.poll)}:"
                    f" {ev.data.hex(' ')}"
                )
                entry.action.append("flagged and counted (trailing bytes); the reply stands")
            elif isinstance(ev, Retrying):
                r.retries += 1
                entry.odd.append(f"{_poll_name(ev.poll)}: {_reason(ev.reason, ev.error)}")
                entry.action.append(f"repeats {_poll_name(ev.poll)} (try {ev.attempt})")
            elif isinstance(ev, PollFailed):
                r.failures += 1
                entry.odd.append(f"{_poll_name(ev.poll)}: {_reason(ev.reason, ev.error)}")
                entry.action.append(
                    f"{_poll_name(ev.poll)}: {_FAILED.get(ev.reason, ev.reason)} after"
                    f" {ev.tries} tries; in a heat the driver retries, then a malfunction (T20)"
                )
            elif isinstance(ev, Chirp):
                entry.what.append(describe(ev))
                entry.action.append("noted: the EGM says its loop broke (no poll for 5 s)")
            elif isinstance(ev, ProtocolError):
                entry.odd.append(f"bytes outside any reply: {ev}")

    def _reply(self, ev: PollReply, entry: Entry) -> None:
        reply, poll = ev.reply, ev.poll
        entry.what.append(f"{describe(reply)} (to {_poll_name(poll)}, try {ev.tries})")
        late = entry.t - self._sent_at
        if entry.t and late > self.settings.reply_timeout * 2 and not ev.silent:
            entry.odd.append(
                f"reply {late * 1000:.0f} ms after the poll"
                f" (Reelgate waits {self.settings.reply_timeout * 1000:.0f} ms, then repeats)"
            )
        for q in getattr(reply, "quirks", ()):
            entry.odd.append(f"{q.describe()}")
            entry.action.append(f"accepted; {q.field} shown as received (display only)")
        if isinstance(poll, RealTimeReporting) and isinstance(reply, Ack):
            (self._real_time.add if poll.enable else self._real_time.discard)(poll.addr)
        if ev.silent:
            entry.action.append("real-time mode: silence is no activity")
        elif isinstance(reply, Busy):
            entry.action.append("busy: asks again after the poll spacing (3 times in all)")
        elif isinstance(reply, RealTimeEvent) and isinstance(poll, LongPoll):
            entry.action.append("holds the event and asks again (the reply comes after)")
        elif not getattr(reply, "quirks", ()):
            entry.action.append("accepted")

    def _add(self, entry: Entry) -> None:
        if entry.odd:
            self.replay.odd += len(entry.odd)
        self.replay.entries.append(entry)


def _value(v: object) -> str:
    if isinstance(v, bytes):
        return v.hex(" ") or "(none)"
    return str(v) if isinstance(v, int) else repr(v)


def _poll_name(poll: HostMessage) -> str:
    if isinstance(poll, LongPoll):
        return f"LP {poll.command():02X}"
    return "the general poll"


def _reason(reason: str, error: ProtocolError | None) -> str:
    if error is not None:
        return f"{reason} ({error})"
    return {"timeout": "no reply in time", "nack": "NACK"}.get(reason, reason)


def replay(records: Iterable[CaptureRecord], settings: LinkSettings) -> Replay:
    """The report of a capture's records (in file order)."""
    r = Replayer(settings)
    last = 0.0
    for record in records:
        r.feed(record)
        last = record.t
    return r.finish(last)
