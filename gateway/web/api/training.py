"""Every API response from a training database says so: ``X-Reelgate-Training: 1``.

The mark (:mod:`storage.database_mark`) is written once, when the database is created,
and never changes: the first request's own transaction reads it (``Api.training``,
see :mod:`gateway.web.api.auth`) and every response after that carries the header.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

HEADER = "X-Reelgate-Training"
Next = Callable[[Request], Awaitable[Response]]


def install(app: FastAPI) -> None:
    @app.middleware("http")
    async def mark(request: Request, call_next: Next) -> Response:
        response = await call_next(request)
        if request.app.state.api.training:
            response.headers[HEADER] = "1"
        return response
