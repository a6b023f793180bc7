"""A :class:`gateway.feed.FeedPublisher` that also feeds the signage page's live stream.

:class:`FanoutFeed` keeps the last retained value per topic (what a sign switched on
late needs, exactly as an MQTT broker's retained messages) and pushes every message to
the Server-Sent-Events clients connected at that moment.  It can wrap another publisher
(``FanoutFeed(MqttFeed(...))``) so the gateway publishes to MQTT and to the page at once.

Each message is encoded to JSON once, at publish time, and the same bytes go to every
client; a payload mutated by its caller afterwards changes nothing here.  A client that
falls behind by more than ``client_backlog`` messages is cut off rather than slowing the
gateway down: its browser reconnects and gets a fresh replay, so it loses nothing.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from gateway.feed import FeedPublisher
from protocols.mqtt.topics import TopicError, check_segment

log = logging.getLogger(__name__)

Upstream = Literal["connected", "disconnected"] | None


class FeedPayloadError(ValueError):
    """A topic or payload the feed cannot carry; nothing was stored or sent."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One message as the stream and the snapshot carry it."""

    seq: int
    topic: str
    retain: bool
    payload_json: str | None  # None: the retained value was cleared

    def event(self) -> bytes:
        """The SSE frame: one ``data:`` line (JSON never contains a raw newline)."""
        payload = "null" if self.payload_json is None else self.payload_json
        retain = "true" if self.retain else "false"
        body = (
            f'{{"seq":{self.seq},"topic":{json.dumps(self.topic)},'
            f'"retain":{retain},"payload":{payload}}}'
        )
        return f"data: {body}\n\n".encode()


_END = object()  # sentinel: the stream ends (shutdown or slow client)


@dataclass(slots=True)
class FanoutStats:
    published: int = 0
    retained_topics: int = 0
    evicted: int = 0  # oldest retained topics dropped over max_topics
    slow_clients: int = 0  # clients cut off for falling behind (they reconnect)
    clients: int = 0
    clients_total: int = 0
    forward_errors: int = 0  # wrapped publisher failed on a publish_nowait


class Subscription:
    """One stream client: the retained values at subscribe time, then live frames."""

    def __init__(self, feed: FanoutFeed, replay: list[Frame], backlog: int) -> None:
        self._feed = feed
        self.replay = replay
        self.overflowed = False
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=backlog + 1)  # +1: the end
        self._backlog = backlog
        self._closed = False

    def offer(self, item: Any) -> None:
        if self._closed:
            return
        if item is not _END and self._queue.qsize() >= self._backlog:
            # Too far behind: drop what it has not read and end its stream; the browser
            # reconnects and the replay brings it up to date.
            self.overflowed = True
            self._feed.stats.slow_clients += 1
            while not self._queue.empty():
                self._queue.get_nowait()
            item = _END
        self._queue.put_nowait(item)
        if item is _END:
            self._closed = True

    async def next(self) -> bytes | None:
        """The next frame (SSE bytes); ``None`` when the stream must end."""
        item = await self._queue.get()
        if item is _END:
            return None
        assert isinstance(item, bytes)
        return item

    def end(self) -> None:
        self.offer(_END)

    def close(self) -> None:
        self._closed = True
        self._feed._drop(self)


