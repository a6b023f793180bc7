"""SAS messages as frozen dataclasses: host polls and EGM replies.

Every message knows its frame (``encode()``, unescaped, address to CRC).  Decoding lives
in :mod:`protocols.sas.codec`, which also owns the ``code -> class`` registries.

Host side: :class:`GeneralPoll` and one :class:`LongPoll` subclass per long poll.
EGM side: :class:`Ack`, :class:`Nack`, :class:`Busy`, :class:`ExceptionReply`,
:class:`Chirp` (loop-break address with wakeup) and one :class:`DataReply` subclass per
data reply.  Fields are ints (credits, counts), ``str`` for ASCII, ``datetime`` for the
EGM's wall clock.  The LP 8C layout comes from :mod:`protocols.sas.tournament_layout` [A].

Lenient where SAS allows, strict where money is: a *display-only* field (LP 1F's game,
additional and paytable IDs and base percent, LP 54's version and serial) that breaks its
format is kept as received -- a :class:`FieldQuirk` in the reply's ``quirks`` carries its
raw bytes, the field's text is their hex -- and never fails the reply.  Every field that
carries credits, meters, scores, AFT amounts or status stays strict: a bad one is a
:class:`~protocols.sas.errors.ProtocolError`, and the link asks again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields
from typing import ClassVar

from protocols.sas import tournament_layout as tl
from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.crc import append_crc
from protocols.sas.errors import FieldError, LengthError
from protocols.sas.exception_codes import SasException
from protocols.sas.polls import (
    POLLS,
    SELECTED_METER_WIDTH,
    SELECTED_METER_WIDTHS,
    PollType,
    ReplyKind,
)


def _check_addr(addr: int, low: int = 0) -> None:
    if not isinstance(addr, int) or not low <= addr <= 127:
        raise FieldError(f"SAS address must be {low}..127, not {addr!r}")


def _ascii(text: str, width: int | None, name: str) -> bytes:
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        raise FieldError(f"{name} must be ASCII, not {text!r}") from None
    if width is not None and len(raw) != width:
        raise FieldError(f"{name} must be {width} ASCII characters, not {text!r}")
    return raw


def _text(raw: bytes, name: str) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise FieldError(f"{name} is not ASCII: {raw.hex(' ')}", raw) from None


@dataclass(frozen=True, slots=True)
class FieldQuirk:
    """A display-only field that broke its format, kept as received (see the module doc).
    ``field`` names it as SAS does ("base percent"); ``why`` says what it is not."""

    field: str
    raw: bytes
    why: str

    def describe(self) -> str:
        return f"{self.field} {self.why}: {self.raw.hex(' ') or '(empty)'}"


def _display(raw: bytes, name: str, quirks: list[FieldQuirk], *, digits: bool = False) -> str:
    """A display-only field's text; one that breaks its format (ASCII, or ASCII digits)
    is noted in ``quirks`` with its raw bytes, and its text is their hex."""
    text = raw.decode("ascii") if raw.isascii() else None
    if text is None or (digits and not text.isdigit()):
        why = "is not ASCII digits" if digits else "is not ASCII"
        quirks.append(FieldQuirk(name, bytes(raw), why))
        return raw.hex(" ")
    return text


def _display_bytes(
    text: str, width: int | None, name: str, quirks: tuple[FieldQuirk, ...]
) -> bytes:
    """A display-only field's wire bytes: as received when it is a quirk, else ASCII."""
    for quirk in quirks:
        if quirk.field == name:
            if width is not None and len(quirk.raw) != width:
                raise FieldError(f"{name} as received must be {width} bytes, not {quirk.raw!r}")
            return quirk.raw
    return _ascii(text, width, name)


