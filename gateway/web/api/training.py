"""Every API response from a training database says so: ``X-Reelgate-Training: 1``.

The mark (:mod:`storage.database_mark`) is written once, when the database is created,
and never changes: the first request's own transaction reads it (``Api.training``,
see :mod:`gateway.web.api.auth`) and every response after that carries the header.

A pure ASGI middleware that only touches the response's first message: Starlette's
``@app.middleware("http")`` would run every request in a task group of its own with the
response piped through a memory stream, a cost paid on every call for one header.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders, State
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "X-Reelgate-Training"


class TrainingMark:
    def __init__(self, app: ASGIApp, state: State) -> None:
        self.app = app
        self.state = state  # the API app's (``state.api``), whatever app a route mounts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def marking(message: Message) -> None:
            # Read when the response starts: the request's own transaction has read it.
            if message["type"] == "http.response.start" and self.state.api.training:
                MutableHeaders(scope=message)[HEADER] = "1"
            await send(message)

        await self.app(scope, receive, marking)


def install(app: FastAPI) -> None:
    app.add_middleware(TrainingMark, state=app.state)
