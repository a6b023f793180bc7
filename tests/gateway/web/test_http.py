"""The signage HTTP endpoints over a real socket on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from gateway.web import FanoutFeed, SignageServer, start_signage


@pytest.fixture
async def server() -> AsyncIterator[SignageServer]:
    running = await start_signage(FanoutFeed(), "127.0.0.1", 0, ping_interval=0.2)
    try:
        yield running
    finally:
        await running.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


async def read_event(response: aiohttp.ClientResponse) -> tuple[str, dict[str, Any] | None]:
    """One SSE event: (event name, data) — ("message", …) when unnamed."""
    name, data = "message", None
    async with asyncio.timeout(5):
        while True:  # bounded by the timeout
            raw = await response.content.readline()
            assert raw, "stream ended"
            line = raw.decode().rstrip("\n")
            if not line:
                if data is not None:
                    return name, data
                continue
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data = json.loads(value)


async def test_page_and_its_static_files(
    server: SignageServer, http: aiohttp.ClientSession
) -> None:
    assert server.host == "127.0.0.1"
    assert server.port > 0  # port 0: a free one, reported
    async with http.get(server.url) as response:
        assert response.status == 200
        assert response.content_type == "text/html"
        html = await response.text()
        csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert '<script src="/static/signage.js"' in html
    assert "http" not in html.lower().replace(
        "http-equiv", ""
    )  # nothing from a CDN
    for path, kind in (("signage.js", "javascript"), ("signage.css", "text/css")):
        async with http.get(f"{server.url}static/{path}") as response:
            assert response.status == 200
            assert kind in response.content_type
    async with http.get(f"{server.url}static/missing.js") as response:
        assert response.status == 404
    async with http.get(f"{server.url}static/%2e%2e/server.py") as response:
        assert response.status in (403, 404)  # no way out of the static folder


async def test_the_page_script_never_writes_markup() -> None:
    from gateway.web.server import STATIC

    script = (STATIC / "signage.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


async def test_snapshot_and_health(server: SignageServer, http: aiohttp.ClientSession) -> None:
    feed = server.feed
    await feed.publish("current", {"heat": "12"}, retain=True)
    await feed.publish("heat/12/seat/A01", {"credits": 250}, retain=True)
    await feed.publish("machine/A01/event", {"event": "link-up"})
    async with http.get(f"{server.url}api/snapshot") as response:
        assert response.status == 200
        snapshot = await response.json()
    assert snapshot == {
        "seq": 3,
        "upstream": None,
        "retained": {"current": {"heat": "12"}, "heat/12/seat/A01": {"credits": 250}},
    }
    async with http.get(f"{server.url}healthz") as response:
        assert response.status == 200
        health = await response.json()
    assert health["ok"] is True
    assert health["topics"] == 2
    assert health["published"] == 3

    feed.set_upstream("disconnected")  # the MQTT source lost its broker
    async with http.get(f"{server.url}healthz") as response:
        assert response.status == 503
        assert (await response.json())["upstream"] == "disconnected"


async def test_events_replay_then_live_then_ping(
    server: SignageServer, http: aiohttp.ClientSession
) -> None:
    feed = server.feed
    await feed.publish("current", {"heat": "5"}, retain=True)
    await feed.publish("heat/5/state", {"state": "running", "seconds_left": 42.0}, retain=True)
    async with http.get(f"{server.url}events") as response:
        assert response.status == 200
        assert response.content_type == "text/event-stream"
        name, hello = await read_event(response)
        assert name == "hello"
        assert hello is not None
        assert hello["replayed"] == 2
        assert hello["reset"] is True
        assert isinstance(hello["now"], float)
        replay = [await read_event(response), await read_event(response)]
        assert [(n, d and d["topic"]) for n, d in replay] == [
            ("message", "current"),
            ("message", "heat/5/state"),
        ]
        assert await read_event(response) == ("status", {"upstream": None})

        await feed.publish("heat/5/seat/A03", {"credits": 1200}, retain=True)
        name, live = await read_event(response)
        assert live == {"seq": 3, "topic": "heat/5/seat/A03", "retain": True,
                        "payload": {"credits": 1200}}  # fmt: skip
        name, ping = await read_event(response)  # nothing new within ping_interval
        assert name == "ping"
        assert ping is not None
        assert "now" in ping
        assert feed.stats.clients == 1
    # The client went away: its subscription is dropped at the next write.
    async with asyncio.timeout(5):
        while feed.stats.clients:  # noqa: ASYNC110  (bounded; pings notice the close)
            await asyncio.sleep(0.05)


async def test_shutdown_ends_open_streams_promptly(http: aiohttp.ClientSession) -> None:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0)
    async with http.get(f"{server.url}events") as response:
        assert (await read_event(response))[0] == "hello"
        await read_event(response)  # status
        async with asyncio.timeout(5):  # not the default 60 s of a hanging handler
            await server.close()
            assert await response.content.read() == b""  # stream ended cleanly
    assert server.feed.stats.clients == 0


async def test_stream_refuses_clients_beyond_the_limit(http: aiohttp.ClientSession) -> None:
    server = await start_signage(FanoutFeed(max_clients=1), "127.0.0.1", 0)
    try:
        async with http.get(f"{server.url}events") as first:
            assert (await read_event(first))[0] == "hello"
            async with http.get(f"{server.url}events") as second:
                assert second.status == 503
                assert second.headers["Retry-After"] == "5"
    finally:
        await server.close()


async def test_bad_port_is_refused() -> None:
    with pytest.raises(ValueError, match="port"):
        await start_signage(FanoutFeed(), "127.0.0.1", 70000)
