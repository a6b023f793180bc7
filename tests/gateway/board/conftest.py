"""Agent test fixtures: an embedded broker and a unique site per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from protocols.mqtt.broker import EmbeddedBroker


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
def site() -> str:
    return f"t{uuid.uuid4().hex[:10]}"
