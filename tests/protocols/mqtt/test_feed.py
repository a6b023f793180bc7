"""The live signage feed: retained values for late signs, resync after a broker restart,
and the standings a sign shows after a heat."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import aiomqtt
import pytest

from gateway.feed import FeedPublisher
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.live_feed import LiveHeatFeed
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.feed import MqttFeed
from protocols.mqtt.topics import TopicError


async def _retained(
    port: int, pattern: str, count: int, *, live_ok: bool = False
) -> dict[str, dict[str, Any]]:
    """What a sign that switches on now receives: the retained messages only (``live_ok``:
    or a republish the broker delivers live because it raced the subscription)."""
    out: dict[str, dict[str, Any]] = {}
    async with aiomqtt.Client("127.0.0.1", port) as sign:
        await sign.subscribe(pattern, qos=1)
        async with asyncio.timeout(5):
            async for message in sign.messages:
                assert message.retain or live_ok
                assert isinstance(message.payload, bytes)
                out[message.topic.value] = json.loads(message.payload)
                if len(out) == count:
                    break
    return out


async def test_late_sign_gets_the_last_values_even_after_a_broker_restart(
    broker: EmbeddedBroker, site: str
) -> None:
    feed = await MqttFeed.connect(broker.url, site)
    publisher: FeedPublisher = feed  # the gateway's interface
    try:
        await publisher.publish("heat/7/state", {"state": "armed"}, retain=True)
        await publisher.publish(
            "heat/7/state", {"state": "running", "seconds_left": 60}, retain=True
        )
        await publisher.publish("heat/7/seat/A01", {"credits": 480}, retain=True)
        await feed.flush()
        root = f"reelgate/v1/{site}/feed"
        seen = await _retained(broker.port, f"{root}/#", 2)
        assert seen[f"{root}/heat/7/state"] == {"v": 1, "state": "running", "seconds_left": 60}
        assert seen[f"{root}/heat/7/seat/A01"] == {"v": 1, "credits": 480}

        await broker.restart()  # amqtt forgets retained messages; the feed republishes
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while feed.stats.republished < 2:
            assert loop.time() < deadline
            await asyncio.sleep(0.02)
        await feed.flush()
        seen = await _retained(broker.port, f"{root}/#", 2, live_ok=True)
        assert seen[f"{root}/heat/7/state"]["state"] == "running"
    finally:
        await feed.close()


class _Recorder:
    """Stands in for MqttFeed where only the topics and payloads matter."""

    def __init__(self) -> None:
        self.last: dict[str, dict[str, Any]] = {}

    def publish_nowait(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        assert retain
        self.last[topic] = json.loads(json.dumps(payload, default=str))


def _note(kind: Progress, **kw: Any) -> ProgressNote:
    return ProgressNote(kind=kind, run_id=1, **kw)


async def test_live_heat_feed_publishes_seats_countdown_and_standings() -> None:
    rec = _Recorder()
    live = LiveHeatFeed(rec, "17", clock=lambda: datetime(2026, 11, 29, tzinfo=UTC), tick=None)
    assert rec.last["current"] == {"heat": "17"}
    live(_note(Progress.STATE, state="running", seconds_left=299.96))
    assert rec.last["heat/17/state"]["seconds_left"] == 300.0
    live(_note(Progress.CREDITS, machine_id="A01", value=480))
    assert rec.last["heat/17/seat/A01"]["credits"] == 480
    assert rec.last["heat/17/seat/A01"]["final"] is False
    for machine, credits in (("A01", 900), ("A02", 1200), ("A03", 900), ("A04", 50)):
        live(_note(Progress.SCORE, machine_id=machine, value=credits))
    live(_note(Progress.MALFUNCTION, machine_id="A04", detail="tilt"))
    live(_note(Progress.STATE, state="closed"))
    rows = rec.last["heat/17/standings"]["rows"]
    # T19: equal credits share a rank and are flagged for the card draw
    assert [(r["rank"], r["machine"], r["credits"], r["tie"]) for r in rows] == [
        (1, "A02", 1200, False),
        (2, "A01", 900, True),
        (2, "A03", 900, True),
    ]
    # T20: the malfunctioned seat is not ranked, and its sign says why
    assert rec.last["heat/17/seat/A04"]["malfunction"] == "tilt"


async def test_a_restarted_heat_publishes_void_standings() -> None:
    rec = _Recorder()
    live = LiveHeatFeed(rec, "18", tick=None)
    live(_note(Progress.SCORE, machine_id="A01", value=700))
    live(_note(Progress.STATE, state="restarted"))  # T20: the entire heat runs again
    assert rec.last["heat/18/standings"]["void"] is True
    assert rec.last["heat/18/standings"]["rows"] == []


async def test_countdown_ticks_while_running() -> None:
    rec = _Recorder()
    live = LiveHeatFeed(rec, "19", tick=0.05)
    live(_note(Progress.STATE, state="running", seconds_left=0.3))
    first = rec.last["heat/19/state"]["seconds_left"]
    await asyncio.sleep(0.2)
    assert rec.last["heat/19/state"]["seconds_left"] < first
    live(_note(Progress.STATE, state="ending"))
    assert rec.last["heat/19/state"]["state"] == "ending"
    live.close()


async def test_programming_errors_raise_at_once(broker: EmbeddedBroker, site: str) -> None:
    feed = await MqttFeed.connect(broker.url, site)
    try:
        with pytest.raises(TopicError):
            await feed.publish("heat/#/state", {"state": "x"}, retain=True)
        with pytest.raises(TypeError, match="not JSON"):
            await feed.publish("heat/1/state", {"when": object()}, retain=True)
        assert feed.stats.queued == 0
    finally:
        await feed.close()
