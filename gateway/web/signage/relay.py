"""``GET /api/v1/feed/events``: the live feed for a sign running on its own machine
(``reelgate signage --source api``), behind a bearer token like the rest of the API.

The same stream as the boards' ``/signage/events`` (:mod:`.stream`); any signed-in role
may read it (``heat.read``), since it carries what the public screens show.  The request's
transaction ends once the caller is known, before the stream starts: a stream open for
hours holds no database connection.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import Response

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.web.api.auth import who
from gateway.web.fanout import FanoutFeed
from gateway.web.signage.stream import Streams

PATH = "/api/v1/feed/events"


def mount_relay(app: FastAPI, feed: FanoutFeed, *, ping_interval: float = 15.0) -> Streams:
    """Add the feed stream to the API's ``app``; ``.end_all()`` on the result at shutdown."""
    streams = Streams(feed, ping_interval)
    router = APIRouter(tags=["feed"])

    # Not in the OpenAPI schema: a stream that never ends is no request/response pair
    # for a schema fuzzer; docs/signage.md describes it.
    @router.get(PATH, include_in_schema=False)
    async def feed_events(request: Request, _: Principal = who(P.HEAT_READ)) -> Response:
        client = request.client
        return streams.response(client.host if client else "?")

    app.include_router(router)
    return streams
