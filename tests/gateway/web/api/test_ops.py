"""``/metrics``, ``/healthz`` and ``/readyz`` beside the API, and the latency middleware
(route templates, bounded labels), over a stand-in :class:`Operations`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import httpx
import pytest
from prometheus_client import CollectorRegistry, Gauge
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.web.api import create_app
from gateway.web.api.ops import Check
from storage.db import make_sessionmaker


class StandIn:
    def __init__(self) -> None:
        self._registry = CollectorRegistry()
        self.scrapes = Gauge("test_scrapes", "scrapes seen", registry=self._registry)
        self.live = [Check("event_loop", True, "lag 1 ms")]
        self.ready = [Check("database", True, "revision 0010"), Check("bank:A", True, "3 up")]

    @property
    def registry(self) -> CollectorRegistry:
        return self._registry

    async def before_scrape(self) -> None:
        self.scrapes.inc()

    def liveness(self) -> Sequence[Check]:
        return self.live

    async def readiness(self) -> Sequence[Check]:
        return self.ready


@pytest.fixture
async def served(engine: AsyncEngine) -> AsyncIterator[tuple[httpx.AsyncClient, StandIn]]:
    ops = StandIn()
    app = create_app(make_sessionmaker(engine), ops=ops)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client, ops


async def test_health_answers_json_and_503_when_a_check_fails(
    served: tuple[httpx.AsyncClient, StandIn],
) -> None:
    client, ops = served
    r = await client.get("/readyz")
    assert r.status_code == 200
    assert r.json() == {
        "status": "ok",
        "checks": {
            "database": {"ok": True, "detail": "revision 0010"},
            "bank:A": {"ok": True, "detail": "3 up"},
        },
    }
    ops.ready = [Check("database", False, "database file /x.db is gone"), ops.ready[1]]
    r = await client.get("/readyz")
    assert r.status_code == 503
    assert r.headers["cache-control"] == "no-store"
    assert r.json()["status"] == "unavailable"
    assert r.json()["checks"]["database"] == {"ok": False, "detail": "database file /x.db is gone"}
    assert (await client.get("/healthz")).status_code == 200  # live all the same
    ops.live = [Check("event_loop", False, "no heartbeat for 11.0 s")]
    assert (await client.get("/healthz")).status_code == 503


async def test_metrics_render_the_own_registry_with_latency_by_route_template(
    served: tuple[httpx.AsyncClient, StandIn],
) -> None:
    client, _ = served
    assert (await client.get("/api/v1/players/8001015800087")).status_code == 401
    assert (await client.get("/no/such/page")).status_code == 404
    assert (await client.request("BREW", "/healthz")).status_code == 405
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=")
    body = r.text
    assert "test_scrapes 1.0" in body  # before_scrape ran first
    count = "reelgate_api_request_duration_seconds_count"
    assert f'{count}{{method="GET",route="/api/v1/players/{{ref}}",status="401"}} 1.0' in body
    assert f'{count}{{method="GET",route="unmatched",status="404"}} 1.0' in body
    assert f'{count}{{method="other",route="/healthz",status="405"}} 1.0' in body
    assert "8001015800087" not in body  # never a series per id


async def test_the_ops_endpoints_stay_out_of_the_api_schema(
    served: tuple[httpx.AsyncClient, StandIn],
) -> None:
    client, _ = served
    paths = (await client.get("/api/openapi.json")).json()["paths"]
    assert not {"/metrics", "/healthz", "/readyz"} & set(paths)
