"""The shared board core without a broker: event numbering, the bounded queue's gap."""

from __future__ import annotations

from typing import Any

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from protocols.mqtt.board import BoardCore
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import BoardEventKind, Command

from .mqtt_boards import Boards

K = BoardEventKind
NOWHERE = MqttSettings("127.0.0.1", 1)  # never connected


async def test_events_are_numbered_in_order() -> None:
    core = BoardCore(MqttBoard(EmulatedMachine("C01"), NOWHERE, "s"), NOWHERE, "s")
    core.post_event(K.DOOR_OPENED)
    core.post_event(K.DOOR_CLOSED)
    seqs = [seq for seq, _ in core.pending_events()]
    assert seqs[1] == seqs[0] + 1
    assert [kind for _, kind in core.pending_events()] == [K.DOOR_OPENED, K.DOOR_CLOSED]


async def test_a_full_queue_drops_the_oldest_and_one_marker_stands_in_the_gap() -> None:
    core = BoardCore(MqttBoard(EmulatedMachine("C02"), NOWHERE, "s"), NOWHERE, "s", event_queue=4)
    kinds = [K.GAME_STARTED, K.GAME_ENDED] * 5
    for kind in kinds:
        core.post_event(kind)
    pending = core.pending_events()
    assert len(pending) == 4  # bounded, however long the broker stays away
    assert [k for _, k in pending] == [K.QUEUE_OVERFLOW, *kinds[-3:]]
    assert core.stats.events_dropped == 7  # the counted gap: 10 events, 3 kept
    seqs = [s for s, _ in pending]
    assert seqs == sorted(seqs)  # the marker keeps the first dropped number


async def test_a_queue_too_small_for_a_marker_is_refused() -> None:
    with pytest.raises(ValueError, match="gap marker"):
        BoardCore(MqttBoard(EmulatedMachine("C03"), NOWHERE, "s"), NOWHERE, "s", event_queue=1)


async def test_a_bug_behind_one_command_leaves_it_unanswered_not_the_board_silent(
    boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.machines.driver import LinkTimeout
    from gateway.machines.mqtt import MqttMachineDriver

    board = await boards.add("C04")
    driver = MqttMachineDriver.from_uri("C04", boards.endpoint("C04", "timeout=0.5"))
    await driver.open()
    try:
        real = board._run

        def broken(cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
            if cmd is Command.READ_CREDITS:
                raise RuntimeError("a bug")
            return real(cmd, args)

        monkeypatch.setattr(board, "_run", broken)
        with pytest.raises(LinkTimeout):
            await driver.credits()
        await driver.lock()  # the next command is answered
        assert board.machine.play_locked
    finally:
        await driver.close()
