"""The emulated board's card slot and its control lines (issue 30 item 1), without a
broker: what is queued for the ``card`` channel, and bad control lines."""

from __future__ import annotations

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard, card_control
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import CardAction, ReaderKind


def _board() -> MqttBoard:
    return MqttBoard(EmulatedMachine("M001"), MqttSettings.from_url("mqtt://127.0.0.1:1"), "s")


def _queued(board: MqttBoard) -> list[tuple[CardAction, str]]:
    return [(c.action, c.card) for c in board.core._cards]


async def test_insert_pull_and_a_second_card() -> None:
    board = _board()
    boards = {"M001": board}
    assert card_control(boards, "card-in M001 6009") == "M001: card 6009 in"
    assert card_control(boards, "card-in M001 6009") == "M001: card 6009 in"  # already in
    assert card_control(boards, "card-in M001 7001") == "M001: card 7001 in"
    assert card_control(boards, "card-out M001") == "M001: card 7001 out"
    assert card_control(boards, "card-out M001") == "M001: no card in"
    assert _queued(board) == [
        (CardAction.CARD_IN, "6009"),
        (CardAction.CARD_OUT, "6009"),
        (CardAction.CARD_IN, "7001"),
        (CardAction.CARD_OUT, "7001"),
    ]
    assert all(c.reader is ReaderKind.EMULATED and c.display for c in board.core._cards)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "expected card-in MACHINE CARD"),
        ("card-in M001", "expected card-in MACHINE CARD"),
        ("card-swipe M001 6009", "expected card-in MACHINE CARD"),
        ("card-in M999 6009", "machine 'M999': no such board"),
        ("card-in M001 60;09", "card number '60;09' is not 1-32 letters or digits"),
    ],
)
async def test_bad_control_lines_change_nothing(line: str, message: str) -> None:
    board = _board()
    with pytest.raises(ValueError, match=message):
        card_control({"M001": board}, line)
    assert board.card is None
    assert _queued(board) == []


async def test_a_full_card_queue_drops_the_oldest_and_counts_it() -> None:
    board = _board()
    limit = board.core._event_limit
    for n in range(limit + 3):
        board.core.post_card(CardAction.CARD_IN, str(n), ReaderKind.RFID)
    assert board.core.stats.cards_dropped == 3
    assert _queued(board)[0] == (CardAction.CARD_IN, "3")
