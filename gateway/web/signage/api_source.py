"""Feed a :class:`FanoutFeed` from the gateway's API: ``GET /api/v1/feed/events``.

``reelgate signage --source api --api URL --token-file F`` runs the boards on their own
machine, fed by the gateway's live feed over HTTP (Server-Sent Events, a bearer token
of any role: the feed is what the public screens show anyway).  It is the same stream
the boards read (:mod:`.stream`): a ``hello``, every retained value, then live messages.

Theory of operation.  The source keeps what it has.  When the stream drops — the
gateway restarting, the network away — the feed is marked ``disconnected`` (every page
shows its "reconnecting" mark over the last values) and nothing is forgotten; the
source reconnects with a growing pause (1 s doubling to 15 s).  On reconnect the
gateway replays its retained values, which overwrite ours topic by topic; a gateway
that restarted empty replays nothing, so the screens keep the last state until the
gateway publishes anew.  Bad input (not JSON, not an object, a topic the feed refuses)
is dropped and counted; the previous value stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any
from urllib.parse import urlsplit

import httpx
from httpx_sse import SSEError, aconnect_sse

from gateway.web.fanout import FanoutFeed, FeedPayloadError
from protocols.mqtt import safejson

log = logging.getLogger(__name__)

MAX_FRAME = 512 * 1024  # a standings message for a few hundred seats is tens of kilobytes
FIRST_RETRY_S = 1.0
MAX_RETRY_S = 15.0
# The gateway pings every 15 s: three missed pings and the stream is dead.
READ_TIMEOUT_S = 45.0


class ApiUnavailable(ConnectionError):
    """The gateway's feed could not be read (``--wait``): the reason, in one line."""


class ApiFeedSource:
    """The gateway's feed stream, republished into ``feed``."""

    def __init__(self, feed: FanoutFeed, api_url: str, token: str) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{api_url!r}: use http(s)://HOST:PORT/api/v1")
        if not token or any(c.isspace() for c in token) or len(token) > 200:
            raise ValueError("the token must be one word of at most 200 characters")
        self.feed = feed
        self.url = f"{api_url.rstrip('/')}/feed/events"
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        self.dropped = 0
        self.connects = 0
        self._task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None

    @property
    def topic_filter(self) -> str:
        return self.url

    async def start(self, *, wait: bool = False) -> None:
        """Start following the stream; with ``wait``, raise :class:`ApiUnavailable` when
        the first connection fails (refused, or the token is not accepted)."""
        timeout = httpx.Timeout(5.0, read=READ_TIMEOUT_S)
        self._client = httpx.AsyncClient(timeout=timeout, headers=self._headers)
        self.feed.set_upstream("disconnected")
        first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._follow(first), name="signage-api-source")
        if wait:
            try:
                await first
            except ApiUnavailable:
                await self.close()
                raise

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self.feed.set_upstream("disconnected")

    async def _follow(self, first: asyncio.Future[None]) -> None:
        pause = FIRST_RETRY_S
        while True:  # until close() cancels it; each pass waits at least `pause`
            try:
                await self._stream(first)
                pause = FIRST_RETRY_S  # it ran: the next drop starts the backoff anew
            except (httpx.HTTPError, SSEError, ApiUnavailable) as exc:
                reason = exc if isinstance(exc, ApiUnavailable) else _describe(exc)
                if not first.done():
                    first.set_exception(ApiUnavailable(str(reason)))
                    first.exception()  # retrieved: nobody may wait on it (no --wait)
                log.warning("gateway feed %s: %s; retrying in %.0f s", self.url, reason, pause)
            self.feed.set_upstream("disconnected")
            await asyncio.sleep(pause)
            pause = min(pause * 2, MAX_RETRY_S)

    async def _stream(self, first: asyncio.Future[None]) -> None:
        assert self._client is not None
        async with aconnect_sse(self._client, "GET", self.url) as source:
            status = source.response.status_code
            if status != 200:
                detail = (await source.response.aread()).decode(errors="replace")[:200]
                raise ApiUnavailable(f"HTTP {status} {detail}".strip())
            async for event in source.aiter_sse():
                if event.event == "hello":
                    self.connects += 1
                    self.feed.set_upstream("connected")
                    if not first.done():
                        first.set_result(None)
                elif event.event == "message":
                    self.handle(event.data)

    def handle(self, data: str) -> None:
        """One message frame ``{"seq", "topic", "retain", "payload"}``; a bad one is
        dropped and counted."""
        try:
            frame = decode_frame(data)
            topic, payload = frame["topic"], frame.get("payload")
            retain = frame.get("retain") is True
            if payload is None:
                self.feed.forget(topic)
            else:
                self.feed.publish_nowait(topic, payload, retain=retain)
        except FeedPayloadError as exc:
            self.dropped += 1
            log.debug("gateway feed frame dropped: %s", exc)


def decode_frame(data: str) -> dict[str, Any]:
    """A stream frame, bounded in size and nesting before parsing."""
    try:
        frame = safejson.loads(data.encode(), max_bytes=MAX_FRAME)
    except safejson.JsonLimitError as exc:
        raise FeedPayloadError(f"frame: {exc}") from None
    if not isinstance(frame, dict) or not isinstance(frame.get("topic"), str):
        raise FeedPayloadError("frame: not a feed message")
    payload = frame.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise FeedPayloadError(f"{frame['topic']}: payload must be a JSON object")
    return frame


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect (is the gateway up?)"
    if isinstance(exc, httpx.ReadTimeout):
        return f"silent for {READ_TIMEOUT_S:.0f} s"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def read_token(path: str) -> str:
    """The token file's one line (``reelgate tokens create`` shows the secret once)."""
    with open(path, encoding="utf-8") as f:
        token = f.read(1024).strip()
    if not token:
        raise ValueError(f"{path}: empty")
    return token
