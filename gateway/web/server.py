"""The signage HTTP server (aiohttp): the page, its live stream, a snapshot, a health check.

=================  ==========================================================================
``GET /``          the signage page (``static/index.html``; CSS and JS under ``/static/``)
``GET /events``    Server-Sent Events: ``hello``, every retained value, then live messages;
                   ``ping`` every ``ping_interval`` seconds so dead connections are noticed
``GET /api/snapshot``  the retained values as JSON
``GET /healthz``   200 ``{"ok": true, …}``; 503 while the MQTT source is disconnected
=================  ==========================================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from gateway.web.fanout import FanoutFeed, Subscription, TooManyClients, status_event

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
LOOPBACK = "127.0.0.1"
FEED_KEY = web.AppKey("feed", FanoutFeed)
PING_KEY = web.AppKey("ping_interval", float)
STREAMS_KEY: web.AppKey[set[Subscription]] = web.AppKey("streams")

# The page loads nothing from elsewhere and runs no inline script: a payload that somehow
# carried markup could not execute even if it were rendered as HTML (it is not).
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    if not response.prepared:  # the event stream sets its own before it starts
        response.headers.update(_SECURITY_HEADERS)
    return response


def make_app(feed: FanoutFeed, *, ping_interval: float = 15.0) -> web.Application:
    app = web.Application(middlewares=[_headers])
    app[FEED_KEY] = feed
    app[PING_KEY] = ping_interval
    app[STREAMS_KEY] = set()
    app.router.add_get("/", _index)
    app.router.add_get("/events", _events)
    app.router.add_get("/api/snapshot", _snapshot)
    app.router.add_get("/healthz", _health)
    app.router.add_static("/static/", STATIC, follow_symlinks=False)
    app.on_shutdown.append(_end_streams)
    return app


async def _index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def _snapshot(request: web.Request) -> web.Response:
    feed = request.app[FEED_KEY]
    return web.Response(
        text=feed.snapshot_json(),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def _health(request: web.Request) -> web.Response:
    feed = request.app[FEED_KEY]
    ok = feed.upstream != "disconnected"
    body = {
        "ok": ok,
        "upstream": feed.upstream,
        "topics": feed.stats.retained_topics,
        "clients": feed.stats.clients,
        "published": feed.stats.published,
        "slow_clients": feed.stats.slow_clients,
        "evicted": feed.stats.evicted,
    }
    return web.json_response(body, status=200 if ok else 503)


def _hello(feed: FanoutFeed, replayed: int) -> bytes:
    # "now" lets the page correct for its own clock when it counts down (ends_at is the
    # gateway's time); "reset" tells it to drop what it showed before this connection.
    body = {"now": time.time(), "replayed": replayed, "upstream": feed.upstream, "reset": True}
    # retry: the browser's reconnect delay (ms) when the stream drops.
    return f"retry: 2000\nevent: hello\ndata: {json.dumps(body)}\n\n".encode()


async def _events(request: web.Request) -> web.StreamResponse:
    feed = request.app[FEED_KEY]
    try:
        sub = feed.subscribe()  # before any await: no message slips between replay and live
    except TooManyClients as exc:
        raise web.HTTPServiceUnavailable(text=str(exc), headers={"Retry-After": "5"}) from None
    streams: set[Subscription] = request.app[STREAMS_KEY]
    streams.add(sub)
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",  # a reverse proxy must not buffer the stream
            **_SECURITY_HEADERS,
        }
    )
    ping_every = request.app[PING_KEY]
    try:
        await response.prepare(request)
        replay = b"".join(frame.event() for frame in sub.replay)
        await response.write(_hello(feed, len(sub.replay)) + replay + status_event(feed.upstream))
        sub.replay = []  # done with it; do not hold old frames for the stream's lifetime
        while True:
            try:
                async with asyncio.timeout(ping_every):
                    data = await sub.next()
            except TimeoutError:
                data = f"event: ping\ndata: {json.dumps({'now': time.time()})}\n\n".encode()
            if data is None:  # server shutting down, or the client fell too far behind
                break
            await response.write(data)
    except ConnectionError:
        pass  # the client went away; nothing to clean up beyond the subscription
    finally:
        streams.discard(sub)
        sub.close()
    if sub.overflowed:
        log.warning("signage client %s fell behind; stream ended, it will reconnect",
                    request.remote)  # fmt: skip
    return response


async def _end_streams(app: web.Application) -> None:
    streams: set[Subscription] = app[STREAMS_KEY]
    for sub in tuple(streams):
        sub.end()


@dataclass
class SignageServer:
    """A running signage server: ``url`` to open, ``close()`` to stop."""

    feed: FanoutFeed
    host: str
    port: int
    runner: web.AppRunner

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    async def close(self) -> None:
        await self.runner.cleanup()

    async def __aenter__(self) -> SignageServer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def start_signage(
    feed: FanoutFeed,
    host: str = LOOPBACK,
    port: int = 0,
    *,
    ping_interval: float = 15.0,
) -> SignageServer:
    """Serve the signage page for ``feed`` on ``host:port`` (port 0: a free port, see
    ``.port``/``.url``).  Returns once listening; ``await server.close()`` stops it."""
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} must be 0..65535")
    runner = web.AppRunner(
        make_app(feed, ping_interval=ping_interval),
        access_log=None,  # a sign polls nothing; streams would flood the log
        shutdown_timeout=2.0,
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        with contextlib.suppress(Exception):
            await runner.cleanup()
        raise
    bound = next(a for a in runner.addresses if isinstance(a, tuple))
    return SignageServer(feed=feed, host=host, port=int(bound[1]), runner=runner)
