"""Players' card readers at the machine: sans-I/O parsers, the card slot, thin readers.

``reelgate board --card-reader serial:/dev/ttyX|evdev:/dev/input/eventN|none``
(``docs/mqtt.md``, "Player cards").  Two wire formats:

* **Magstripe** (ISO/IEC 7813): track 1 ``%B<PAN>^<NAME>^<data>?`` and track 2
  ``;<PAN>=<data>?``, each optionally followed by its longitudinal redundancy check
  (LRC) character, as a serial reader sends them; a USB keyboard-wedge (HID) reader
  types the same characters without the LRC and ends the swipe with Enter.  The card
  number is the primary account number (PAN): track 2's if the swipe has it, else
  track 1's.  A bad sentinel, field separator, character or LRC is a counted error.
* **RFID over serial**: one line per card read, the UID in ASCII hex (4, 7 or 10 bytes:
  8, 14 or 20 hex digits, either case) ended by CR LF (a lone LF or CR is accepted),
  the "UID + CR LF" mode of the common USB-serial 13.56 MHz readers.  The card number is
  the UID in upper case.  Anything else is a counted error.

A reader says only "this card was read".  :class:`CardSlot` makes the card-in and
card-out of it: a card read while none is in is a ``card-in``; the same card read again
is a ``card-out`` (swipe or tap again to leave); another card read while one is in is a
``card-out`` of the first then a ``card-in`` of the new one.  An RFID reader repeats
the UID while the card lies on it: a repeat within ``debounce`` seconds (an injected
clock) is the same read.  Nothing a reader sends can raise out of the parsers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocols.mqtt.codec import CARD_NUMBER, CardAction, ReaderKind

log = logging.getLogger(__name__)

MAX_LINE = 512  # a swipe is under 200 characters; longer is noise
DEBOUNCE = 2.0  # seconds: an RFID reader repeats the UID while the card lies on it

_UID = re.compile(r"^(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{14}|[0-9A-Fa-f]{20})$")
_PAN = re.compile(r"^[0-9]{1,19}$")


@dataclass(slots=True)
class ReaderStats:
    reads: int = 0  # card numbers read
    bad_format: int = 0  # sentinels, separators, characters, lengths
    bad_lrc: int = 0  # a magstripe track whose LRC does not match
    too_long: int = 0  # a line past MAX_LINE, dropped


class CardFormatError(ValueError):
    """A read that is not a card: counted by the parser, never raised out of it."""


# -- magstripe --------------------------------------------------------------------------
def _lrc_ok(track: str, lrc: str, base: int, mask: int) -> bool:
    value = 0
    for char in track:
        value ^= (ord(char) - base) & mask
    return (ord(lrc) - base) & mask == value


def _track2_pan(track: str) -> str:
    """``;PAN=...?`` (the sentinels included, without the LRC)."""
    body = track[1:-1]
    if any(not 0x30 <= ord(c) <= 0x3F or c in ";?" for c in body):
        raise CardFormatError("track 2: character outside the 5-bit set")
    pan, sep, _ = body.partition("=")
    if not sep or not _PAN.match(pan):
        raise CardFormatError("track 2: no PAN of 1-19 digits before '='")
    return pan


def _track1_pan(track: str) -> str:
    """``%B<PAN>^<NAME>^...?`` (the sentinels included, without the LRC)."""
    body = track[1:-1]
    if any(not 0x20 <= ord(c) <= 0x5F or c in "%?" for c in body):
        raise CardFormatError("track 1: character outside the 6-bit set")
    if not body.startswith("B"):
        raise CardFormatError("track 1: format code is not 'B'")
    fields = body[1:].split("^")
    if len(fields) < 3 or not _PAN.match(fields[0]):
        raise CardFormatError("track 1: no PAN of 1-19 digits and two '^' separators")
    return fields[0]


def _split_tracks(swipe: str) -> tuple[str | None, str | None]:
    """Track 1 and track 2 of one swipe (either may be absent), LRCs checked."""
    track1 = track2 = None
    i = 0
    while i < len(swipe):
        start = swipe[i]
        if start not in "%;":
            raise CardFormatError(f"no start sentinel at character {i}")
        end = swipe.find("?", i + 1)
        if end < 0:
            raise CardFormatError("no end sentinel '?'")
        track = swipe[i : end + 1]
        i = end + 1
        # The LRC character: anything but a next track's start (or the very last one).
        if i < len(swipe) and (swipe[i] not in "%;" or i == len(swipe) - 1):
            base, mask = (0x20, 0x3F) if start == "%" else (0x30, 0x0F)
            if not _lrc_ok(track, swipe[i], base, mask):
                raise _BadLrc(f"track {1 if start == '%' else 2}: LRC does not match")
            i += 1
        if start == "%":
            track1 = track
        else:
            track2 = track
    return track1, track2


class _BadLrc(CardFormatError):
    pass


def magstripe_pan(swipe: str) -> str:
    """The card number of one swipe (``CardFormatError`` if it is not a card)."""
    swipe = swipe.strip("\r\n")
    if not swipe:
        raise CardFormatError("empty swipe")
    track1, track2 = _split_tracks(swipe)
    if track2 is not None:
        return _track2_pan(track2)
    if track1 is not None:
        return _track1_pan(track1)
    raise CardFormatError("no track")  # pragma: no cover - _split_tracks reads one or raises


def rfid_uid(line: str) -> str:
    """The card number of one RFID reader line (``CardFormatError`` if not a UID)."""
    uid = line.strip("\r\n").strip()
    if not _UID.match(uid):
        raise CardFormatError("expected 8, 14 or 20 hex digits")
    return uid.upper()


class LineParser:
    """Bytes from a serial reader in, card numbers out: one read per line."""

    def __init__(self, reader: ReaderKind) -> None:
        if reader not in (ReaderKind.MAGSTRIPE, ReaderKind.RFID):
            raise ValueError(f"no line format for {reader.value} readers")
        self.reader = reader
        self.stats = ReaderStats()
        self._buffer = bytearray()
        self._skipping = False  # inside an over-long line: drop up to its end

    def feed(self, data: bytes) -> list[str]:
        cards: list[str] = []
        for byte in data:
            if byte in (0x0D, 0x0A):
                if not self._skipping and self._buffer:
                    card = self.line(self._buffer.decode("latin-1"))
                    if card is not None:
                        cards.append(card)
                self._buffer.clear()
                self._skipping = False
            elif not self._skipping:
                self._buffer.append(byte)
                if len(self._buffer) > MAX_LINE:
                    self.stats.too_long += 1
                    self._buffer.clear()
                    self._skipping = True
        return cards

    def line(self, text: str) -> str | None:
        """One complete line: its card number, or None (counted)."""
        try:
            parse = magstripe_pan if self.reader is ReaderKind.MAGSTRIPE else rfid_uid
            card = parse(text)
        except _BadLrc:
            self.stats.bad_lrc += 1
            return None
        except CardFormatError as exc:
            self.stats.bad_format += 1
            log.info("card reader: %s", exc)
            return None
        self.stats.reads += 1
        return card


# -- HID keyboard-wedge readers through evdev --------------------------------------------
# Linux input key codes (linux/input-event-codes.h) of what a magstripe or RFID keyboard
# reader types: digits, letters A-F, the sentinels and separators (with or without shift).
_KEYS: dict[int, tuple[str, str]] = {
    2: ("1", "!"), 3: ("2", "@"), 4: ("3", "#"), 5: ("4", "$"), 6: ("5", "%"),
    7: ("6", "^"), 8: ("7", "&"), 9: ("8", "*"), 10: ("9", "("), 11: ("0", ")"),
    12: ("-", "_"), 13: ("=", "+"), 39: (";", ":"), 53: ("/", "?"), 57: (" ", " "),
    30: ("a", "A"), 48: ("b", "B"), 46: ("c", "C"), 32: ("d", "D"), 18: ("e", "E"),
    33: ("f", "F"),
}  # fmt: skip
KEY_ENTER, KEY_KPENTER = 28, 96
_SHIFTS = {42, 54}  # KEY_LEFTSHIFT, KEY_RIGHTSHIFT


class KeyboardDecoder:
    """Key events (code, value: 1 down, 0 up, 2 repeat) to text; Enter ends a read."""

    def __init__(self, parser: LineParser) -> None:
        self.parser = parser
        self._shift = False

    def key(self, code: int, value: int) -> list[str]:
        if code in _SHIFTS:
            self._shift = value != 0
            return []
        if value != 1:
            return []
        if code in (KEY_ENTER, KEY_KPENTER):
            return self.parser.feed(b"\n")
        pair = _KEYS.get(code)
        if pair is None:
            self.parser.stats.bad_format += 1  # a key no card reader types
            return []
        return self.parser.feed(pair[self._shift].encode())


# -- the card slot ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CardChange:
    action: CardAction
    card: str


class CardSlot:
    """Which card is in the machine; turns reads into card-in / card-out."""

    def __init__(self, *, debounce: float = DEBOUNCE, clock: Callable[[], float] = time.monotonic):
        self.debounce = debounce
        self.clock = clock
        self.card: str | None = None
        self._last: tuple[str, float] | None = None

    def read(self, card: str) -> list[CardChange]:
        if not CARD_NUMBER.match(card):
            raise ValueError(f"card number {card!r} is not 1-32 letters or digits")
        now = self.clock()
        last, self._last = self._last, (card, now)
        if last is not None and last[0] == card and now - last[1] < self.debounce:
            return []  # the reader repeating itself
        if self.card == card:
            self.card = None
            return [CardChange(CardAction.CARD_OUT, card)]
        changes = []
        if self.card is not None:
            changes.append(CardChange(CardAction.CARD_OUT, self.card))
        self.card = card
        changes.append(CardChange(CardAction.CARD_IN, card))
        return changes

    def pull(self) -> list[CardChange]:
        """A card taken out (an insertion reader's switch, an emulated board)."""
        if self.card is None:
            return []
        card, self.card = self.card, None
        return [CardChange(CardAction.CARD_OUT, card)]


# -- thin readers -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ReaderSpec:
    """``--card-reader``: ``serial:/dev/ttyX[?rfid|magstripe][&baud=9600]``,
    ``evdev:/dev/input/eventN[?rfid|magstripe]`` or ``none``."""

    kind: str  # "serial" | "evdev" | "none"
    path: str = ""
    reader: ReaderKind = ReaderKind.MAGSTRIPE
    baud: int = 9600

    @classmethod
    def parse(cls, text: str) -> ReaderSpec:
        if text == "none":
            return cls("none")
        kind, sep, rest = text.partition(":")
        if not sep or kind not in ("serial", "evdev"):
            raise ValueError("expected serial:/dev/ttyX, evdev:/dev/input/eventN or none")
        path, _, query = rest.partition("?")
        if not path.startswith("/dev/"):
            raise ValueError(f"{path!r} is not a device under /dev/")
        reader, baud = ReaderKind.MAGSTRIPE, 9600
        for item in filter(None, query.split("&")):
            if item in ("rfid", "magstripe"):
                reader = ReaderKind(item)
            elif item.startswith("baud=") and item[5:].isdigit() and int(item[5:]) > 0:
                baud = int(item[5:])
            else:
                raise ValueError(f"unknown option {item!r} (rfid, magstripe, baud=N)")
        return cls(kind, path, reader, baud)


def evdev_available() -> bool:
    """Whether the optional ``evdev`` package is installed (not a Reelgate dependency)."""
    try:
        import evdev  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


async def read_cards(spec: ReaderSpec, on_card: Callable[[str], None], stats: ReaderStats) -> None:
    """Read the reader until cancelled, calling ``on_card`` per card number; a reader that
    goes away is reopened after a pause (a USB reader unplugged and plugged in again)."""
    parser = LineParser(spec.reader)
    parser.stats = stats
    while True:
        try:
            if spec.kind == "serial":
                await _serial(spec, parser, on_card)
            elif spec.kind == "evdev":
                await _evdev(spec, parser, on_card)
            else:
                return
        except OSError as exc:
            log.warning("card reader %s: %s; trying again in 2 s", spec.path, exc)
        await asyncio.sleep(2.0)


async def _serial(spec: ReaderSpec, parser: LineParser, on_card: Callable[[str], None]) -> None:
    import serial_asyncio_fast

    reader, writer = await serial_asyncio_fast.open_serial_connection(
        url=spec.path, baudrate=spec.baud
    )
    try:
        while True:
            data = await reader.read(256)
            if not data:
                raise OSError("the reader closed")
            for card in parser.feed(data):
                on_card(card)
    finally:
        writer.close()


async def _evdev(spec: ReaderSpec, parser: LineParser, on_card: Callable[[str], None]) -> None:
    import evdev  # optional; the CLI checks evdev_available() first

    device: Any = evdev.InputDevice(spec.path)
    decoder = KeyboardDecoder(parser)
    with contextlib.suppress(OSError):
        device.grab()  # the reader's keystrokes go to us, not to a console
    try:
        async for event in device.async_read_loop():
            if event.type == evdev.ecodes.EV_KEY:
                for card in decoder.key(event.code, event.value):
                    on_card(card)
    finally:
        device.close()
