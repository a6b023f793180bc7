"""The operations endpoints beside the API: ``/metrics``, ``/healthz``, ``/readyz``.

``GET /metrics``  the Prometheus text exposition of the process's own registry (never
                  the global one: each app, and each test, has its own).
``GET /healthz``  liveness: the process answers and its event loop is not stuck.
``GET /readyz``   readiness: what the process needs to do its work (the database, the
                  spool, the broker, every enabled bank's links, recovery done).

Both health answers are JSON ``{"status": "ok" | "unavailable", "checks": {name:
{"ok": bool, "detail": str}}}``, 200 when every check passes and 503 otherwise, so a
load balancer, systemd or a technician's ``curl`` reads the same thing.  What the checks
are is the caller's (:class:`Operations`, assembled by ``gateway.app``); this module
only serves them.  :class:`LatencyMiddleware` times every HTTP request into a histogram
labelled by the route *template* (``/api/v1/heats/{heat_id}``, not one series per id).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# API calls answer in milliseconds; a slow database shows in the upper buckets.
# Label values come only from bounded sets: a client cannot grow the series.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str = ""


class Operations(Protocol):
    """What the endpoints serve (see the module docstring)."""

    @property
    def registry(self) -> CollectorRegistry: ...

    async def before_scrape(self) -> None:
        """Read what a scrape shows but only the database knows (bounded; never raises)."""
        ...

    def liveness(self) -> Sequence[Check]: ...

    async def readiness(self) -> Sequence[Check]: ...


def health_body(checks: Sequence[Check]) -> tuple[int, dict[str, Any]]:
    ok = all(c.ok for c in checks)
    body = {
        "status": "ok" if ok else "unavailable",
        "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks},
    }
    return (200 if ok else 503), body


def install(
    app: FastAPI, ops: Operations, routers: Iterable[tuple[str, APIRouter]] = ()
) -> None:
    """Add the three endpoints and the latency middleware to ``app``; ``routers`` are the
    (prefix, router) pairs included, whose routes know their path without the prefix."""
    templates = {
        id(route): prefix + route.path
        for prefix, router in routers
        for route in router.routes
        if isinstance(route, Route)
    }
    latency = Histogram(
        "reelgate_api_request_duration_seconds",
        "HTTP requests to the API, by method, route template and status",
        ("method", "route", "status"),
        registry=ops.registry,
        buckets=LATENCY_BUCKETS,
    )
    app.add_middleware(LatencyMiddleware, latency=latency, templates=templates)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        await ops.before_scrape()
        # Read on the event loop (the state it reads changes there), formatted in a
        # thread: the text of a large floor must not hold up the machines' polls.
        collected = Collected(list(ops.registry.collect()))
        body = await asyncio.to_thread(generate_latest, collected)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        status, body = health_body(ops.liveness())
        return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> JSONResponse:
        status, body = health_body(await ops.readiness())
        return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


class Collected(Collector):
    """Metric families already read, for :func:`generate_latest` to format."""

    def __init__(self, metrics: list[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self._metrics


class LatencyMiddleware:
    """Times each HTTP request (pure ASGI: no body buffering, streams pass through)."""

    def __init__(self, app: ASGIApp, latency: Histogram, templates: Mapping[int, str]) -> None:
        self.app = app
        self.latency = latency
        self.templates = templates  # id(route) -> its full path template

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [500]  # an exception before the response starts is the server's error

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, sending)
        finally:
            method = scope["method"] if scope["method"] in METHODS else "other"
            self.latency.labels(method, self._template(scope), str(status[0])).observe(
                time.perf_counter() - started
            )

    def _template(self, scope: Scope) -> str:
        route = scope.get("route")
        if not isinstance(route, Route):
            return "unmatched"  # a 404: one series for every path nobody serves
        return self.templates.get(id(route), route.path)
