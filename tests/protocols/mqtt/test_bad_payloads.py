"""Hostile board payloads: every one is a typed ``PayloadError`` that drops one message,
and the shared session keeps serving commands after it (issue "One truth for a heat",
items 7 and 8)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

import aiomqtt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.machines.mqtt import BoardHub, MqttMachineDriver
from gateway.machines.registry import open_driver
from protocols.mqtt import codec, safejson
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSession, MqttSettings
from protocols.mqtt.codec import PayloadError
from protocols.mqtt.topics import Channel, board_topic
from tests.conftest import MQTT_URL

from .mqtt_boards import Boards

STATE = (
    b'{"v":1,"seq":1,"at":"2026-01-01T00:00:00+00:00","powered":true,"locked":true,'
    b'"door_open":false,"tilted":false,"handpay_pending":false,"game_in_progress":false,'
    b'"credits":%s,"tournament":null}'
)

HOSTILE = [
    (b"[" * 5000 + b"]" * 5000, "nesting depth 5000"),
    (b'{"v":1,"x":' + b"[" * 40 + b"]" * 40 + b"}", "nesting depth 41"),
    (STATE % (b"9" * 4301), "4301 digits"),  # Python's int-string limit is 4300
    (STATE % (b"1" * 41), "41 digits"),
    (STATE % b"1e999", "out of range"),
    (STATE % b"NaN", "NaN is not a JSON number"),
    (STATE % b"-Infinity", "-Infinity is not a JSON number"),
    (b" " * (codec.MAX_PAYLOAD + 1), "over 16384"),
    (b'{"v":1,"seq":1,"at":"\xff"}', "not UTF-8"),
    (b"\xfe\xff\x00{", "not UTF-8"),  # a UTF-16 BOM: json.loads(bytes) would guess
    (b'{"v":1,"reason":"\\ud800"}', "lone UTF-16 surrogate"),
    (b"", "not JSON"),
    (b'{"v":1,', "not JSON"),
    (b"[1,2]", "expected a JSON object"),
    (b'"text"', "expected a JSON object"),
    (b"null", "expected a JSON object"),
]


@pytest.mark.parametrize(("payload", "complaint"), HOSTILE)
@pytest.mark.parametrize("channel", list(Channel), ids=lambda c: c.value)
def test_hostile_payloads_are_typed_errors(
    channel: Channel, payload: bytes, complaint: str
) -> None:
    with pytest.raises(PayloadError, match=complaint):
        codec.decode(channel, payload)


def test_the_limits_leave_real_payloads_alone() -> None:
    big = STATE % b"18446744073709551615"  # a 64-bit meter
    assert isinstance(codec.decode(Channel.STATE, big), codec.State)
    # Brackets and escaped quotes inside strings are not nesting.
    reason = "[" * 100 + '\\"{{{' + "\\\\"
    reply = b'{"v":1,"id":"c1","ok":false,"at":"2026-01-01T00:00:00Z","error":"refused",'
    msg = codec.decode(Channel.REPLY, reply + f'"reason":"{reason}"}}'.encode())
    assert isinstance(msg, codec.Reply)
    assert msg.reason.startswith("[[[")
    paired = b'{"v":1,"id":"c1","ok":true,"at":"2026-01-01T00:00:00Z",'
    paired += b'"result":{"n":"\\ud83c\\udfb0"}}'
    reply_ok = codec.decode(Channel.REPLY, paired)
    assert isinstance(reply_ok, codec.Reply)
    assert reply_ok.result == {"n": "\U0001f3b0"}


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("{}", 1),
        ('[[1],{"a":[2]}]', 3),
        ('["[[[", "]"]', 1),
        ('["\\"[[", 1]', 1),  # an escaped quote does not end the string
        ('["\\\\", [[]]]', 3),  # an escaped backslash does not escape the quote after it
        ("]]]", 0),
    ],
)
def test_nesting_depth_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert safejson.nesting_depth(text.encode()) == depth


@settings(max_examples=300)
@given(st.binary(max_size=2048), st.sampled_from(list(Channel)))
def test_decode_of_any_bytes_raises_only_payload_error(payload: bytes, channel: Channel) -> None:
    with contextlib.suppress(PayloadError):
        codec.decode(channel, payload)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300)
@given(_JSON, st.sampled_from(list(Channel)), st.integers(0, 60), st.integers(0, 200))
def test_decode_of_json_shaped_garbage_raises_only_payload_error(
    value: object, channel: Channel, wrap: int, cut: int
) -> None:
    text = "[" * wrap + json.dumps(value) + "]" * wrap
    for payload in (text.encode(), text.encode()[: -cut or None]):
        with contextlib.suppress(PayloadError):
            codec.decode(channel, payload)


# -- the shared session survives ------------------------------------------------------
@pytest.fixture(params=["embedded", "mosquitto"])
async def broker_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    if request.param == "mosquitto":
        if not MQTT_URL:
            pytest.skip("REELGATE_MQTT_URL not set")
        yield MQTT_URL
        return
    async with EmbeddedBroker() as running:
        yield running.url


async def test_session_keeps_serving_commands_after_hostile_state_payloads(
    broker_url: str, site: str, caplog: pytest.LogCaptureFixture
) -> None:
    boards = Boards(broker_url, site)
    try:
        board = await boards.add("H01")
        driver = open_driver("H01", boards.endpoint("H01"))
        assert isinstance(driver, MqttMachineDriver)
        await driver.open()
        try:
            hub = driver._hub
            assert isinstance(hub, BoardHub)
            stats = hub.session.stats
            before = stats.dropped
            settings_ = MqttSettings.from_url(broker_url)
            state_topic = board_topic(site, "H01", Channel.STATE)
            async with aiomqtt.Client(settings_.host, settings_.port) as rogue:
                for payload, _ in HOSTILE[:8]:
                    await rogue.publish(state_topic, payload, qos=1)
            # Commands go out and replies come back on the same session afterwards, so
            # every hostile message has been dispatched (one ordered stream) and dropped.
            assert await driver.credits() == board.machine.credits
            await driver.lock()
            assert board.machine.play_locked
            assert stats.dropped - before == 8
            assert not any(r.levelno >= logging.ERROR for r in caplog.records)
        finally:
            await driver.close()
    finally:
        await boards.close()


async def test_a_handler_bug_is_logged_and_the_dispatch_loop_carries_on(
    broker_url: str, site: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings_ = MqttSettings.from_url(broker_url)
    got: list[bytes] = []

    def handler(topic: str, payload: bytes) -> None:
        if payload == b"boom":
            raise RuntimeError("a bug in a handler")
        if payload == b"deep":
            raise RecursionError("as json.loads raised before the bounds")
        got.append(payload)

    listener = MqttSession(settings_)
    talker = MqttSession(settings_)
    await listener.route(f"{site}/bug/#", handler)
    await listener.start()
    await talker.start()
    try:
        for payload in (b"boom", b"deep", b"after"):
            await talker.publish(f"{site}/bug/x", payload)
        async with asyncio.timeout(10):
            while not got:  # noqa: ASYNC110  (bounded by the timeout)
                await asyncio.sleep(0.02)
        assert got == [b"after"]
        assert listener.stats.handler_errors == {
            "handler-bug:RuntimeError": 1,
            "handler-bug:RecursionError": 1,
        }
        tracebacks = [r for r in caplog.records if r.exc_info is not None]
        assert len(tracebacks) == 2
    finally:
        await talker.close()
        await listener.close()
