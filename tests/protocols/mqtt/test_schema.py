"""The published JSON Schema (protocols/mqtt/schema/v1.json) and the codec agree.

The codec validates by hand; this test is what keeps the vendor-facing contract and the
code from drifting: same channels, same fields, same required fields, same enums.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from protocols.mqtt import codec
from protocols.mqtt.bank import (
    BANK_COMMANDS,
    ID_MAX,
    MAX_TARGETS,
    BankCommand,
    bank_topic,
    encode_bank,
)
from protocols.mqtt.codec import BoardEventKind, Command, ErrorKind
from protocols.mqtt.schema import load
from protocols.mqtt.topics import RETAINED, Channel

SCHEMA = load(1)
AT = datetime(2026, 11, 29, tzinfo=UTC)

SAMPLES: dict[Channel, codec.BoardMessage] = {
    Channel.STATUS: codec.Status(online=True, at=AT),
    Channel.STATE: codec.State(
        seq=1,
        at=AT,
        powered=True,
        locked=True,
        door_open=False,
        tilted=False,
        handpay_pending=False,
        game_in_progress=False,
        credits=0,
        tournament=None,
    ),
    Channel.EVENT: codec.Event(seq=1, at=AT, kind=BoardEventKind.TILT),
    Channel.METERS: codec.Meters(
        seq=1,
        at=AT,
        credits=1,
        in_tournament=True,
        games_played=1,
        games_won=0,
        credits_wagered=1,
        credits_won=0,
    ),
    Channel.CMD: codec.CommandMessage(id="a", cmd=Command.LOCK, at=AT),
    Channel.REPLY: codec.Reply(id="a", ok=False, at=AT, error=ErrorKind.REFUSED, reason="x"),
    Channel.CARD: codec.Card(seq=1, at=AT, action=codec.CardAction.CARD_IN, machine="A01",
                             card="6001234", reader=codec.ReaderKind.MAGSTRIPE, display=True),
}


def test_one_definition_per_channel() -> None:
    assert set(SCHEMA["$defs"]) == {c.value for c in Channel} | {"bank-cmd"}
    assert set(SCHEMA["x-topics"]) == {c.value for c in Channel} | {"bank-cmd"}
    for channel in Channel:
        assert SCHEMA["x-topics"][channel.value]["retained"] is (channel in RETAINED)


@pytest.mark.parametrize("channel", list(Channel))
def test_encoded_sample_has_exactly_the_schema_fields(channel: Channel) -> None:
    definition: dict[str, Any] = SCHEMA["$defs"][channel.value]
    body = json.loads(codec.encode(SAMPLES[channel]))
    assert set(body) <= set(definition["properties"])
    assert set(definition["required"]) <= set(body)
    assert definition["additionalProperties"] is False


def test_enums_match_the_codec() -> None:
    defs = SCHEMA["$defs"]
    assert defs["event"]["properties"]["kind"]["enum"] == [k.value for k in BoardEventKind]
    assert defs["cmd"]["properties"]["cmd"]["enum"] == [c.value for c in Command]
    assert defs["reply"]["properties"]["error"]["enum"] == [e.value for e in ErrorKind]
    card = defs["card"]["properties"]
    assert card["action"]["enum"] == [a.value for a in codec.CardAction]
    assert card["reader"]["enum"] == [r.value for r in codec.ReaderKind]
    assert card["card"]["pattern"] == codec.CARD_NUMBER.pattern


def test_state_fields_match_the_dataclass() -> None:
    fields = set(SCHEMA["$defs"]["state"]["properties"]) - {"v"}
    assert fields == set(codec.State.__dataclass_fields__)


def test_the_bank_wide_command_matches_its_codec() -> None:
    definition: dict[str, Any] = SCHEMA["$defs"]["bank-cmd"]
    message = BankCommand(id="b", cmd=Command.UNLOCK, at=AT, targets=("MQ-001",))
    body = json.loads(encode_bank(message))
    assert set(body) == set(definition["properties"]) == set(definition["required"])
    assert definition["properties"]["cmd"]["enum"] == sorted(c.value for c in BANK_COMMANDS)
    assert definition["properties"]["id"]["maxLength"] == ID_MAX
    assert definition["properties"]["targets"]["maxItems"] == MAX_TARGETS
    topic = SCHEMA["x-topics"]["bank-cmd"]["topic"]
    assert topic.replace("{site}", "s1") == bank_topic("s1")