def _check_display(msg: object, display: dict[str, tuple[str, bool]]) -> None:
    """Display fields agree with their quirks: a quirk's bytes really break the format and
    the field's text is their hex; a field without one keeps the format (so a reply
    decodes back to itself)."""
    quirks = getattr(msg, "quirks", ())
    if not isinstance(quirks, tuple):
        raise FieldError(f"quirks must be a tuple, not {quirks!r}")
    seen: set[str] = set()
    for q in quirks:
        if not isinstance(q, FieldQuirk) or q.field not in display or q.field in seen:
            raise FieldError(f"no display-only field for {q!r} (fields: {', '.join(display)})")
        if not isinstance(q.raw, bytes):
            raise FieldError(f"{q.field} as received must be bytes, not {q.raw!r}")
        seen.add(q.field)
        attr, digits = display[q.field]
        flagged: list[FieldQuirk] = []
        _display(q.raw, q.field, flagged, digits=digits)
        if flagged != [q]:
            raise FieldError(f"{q.field} {q.raw.hex(' ')} is no such quirk: {q.why!r}")
        if getattr(msg, attr) != q.raw.hex(" "):
            raise FieldError(f"{q.field} as received reads {q.raw.hex(' ')!r}")
    for name, (attr, digits) in display.items():
        text = getattr(msg, attr)
        if (
            name not in seen
            and digits
            and not (isinstance(text, str) and text.isascii() and text.isdigit())
        ):
            raise FieldError(f"{name} must be ASCII digits, not {text!r}")


def _need(body: bytes, length: int, what: str) -> None:
    if len(body) != length:
        raise LengthError(f"{what}: body must be {length} bytes, not {len(body)}", body)


def _byte(value: int, name: str) -> int:
    if not isinstance(value, int) or not 0 <= value <= 0xFF:
        raise FieldError(f"{name} must be 0..255, not {value!r}")
    return value


# --- date and time (LP 7E reply, LP 7F) -----------------------------------------------


def _encode_datetime(when: dt.datetime) -> bytes:
    return (
        bcd_encode(when.month, 1)
        + bcd_encode(when.day, 1)
        + bcd_encode(when.year, 2)
        + bcd_encode(when.hour, 1)
        + bcd_encode(when.minute, 1)
        + bcd_encode(when.second, 1)
    )


def _decode_datetime(raw: bytes) -> dt.datetime:
    month, day, year = bcd_decode(raw[0:1]), bcd_decode(raw[1:2]), bcd_decode(raw[2:4])
    hour, minute, second = bcd_decode(raw[4:5]), bcd_decode(raw[5:6]), bcd_decode(raw[6:7])
    try:
        return dt.datetime(year, month, day, hour, minute, second)
    except ValueError as exc:
        raise FieldError(f"invalid date/time {raw.hex(' ')}: {exc}", raw) from None


def _check_wall_clock(when: dt.datetime) -> None:
    if not isinstance(when, dt.datetime):
        raise FieldError(f"date/time must be a datetime, not {type(when).__name__}")
    if when.tzinfo is not None:
        raise FieldError(
            "EGM clocks have no time zone: pass the venue's wall time, "
            "e.g. now.astimezone(zone).replace(tzinfo=None, microsecond=0)"
        )
    if when.microsecond:
        raise FieldError("SAS date/time has whole seconds: use .replace(microsecond=0)")


# --- host messages ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostMessage:
    """Anything the host sends; ``addr`` 0 is the global broadcast address."""

    addr: int

    def __post_init__(self) -> None:
        _check_addr(self.addr)

    def encode(self) -> bytes:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class GeneralPoll(HostMessage):
    """``80|addr``, no CRC.  ``GeneralPoll(0)`` (byte 80) is answered by nobody: the host
    uses it as a sync that implies ACK for every EGM on the loop (sas.md §1)."""

    def encode(self) -> bytes:
        return bytes((0x80 | self.addr,))


