"""Sans-I/O codec for the roulette wheel's game-state line protocol.

Theory of operation (``../shared/reference/roulette-wheel.md``): the wheel writes ASCII
lines ending CR LF at 9600 8N1.  The line we act on is the game-state line::

    *X;<state>;<game number>;<winning number>;<warning flags, hex>;<rotor speed>;<direction>

e.g. ``*X;5;151;23;0;161;0``.  State 5 carries the winning number of that game; in the
other states the number field repeats the previous result and means nothing.  Other
line families (power, mode, self-test, calibration, statistics) start with ``*`` and
another letter; we surface them as :class:`OtherLine` without interpreting them.

Anything else is garbage: the framer and parser never raise on wire input, they return
:class:`Garbage` with a reason so the caller can count it (a noisy serial line must not
stop a draw).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

#: The number field of a double-zero wheel's "00" pocket.  Super 9 uses single-zero
#: wheels (S9-8: numbers 0 to 36); the debouncer rejects this value.
DOUBLE_ZERO = 37

#: Longest line we keep; a longer run of bytes without CR LF is a framing fault.
MAX_LINE = 128


class WheelState(enum.IntEnum):
    START_OF_GAME = 1
    PLACE_BETS = 2
    BALL_LAUNCHED = 3
    NO_MORE_BETS = 4
    WINNING_NUMBER = 5
    TABLE_CLOSED = 6  # one source reads it as "sensor error"


class WarningFlag(enum.IntFlag):
    """Warning bits of the flags field.

    The vendor's bit assignment is not public ([A] in the reference); these are the
    bits our emulator and debouncer agree on.  Any set bit on a state-5 line means the
    wheel itself does not vouch for the result, so it is never posted.
    """

    NONE = 0
    BALL_REMOVED = 0x01  # "ball removed, not sensed": forces a game restart
    MISFIRE = 0x02  # ball launch failed / too few revolutions (a misspin)
    WRONG_DIRECTION = 0x04  # ball spun with the rotor (S9-18)
    SENSOR_FAULT = 0x08


@dataclass(frozen=True, slots=True)
class GameStateLine:
    state: WheelState
    game: int
    number: int  # 0-36, or DOUBLE_ZERO
    flags: WarningFlag
    speed: int
    direction: int


@dataclass(frozen=True, slots=True)
class OtherLine:
    family: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Garbage:
    line: bytes
    reason: str


WheelLine = GameStateLine | OtherLine | Garbage


def _int_field(text: str, name: str, *, base: int = 10) -> int:
    if not text or not text.isascii() or text.strip() != text:
        raise ValueError(f"{name} field {text!r} is not a number")
    value = int(text, base)
    if value < 0:
        raise ValueError(f"{name} field {text!r} is negative")
    return value


def parse_line(raw: bytes) -> WheelLine:
    """One line (without CR LF) to an event; never raises on wire input."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return Garbage(raw, "not ASCII")
    if not text.startswith("*") or len(text) < 2 or not text[1].isalpha():
        return Garbage(raw, "does not start with '*' and a family letter")
    fields = text[1:].split(";")
    family = fields[0]
    if family != "X":
        return OtherLine(family, tuple(fields[1:]))
    if len(fields) != 7:
        return Garbage(raw, f"game-state line has {len(fields) - 1} fields, expected 6")
    try:
        state = WheelState(_int_field(fields[1], "state"))
        game = _int_field(fields[2], "game")
        number = DOUBLE_ZERO if fields[3] == "00" else _int_field(fields[3], "number")
        if fields[3] != "00" and number > 36:
            raise ValueError(f"number {number} is outside 0-36")
        flags = WarningFlag(_int_field(fields[4], "flags", base=16) & 0xFF)
        speed = _int_field(fields[5], "speed")
        direction = _int_field(fields[6], "direction")
    except ValueError as exc:
        return Garbage(raw, str(exc))
    return GameStateLine(state, game, number, flags, speed, direction)


def encode_line(line: GameStateLine) -> bytes:
    """The wire form of a game-state line (used by the emulator and tests)."""
    number = "00" if line.number == DOUBLE_ZERO else str(line.number)
    return (
        f"*X;{int(line.state)};{line.game};{number};{int(line.flags):X};"
        f"{line.speed};{line.direction}\r\n"
    ).encode("ascii")


class LineFramer:
    """Bytes in, complete lines out.

    Resync cases: a bare LF or bare CR also ends a line (some converters drop one of
    the pair); empty lines are skipped; a run longer than :data:`MAX_LINE` without a
    terminator is dropped as one :class:`Garbage` and framing restarts at the next
    terminator.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._overlong = False

    def feed(self, data: bytes) -> list[WheelLine]:
        out: list[WheelLine] = []
        for byte in data:
            if byte in (0x0D, 0x0A):
                if self._overlong:
                    out.append(Garbage(bytes(self._buf[:MAX_LINE]), "line too long"))
                elif self._buf:
                    out.append(parse_line(bytes(self._buf)))
                self._buf.clear()
                self._overlong = False
            elif len(self._buf) >= MAX_LINE:
                self._overlong = True
            else:
                self._buf.append(byte)
        return out
