"""FanoutFeed: retained values for late pages, live push, wrapping the MQTT publisher."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.feed import FeedPublisher, MemoryFeed
from gateway.web.fanout import FanoutFeed, FeedPayloadError, TooManyClients


def frame_body(data: bytes) -> dict[str, Any]:
    text = data.decode()
    assert text.startswith("data: ")
    assert text.endswith("\n\n")
    body: dict[str, Any] = json.loads(text[len("data: ") : -2])
    return body


async def test_keeps_last_retained_value_per_topic_and_only_retained_ones() -> None:
    feed = FanoutFeed()
    publisher: FeedPublisher = feed  # the gateway's interface
    await publisher.publish("heat/7/state", {"state": "armed"}, retain=True)
    await publisher.publish("heat/7/state", {"state": "running", "seconds_left": 90.0}, retain=True)
    await publisher.publish("machine/A01/event", {"event": "link-down"})  # transient
    assert feed.retained() == {"heat/7/state": {"state": "running", "seconds_left": 90.0}}
    assert feed.stats.published == 3
    assert json.loads(feed.snapshot_json()) == {
        "seq": 3,
        "upstream": None,
        "retained": {"heat/7/state": {"state": "running", "seconds_left": 90.0}},
    }


async def test_wraps_another_publisher_so_mqtt_and_the_page_get_every_message() -> None:
    inner = MemoryFeed()
    feed = FanoutFeed(inner)
    await feed.publish("super9/3/draw", {"called": [5]}, retain=True)
    await feed.publish("machine/A01/event", {"event": "link-up"})
    assert inner.messages == [
        ("super9/3/draw", {"called": [5]}, True),
        ("machine/A01/event", {"event": "link-up"}, False),
    ]
    assert feed.retained() == {"super9/3/draw": {"called": [5]}}


class NowaitInner:
    """Stands in for MqttFeed's queueing side (LiveHeatFeed calls publish_nowait)."""

    def __init__(self) -> None:
        self.queued: list[tuple[str, dict[str, Any], bool]] = []

    async def publish(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        raise AssertionError("publish_nowait must not go through publish")

    def publish_nowait(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        self.queued.append((topic, payload, retain))


async def test_publish_nowait_forwards_through_the_inner_nowait_or_a_task() -> None:
    queued = NowaitInner()
    FanoutFeed(queued).publish_nowait("current", {"heat": "4"}, retain=True)
    assert queued.queued == [("current", {"heat": "4"}, True)]

    memory = MemoryFeed()
    feed = FanoutFeed(memory)
    feed.publish_nowait("current", {"heat": "5"}, retain=True)
    assert feed.retained() == {"current": {"heat": "5"}}  # at once, for the page
    await asyncio.sleep(0)  # the forwarding task runs
    assert memory.retained == {"current": {"heat": "5"}}


async def test_an_inner_failure_reaches_the_caller_but_the_page_has_the_message() -> None:
    class Away:
        async def publish(
            self, topic: str, payload: dict[str, Any], *, retain: bool = False
        ) -> None:
            raise ConnectionError("broker away")

    feed = FanoutFeed(Away())
    with pytest.raises(ConnectionError):
        await feed.publish("current", {"heat": "8"}, retain=True)
    assert feed.retained() == {"current": {"heat": "8"}}


async def test_datetimes_are_iso_text_and_later_mutation_changes_nothing() -> None:
    feed = FanoutFeed()
    at = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)
    payload: dict[str, Any] = {"state": "running", "at": at, "machines": ["A01"]}
    await feed.publish("heat/1/state", payload, retain=True)
    payload["machines"].append("A02")  # the caller reuses its dict
    payload["state"] = "paused"
    assert feed.retained()["heat/1/state"] == {
        "state": "running",
        "at": "2026-11-29T17:00:00+00:00",
        "machines": ["A01"],
    }


@pytest.mark.parametrize(
    "topic",
    ["", "/heat", "heat/", "heat//state", "heat/+/state", "heat/#", "heat/a b", 7],
)
async def test_bad_topics_are_refused_and_change_nothing(topic: Any) -> None:
    inner = MemoryFeed()
    feed = FanoutFeed(inner)
    await feed.publish("current", {"heat": "1"}, retain=True)
    with pytest.raises(FeedPayloadError, match="topic"):
        await feed.publish(topic, {"heat": "2"}, retain=True)
    assert feed.retained() == {"current": {"heat": "1"}}
    assert len(inner.messages) == 1  # the wrapped publisher never saw it
    assert feed.seq == 1


@pytest.mark.parametrize(
    "payload",
    [["not", "an", "object"], {"credits": float("nan")}, {"what": object()}, "text"],
)
async def test_payloads_that_are_not_json_objects_are_refused(payload: Any) -> None:
    feed = FanoutFeed(MemoryFeed())
    sub = feed.subscribe()
    with pytest.raises(FeedPayloadError, match="heat/1/seat/A01"):
        await feed.publish("heat/1/seat/A01", payload, retain=True)
    assert feed.retained() == {}
    assert sub._queue.empty()  # no page got anything either


async def test_forget_clears_a_retained_value_and_tells_the_pages() -> None:
    feed = FanoutFeed()
    await feed.publish("super9/2/draw", {"called": []}, retain=True)
    sub = feed.subscribe()
    feed.forget("super9/2/draw")
    feed.forget("super9/2/draw")  # already gone: nothing more to say
    assert feed.retained() == {}
    body = frame_body(await sub.next() or b"")
    assert body == {"seq": 2, "topic": "super9/2/draw", "retain": True, "payload": None}
    assert sub._queue.empty()


async def test_subscriber_gets_the_replay_then_every_live_message_exactly_once() -> None:
    feed = FanoutFeed()
    await feed.publish("current", {"heat": "3"}, retain=True)
    await feed.publish("heat/3/state", {"state": "armed"}, retain=True)
    await feed.publish("machine/A01/event", {"event": "link-up"})  # not replayed
    sub = feed.subscribe()
    assert [(f.topic, f.seq) for f in sub.replay] == [("current", 1), ("heat/3/state", 2)]
    await feed.publish("heat/3/state", {"state": "running"}, retain=True)
    await feed.publish("machine/A02/event", {"event": "link-down"})
    first = frame_body(await sub.next() or b"")
    second = frame_body(await sub.next() or b"")
    assert first == {"seq": 4, "topic": "heat/3/state", "retain": True,
                     "payload": {"state": "running"}}  # fmt: skip
    assert (second["topic"], second["retain"]) == ("machine/A02/event", False)
    sub.close()
    await feed.publish("current", {"heat": "4"}, retain=True)
    assert sub._queue.empty()
    assert feed.stats.clients == 0


async def test_a_client_that_falls_behind_is_cut_off_not_the_gateway() -> None:
    feed = FanoutFeed(client_backlog=5)
    slow = feed.subscribe()
    quick = feed.subscribe()
    for n in range(5):
        await feed.publish("heat/1/seat/A01", {"credits": n}, retain=True)
        assert await quick.next() is not None
    await feed.publish("heat/1/seat/A01", {"credits": 5}, retain=True)  # sixth: too many
    assert slow.overflowed
    assert feed.stats.slow_clients == 1
    assert await slow.next() is None  # its stream ends; the browser reconnects and replays
    assert await quick.next() is not None
    assert not quick.overflowed
    assert feed.retained() == {"heat/1/seat/A01": {"credits": 5}}  # nothing lost


async def test_client_limit_and_ending_every_stream() -> None:
    feed = FanoutFeed(max_clients=2)
    subs = [feed.subscribe(), feed.subscribe()]
    with pytest.raises(TooManyClients):
        feed.subscribe()
    feed.end_streams()
    assert [await s.next() for s in subs] == [None, None]


async def test_retained_topics_are_bounded_oldest_update_evicted_first() -> None:
    feed = FanoutFeed(max_topics=3)
    for heat in range(1, 4):
        await feed.publish(f"heat/{heat}/state", {"state": "closed"}, retain=True)
    await feed.publish("heat/1/state", {"state": "closed", "again": True}, retain=True)
    await feed.publish("heat/4/state", {"state": "armed"}, retain=True)
    assert list(feed.retained()) == ["heat/3/state", "heat/1/state", "heat/4/state"]
    assert feed.stats.evicted == 1


async def test_upstream_state_goes_to_every_page_once_per_change() -> None:
    feed = FanoutFeed()
    sub = feed.subscribe()
    feed.set_upstream("disconnected")
    feed.set_upstream("disconnected")
    feed.set_upstream("connected")
    events = [await sub.next(), await sub.next()]
    assert events == [
        b'event: status\ndata: {"upstream": "disconnected"}\n\n',
        b'event: status\ndata: {"upstream": "connected"}\n\n',
    ]
    assert sub._queue.empty()


_topics = st.sampled_from(["current", "heat/1/state", "heat/1/seat/A01", "super9/2/draw"])
_messages = st.lists(st.tuples(_topics, st.integers(-5, 10**12), st.booleans()), max_size=40)


@settings(max_examples=60, deadline=None)
@given(_messages)
def test_retained_matches_a_model_of_the_last_retained_write(
    messages: list[tuple[str, int, bool]],
) -> None:
    async def run() -> None:
        feed = FanoutFeed()
        sub = feed.subscribe()
        model: dict[str, dict[str, Any]] = {}
        for topic, value, retain in messages:
            await feed.publish(topic, {"value": value}, retain=retain)
            if retain:
                model[topic] = {"value": value}
        assert feed.retained() == model
        # A page that replays the snapshot and applies the stream sees the same thing.
        seen: dict[str, Any] = {}
        for _ in messages:
            body = frame_body(await sub.next() or b"")
            if body["retain"]:
                seen[body["topic"]] = body["payload"]
        assert seen == model

    asyncio.run(run())