@dataclass(frozen=True, slots=True)
class LongPoll(HostMessage):
    """``addr cmd [len] [data] [CRC]`` framed by the poll table."""

    CODE: ClassVar[int] = 0

    def __post_init__(self) -> None:
        # Address 0 only for polls the table allows to broadcast: what the EGM-side
        # decoder would refuse is refused here too, before it reaches the wire.
        _check_addr(self.addr, 0 if POLLS[self.command()].broadcast else 1)

    def command(self) -> int:
        return self.CODE

    def body(self) -> bytes:
        return b""

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 0, f"LP {code:02X}")
        return cls(addr)

    def encode(self) -> bytes:
        code = self.command()
        spec = POLLS[code]
        if spec.type is PollType.R:
            return bytes((self.addr, code))
        body = self.body()
        if spec.host_length is None:
            return append_crc(bytes((self.addr, code, len(body))) + body)
        return append_crc(bytes((self.addr, code)) + body)


@dataclass(frozen=True, slots=True)
class Shutdown(LongPoll):
    """LP 01: lock out play (a game in progress completes first).  Reply: ACK."""

    CODE: ClassVar[int] = 0x01


@dataclass(frozen=True, slots=True)
class Startup(LongPoll):
    """LP 02: enable play.  Reply: ACK."""

    CODE: ClassVar[int] = 0x02


@dataclass(frozen=True, slots=True)
class SendMeters(LongPoll):
    """LP 0F: meters 10-15.  Reply: :class:`MetersReply`."""

    CODE: ClassVar[int] = 0x0F


@dataclass(frozen=True, slots=True)
class SendCurrentCredits(LongPoll):
    """LP 1A.  Reply: :class:`CurrentCreditsReply`."""

    CODE: ClassVar[int] = 0x1A


@dataclass(frozen=True, slots=True)
class SendGamingMachineMeters(LongPoll):
    """LP 1C.  Reply: :class:`GamingMachineMetersReply`."""

    CODE: ClassVar[int] = 0x1C


@dataclass(frozen=True, slots=True)
class SendMachineInfo(LongPoll):
    """LP 1F.  Reply: :class:`MachineInfoReply`."""

    CODE: ClassVar[int] = 0x1F


@dataclass(frozen=True, slots=True)
class SendVersion(LongPoll):
    """LP 54.  Reply: :class:`VersionReply`."""

    CODE: ClassVar[int] = 0x54


@dataclass(frozen=True, slots=True)
class SendDateTime(LongPoll):
    """LP 7E.  Reply: :class:`DateTimeReply`."""

    CODE: ClassVar[int] = 0x7E


@dataclass(frozen=True, slots=True)
class RemoteHandpayReset(LongPoll):
    """LP 94.  Reply: ACK."""

    CODE: ClassVar[int] = 0x94


@dataclass(frozen=True, slots=True)
class SetDateTime(LongPoll):
    """LP 7F: set the EGM clock (naive venue wall time).  Address 0 broadcasts it (no
    reply); addressed, the reply is ACK."""

    CODE: ClassVar[int] = 0x7F
    when: dt.datetime

    def __post_init__(self) -> None:
        _check_addr(self.addr)
        _check_wall_clock(self.when)

    def body(self) -> bytes:
        return _encode_datetime(self.when)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 7, "LP 7F")
        return cls(addr, _decode_datetime(body))


@dataclass(frozen=True, slots=True)
class _GamePoll(LongPoll):
    """A poll whose only data is the game number (2 BCD; 0 = the whole machine)."""

    game: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if not isinstance(self.game, int) or not 0 <= self.game <= 9999:
            raise FieldError(f"game number must be 0..9999, not {self.game!r}")

    def body(self) -> bytes:
        return bcd_encode(self.game, 2)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 2, f"LP {code:02X}")
        return cls(addr, bcd_decode(body))


@dataclass(frozen=True, slots=True)
class SendEnabledFeatures(_GamePoll):
    """LP A0.  Reply: :class:`EnabledFeaturesReply` (tournament support bit)."""

    CODE: ClassVar[int] = 0xA0


