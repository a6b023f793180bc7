"""The ``card`` channel (card-in / card-out) and the ``show-message`` command: golden
payloads, round trips and bad input (docs/mqtt.md, "Player cards"; T1-T3 are applied by
the gateway on what these carry)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols.mqtt import codec
from protocols.mqtt.codec import Card, CardAction, Command, CommandMessage, PayloadError, ReaderKind
from protocols.mqtt.topics import Channel, board_topic

AT = datetime(2026, 12, 7, 19, 30, tzinfo=timezone(timedelta(hours=2)))


def test_golden_card_in_payload() -> None:
    card = Card(
        seq=9,
        at=AT,
        action=CardAction.CARD_IN,
        machine="A01",
        card="6001234567",
        reader=ReaderKind.MAGSTRIPE,
        display=True,
    )
    assert codec.encode(card) == (
        b'{"v":1,"seq":9,"at":"2026-12-07T19:30:00+02:00","action":"card-in",'
        b'"machine":"A01","card":"6001234567","reader":"magstripe","display":true}'
    )
    assert codec.channel_of(card) is Channel.CARD
    assert board_topic("ridge", "A01", Channel.CARD) == "reelgate/v1/ridge/board/A01/card"


def test_golden_show_message_command() -> None:
    cmd = CommandMessage(
        id="c1",
        cmd=Command.SHOW_MESSAGE,
        at=AT,
        args={"text": "Card refused: see the desk", "seconds": 10},
    )
    body = json.loads(codec.encode(cmd))
    assert body["cmd"] == "show-message"
    assert body["args"] == {"text": "Card refused: see the desk", "seconds": 10}
    assert codec.decode(Channel.CMD, codec.encode(cmd)) == cmd


def test_display_is_optional_and_false_when_absent() -> None:
    raw = (
        b'{"v":1,"seq":1,"at":"2026-12-07T17:30:00+00:00","action":"card-out",'
        b'"machine":"A01","card":"04A1B2C3","reader":"rfid"}'
    )
    card = codec.decode(Channel.CARD, raw)
    assert isinstance(card, Card)
    assert card.display is False
    assert card.action is CardAction.CARD_OUT


_card = st.text("0123456789ABCDEFabcdef", min_size=1, max_size=32)
_ts = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
)


@given(
    seq=st.integers(0, 2**53),
    at=_ts,
    action=st.sampled_from(CardAction),
    card=_card,
    reader=st.sampled_from(ReaderKind),
    display=st.booleans(),
    machine=st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,20}\Z"),
)
def test_card_round_trip(
    seq: int,
    at: datetime,
    action: CardAction,
    card: str,
    reader: ReaderKind,
    display: bool,
    machine: str,
) -> None:
    message = Card(
        seq=seq, at=at, action=action, machine=machine, card=card, reader=reader, display=display
    )
    assert codec.decode(Channel.CARD, codec.encode(message)) == message


@given(text=st.text(min_size=1, max_size=80), seconds=st.integers(1, 600))
def test_show_message_round_trip(text: str, seconds: int) -> None:
    cmd = CommandMessage(
        id="x", cmd=Command.SHOW_MESSAGE, at=AT, args={"text": text, "seconds": seconds}
    )
    assert codec.decode(Channel.CMD, codec.encode(cmd)) == cmd


_GOOD = {
    "v": 1,
    "seq": 1,
    "at": "2026-12-07T17:30:00+00:00",
    "action": "card-in",
    "machine": "A01",
    "card": "600123",
    "reader": "magstripe",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"card": ""}, "card.card"),
        ({"card": "60 01"}, "card.card"),
        ({"card": "1" * 33}, "card.card"),
        ({"action": "card-swiped"}, "card.action"),
        ({"reader": "barcode"}, "card.reader"),
        ({"machine": "A/01"}, "card.machine"),
        ({"display": "yes"}, "card.display"),
        ({"at": "2026-12-07T17:30:00"}, "card.at"),
    ],
)
def test_bad_card_payloads_name_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(PayloadError, match=field.replace(".", r"\.")):
        codec.decode(Channel.CARD, json.dumps(_GOOD | change).encode())


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"text": "", "seconds": 5},
        {"text": "x" * 81, "seconds": 5},
        {"text": "hi", "seconds": 0},
        {"text": "hi", "seconds": 601},
        {"text": "hi", "seconds": 5, "beep": True},
    ],
)
def test_bad_show_message_args_are_never_sent(args: dict[str, object]) -> None:
    with pytest.raises(PayloadError, match=r"show-message\.args"):
        codec.encode(CommandMessage(id="x", cmd=Command.SHOW_MESSAGE, at=AT, args=args))


def test_a_card_number_that_is_not_letters_or_digits_is_never_encoded() -> None:
    with pytest.raises(ValueError, match="card number"):
        codec.encode(
            Card(
                seq=1,
                at=AT,
                action=CardAction.CARD_IN,
                machine="A01",
                card="60;12",
                reader=ReaderKind.MAGSTRIPE,
            )
        )