class FanoutFeed:
    """Last retained value per topic, plus a live push to every connected page."""

    def __init__(
        self,
        inner: FeedPublisher | None = None,
        *,
        max_topics: int = 10_000,
        client_backlog: int = 1_000,
        max_clients: int = 256,
    ) -> None:
        self.inner = inner
        self.max_topics = max_topics
        self.client_backlog = client_backlog
        self.max_clients = max_clients
        self.stats = FanoutStats()
        self.upstream: Upstream = None  # state of the MQTT subscription feeding us, if any
        self._retained: dict[str, Frame] = {}  # insertion order = least recently updated first
        self._clients: set[Subscription] = set()
        self._seq = 0
        self._forwarding: set[asyncio.Task[None]] = set()

    # -- FeedPublisher -----------------------------------------------------------------
    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        """Keep and push the message, then hand it to the wrapped publisher (whose errors,
        e.g. a broker away, reach the caller; the page has the message already)."""
        self._keep(topic, payload, retain)
        if self.inner is not None:
            await self.inner.publish(topic, payload, retain=retain)

    def publish_nowait(
        self, topic: str, payload: dict[str, Any], *, retain: bool = False
    ) -> None:
        """Keep and push one message without waiting (``LiveHeatFeed`` calls this).  The
        wrapped publisher gets it through its own ``publish_nowait`` (``MqttFeed``), or
        a background task otherwise.  A bad topic or a payload that is not a JSON object
        raises :class:`FeedPayloadError` and changes nothing."""
        self._keep(topic, payload, retain)
        inner = self.inner
        if inner is None:
            return
        nowait = getattr(inner, "publish_nowait", None)
        if callable(nowait):
            nowait(topic, payload, retain=retain)
            return
        task = asyncio.create_task(inner.publish(topic, payload, retain=retain))
        self._forwarding.add(task)
        task.add_done_callback(self._forwarded)

    def _keep(self, topic: str, payload: dict[str, Any], retain: bool) -> None:
        check_topic(topic)
        self._emit(topic, encode_payload(topic, payload), retain)

    def _forwarded(self, task: asyncio.Task[None]) -> None:
        self._forwarding.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.stats.forward_errors += 1
            log.warning("wrapped feed publisher failed: %s", task.exception())

    def forget(self, topic: str) -> None:
        """Clear a retained value (an empty retained MQTT message); pages drop it too."""
        check_topic(topic)
        if topic in self._retained:
            del self._retained[topic]
            self.stats.retained_topics = len(self._retained)
            self._emit(topic, None, True)

    def set_upstream(self, state: Upstream) -> None:
        """Tell pages whether the feed's source (MQTT broker) is reachable."""
        if state == self.upstream:
            return
        self.upstream = state
        frame = status_event(state)
        for client in list(self._clients):
            client.offer(frame)

    # -- readers -----------------------------------------------------------------------
    def retained(self) -> dict[str, Any]:
        """Topic -> last retained payload (decoded), oldest update first."""
        return {
            topic: json.loads(frame.payload_json)
            for topic, frame in self._retained.items()
            if frame.payload_json is not None
        }

    def snapshot_json(self) -> str:
        """``{"seq": N, "upstream": …, "retained": {topic: payload}}`` without re-encoding
        the payloads."""
        parts = ",".join(
            f"{json.dumps(f.topic)}:{f.payload_json}"
            for f in self._retained.values()
            if f.payload_json is not None
        )
        return (
            f'{{"seq":{self._seq},"upstream":{json.dumps(self.upstream)},'
            f'"retained":{{{parts}}}}}'
        )

    @property
    def seq(self) -> int:
        return self._seq

    def subscribe(self) -> Subscription:
        """Register a stream client.  The replay and the live queue are taken in one step
        (no await), so the client sees every message exactly once.  Raises
        :class:`TooManyClients` beyond ``max_clients``."""
        if len(self._clients) >= self.max_clients:
            raise TooManyClients(f"signage stream full ({self.max_clients} clients)")
        sub = Subscription(self, list(self._retained.values()), self.client_backlog)
        self._clients.add(sub)
        self.stats.clients = len(self._clients)
        self.stats.clients_total += 1
        return sub

    def end_streams(self) -> None:
        """End every client's stream (server shutdown)."""
        for client in list(self._clients):
            client.end()

    # -- internals ---------------------------------------------------------------------
    def _emit(self, topic: str, payload_json: str | None, retain: bool) -> None:
        self._seq += 1
        frame = Frame(self._seq, topic, retain, payload_json)
        if retain and payload_json is not None:
            self._retained.pop(topic, None)  # re-insert: most recently updated last
            self._retained[topic] = frame
            while len(self._retained) > self.max_topics:
                del self._retained[next(iter(self._retained))]
                self.stats.evicted += 1
            self.stats.retained_topics = len(self._retained)
        self.stats.published += 1
        data = frame.event()
        for client in list(self._clients):
            client.offer(data)

    def _drop(self, sub: Subscription) -> None:
        self._clients.discard(sub)
        self.stats.clients = len(self._clients)


class TooManyClients(RuntimeError):
    pass


def status_event(upstream: Upstream) -> bytes:
    return f"event: status\ndata: {json.dumps({'upstream': upstream})}\n\n".encode()


def check_topic(topic: str) -> None:
    """Same rule as the MQTT feed tree, so anything shown here can also go over MQTT."""
    if not isinstance(topic, str) or not topic:
        raise FeedPayloadError(f"feed topic must be a non-empty string, not {topic!r}")
    try:
        for level in topic.split("/"):
            check_segment("feed topic level", level)
    except TopicError as exc:
        raise FeedPayloadError(f"feed topic {topic!r}: {exc}") from None


def encode_payload(topic: str, payload: dict[str, Any]) -> str:
    if not isinstance(payload, dict):
        kind = type(payload).__name__
        raise FeedPayloadError(f"{topic}: payload must be a JSON object, not {kind}")
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise FeedPayloadError(f"{topic}: payload is not JSON: {exc}") from None


def _json_default(value: Any) -> Any:
    # Heats put datetimes in payloads (LiveHeatFeed's "at"); the MQTT feed sends them as
    # ISO 8601 too, so the page sees the same text either way.
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"value {value!r} ({type(value).__name__}) is not JSON")