@dataclass(frozen=True, slots=True)
class SendTournamentMeters(_GamePoll):
    """LP 99: the four tournament meters.  Reply: :class:`TournamentMetersReply`."""

    CODE: ClassVar[int] = 0x99


TOURNAMENT_METER_CODES = (0x95, 0x96, 0x97, 0x98)
"""Games played, games won, credits wagered, credits won."""


@dataclass(frozen=True, slots=True)
class SendTournamentMeter(LongPoll):
    """LP 95/96/97/98: one tournament meter.  Reply: :class:`TournamentMeterReply`."""

    meter: int  # the poll code, one of TOURNAMENT_METER_CODES
    game: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if self.meter not in TOURNAMENT_METER_CODES:
            raise FieldError(f"tournament meter poll must be 95..98, not {self.meter!r}")
        if not isinstance(self.game, int) or not 0 <= self.game <= 9999:
            raise FieldError(f"game number must be 0..9999, not {self.game!r}")

    def command(self) -> int:
        return self.meter

    def body(self) -> bytes:
        return bcd_encode(self.game, 2)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 2, f"LP {code:02X}")
        return cls(addr, code, bcd_decode(body))


@dataclass(frozen=True, slots=True)
class TournamentMode(LongPoll):
    """LP 8C: enter tournament mode with a time limit and starting credits; with time
    00:00 and 0 credits it means exit [A].  Layout in :mod:`tournament_layout` [A].
    Tournament credits are play-only and never cashable (T12 and T18).
    Reply: ACK / NACK / busy (busy while a game, transfer, tilt or handpay finishes)."""

    CODE: ClassVar[int] = 0x8C
    game: int
    minutes: int
    seconds: int
    credits: int
    pulses: bool = False

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        # validate by encoding once: the layout module owns the ranges
        tl.encode_tournament_mode(self.game, self.minutes, self.seconds, self.credits, self.pulses)

    @classmethod
    def enter(
        cls, addr: int, game: int, seconds_total: int, credits: int, pulses: bool = False
    ) -> TournamentMode:
        minutes, seconds = divmod(seconds_total, 60)
        return cls(addr, game, minutes, seconds, credits, pulses)

    @classmethod
    def exit(cls, addr: int, game: int = 0) -> TournamentMode:
        return cls(addr, game, 0, 0, 0, False)

    @property
    def is_exit(self) -> bool:
        return self.minutes == 0 and self.seconds == 0 and self.credits == 0

    @property
    def duration_seconds(self) -> int:
        return self.minutes * 60 + self.seconds

    def body(self) -> bytes:
        return tl.encode_tournament_mode(
            self.game, self.minutes, self.seconds, self.credits, self.pulses
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        return cls(addr, *tl.decode_tournament_mode(body))


@dataclass(frozen=True, slots=True)
class SendSelectedMeters(LongPoll):
    """LP 2F: up to ten meters by meter code for one game.  Reply:
    :class:`SelectedMetersReply`."""

    CODE: ClassVar[int] = 0x2F
    game: int
    codes: tuple[int, ...]

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if not isinstance(self.game, int) or not 0 <= self.game <= 9999:
            raise FieldError(f"game number must be 0..9999, not {self.game!r}")
        if not 1 <= len(self.codes) <= 10:
            raise FieldError(f"LP 2F asks for 1..10 meters, not {len(self.codes)}")
        for c in self.codes:
            _byte(c, "meter code")

    def body(self) -> bytes:
        return bcd_encode(self.game, 2) + bytes(self.codes)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        if len(body) < 3:
            raise LengthError("LP 2F needs a game number and at least one meter code", body)
        return cls(addr, bcd_decode(body[:2]), tuple(body[2:]))


# --- EGM messages -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EgmMessage:
    """Anything an EGM sends; ``addr`` is the EGM's own address (1..127)."""

    addr: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)

    def encode(self) -> bytes:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Ack(EgmMessage):
    def encode(self) -> bytes:
        return bytes((self.addr,))


