"""SAS real-time event reporting (RTE, SAS 6.02 §12): LP 0E and the event frames.

With RTE on (LP 0E ``enable`` 01, ACK), an EGM answers a general poll with an *event
frame* ``addr FF code [data] CRC`` instead of one exception byte, and reports a pending
event in place of a long poll's reply (the host takes the long poll as unanswered and
asks again).  Two events carry what a live credit display needs, with no meter read:

* **7E game started**: credits wagered (2 BCD), the coin-in meter after the bet (4 BCD),
  wager type (1 binary), progressive group (1 binary);
* **7F game ended**: the game's win (4 BCD), bonus awards excluded.

Sources: the layouts of 7E and 7F are those of SAS 6.02 §12.5 as two independent
summaries give them (field names, and the byte widths of one EGM platform's encoder)
[S]; the other events' data lengths are our reading of §12.5's field lists [A], kept in
:data:`REAL_TIME_DATA_LENGTHS` alone.  An event frame carries no length byte: its length
follows from its code, so a code not in the table is framed by the line going quiet
(:meth:`protocols.sas.framer.ReplyParser.gap`), never guessed.

"No activity" in RTE mode: §12.6 says 00 and 1F are not reported (nothing is sent);
one EGM platform answers ``addr FF 00 CRC``.  The host takes both as no activity
(:mod:`protocols.sas.link` settles a general poll in RTE mode that every try met with
silence as no activity, not as a timeout); the emulator sends the frame.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.crc import append_crc, check_crc
from protocols.sas.errors import CrcError, FieldError, LengthError, ProtocolError
from protocols.sas.exception_codes import SasException
from protocols.sas.messages import EgmMessage, LongPoll, _check_addr, _need

REAL_TIME_EVENT = 0xFF
"""The second byte of an event frame (where a reply carries its poll's command)."""

GAME_STARTED = SasException.GAME_STARTED
GAME_ENDED = SasException.GAME_ENDED

REAL_TIME_DATA_LENGTHS: dict[int, int] = {
    0x00: 0,  # no activity, as one platform sends it [S]
    GAME_STARTED: 8,  # wagered 2 BCD, coin in 4 BCD, wager type 1, progressive group 1 [S]
    GAME_ENDED: 4,  # game win 4 BCD [S]
    0x4F: 6,  # bill accepted: country 1 BCD, denomination 1 BCD, bills of that kind 4 BCD [A]
    0x7C: 10,  # legacy bonus: multiplier 1, multiplied win 4 BCD, tax status 1, bonus 4 BCD [A]
    0x88: 2,  # reel N stopped: reel 1, physical stop 1 [A]
    0x8A: 4,  # game recall entry shown: game 2 BCD, recall index 2 BCD [A]
    0x8B: 1,  # card held / not held: card number and held bit [A]
    0x8C: 2,  # game selected: game number 2 BCD [A]
}
"""Data bytes after the code, by event code; every code of sas.md §4 not listed carries
none (doors, tilts, power, handpay ...)."""

NO_DATA_CODES = frozenset(
    code for code in (int(c) for c in SasException) if code not in REAL_TIME_DATA_LENGTHS
)
"""Exception codes whose event frame is ``addr FF code CRC`` [S] (sas.md §4's list)."""


def data_length(code: int) -> int | None:
    """The data bytes of event ``code``, None when unknown (frame it by the line's gap)."""
    if code in REAL_TIME_DATA_LENGTHS:
        return REAL_TIME_DATA_LENGTHS[code]
    return 0 if code in NO_DATA_CODES else None


@dataclass(frozen=True, slots=True)
class RealTimeReporting(LongPoll):
    """LP 0E: real-time event reporting on (``enable``) or off.  Type S; reply: ACK.
    An EGM without RTE stays silent (an unsupported poll)."""

    CODE: ClassVar[int] = 0x0E
    enable: bool

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if not isinstance(self.enable, bool):
            raise FieldError(f"enable must be a bool, not {self.enable!r}")

    def body(self) -> bytes:
        return b"\x01" if self.enable else b"\x00"

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 1, "LP 0E")
        if body[0] not in (0, 1):
            raise FieldError(f"LP 0E enable must be 00 or 01, not {body[0]:02X}", body)
        return cls(addr, body[0] == 1)


@dataclass(frozen=True, slots=True)
class RealTimeEvent(EgmMessage):
    """An event frame ``addr FF code data CRC``; code 00 is "no activity".  For 7E and 7F
    the data is checked here and read through the properties."""

    code: int
    data: bytes = b""

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if not isinstance(self.code, int) or not 0 <= self.code <= 0xFF:
            raise FieldError(f"event code must be 0..255, not {self.code!r}")
        want = data_length(self.code)
        if want is not None and len(self.data) != want:
            raise LengthError(
                f"event {self.code:02X} carries {want} data bytes, not {len(self.data)}",
                bytes(self.data),
            )
        if self.code == GAME_STARTED:
            bcd_decode(self.data[:6])  # raises BcdError on a bad nibble
        elif self.code == GAME_ENDED:
            bcd_decode(self.data)

    @classmethod
    def game_started(
        cls,
        addr: int,
        credits_wagered: int,
        coin_in: int,
        wager_type: int = 0,
        progressive_group: int = 0,
    ) -> RealTimeEvent:
        for name, value in (("wager type", wager_type), ("progressive group", progressive_group)):
            if not isinstance(value, int) or not 0 <= value <= 0xFF:
                raise FieldError(f"{name} must be 0..255, not {value!r}")
        data = bcd_encode(credits_wagered, 2) + bcd_encode(coin_in, 4)
        return cls(addr, GAME_STARTED, data + bytes((wager_type, progressive_group)))

    @classmethod
    def game_ended(cls, addr: int, win: int) -> RealTimeEvent:
        return cls(addr, GAME_ENDED, bcd_encode(win, 4))

    @property
    def credits_wagered(self) -> int | None:
        """7E: the credits this game wagered (None for any other event)."""
        return bcd_decode(self.data[0:2]) if self.code == GAME_STARTED else None

    @property
    def coin_in(self) -> int | None:
        """7E: the coin-in meter (credits) after this game's bet."""
        return bcd_decode(self.data[2:6]) if self.code == GAME_STARTED else None

    @property
    def win(self) -> int | None:
        """7F: the credits this game won (None for any other event)."""
        return bcd_decode(self.data) if self.code == GAME_ENDED else None

    def encode(self) -> bytes:
        return append_crc(bytes((self.addr, REAL_TIME_EVENT, self.code)) + self.data)


