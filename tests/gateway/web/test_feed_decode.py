"""Hostile signage feed payloads: each is a typed ``FeedPayloadError`` (the session drops
that one message), with the same bounds as board payloads (``protocols.mqtt.safejson``)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.web import FanoutFeed
from gateway.web.fanout import FeedPayloadError
from gateway.web.mqtt_source import MAX_FEED_PAYLOAD, MqttFeedSource, decode

TOPIC = "reelgate/v1/s1/feed/heat/1/standings"


@pytest.mark.parametrize(
    ("payload", "complaint"),
    [
        (b"[" * 5000 + b"]" * 5000, "nesting depth 5000"),
        (b'{"rows":' + b"[" * 40 + b"]" * 40 + b"}", "nesting depth 41"),
        (b'{"credits":' + b"7" * 4301 + b"}", "4301 digits"),
        (b'{"credits":1e400}', "out of range"),
        (b'{"credits":Infinity}', "Infinity is not a JSON number"),
        (b"{" + b" " * MAX_FEED_PAYLOAD + b"}", "over 262144"),
        (b'{"name":"\xc3"}', "not UTF-8"),
        (b'{"name":"\\udfff"}', "lone UTF-16 surrogate"),
        (b"not json", "not JSON"),
        (b"[1,2]", "must be a JSON object"),
        (b"42", "must be a JSON object"),
        (b'{"v":2}', "schema version 2"),
    ],
)
def test_hostile_feed_payloads_are_typed_errors(payload: bytes, complaint: str) -> None:
    with pytest.raises(FeedPayloadError, match=complaint):
        decode(TOPIC, payload)


def test_a_real_standings_message_passes() -> None:
    rows = ",".join(f'{{"machine":"A{i:03}","rank":{i},"credits":{10**12}}}' for i in range(400))
    body = decode(TOPIC, f'{{"v":1,"rows":[{rows}]}}'.encode())
    assert len(body["rows"]) == 400
    assert "v" not in body


def test_source_handler_raises_only_the_typed_error_and_keeps_the_last_value() -> None:
    sign = FanoutFeed()
    source = MqttFeedSource(sign, "mqtt://127.0.0.1:1", "s1")
    source.handle(TOPIC, b'{"v":1,"rows":[]}')
    with pytest.raises(FeedPayloadError):
        source.handle(TOPIC, b"[" * 5000)
    assert sign.retained() == {"heat/1/standings": {"rows": []}}


@settings(max_examples=300)
@given(st.binary(max_size=2048))
def test_decode_of_any_bytes_raises_only_feed_payload_error(payload: bytes) -> None:
    with contextlib.suppress(FeedPayloadError):
        decode(TOPIC, payload)
