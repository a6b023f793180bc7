"""The console's live stream: the gateway's feed (:class:`~gateway.web.fanout.FanoutFeed`)
as Server-Sent Events, filtered to the topics a page asked for (``prefix=``).

Authenticated once, at connect, in a transaction of its own (the stream holds none).
The retained values come first (a page opened mid-heat sees the heat at once), then
every live message; a client that falls behind is cut off and its browser reconnects.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from gateway.web.console.auth import identify
from gateway.web.console.state import console_of
from gateway.web.fanout import Subscription, TooManyClients

router = APIRouter()
PING_S = 15.0
_PREFIXES = ("heat/", "current", "machine/", "super9/", "tournament/", "bank/")


def _wanted(frame: bytes, prefixes: tuple[str, ...]) -> bool:
    if not frame.startswith(b"data: "):
        return True  # status and hello events
    try:
        topic = json.loads(frame[6:]).get("topic", "")
    except ValueError:
        return False
    return isinstance(topic, str) and topic.startswith(prefixes)


async def _stream(sub: Subscription, prefixes: tuple[str, ...]) -> AsyncIterator[bytes]:
    try:
        yield b"retry: 2000\n\n"
        for frame in sub.replay:
            data = frame.event()
            if _wanted(data, prefixes):
                yield data
        sub.replay = []
        while True:  # ends when the feed ends the stream (shutdown, slow client)
            try:
                async with asyncio.timeout(PING_S):
                    data_ = await sub.next()
            except TimeoutError:
                yield b": ping\n\n"
                continue
            if data_ is None:
                return
            if _wanted(data_, prefixes):
                yield data_
    finally:
        sub.close()


@router.get("/live")
async def live(request: Request, prefix: Annotated[list[str] | None, Query()] = None) -> Response:
    await identify(request, None)
    chosen = tuple(p for p in prefix or () if p.startswith(_PREFIXES) and len(p) <= 80) or _PREFIXES
    feed = console_of(request).feed
    if feed is None:
        return Response("no live feed in this process", status_code=204)
    try:
        sub = feed.subscribe()
    except TooManyClients as exc:
        return Response(str(exc), status_code=503, headers={"Retry-After": "5"})
    return StreamingResponse(
        _stream(sub, chosen),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
