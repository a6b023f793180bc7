"""The signage HTTP endpoints (FastAPI, uvicorn) over a real socket on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from httpx_sse import aconnect_sse

from gateway.web import FanoutFeed, SignageServer, SignageSettings, start_signage
from gateway.web.signage.app import STATIC

from .sse import next_event


@pytest.fixture
async def server() -> AsyncIterator[SignageServer]:
    running = await start_signage(FanoutFeed(), "127.0.0.1", 0, ping_interval=0.2)
    try:
        yield running
    finally:
        await running.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


@pytest.mark.parametrize("board", ["", "bank/A", "tournament/7", "super9"])
@pytest.mark.parametrize("layout", ["landscape", "portrait", "topper"])
async def test_every_board_in_every_layout_is_rendered_by_the_server(
    server: SignageServer, http: httpx.AsyncClient, board: str, layout: str
) -> None:
    response = await http.get(f"{server.url}{board}", params={"layout": layout})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert f'class="connecting layout-{layout} board-{board.split("/")[0] or "floor"}"' in html
    assert 'data-tz="Africa/Johannesburg"' in html
    assert '<script src="/signage/static/signage.js" defer></script>' in html
    assert "http" not in html.lower()  # nothing from elsewhere, not even a link
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp


async def test_each_board_carries_its_own_footer(
    server: SignageServer, http: httpx.AsyncClient
) -> None:
    super9 = (await http.get(f"{server.url}super9")).text
    bank = (await http.get(f"{server.url}bank/A")).text
    assert "rule 12" not in super9  # the tournament's footer is not the Super 9 board's
    assert 'data-footer="super9"' in super9
    assert "rule 12" in bank
    assert 'data-footer="super9"' not in bank


async def test_unknown_layout_and_bad_bank_are_4xx_naming_the_field(
    server: SignageServer, http: httpx.AsyncClient
) -> None:
    response = await http.get(f"{server.url}bank/A", params={"layout": "square"})
    assert response.status_code == 422
    assert "layout" in response.text
    assert (await http.get(f"{server.url}bank/a%2Fb")).status_code == 404
    response = await http.get(f"{server.url}bank/A", params={"page": "1"})
    assert response.status_code == 422
    assert "page" in response.text


async def test_branding_comes_from_the_settings(http: httpx.AsyncClient, tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    logo = tmp_path / "logo.svg"
    logo.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    settings = SignageSettings(
        title="Ridge Casino", logo=logo, colours={"accent": "#ff0000"}, venue_tz="Europe/London"
    )
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0, settings=settings)
    try:
        html = (await http.get(f"{server.url}bank/A")).text
        assert "Ridge Casino" in html
        assert 'data-tz="Europe/London"' in html
        assert '<img class="logo" src="/signage/logo"' in html
        theme = await http.get(f"{server.url}theme.css")
        assert theme.text == ":root{--accent:#ff0000;}\n"
        got = await http.get(f"{server.url}logo")
        assert got.headers["content-type"].startswith("image/svg+xml")
    finally:
        await server.close()


async def test_static_files_are_a_fixed_list(
    server: SignageServer, http: httpx.AsyncClient
) -> None:
    for path, kind in (("signage.js", "javascript"), ("signage.css", "text/css")):
        response = await http.get(f"{server.url}static/{path}")
        assert response.status_code == 200
        assert kind in response.headers["content-type"]
    assert (await http.get(f"{server.url}static/missing.js")).status_code == 404
    assert (await http.get(f"{server.url}static/%2e%2e%2fapp.py")).status_code == 404
    assert (await http.get(f"{server.url}logo")).status_code == 404  # none configured
    root = await http.get(server.base + "/", follow_redirects=False)
    assert root.status_code == 307
    assert root.headers["location"] == "/signage/"


def test_the_page_script_never_writes_markup() -> None:
    script = (STATIC / "signage.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


async def test_snapshot_and_health(server: SignageServer, http: httpx.AsyncClient) -> None:
    feed = server.feed
    await feed.publish("current", {"heat": "12"}, retain=True)
    await feed.publish("heat/12/seat/A01", {"credits": 250}, retain=True)
    await feed.publish("machine/A01/event", {"event": "link-up"})
    response = await http.get(f"{server.url}snapshot")
    assert response.status_code == 200
    assert response.json() == {
        "seq": 3,
        "upstream": None,
        "retained": {"current": {"heat": "12"}, "heat/12/seat/A01": {"credits": 250}},
    }
    health = (await http.get(f"{server.url}healthz")).json()
    assert health["ok"] is True
    assert health["topics"] == 2
    assert health["published"] == 3

    feed.set_upstream("disconnected")  # the source lost its broker or gateway
    response = await http.get(f"{server.url}healthz")
    assert response.status_code == 503
    assert response.json()["upstream"] == "disconnected"


async def test_events_replay_then_live_then_ping(
    server: SignageServer, http: httpx.AsyncClient
) -> None:
    feed = server.feed
    await feed.publish("current", {"heat": "5"}, retain=True)
    await feed.publish("heat/5/state", {"state": "running", "seconds_left": 42.0}, retain=True)
    async with aconnect_sse(http, "GET", f"{server.url}events") as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        events = source.aiter_sse()
        name, hello = await next_event(events)
        assert name == "hello"
        assert hello["replayed"] == 2
        assert hello["reset"] is True
        assert isinstance(hello["now"], float)
        replay = [await next_event(events), await next_event(events)]
        assert [(n, d["topic"]) for n, d in replay] == [
            ("message", "current"),
            ("message", "heat/5/state"),
        ]
        assert await next_event(events) == ("status", {"upstream": None})

        await feed.publish("heat/5/seat/A03", {"credits": 1200}, retain=True)
        name, live = await next_event(events)
        assert live == {"seq": 3, "topic": "heat/5/seat/A03", "retain": True,
                        "payload": {"credits": 1200}}  # fmt: skip
        name, ping = await next_event(events)  # nothing new within ping_interval
        assert name == "ping"
        assert "now" in ping
        assert feed.stats.clients == 1
    # The client went away: its subscription is dropped.
    async with asyncio.timeout(5):
        while feed.stats.clients:  # noqa: ASYNC110  (bounded by the timeout)
            await asyncio.sleep(0.05)


async def test_shutdown_ends_open_streams_promptly(http: httpx.AsyncClient) -> None:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0)
    async with aconnect_sse(http, "GET", f"{server.url}events") as source:
        events = source.aiter_sse()
        assert (await next_event(events))[0] == "hello"
        await next_event(events)  # status
        async with asyncio.timeout(5):  # not uvicorn's wait for a hanging handler
            await server.close()
            assert [e async for e in events] == []  # the stream ended cleanly
    assert server.feed.stats.clients == 0


async def test_stream_refuses_clients_beyond_the_limit(http: httpx.AsyncClient) -> None:
    server = await start_signage(FanoutFeed(max_clients=1), "127.0.0.1", 0)
    try:
        async with aconnect_sse(http, "GET", f"{server.url}events") as first:
            assert (await next_event(first.aiter_sse()))[0] == "hello"
            second = await http.get(f"{server.url}events")
            assert second.status_code == 503
            assert second.headers["retry-after"] == "5"
    finally:
        await server.close()


async def test_bad_port_is_refused() -> None:
    with pytest.raises(ValueError, match="port"):
        await start_signage(FanoutFeed(), "127.0.0.1", 70000)


async def test_a_port_in_use_is_an_os_error(server: SignageServer) -> None:
    with pytest.raises(OSError, match="in use"):
        await start_signage(FanoutFeed(), "127.0.0.1", server.port)
