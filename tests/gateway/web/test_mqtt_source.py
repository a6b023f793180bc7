"""A sign fed from the broker: the MQTT engineer's feed tree, end to end (embedded amqtt,
or Mosquitto when ``REELGATE_MQTT_URL`` is set)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import aiomqtt
import httpx
import pytest

from gateway.app.cli import main
from gateway.app.commands.signage import run_signage
from gateway.errors import OperatorError
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.live_feed import LiveHeatFeed
from gateway.web import FanoutFeed
from gateway.web.mqtt_source import MqttFeedSource
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.feed import MqttFeed
from protocols.mqtt.topics import feed_topic


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
def site() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


async def until(check: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110  (bounded by the timeout; polls plain state)
            await asyncio.sleep(0.02)


def note(kind: Progress, **kw: object) -> ProgressNote:
    return ProgressNote(kind=kind, run_id=1, **kw)  # type: ignore[arg-type]


async def test_sign_follows_a_heat_published_by_the_gateway(
    broker: EmbeddedBroker, site: str
) -> None:
    sign = FanoutFeed()
    source = MqttFeedSource(sign, broker.url, site)
    await source.start(wait=True)
    gateway = await MqttFeed.connect(broker.url, site)
    live = LiveHeatFeed(gateway, "21", tick=None)
    try:
        await until(lambda: sign.upstream == "connected")
        live(note(Progress.STATE, state="running", seconds_left=120.0))
        live(note(Progress.CREDITS, machine_id="A01", value=300))
        live(note(Progress.CREDITS, machine_id="A02", value=450))
        live(note(Progress.MALFUNCTION, machine_id="A03", detail="door open"))  # T20
        live(note(Progress.SCORE, machine_id="A02", value=450))
        live(note(Progress.SCORE, machine_id="A01", value=450))  # a tie: T19
        live(note(Progress.STATE, state="closed"))
        await gateway.flush()
        await until(lambda: "heat/21/standings" in sign.retained())
        shown = sign.retained()
        assert shown["current"] == {"heat": "21"}  # "v" is the transport's, not the page's
        assert shown["heat/21/state"]["state"] == "closed"
        assert shown["heat/21/seat/A02"]["credits"] == 450
        assert shown["heat/21/seat/A03"]["malfunction"] == "door open"
        rows = shown["heat/21/standings"]["rows"]
        assert [(r["machine"], r["rank"], r["tie"]) for r in rows] == [
            ("A01", 1, True),
            ("A02", 1, True),
        ]
    finally:
        live.close()
        await gateway.close()
        await source.close()


async def test_bad_messages_are_dropped_counted_and_keep_the_last_good_value(
    broker: EmbeddedBroker, site: str
) -> None:
    sign = FanoutFeed()
    source = MqttFeedSource(sign, broker.url, site)
    await source.start(wait=True)
    topic = feed_topic(site, "super9/3/draw")
    try:
        async with aiomqtt.Client(broker.host, broker.port) as desk:
            await desk.publish(topic, b'{"v":1,"called":[7]}', qos=1, retain=True)
            await until(lambda: sign.retained().get("super9/3/draw") == {"called": [7]})
            for bad in (b"not json", b"[1,2]", b'{"v":2,"called":[8]}', b"\xff\xfe"):
                await desk.publish(topic, bad, qos=1, retain=True)
            assert source.session is not None
            session = source.session
            await until(lambda: session.stats.dropped == 4)
            assert sign.retained() == {"super9/3/draw": {"called": [7]}}

            # An event topic is shown live but never kept for late pages.
            sub = sign.subscribe()
            await desk.publish(feed_topic(site, "machine/A01/event"), b'{"event":"link-up"}')
            frame = await asyncio.wait_for(sub.next(), 5)
            assert frame is not None
            assert b'"retain":false' in frame
            assert "machine/A01/event" not in sign.retained()

            # An empty retained message clears the topic, as on the broker.
            await desk.publish(topic, b"", qos=1, retain=True)
            await until(lambda: "super9/3/draw" not in sign.retained())
    finally:
        await source.close()


async def test_sign_reports_the_broker_going_away_and_resyncs_after(site: str) -> None:
    async with EmbeddedBroker() as broker:
        port = broker.port
        gateway = await MqttFeed.connect(broker.url, site)
        await gateway.publish("current", {"heat": "2"}, retain=True)
        await gateway.flush()
        sign = FanoutFeed()
        source = MqttFeedSource(sign, broker.url, site)
        await source.start(wait=True)
        try:
            await until(lambda: sign.retained() == {"current": {"heat": "2"}})
            await broker.stop()
            await until(lambda: sign.upstream == "disconnected")
            await broker.start()  # same port; amqtt forgot every retained message
            assert broker.port == port
            await until(lambda: sign.upstream == "connected")
            await gateway.publish("current", {"heat": "3"}, retain=True)
            await until(lambda: sign.retained() == {"current": {"heat": "3"}})
        finally:
            await source.close()
            await gateway.close()


async def test_signage_command_serves_the_page_from_the_broker(
    broker: EmbeddedBroker, site: str
) -> None:
    sign = FanoutFeed()
    source = MqttFeedSource(sign, broker.url, site)
    stop = asyncio.Event()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        task = asyncio.create_task(run_signage(sign, source, "127.0.0.1", 0, stop=stop))
        await until(lambda: "signage on http://127.0.0.1:" in out.getvalue())
    url = out.getvalue().split()[2]
    gateway = await MqttFeed.connect(broker.url, site)
    try:
        await gateway.publish("super9/jackpot", {"jackpot_cents": 500_000}, retain=True)
        async with httpx.AsyncClient() as http:
            async with asyncio.timeout(10):
                while True:  # bounded by the timeout
                    retained = (await http.get(f"{url}snapshot")).json()["retained"]
                    if retained:
                        break
                    await asyncio.sleep(0.05)
        assert retained == {"super9/jackpot": {"jackpot_cents": 500_000}}
    finally:
        await gateway.close()
        stop.set()
        assert await asyncio.wait_for(task, 10) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--site", "a/b"], "--site"),
        (["--mqtt", "http://127.0.0.1:1"], "--mqtt"),
        (["--port", "70000"], "--port"),
    ],
)
def test_operator_mistakes_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["signage", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reelgate: error: ")
    assert message in err
    assert "\n" not in err


async def test_wait_fails_at_once_without_a_broker() -> None:
    # Port 9 on loopback (discard): nothing listens there in a test environment.
    source = MqttFeedSource(FanoutFeed(), "mqtt://127.0.0.1:9", "venue")
    source.settings = dataclasses.replace(source.settings, connect_timeout=0.3)
    with pytest.raises(OperatorError, match="no MQTT broker"):
        await run_signage(source.feed, source, "127.0.0.1", 0, wait=True)
    assert source.session is None  # closed again


def test_timestamps_in_payloads_arrive_as_text() -> None:
    sign = FanoutFeed()
    source = MqttFeedSource(sign, "mqtt://127.0.0.1:1883", "venue")
    at = datetime(2026, 11, 29, 18, 0, tzinfo=UTC).isoformat().encode()
    source.handle("reelgate/v1/venue/feed/heat/1/state", b'{"v":1,"at":"' + at + b'"}')
    assert sign.retained() == {"heat/1/state": {"at": at.decode()}}
    with pytest.raises(ValueError, match="not a feed topic"):
        source.handle("reelgate/v1/other/feed/current", b"{}")
