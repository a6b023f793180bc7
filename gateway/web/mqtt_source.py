"""Feed a :class:`FanoutFeed` from a broker: subscribe to one site's live feed tree.

A sign can run on any machine: it subscribes to ``reelgate/v1/<site>/feed/#``
(``docs/mqtt.md``) and republishes each message, relative to the feed prefix, into its
own :class:`FanoutFeed`.  The broker sends every retained value on subscribe (and again
after each reconnect, since sessions are clean), so a sign switched on late is complete
at once.  Bad input (not JSON, not an object, another schema version, a topic that is
not a feed topic) is dropped and counted by the session; the previous value stays.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from gateway.web.fanout import FanoutFeed, FeedPayloadError
from protocols.mqtt import safejson
from protocols.mqtt.client import MqttSession, MqttSettings
from protocols.mqtt.topics import VERSION, site_prefix

# Topics whose messages are events, not state: shown live, never kept for replay.
# (MQTT delivers live messages to a subscriber with the retain flag cleared, so the
# flag cannot tell us; the feed tree's convention does.)
_TRANSIENT_LAST_LEVEL = "event"

# A standings message for a few hundred seats is tens of kilobytes; far more is not ours.
MAX_FEED_PAYLOAD = 256 * 1024


class MqttFeedSource:
    """Subscription to one site's feed, republished into ``feed``."""

    def __init__(self, feed: FanoutFeed, broker_url: str, site: str) -> None:
        self.feed = feed
        self.site = site
        self.prefix = f"{site_prefix(site)}/feed/"  # TopicError (ValueError) on a bad site
        self.settings = MqttSettings.from_url(broker_url)  # ValueError on a bad URL
        self.session: MqttSession | None = None
        self.dropped = 0
        self._watch: asyncio.Task[None] | None = None

    @property
    def topic_filter(self) -> str:
        return f"{self.prefix}#"

    async def start(self, *, wait: bool = False) -> None:
        """Subscribe; with ``wait``, raise ``MqttUnavailable`` if the broker is not there.
        Without it the sign comes up at once and shows "waiting for the feed"."""
        self.session = MqttSession(self.settings, client_id=None)
        await self.session.route(self.topic_filter, self.handle)
        self.feed.set_upstream("disconnected")
        await self.session.start(wait=wait)
        self._watch = asyncio.create_task(self._watch_link(self.session), name="signage-upstream")

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        if self.session is not None:
            await self.session.close()
            self.session = None

    async def _watch_link(self, session: MqttSession) -> None:
        # The session has no disconnect callback; its ``connected`` flag is the truth.
        while True:
            self.feed.set_upstream("connected" if session.connected.is_set() else "disconnected")
            await asyncio.sleep(0.5)

    def handle(self, topic: str, payload: bytes) -> None:
        """One MQTT message.  Raises ``ValueError`` (counted and dropped by the session)
        for anything that is not a well-formed v1 feed message."""
        if not topic.startswith(self.prefix):
            raise FeedPayloadError(f"not a feed topic of site {self.site}: {topic!r}")
        relative = topic[len(self.prefix) :]
        if not payload:  # an empty retained message clears the topic (MQTT convention)
            self.feed.forget(relative)
            return
        body = decode(topic, payload)
        retain = relative.rsplit("/", 1)[-1] != _TRANSIENT_LAST_LEVEL
        self.feed.publish_nowait(relative, body, retain=retain)


def decode(topic: str, payload: bytes) -> dict[str, Any]:
    """One feed payload to its body; :class:`FeedPayloadError` for anything else (bounded
    in size, nesting and number length before parsing, like board payloads)."""
    try:
        body = safejson.loads(payload, max_bytes=MAX_FEED_PAYLOAD)
    except safejson.JsonLimitError as exc:
        raise FeedPayloadError(f"{topic}: {exc}") from None
    if not isinstance(body, dict):
        raise FeedPayloadError(f"{topic}: payload must be a JSON object")
    version = body.pop("v", VERSION)  # MqttFeed adds "v": 1; older publishers omit it
    if version != VERSION:
        raise FeedPayloadError(f"{topic}: schema version {version!r}, this sign reads {VERSION}")
    return body
