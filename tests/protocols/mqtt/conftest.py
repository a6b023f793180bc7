"""MQTT test fixtures: an embedded broker per test, a unique site per test, boards."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from protocols.mqtt.broker import EmbeddedBroker

from .mqtt_boards import Boards


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
def site() -> str:
    """Unique topics per test: every test gets its own site prefix."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def boards(broker: EmbeddedBroker, site: str) -> AsyncIterator[Boards]:
    """Emulated boards on the test's broker and site (``tests/protocols/mqtt/mqtt_boards.py``)."""
    bank = Boards(broker.url, site)
    try:
        yield bank
    finally:
        await bank.close()
