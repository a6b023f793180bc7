"""The live stream: a :class:`FanoutFeed` subscription as Server-Sent Events.

Starlette's ``StreamingResponse`` rather than an SSE library: :class:`FanoutFeed`
encodes each message to its SSE frame once, at publish time, and every page gets those
same bytes; an SSE library would re-frame every message for every client.  What the
library would add beyond framing — a keep-alive and an end at shutdown — is ours anyway
(``ping`` carries the server's clock, :meth:`Streams.end_all` ends the streams before
uvicorn stops), and ``StreamingResponse`` already stops the generator when the client
goes away.

Stream: ``hello`` (``now``, ``replayed``, ``upstream``, ``reset``), every retained value,
a ``status``, then live messages and a ``ping`` every ``ping_interval`` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

from starlette.responses import Response, StreamingResponse

from gateway.web.fanout import FanoutFeed, Subscription, TooManyClients, status_event

log = logging.getLogger(__name__)

# The page loads nothing from elsewhere and runs no inline script: a payload that somehow
# carried markup could not execute even if it were rendered as HTML (it is not).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Streams:
    """The open streams of one app, so closing the app ends them (and only them: the
    feed may serve another app in the same process)."""

    def __init__(self, feed: FanoutFeed, ping_interval: float) -> None:
        self.feed = feed
        self.ping_interval = ping_interval
        self.open: set[Subscription] = set()

    def end_all(self) -> None:
        for sub in tuple(self.open):
            sub.end()

    def response(self, remote: str) -> Response:
        try:
            sub = self.feed.subscribe()  # before any await: nothing slips between replay and live
        except TooManyClients as exc:
            return Response(str(exc), status_code=503, headers={"Retry-After": "5"})
        self.open.add(sub)
        return StreamingResponse(
            self._frames(sub, remote),
            media_type="text/event-stream; charset=utf-8",
            headers={
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # a reverse proxy must not buffer the stream
                **SECURITY_HEADERS,
            },
        )

    async def _frames(self, sub: Subscription, remote: str) -> AsyncIterator[bytes]:
        try:
            replay = b"".join(frame.event() for frame in sub.replay)
            yield hello(self.feed, len(sub.replay)) + replay + status_event(self.feed.upstream)
            sub.replay = []  # done with it; do not hold old frames for the stream's lifetime
            while True:  # ends with the client, the server, or a client too far behind
                try:
                    async with asyncio.timeout(self.ping_interval):
                        data = await sub.next()
                except TimeoutError:
                    data = f"event: ping\ndata: {json.dumps({'now': time.time()})}\n\n".encode()
                if data is None:
                    break
                yield data
        finally:
            self.open.discard(sub)
            sub.close()
            if sub.overflowed:
                log.warning("signage client %s fell behind; stream ended, it will reconnect",
                            remote)  # fmt: skip


def hello(feed: FanoutFeed, replayed: int) -> bytes:
    # "now" lets the page correct for its own clock when it counts down (ends_at is the
    # gateway's time); "reset" tells it to drop what it showed before this connection.
    body = {"now": time.time(), "replayed": replayed, "upstream": feed.upstream, "reset": True}
    # retry: the browser's reconnect delay (ms) when the stream drops.
    return f"retry: 2000\nevent: hello\ndata: {json.dumps(body)}\n\n".encode()