@dataclass(frozen=True, slots=True)
class Nack(EgmMessage):
    """Bad CRC or invalid data in the host's message."""

    def encode(self) -> bytes:
        return bytes((self.addr | 0x80,))


@dataclass(frozen=True, slots=True)
class Busy(EgmMessage):
    """The EGM cannot act now; the host retries later."""

    def encode(self) -> bytes:
        return bytes((self.addr, 0))


@dataclass(frozen=True, slots=True)
class Chirp(EgmMessage):
    """Loop break: the EGM sends its own address with the wakeup bit (sas.md §1)."""

    def encode(self) -> bytes:
        return bytes((self.addr,))


@dataclass(frozen=True, slots=True)
class ExceptionReply(EgmMessage):
    """The one-byte answer to a general poll (no address, no CRC on the wire)."""

    code: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        _byte(self.code, "exception code")

    @property
    def exception(self) -> SasException | None:
        try:
            return SasException(self.code)
        except ValueError:
            return None

    def encode(self) -> bytes:
        return bytes((self.code,))


@dataclass(frozen=True, slots=True)
class DataReply(EgmMessage):
    """``addr cmd [len] data CRC`` framed by the poll table."""

    CODE: ClassVar[int] = 0

    def command(self) -> int:
        return self.CODE

    def body(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        raise NotImplementedError

    def encode(self) -> bytes:
        code = self.command()
        spec = POLLS[code]
        body = self.body()
        if spec.reply is ReplyKind.LENGTH_BYTE:
            if len(body) > 255:
                raise LengthError(f"LP {code:02X} reply body of {len(body)} bytes > 255")
            return append_crc(bytes((self.addr, code, len(body))) + body)
        return append_crc(bytes((self.addr, code)) + body)


@dataclass(frozen=True, slots=True)
class _BcdMetersReply(DataReply):
    """A reply that is nothing but 4-byte BCD meters, in field order."""

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()  # range check every meter now, not at send time

    @classmethod
    def _meter_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name != "addr")

    def body(self) -> bytes:
        return b"".join(bcd_encode(getattr(self, n), 4) for n in self._meter_names())

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        names = cls._meter_names()
        _need(body, 4 * len(names), f"LP {code:02X} reply")
        return cls(addr, *(bcd_decode(body[i : i + 4]) for i in range(0, len(body), 4)))


@dataclass(frozen=True, slots=True)
class MetersReply(_BcdMetersReply):
    """LP 0F reply (credits)."""

    CODE: ClassVar[int] = 0x0F
    cancelled_credits: int
    coin_in: int
    coin_out: int
    drop: int
    jackpot: int
    games_played: int


@dataclass(frozen=True, slots=True)
class GamingMachineMetersReply(_BcdMetersReply):
    """LP 1C reply."""

    CODE: ClassVar[int] = 0x1C
    coin_in: int
    coin_out: int
    drop: int
    jackpot: int
    games_played: int
    games_won: int
    slot_door_opened: int
    power_resets: int


@dataclass(frozen=True, slots=True)
class CurrentCreditsReply(DataReply):
    """LP 1A reply: the credit meter (the host-timed fallback scores from it)."""

    CODE: ClassVar[int] = 0x1A
    credits: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        bcd_encode(self.credits, 4)

    def body(self) -> bytes:
        return bcd_encode(self.credits, 4)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, 4, "LP 1A reply")
        return cls(addr, bcd_decode(body))


