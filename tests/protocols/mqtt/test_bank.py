"""Bank-wide commands (protocols/mqtt/bank.py): the codec, and a board core taking its
share of one as its own command, answered once however often it comes."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from protocols.mqtt import codec
from protocols.mqtt.bank import (
    MAX_TARGETS,
    BankCommand,
    bank_topic,
    decode_bank,
    encode_bank,
    member_id,
)
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import Command, PayloadError
from protocols.mqtt.topics import Channel, TopicError

AT = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
NOWHERE = MqttSettings("127.0.0.1", 1)  # never connected


def bank(**kw: object) -> BankCommand:
    fields: dict[str, object] = {"id": "b1", "cmd": Command.UNLOCK, "at": AT}
    fields["targets"] = ("MQ-001", "MQ-002", "MQ-003")
    fields |= kw
    return BankCommand(**fields)  # type: ignore[arg-type]


def test_topic_is_one_per_site() -> None:
    assert bank_topic("floor1") == "reelgate/v1/floor1/boards/cmd"
    with pytest.raises(TopicError):
        bank_topic("a/b")


def test_round_trip_and_each_board_its_own_correlation_id() -> None:
    message = bank()
    decoded = decode_bank(encode_bank(message))
    assert decoded == message
    mine = decoded.for_machine("MQ-002")
    assert mine == codec.CommandMessage(id=member_id("b1", 1), cmd=Command.UNLOCK, at=AT)
    assert mine.id == "b1.1"
    assert decoded.for_machine("MQ-999") is None  # not named: ignored


def test_a_share_is_a_valid_per_board_command() -> None:
    """The same command can go to the board alone under the same id (the fallback)."""
    long_id = "f" * 48
    mine = bank(id=long_id, targets=tuple(f"M{i}" for i in range(MAX_TARGETS))).for_machine(
        f"M{MAX_TARGETS - 1}"
    )
    assert mine is not None
    assert codec.decode(Channel.CMD, codec.encode(mine)) == mine


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"cmd": "enter-tournament"}, "bank.cmd"),
        ({"cmd": "spin"}, "bank.cmd"),
        ({"v": 2}, "bank.v"),
        ({"id": 7}, "bank.id"),
        ({"id": "x" * 49}, "bank.id"),
        ({"at": "yesterday"}, "bank.at"),
        ({"at": "2026-12-01T18:00:00"}, "bank.at"),
        ({"targets": {"MQ-001": 0}}, "bank.targets"),
        ({"targets": ["MQ-001", 2]}, "bank.targets"),
        ({"targets": []}, "bank.targets"),
        ({"targets": ["M"] * (MAX_TARGETS + 1)}, "bank.targets"),
        ({"args": {}}, "unexpected"),
    ],
)
def test_bad_payloads_name_the_field(change: dict[str, object], field: str) -> None:
    body = json.loads(encode_bank(bank())) | change
    with pytest.raises(PayloadError, match=field):
        decode_bank(json.dumps(body).encode())


@pytest.mark.parametrize("payload", [b"", b"[]", b"{", b"\xff", b"[" * 100, b"{}" * 40_000])
def test_garbage_is_a_payload_error(payload: bytes) -> None:
    with pytest.raises(PayloadError):
        decode_bank(payload)


def test_the_gateway_cannot_send_a_bad_one() -> None:
    with pytest.raises(PayloadError, match="named twice"):
        encode_bank(bank(targets=("MQ-001", "MQ-001")))
    with pytest.raises(PayloadError, match="not a bank-wide"):
        encode_bank(bank(cmd=Command.READ_METERS))
    with pytest.raises(TopicError):
        encode_bank(bank(targets=("MQ+1",)))


async def test_a_board_runs_its_share_once_and_answers_the_repeat_from_its_cache() -> None:
    machine = EmulatedMachine("MQ-002")
    board = MqttBoard(machine, NOWHERE, "s")
    core = board.core
    machine.lock_play()
    try:
        core._on_bank_command(bank_topic("s"), encode_bank(bank()))
        assert not machine.play_locked
        assert core.stats.bank_commands == 1
        assert core.stats.commands_executed == 1
        machine.lock_play()  # the repeat below must not unlock again
        alone = codec.CommandMessage(id="b1.1", cmd=Command.UNLOCK, at=AT)
        core._on_command("reelgate/v1/s/board/MQ-002/cmd", codec.encode(alone))
        assert machine.play_locked
        assert (core.stats.commands_executed, core.stats.replayed) == (1, 1)
        other = bank(id="b2", targets=("MQ-001",))
        core._on_bank_command(bank_topic("s"), encode_bank(other))  # not ours
        assert (core.stats.bank_commands, core.stats.commands_executed) == (1, 1)
    finally:
        for task in list(core._reply_tasks):  # replies that wait for a broker
            task.cancel()
        await asyncio.gather(*core._reply_tasks, return_exceptions=True)


async def test_identity_says_the_board_takes_bank_wide_commands() -> None:
    board = MqttBoard(EmulatedMachine("MQ-003"), NOWHERE, "s")
    core = board.core
    try:
        ask = codec.CommandMessage(id="i1", cmd=Command.IDENTITY, at=AT)
        core._on_command("t", codec.encode(ask))
        reply = codec.decode(Channel.REPLY, core._replies["i1"])
        assert isinstance(reply, codec.Reply)
        assert reply.result["bank_commands"] is True
    finally:
        for task in list(core._reply_tasks):
            task.cancel()
        await asyncio.gather(*core._reply_tasks, return_exceptions=True)
