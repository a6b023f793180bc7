"""The MQTT driver refuses a command field the v1 schema cannot carry: typed
(MachineRefused, a malfunction of that machine under T20), nothing sent.

Clauses: docs/rules.md#t20.
"""

from __future__ import annotations

import pytest

from gateway.machines.driver import MachineRefused
from gateway.machines.mqtt import MqttMachineDriver

from ...protocols.mqtt.mqtt_boards import Boards


@pytest.mark.parametrize(("credits", "seconds"), [(0, 60), (-5, 60), (500, 0), (True, 60)])
async def test_out_of_range_field_is_refused_before_sending(
    boards: Boards, credits: int, seconds: int
) -> None:
    board = await boards.add("F01")
    driver = MqttMachineDriver.from_uri("F01", boards.endpoint("F01"))
    await driver.open()
    try:
        with pytest.raises(MachineRefused, match="enter-tournament not sent, field refused"):
            await driver.enter_tournament(credits, seconds)
        assert not board.machine.in_tournament
        await driver.enter_tournament(500, 60)  # the same link carries a good command
        assert board.machine.in_tournament
        await driver.exit_tournament()
    finally:
        await driver.close()
