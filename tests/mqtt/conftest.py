"""MQTT test fixtures: an embedded broker per test, a unique site per test, boards."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSettings


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
def site() -> str:
    """Unique topics per test: every test gets its own site prefix."""
    return f"t{uuid.uuid4().hex[:10]}"


class Boards:
    """Emulated machines with MQTT boards on one broker; stopped at teardown."""

    def __init__(self, url: str, site: str) -> None:
        self.url = url
        self.site = site
        self.boards: dict[str, MqttBoard] = {}

    async def add(self, machine_id: str, **machine_kw: object) -> MqttBoard:
        machine = EmulatedMachine(machine_id, seed=len(self.boards) + 1, **machine_kw)  # type: ignore[arg-type]
        board = MqttBoard(machine, MqttSettings.from_url(self.url), self.site)
        await board.start()
        self.boards[machine_id] = board
        return board

    def endpoint(self, machine_id: str, query: str = "") -> str:
        return f"{self.url}/{self.site}/{machine_id}{'?' + query if query else ''}"

    async def close(self) -> None:
        for board in self.boards.values():
            await board.stop()


@pytest.fixture
async def boards(broker: EmbeddedBroker, site: str) -> AsyncIterator[Boards]:
    bank = Boards(broker.url, site)
    try:
        yield bank
    finally:
        await bank.close()
