"""The live tournament feed over MQTT, for leaderboards and signage (``docs/mqtt.md``).

Topic tree, all under ``reelgate/v1/<site>/feed/`` (R = retained):

=====================================  ===  ==========================================
``current``                             R   ``{"heat": KEY}``: the heat signs should show
                                            (optional ``name``, ``stage``)
``heat/<KEY>/state``                    R   state, ``seconds_left`` countdown, ``at``;
                                            optional ``name``, ``stage``, ``machines``
``heat/<KEY>/seat/<MACHINE>``           R   provisional credits while playing; ``final``
                                            once scored; optional ``player``
``heat/<KEY>/standings``                R   ranked rows after the heat (T19 ties
                                            are flagged, not broken: that is a card draw);
                                            optional ``player`` per row
``super9/<SESSION>/draw``               R   the Super 9 live draw (published by Super 9)
=====================================  ===  ==========================================

The heat topics are filled by ``gateway.heats.live_feed`` (what a heat's progress means
for a sign, and its ranking, are the gateway's); this module only encodes and publishes.
Every payload is a JSON object with ``"v": 1`` added.  Retained topics are the ones a
sign switched on late needs; everything published here is retained in practice, and
the feed republishes its last retained values after a reconnect (the embedded broker
forgets retained messages when it restarts).

:class:`MqttFeed` never blocks the heat: ``publish`` only queues.  Retained values are
coalesced per topic (a sign only needs the newest), other messages wait in a bounded
queue whose oldest entries are dropped and counted if the broker is away for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable
from protocols.mqtt.topics import VERSION, feed_topic

log = logging.getLogger(__name__)


@dataclass(slots=True)
class FeedStats:
    queued: int = 0
    published: int = 0
    dropped: int = 0
    republished: int = 0


class MqttFeed:
    """:class:`gateway.feed.FeedPublisher` over MQTT, relative to one site's feed tree."""

    def __init__(self, session: MqttSession, site: str, *, backlog: int = 1000) -> None:
        self.session = session
        self.site = site
        self.stats = FeedStats()
        self._retained: dict[str, bytes] = {}  # last value per topic, for resync
        self._due: OrderedDict[str, bytes] = OrderedDict()  # retained, not yet sent
        self._plain: deque[tuple[str, bytes]] = deque()
        self._backlog = backlog
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._own_session = False
        self._pump: asyncio.Task[None] | None = None
        session.on_connect(self._resync)

    @classmethod
    async def connect(cls, broker_url: str, site: str, *, wait: bool = True) -> MqttFeed:
        """A feed with its own session; ``wait`` for the broker (MqttUnavailable if none)."""
        session = MqttSession(MqttSettings.from_url(broker_url))
        feed = cls(session, site)
        feed._own_session = True
        await session.start(wait=wait)
        feed.start()
        return feed

    def start(self) -> None:
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name=f"feed-{self.site}")

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
            self._pump = None
        if self._own_session:
            await self.session.close()

    # -- FeedPublisher -----------------------------------------------------------------
    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        self.publish_nowait(topic, payload, retain=retain)

    def publish_nowait(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        """Queue one message.  A bad topic or a payload that is not JSON raises at once
        (a programming error); a missing broker never does."""
        full = feed_topic(self.site, topic)
        body = json.dumps({"v": VERSION, **payload}, separators=(",", ":"), default=_json_default)
        data = body.encode()
        self.stats.queued += 1
        if retain:
            self._retained[full] = data
            self._due[full] = data
            self._due.move_to_end(full)
        else:
            if len(self._plain) >= self._backlog:
                self._plain.popleft()
                self.stats.dropped += 1
            self._plain.append((full, data))
        self._idle.clear()
        self._wake.set()
        if self._pump is None:
            self.start()

    async def flush(self, within: float = 5.0) -> None:
        """Wait until everything queued has been sent (tests, shutdown)."""
        await asyncio.wait_for(self._idle.wait(), within)

    # -- pump --------------------------------------------------------------------------
    async def _resync(self) -> None:
        for topic, data in self._retained.items():
            if topic not in self._due:
                self._due[topic] = data
                self.stats.republished += 1
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while self._due or self._plain:
                    if self._plain:
                        topic, data = self._plain[0]
                        await self.session.publish(topic, data)
                        self._plain.popleft()
                    else:
                        topic, data = next(iter(self._due.items()))
                        await self.session.publish(topic, data, retain=True)
                        if self._due.get(topic) is data:
                            del self._due[topic]
                    self.stats.published += 1
                self._idle.set()
            except MqttUnavailable:
                await self.session.connected.wait()
                self._wake.set()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"feed payload value {value!r} is not JSON")
