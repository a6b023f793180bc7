"""The FastAPI application: ``/api/v1`` routers, ``/api/openapi.json``, JSON errors; with
``ops``, ``/metrics``, ``/healthz`` and ``/readyz`` beside them (:mod:`.ops`)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Mapping
from datetime import datetime

from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.web import console
from gateway.web.api import errors, training
from gateway.web.api.auth import Api
from gateway.web.api.ops import Operations
from gateway.web.api.ops import install as install_ops
from gateway.web.api.routes import (
    accounts,
    audit,
    cashier,
    cashup,
    desk,
    floor,
    heat_desk,
    hotseat,
    prizes,
    super9_settings,
    super9_table,
    super9_tickets,
    teams,
    technician,
    tournament_desk,
    tournaments,
    walkup,
)
from gateway.web.api.witnessed import WitnessedAnswers
from gateway.web.limits import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY, BodyLimit

PREFIX = "/api/v1"


def create_app(
    sessions: async_sessionmaker[AsyncSession],
    *,
    clock: Callable[[], datetime] | None = None,
    secure_cookies: bool | None = None,
    ops: Operations | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    larger_bodies: Mapping[str, int] | None = None,
) -> FastAPI:
    """The API and the console; every request body at most ``max_body`` bytes (more on
    the path prefixes of ``larger_bodies``), checked before it is read or anyone is
    authenticated (:mod:`gateway.web.limits`)."""
    app = FastAPI(
        title="Reelgate API",
        version="1",
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    api = Api(sessions, secure_cookies=secure_cookies)
    if clock is not None:
        api.clock = clock
    app.state.api = api
    errors.install(app)
    training.install(app)
    modules = (
        accounts,
        tournaments,
        desk,
        cashier,
        floor,
        technician,
        audit,
        cashup,
        super9_table,
        super9_tickets,
        heat_desk,
        tournament_desk,
        prizes,
        hotseat,
        super9_settings,
        teams,
        walkup,
    )
    for module in modules:
        app.include_router(module.router, prefix=PREFIX)
    if ops is not None:
        install_ops(app, ops, [(PREFIX, module.router) for module in modules])
    console.mount(app)  # the console's pages under /console/ (gateway.web.console)
    app.add_middleware(WitnessedAnswers, sessions=sessions)  # the head witnessed first
    # Outermost (added last): a body over the limit is refused before it is parsed.
    app.add_middleware(
        BodyLimit, max_body=max_body, timeout=body_timeout, larger=larger_bodies or {}
    )
    settle_heap()
    return app


@functools.cache  # once per process
def settle_heap() -> None:
    """Collect, then freeze what the process holds once its app exists (the imports, the
    tables, the routes): the collector's full passes walk every tracked object, and a
    full pass over the ~190,000 objects start-up leaves took 121 ms under the API
    benchmark, with every request on the event loop stopped behind it.  Frozen, they
    are never walked again; what the requests make is collected as before."""
    gc.collect()
    gc.freeze()