@dataclass(frozen=True, slots=True)
class MachineInfoReply(DataReply):
    """LP 1F reply: IDs, denomination code, max bet, options, paytable, base percent."""

    CODE: ClassVar[int] = 0x1F
    game_id: str  # 2 ASCII
    additional_id: str  # 3 ASCII
    denomination: int  # SAS denomination code
    max_bet: int
    progressive_group: int
    game_options: int  # 2 bytes binary, LSB first
    paytable_id: str  # 6 ASCII
    base_percent: str  # 4 ASCII digits, e.g. "9250" = 92.50 %
    # display-only fields that broke their format, as received (the module doc)
    quirks: tuple[FieldQuirk, ...] = ()

    DISPLAY: ClassVar[dict[str, tuple[str, bool]]] = {  # SAS's name: (field, digits only)
        "game ID": ("game_id", False),
        "additional ID": ("additional_id", False),
        "paytable ID": ("paytable_id", False),
        "base percent": ("base_percent", True),
    }

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        _check_display(self, self.DISPLAY)
        self.body()

    def body(self) -> bytes:
        if not isinstance(self.game_options, int) or not 0 <= self.game_options <= 0xFFFF:
            raise FieldError(f"game options must be 0..65535, not {self.game_options!r}")
        q = self.quirks
        return (
            _display_bytes(self.game_id, 2, "game ID", q)
            + _display_bytes(self.additional_id, 3, "additional ID", q)
            + bytes(
                (
                    _byte(self.denomination, "denomination"),
                    _byte(self.max_bet, "max bet"),
                    _byte(self.progressive_group, "progressive group"),
                )
            )
            + self.game_options.to_bytes(2, "little")
            + _display_bytes(self.paytable_id, 6, "paytable ID", q)
            + _display_bytes(self.base_percent, 4, "base percent", q)
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, 20, "LP 1F reply")  # the frame's length is not display: strict
        q: list[FieldQuirk] = []
        return cls(
            addr,
            _display(body[0:2], "game ID", q),
            _display(body[2:5], "additional ID", q),
            body[5],
            body[6],
            body[7],
            int.from_bytes(body[8:10], "little"),
            _display(body[10:16], "paytable ID", q),
            _display(body[16:20], "base percent", q, digits=True),
            tuple(q),
        )


@dataclass(frozen=True, slots=True)
class VersionReply(DataReply):
    """LP 54 reply: SAS version (3 ASCII, "602") and serial number (0-40 ASCII)."""

    CODE: ClassVar[int] = 0x54
    version: str
    serial: str
    quirks: tuple[FieldQuirk, ...] = ()  # display-only fields as received (module doc)

    DISPLAY: ClassVar[dict[str, tuple[str, bool]]] = {
        "SAS version": ("version", False),
        "serial number": ("serial", False),
    }

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        _check_display(self, self.DISPLAY)
        self.body()

    def body(self) -> bytes:
        serial = _display_bytes(self.serial, None, "serial number", self.quirks)
        if len(serial) > 40:
            raise FieldError(f"serial number is at most 40 characters, not {len(serial)}")
        return _display_bytes(self.version, 3, "SAS version", self.quirks) + serial

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        if not 3 <= len(body) <= 43:
            raise LengthError(f"LP 54 reply body must be 3..43 bytes, not {len(body)}", body)
        q: list[FieldQuirk] = []
        version = _display(body[:3], "SAS version", q)
        return cls(addr, version, _display(body[3:], "serial number", q), tuple(q))


@dataclass(frozen=True, slots=True)
class DateTimeReply(DataReply):
    """LP 7E reply: the EGM's wall clock (no time zone)."""

    CODE: ClassVar[int] = 0x7E
    when: dt.datetime

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        _check_wall_clock(self.when)

    def body(self) -> bytes:
        return _encode_datetime(self.when)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, 7, "LP 7E reply")
        return cls(addr, _decode_datetime(body))


# LP A0 feature bits, one place for host and emulator alike.
TOURNAMENT_SUPPORTED_BIT = 0x08  # features byte 1, bit 3 (sas.md §3)
AFT_SUPPORTED_BIT = 0x40  # features byte 2, bit 6: AFT (LP 72/74), the fallback's loader


