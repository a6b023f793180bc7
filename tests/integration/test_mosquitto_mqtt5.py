"""MQTT 5 against Mosquitto: commands carry a message expiry equal to their timeout, so a
broker never hands a board a command the gateway has already given up on."""

from __future__ import annotations

import asyncio
import uuid
from urllib.parse import urlsplit

import aiomqtt
import pytest

from gateway.machines.driver import LinkTimeout
from gateway.machines.mqtt import MqttMachineDriver
from protocols.mqtt import codec
from protocols.mqtt.topics import Channel, board_topic

pytestmark = pytest.mark.mosquitto


async def test_commands_expire_with_their_timeout(mqtt_url: str) -> None:
    site = f"t{uuid.uuid4().hex[:10]}"
    where = urlsplit(mqtt_url)
    async with aiomqtt.Client(
        where.hostname or "127.0.0.1",
        where.port or 1883,
        protocol=aiomqtt.ProtocolVersion.V5,
    ) as spy:
        await spy.subscribe(board_topic(site, "X01", Channel.CMD), qos=1)
        driver = MqttMachineDriver.from_uri("X01", f"{mqtt_url}/{site}/X01?mqtt5=1&timeout=2")
        with pytest.raises(LinkTimeout):
            await driver.open()  # no board answers
        async with asyncio.timeout(5):
            async for message in spy.messages:
                assert isinstance(message.payload, bytes)
                command = codec.decode(Channel.CMD, message.payload)
                assert isinstance(command, codec.CommandMessage)
                assert command.cmd is codec.Command.REPORT_STATE
                assert message.properties is not None
                # paho sets the properties it decoded as attributes: mypy cannot see them
                expiry = message.properties.MessageExpiryInterval  # type: ignore[attr-defined]
                assert 0 < expiry <= 2
                break
