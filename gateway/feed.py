"""Live feed for leaderboards and signage.

Heats and the Super 9 draw publish what a display needs through a :class:`FeedPublisher`.
The MQTT publisher (``protocols/mqtt``) is the production one; :class:`MemoryFeed`
keeps the last value per topic, for tests and for the embedded demo without a broker.
Topics are relative to the site prefix (e.g. ``heat/17/state``); payloads are JSON-able.
"""

from __future__ import annotations

from typing import Any, Protocol


class FeedPublisher(Protocol):
    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        ...


class MemoryFeed:
    """Keeps every published message, and the last retained value per topic."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any], bool]] = []
        self.retained: dict[str, dict[str, Any]] = {}

    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        self.messages.append((topic, payload, retain))
        if retain:
            self.retained[topic] = payload