@dataclass(frozen=True, slots=True)
class EnabledFeaturesReply(DataReply):
    """LP A0 reply: game number and the feature bytes (12-byte frame)."""

    CODE: ClassVar[int] = 0xA0
    game: int
    features: bytes  # 6 bytes: features 1.. as sent

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @property
    def tournament_supported(self) -> bool:
        return bool(self.features[0] & TOURNAMENT_SUPPORTED_BIT)

    @property
    def aft_supported(self) -> bool:
        return bool(self.features[1] & AFT_SUPPORTED_BIT)

    def body(self) -> bytes:
        if not isinstance(self.features, bytes) or len(self.features) != 6:
            raise FieldError(f"LP A0 features must be 6 bytes, not {self.features!r}")
        return bcd_encode(self.game, 2) + self.features

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, 8, "LP A0 reply")
        return cls(addr, bcd_decode(body[:2]), bytes(body[2:]))


@dataclass(frozen=True, slots=True)
class TournamentMeterReply(DataReply):
    """LP 95..98 reply [A]: ``game(2 BCD) meter(4 BCD)``."""

    meter: int  # the poll code it answers
    game: int
    value: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        if self.meter not in TOURNAMENT_METER_CODES:
            raise FieldError(f"tournament meter reply must be 95..98, not {self.meter!r}")
        self.body()

    def command(self) -> int:
        return self.meter

    def body(self) -> bytes:
        return bcd_encode(self.game, 2) + bcd_encode(self.value, tl.METER_WIDTH)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, 2 + tl.METER_WIDTH, f"LP {code:02X} reply")
        return cls(addr, code, bcd_decode(body[:2]), bcd_decode(body[2:]))


@dataclass(frozen=True, slots=True)
class TournamentMetersReply(DataReply):
    """LP 99 reply [A]: game, then the 95..98 meters in order."""

    CODE: ClassVar[int] = 0x99
    game: int
    games_played: int
    games_won: int
    credits_wagered: int
    credits_won: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    def body(self) -> bytes:
        w = tl.METER_WIDTH
        return (
            bcd_encode(self.game, 2)
            + bcd_encode(self.games_played, w)
            + bcd_encode(self.games_won, w)
            + bcd_encode(self.credits_wagered, w)
            + bcd_encode(self.credits_won, w)
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        w = tl.METER_WIDTH
        _need(body, 2 + 4 * w, "LP 99 reply")
        m = [bcd_decode(body[2 + i * w : 2 + (i + 1) * w]) for i in range(4)]
        return cls(addr, bcd_decode(body[:2]), m[0], m[1], m[2], m[3])


@dataclass(frozen=True, slots=True)
class SelectedMetersReply(DataReply):
    """LP 2F reply: game, then ``code meter`` pairs (widths from the poll table [A])."""

    CODE: ClassVar[int] = 0x2F
    game: int
    meters: tuple[tuple[int, int], ...]  # (meter code, value)

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    def body(self) -> bytes:
        out = bytearray(bcd_encode(self.game, 2))
        for code, value in self.meters:
            out.append(_byte(code, "meter code"))
            out += bcd_encode(value, SELECTED_METER_WIDTHS.get(code, SELECTED_METER_WIDTH))
        return bytes(out)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        if len(body) < 2:
            raise LengthError("LP 2F reply needs a game number", body)
        meters: list[tuple[int, int]] = []
        i = 2
        while i < len(body):
            mcode = body[i]
            width = SELECTED_METER_WIDTHS.get(mcode, SELECTED_METER_WIDTH)
            raw = body[i + 1 : i + 1 + width]
            if len(raw) != width:
                raise LengthError(f"LP 2F reply: meter {mcode:02X} cut short", body)
            meters.append((mcode, bcd_decode(raw)))
            i += 1 + width
        return cls(addr, bcd_decode(body[:2]), tuple(meters))
