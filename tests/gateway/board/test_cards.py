"""Card readers at the machine (issue 30 item 1): ISO 7813 magstripe tracks, RFID
UID lines, HID key events, the card slot's card-in / card-out, and the CLI flag.
What the cards are for is T1-T3 at the gateway (docs/rules.md#t1, #t2, #t3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.app.commands.board import card_reader
from gateway.board.cards import (
    CardChange,
    CardFormatError,
    CardSlot,
    KeyboardDecoder,
    LineParser,
    ReaderSpec,
    magstripe_pan,
    rfid_uid,
)
from gateway.errors import OperatorError
from protocols.mqtt.codec import CardAction, ReaderKind

TRACK1 = "%B6009123456789012^MOKOENA/THABO^29121010000000000000?"
TRACK2 = ";6009123456789012=29121010000000000?"


def lrc(track: str, base: int, mask: int) -> str:
    value = 0
    for char in track:
        value ^= (ord(char) - base) & mask
    return chr(value + base)


def test_track_2_pan() -> None:
    assert magstripe_pan(TRACK2) == "6009123456789012"


def test_track_2_is_preferred_over_track_1() -> None:
    swipe = TRACK1 + ";6009000000000001=2912?"
    assert magstripe_pan(swipe) == "6009000000000001"


def test_track_1_alone() -> None:
    assert magstripe_pan(TRACK1 + "\r\n") == "6009123456789012"


def test_a_matching_lrc_is_accepted_and_a_wrong_one_refused() -> None:
    good = TRACK2 + lrc(TRACK2, 0x30, 0x0F)
    assert magstripe_pan(good) == "6009123456789012"
    good1 = TRACK1 + lrc(TRACK1, 0x20, 0x3F)
    assert magstripe_pan(good1 + good) == "6009123456789012"
    wrong = chr(0x30 + ((ord(good[-1]) - 0x30 + 1) & 0x0F))
    parser = LineParser(ReaderKind.MAGSTRIPE)
    assert parser.feed((TRACK2 + wrong + "\r\n").encode()) == []
    assert parser.stats.bad_lrc == 1
    assert parser.stats.reads == 0


@pytest.mark.parametrize(
    "swipe",
    [
        "6009123456789012=2912?",  # no start sentinel
        ";6009123456789012=2912",  # no end sentinel
        ";6009123456789012?",  # no field separator
        ";=2912?",  # no PAN
        ";60091234567890123456=2912?",  # PAN of 20 digits
        ";6009A23456789012=2912?",  # a character outside track 2's set
        "%A6009123456789012^NAME^2912?",  # format code not B
        "%B6009123456789012^NAME?",  # one separator
        "%B6009123456789012^name^2912?",  # lower case: not in track 1's set
    ],
)
def test_bad_swipes_are_counted_never_raised(swipe: str) -> None:
    with pytest.raises(CardFormatError):
        magstripe_pan(swipe)
    parser = LineParser(ReaderKind.MAGSTRIPE)
    assert parser.feed(swipe.encode() + b"\r\n") == []
    assert parser.stats.bad_format == 1


def test_rfid_uid_lines() -> None:
    parser = LineParser(ReaderKind.RFID)
    assert parser.feed(b"04a1b2c3\r\n04A1B2C3D4E5F6\r") == ["04A1B2C3", "04A1B2C3D4E5F6"]
    assert parser.feed(b"\n0102030405060708090A\n") == ["0102030405060708090A"]
    assert parser.feed(b"04A1B2\r\nGGGGGGGG\r\n") == []
    assert parser.stats.bad_format == 2
    assert parser.stats.reads == 3
    assert rfid_uid(" deadbeef \r\n") == "DEADBEEF"


def test_a_line_split_across_reads_and_an_overlong_line() -> None:
    parser = LineParser(ReaderKind.RFID)
    assert parser.feed(b"04A1") == []
    assert parser.feed(b"B2C3\r\n") == ["04A1B2C3"]
    assert parser.feed(b"7" * 600 + b"\r\n04A1B2C4\r\n") == ["04A1B2C4"]
    assert parser.stats.too_long == 1


@given(st.binary(max_size=1024), st.sampled_from([ReaderKind.MAGSTRIPE, ReaderKind.RFID]))
def test_any_bytes_from_a_reader_never_raise(data: bytes, reader: ReaderKind) -> None:
    parser = LineParser(reader)
    for card in parser.feed(data):
        assert card.isalnum()


def test_keyboard_wedge_reader_types_a_swipe() -> None:
    parser = LineParser(ReaderKind.MAGSTRIPE)
    keys = KeyboardDecoder(parser)
    shift, enter = 42, 28
    codes = {";": (39, False), "=": (13, False), "?": (53, True)}
    codes |= {d: (c, False) for d, c in zip("1234567890", range(2, 12), strict=True)}
    cards: list[str] = []
    for char in ";6009=29?":
        code, shifted = codes[char]
        if shifted:
            keys.key(shift, 1)
        cards += keys.key(code, 1)
        cards += keys.key(code, 0)
        if shifted:
            keys.key(shift, 0)
    cards += keys.key(enter, 1)
    assert cards == ["6009"]


def test_the_slot_turns_reads_into_card_in_and_card_out() -> None:
    now = [0.0]
    slot = CardSlot(debounce=2.0, clock=lambda: now[0])
    assert slot.read("6009") == [CardChange(CardAction.CARD_IN, "6009")]
    now[0] = 0.5
    assert slot.read("6009") == []  # an RFID reader repeating the UID
    now[0] = 5.0
    assert slot.read("6009") == [CardChange(CardAction.CARD_OUT, "6009")]
    now[0] = 6.0
    assert slot.read("6009") == []  # within the debounce of the card-out's read
    now[0] = 8.0
    assert slot.read("6009") == [CardChange(CardAction.CARD_IN, "6009")]
    assert slot.read("7001") == [
        CardChange(CardAction.CARD_OUT, "6009"),
        CardChange(CardAction.CARD_IN, "7001"),
    ]
    assert slot.pull() == [CardChange(CardAction.CARD_OUT, "7001")]
    assert slot.pull() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("none", ReaderSpec("none")),
        ("serial:/dev/ttyUSB1", ReaderSpec("serial", "/dev/ttyUSB1")),
        (
            "serial:/dev/ttyS0?rfid&baud=115200",
            ReaderSpec("serial", "/dev/ttyS0", ReaderKind.RFID, 115200),
        ),
    ],
)
def test_card_reader_flag(text: str, expected: ReaderSpec) -> None:
    assert card_reader(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("usb:/dev/x", "expected serial:"),
        ("serial:ttyUSB0", "not a device under /dev/"),
        ("serial:/dev/ttyUSB0?barcode", "unknown option 'barcode'"),
    ],
)
def test_bad_card_reader_flag_is_one_line(text: str, message: str) -> None:
    with pytest.raises(OperatorError, match=f"--card-reader: .*{message}"):
        card_reader(text)


def test_evdev_needs_the_optional_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway.app.commands.board as board

    monkeypatch.setattr(board, "evdev_available", lambda: False)
    with pytest.raises(OperatorError, match="evdev package is not installed"):
        board.card_reader("evdev:/dev/input/event3")