def decode_real_time(frame: bytes, addr: int) -> RealTimeEvent:
    """A complete, unescaped event frame from EGM ``addr`` -> :class:`RealTimeEvent`;
    raises a :class:`~protocols.sas.errors.ProtocolError` subclass on bad input."""
    if len(frame) < 5 or frame[1] != REAL_TIME_EVENT:
        raise LengthError("an event frame is addr FF code [data] CRC, 5 bytes at least", frame)
    if frame[0] != addr:
        raise FieldError(f"event frame from address {frame[0]:02X}, polled {addr:02X}", frame)
    want = data_length(frame[2])
    if want is not None and len(frame) != 5 + want:
        raise LengthError(
            f"event {frame[2]:02X} frame is {len(frame)} bytes, not {5 + want}", frame
        )
    if not check_crc(frame):
        raise CrcError(f"event {frame[2]:02X}: bad CRC", frame)
    try:
        return RealTimeEvent(addr, frame[2], bytes(frame[3:-2]))
    except ProtocolError as exc:  # a bad BCD nibble: carry the whole frame
        raise type(exc)(str(exc.args[0]), frame) from None


class IdleAnswer(enum.Enum):
    """How an EGM in RTE mode answers a general poll when it has nothing to report."""

    UNKNOWN = "unknown"
    FRAME = "frame"  # addr FF 00 (one platform), or a lone 00
    SILENCE = "silence"  # nothing at all (§12.6)


class RealTimeLiveness:
    """Whether silence from an EGM in RTE mode is "no activity" or a machine gone quiet,
    and how to read its events so that a machine that stops answering is found as fast
    as outside RTE mode.  Pure: time is passed in (``now``, any monotonic float, s).

    Outside RTE mode a general poll met with silence on every try is a failed poll.  In
    RTE mode an EGM with nothing to report may send nothing (§12.6), so silence alone
    proves nothing.  Hence:

    * Events are read by a long poll (:attr:`drain_by_long_poll`): a real-time EGM sends
      its pending events in place of a long poll's reply, and the reply once none is left
      (§12.3), so one long poll drains the queue *and* shows the EGM answers.  It fails,
      as a general poll outside RTE mode does, when the EGM stops answering.  A silent
      general poll would cost every try's reply timeout besides (3 x 200 ms over TCP);
      the long poll's reply is a few characters more than an ``addr FF 00`` frame.
    * An EGM seen answering a general poll with an explicit "no activity" (``addr FF
      00``, or a lone 00) says so every time [A] (:attr:`idle` ``FRAME``): its silence is
      a failed poll, as outside RTE mode, and general polls may drain it.
    * Otherwise a silent general poll is "no activity" only while the EGM answered
      something (a reply, an ACK, an event) within ``2 * failure_after``, and a caller
      about to general-poll sends a long poll first once it has answered nothing for
      ``failure_after`` (:meth:`probe_due`).

    ``failure_after``: how long a poll takes to fail outside RTE mode (every try's reply
    timeout), the yardstick of "recently".
    """

    __slots__ = ("failure_after", "idle", "last_answer")

    def __init__(self, now: float, failure_after: float) -> None:
        if failure_after <= 0:
            raise ValueError("failure_after must be > 0")
        self.failure_after = failure_after
        self.last_answer = now  # RTE was just turned on: the EGM acknowledged LP 0E
        self.idle = IdleAnswer.UNKNOWN

    @property
    def drain_by_long_poll(self) -> bool:
        """Read events by a long poll: the EGM may be silent when idle."""
        return self.idle is not IdleAnswer.FRAME

    def answered(self, now: float) -> None:
        """The EGM answered a poll (any reply but silence)."""
        self.last_answer = max(self.last_answer, now)

    def said_no_activity(self, now: float) -> None:
        """A general poll was answered with an explicit "no activity"."""
        self.idle = IdleAnswer.FRAME
        self.answered(now)

    def probe_due(self, now: float) -> bool:
        """Send a long poll before a general poll: the EGM has said nothing so long that
        a silent general poll after it could not be trusted."""
        return self.idle is not IdleAnswer.FRAME and now - self.last_answer >= self.failure_after

    def silence(self, now: float) -> bool:
        """A general poll met silence on every try: True if that is "no activity", False
        if it is a failed poll (the machine stopped answering)."""
        if self.idle is IdleAnswer.FRAME or now - self.last_answer > 2 * self.failure_after:
            return False
        self.idle = IdleAnswer.SILENCE
        return True
