"""The self-healing session: matching, settings, resubscription and resync after a broker
restart, bounded in-flight publishes, and failing cleanly without a broker."""

from __future__ import annotations

import asyncio

import pytest

from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable, topic_matches


@pytest.mark.parametrize(
    ("pattern", "topic", "expected"),
    [
        ("a/+/c", "a/b/c", True),
        ("a/+/c", "a/b/d", False),
        ("a/#", "a/b/c", True),
        ("a/#", "a", True),
        ("a/+", "a/b/c", False),
        ("a/b", "a/b", True),
        ("+/+", "a", False),
    ],
)
def test_topic_matching(pattern: str, topic: str, expected: bool) -> None:
    assert topic_matches(pattern, topic) is expected


def test_settings_from_url() -> None:
    s = MqttSettings.from_url("mqtt://ops:s%40cret@127.0.0.1:1884?mqtt5=1")
    assert (s.host, s.port, s.username, s.password, s.mqtt5, s.tls) == (
        "127.0.0.1",
        1884,
        "ops",
        "s@cret",
        True,
        False,
    )
    t = MqttSettings.from_url("mqtts://127.0.0.1?ca=/etc/ca.pem&insecure=1")
    assert (t.port, t.tls, t.ca_file, t.tls_insecure) == (8883, True, "/etc/ca.pem", True)
    assert MqttSettings.from_url("mqtt://127.0.0.1?tls=1").tls
    for bad in ("http://127.0.0.1", "mqtt://", "127.0.0.1:1883"):
        with pytest.raises(ValueError, match="broker URL"):
            MqttSettings.from_url(bad)


async def test_resubscribes_and_resyncs_after_broker_restart(broker: EmbeddedBroker) -> None:
    settings = MqttSettings.from_url(broker.url)
    got: list[bytes] = []
    resyncs = 0

    async def resync() -> None:
        nonlocal resyncs
        resyncs += 1

    listener = MqttSession(settings)
    await listener.route("t/restart/#", lambda topic, payload: got.append(payload))
    listener.on_connect(resync)
    talker = MqttSession(settings)
    await listener.start()
    await talker.start()
    try:
        await talker.publish("t/restart/x", b"before")
        await broker.restart()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        # Clean sessions: what is published before the listener is back is not kept for
        # it (that is what the resync callbacks are for), so wait for its resubscription.
        while not (listener.stats.connects == 2 and listener.connected.is_set()):
            assert loop.time() < deadline
            await asyncio.sleep(0.02)
        await talker.publish("t/restart/x", b"after")  # waits for its own reconnect
        while got != [b"before", b"after"]:
            assert loop.time() < deadline, got
            await asyncio.sleep(0.02)
        assert listener.stats.connects == 2
        assert resyncs == 2
    finally:
        await talker.close()
        await listener.close()


async def test_in_flight_publishes_are_bounded(broker: EmbeddedBroker) -> None:
    settings = MqttSettings.from_url(broker.url)
    session = MqttSession(MqttSettings(settings.host, settings.port, max_inflight=2))
    receiver = MqttSession(settings)
    got: list[bytes] = []
    await receiver.route("t/bound", lambda topic, payload: got.append(payload))
    await receiver.start()
    await session.start()
    try:
        peak = 0

        async def one(i: int) -> None:
            nonlocal peak
            await session.publish("t/bound", str(i).encode())
            # the semaphore's free slots never go below zero: at most 2 in flight
            peak = max(peak, 2 - session._inflight._value)

        await asyncio.gather(*(one(i) for i in range(40)))
        assert peak <= 2
        assert session.stats.published == 40
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while len(got) < 40:
            assert loop.time() < deadline
            await asyncio.sleep(0.02)
        assert sorted(int(p) for p in got) == list(range(40))
    finally:
        await session.close()
        await receiver.close()


async def test_no_broker_is_a_clean_error() -> None:
    settings = MqttSettings("127.0.0.1", 1, connect_timeout=0.5)  # nothing listens on port 1
    session = MqttSession(settings)
    with pytest.raises(MqttUnavailable, match="no MQTT broker"):
        await session.start()


async def test_publish_while_broker_down_gives_up_after_its_timeout(
    broker: EmbeddedBroker,
) -> None:
    s = MqttSettings.from_url(broker.url)
    session = MqttSession(MqttSettings(s.host, s.port, publish_timeout=0.5, reconnect_max=0.2))
    await session.start()
    try:
        await broker.stop()
        with pytest.raises(MqttUnavailable, match="broker unavailable"):
            await session.publish("t/down", b"x")
    finally:
        await session.close()


def test_embedded_broker_binds_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback only"):
        EmbeddedBroker(host="0.0.0.0")
    with pytest.raises(RuntimeError, match="not started"):
        _ = EmbeddedBroker().url


async def test_embedded_broker_reports_its_port_and_keeps_it_across_a_restart() -> None:
    async with EmbeddedBroker() as running:
        port = running.port
        assert port > 0
        assert running.url == f"mqtt://127.0.0.1:{port}"
        await running.restart()
        assert running.port == port
        assert running.running


def test_messages_read_while_subscribing_wait_for_the_connection_then_pass_straight() -> None:
    """The session takes messages from paho's callback as they are parsed; those arriving
    before it is connected (retained ones, during subscribe) are held, in order."""
    from protocols.mqtt.client import _EarlyMessages

    seen: list[tuple[str, bytes]] = []
    early = _EarlyMessages(lambda topic, payload: seen.append((topic, payload)))
    early.receive("a/state", b"1")
    early.receive("b/state", b"2")
    assert seen == []
    early.flush()
    assert seen == [("a/state", b"1"), ("b/state", b"2")]
    early.receive("a/cmd", b"3")  # connected: dispatched at once, no queue
    assert seen[-1] == ("a/cmd", b"3")
    early.flush()  # a second flush is harmless
    assert len(seen) == 3
