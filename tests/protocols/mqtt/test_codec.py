"""Sans-I/O codec and topic tree: golden payloads, round trips, and every bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols.mqtt import codec
from protocols.mqtt.codec import (
    BoardEventKind,
    Command,
    CommandMessage,
    ErrorKind,
    PayloadError,
    Reply,
)
from protocols.mqtt.topics import (
    Channel,
    TopicError,
    board_filter,
    board_topic,
    feed_topic,
    parse_board_topic,
)

AT = datetime(2026, 11, 29, 18, 0, 0, tzinfo=timezone(timedelta(hours=2)))


def test_golden_state_payload() -> None:
    state = codec.State(
        seq=7,
        at=AT,
        powered=True,
        locked=False,
        door_open=False,
        tilted=False,
        handpay_pending=False,
        game_in_progress=False,
        credits=985,
        tournament=codec.TournamentView(
            credits=985, seconds_left=59.5, started=True, time_up=False
        ),
    )
    assert json.loads(codec.encode(state)) == {
        "v": 1,
        "seq": 7,
        "at": "2026-11-29T18:00:00+02:00",
        "powered": True,
        "locked": False,
        "door_open": False,
        "tilted": False,
        "handpay_pending": False,
        "game_in_progress": False,
        "credits": 985,
        "tournament": {"credits": 985, "seconds_left": 59.5, "started": True, "time_up": False},
    }
    assert codec.decode(Channel.STATE, codec.encode(state)) == state


def test_golden_command_wire_bytes() -> None:
    cmd = CommandMessage(
        id="c1", cmd=Command.ENTER_TOURNAMENT, at=AT, args={"credits": 1000, "seconds": 300}
    )
    assert codec.encode(cmd) == (
        b'{"v":1,"id":"c1","cmd":"enter-tournament","at":"2026-11-29T18:00:00+02:00",'
        b'"args":{"credits":1000,"seconds":300}}'
    )


_ts = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_n = st.integers(min_value=0, max_value=2**40)


@given(seq=_n, at=_ts, kind=st.sampled_from(BoardEventKind))
def test_event_round_trip(seq: int, at: datetime, kind: BoardEventKind) -> None:
    msg = codec.Event(seq=seq, at=at, kind=kind)
    assert codec.decode(Channel.EVENT, codec.encode(msg)) == msg


@given(seq=_n, at=_ts, credits=_n, inside=st.booleans(), a=_n, b=_n, c=_n, d=_n)
def test_meters_round_trip(
    seq: int, at: datetime, credits: int, inside: bool, a: int, b: int, c: int, d: int
) -> None:
    msg = codec.Meters(
        seq=seq,
        at=at,
        credits=credits,
        in_tournament=inside,
        games_played=a,
        games_won=b,
        credits_wagered=c,
        credits_won=d,
    )
    assert codec.decode(Channel.METERS, codec.encode(msg)) == msg


@given(
    ident=st.text("abcdef0123456789", min_size=1, max_size=64),
    ok=st.booleans(),
    reason=st.text(max_size=50),
)
def test_reply_round_trip(ident: str, ok: bool, reason: str) -> None:
    msg = Reply(
        id=ident,
        ok=ok,
        at=AT,
        result={"credits": 5} if ok else {},
        error=None if ok else ErrorKind.REFUSED,
        reason="" if ok else reason,
    )
    assert codec.decode(Channel.REPLY, codec.encode(msg)) == msg


@pytest.mark.parametrize(
    ("channel", "payload", "complaint"),
    [
        (Channel.STATE, b"\xff\xfe", "not JSON"),
        (Channel.STATE, b"[1,2]", "expected a JSON object"),
        (
            Channel.STATUS,
            b'{"v":2,"status":"online","at":"2026-01-01T00:00:00+00:00"}',
            "unsupported schema version",
        ),
        (
            Channel.STATUS,
            b'{"v":1,"status":"sleepy","at":"2026-01-01T00:00:00+00:00"}',
            "unknown value",
        ),
        (Channel.STATUS, b'{"v":1,"status":"online","at":"2026-01-01T00:00:00"}', "UTC offset"),
        (
            Channel.EVENT,
            b'{"v":1,"seq":1,"at":"2026-01-01T00:00:00Z","kind":"jackpot"}',
            "unknown value",
        ),
        (
            Channel.METERS,
            b'{"v":1,"seq":1,"at":"2026-01-01T00:00:00Z","credits":-5,'
            b'"in_tournament":true,"games_played":0,"games_won":0,"credits_wagered":0,'
            b'"credits_won":0}',
            "must be >= 0",
        ),
        (
            Channel.METERS,
            b'{"v":1,"seq":1,"at":"2026-01-01T00:00:00Z","credits":true,'
            b'"in_tournament":true,"games_played":0,"games_won":0,"credits_wagered":0,'
            b'"credits_won":0}',
            "expected an integer",
        ),
        (
            Channel.CMD,
            b'{"v":1,"id":"x","cmd":"enter-tournament","at":"2026-01-01T00:00:00Z",'
            b'"args":{"credits":0,"seconds":60}}',
            "credits: must be >= 1",
        ),
        (
            Channel.CMD,
            b'{"v":1,"id":"x","cmd":"lock","at":"2026-01-01T00:00:00Z","args":{"force":true}}',
            "unexpected",
        ),
        (
            Channel.CMD,
            b'{"v":1,"id":"x","cmd":"self-destruct","at":"2026-01-01T00:00:00Z"}',
            "unknown value",
        ),
        (
            Channel.REPLY,
            b'{"v":1,"id":"x","ok":false,"at":"2026-01-01T00:00:00Z"}',
            "error: missing",
        ),
        (Channel.STATE, b"{" + b" " * codec.MAX_PAYLOAD + b"}", "too large"),
    ],
)
def test_bad_payloads_are_refused_with_the_field_named(
    channel: Channel, payload: bytes, complaint: str
) -> None:
    with pytest.raises(PayloadError, match=complaint):
        codec.decode(channel, payload)


def test_command_args_are_checked_before_sending() -> None:
    with pytest.raises(PayloadError, match="seconds"):
        codec.encode(
            CommandMessage(id="x", cmd=Command.ENTER_TOURNAMENT, at=AT, args={"credits": 10})
        )


def test_naive_timestamps_are_never_encoded() -> None:
    with pytest.raises(ValueError, match="time zone"):
        codec.encode(codec.Status(online=True, at=datetime(2026, 1, 1)))


def test_topic_tree() -> None:
    topic = board_topic("ridge", "A01", Channel.STATE)
    assert topic == "reelgate/v1/ridge/board/A01/state"
    parsed = parse_board_topic(topic)
    assert (parsed.site, parsed.machine, parsed.channel) == ("ridge", "A01", Channel.STATE)
    assert board_filter("ridge", Channel.EVENT) == "reelgate/v1/ridge/board/+/event"
    assert feed_topic("ridge", "heat/17/state") == "reelgate/v1/ridge/feed/heat/17/state"


@pytest.mark.parametrize(
    "topic",
    [
        "reelgate/v2/ridge/board/A01/state",
        "reelgate/v1/ridge/board/A01/colour",
        "reelgate/v1/ridge/feed/A01/state",
        "other/v1/ridge/board/A01/state",
        "reelgate/v1/ridge/board/A01",
    ],
)
def test_foreign_topics_are_refused(topic: str) -> None:
    with pytest.raises(TopicError):
        parse_board_topic(topic)


@pytest.mark.parametrize("name", ["", "a/b", "a+b", "#", "x" * 65, "-lead"])
def test_names_that_cannot_be_topic_levels(name: str) -> None:
    with pytest.raises(TopicError):
        board_topic(name, "A01", Channel.CMD)
    with pytest.raises(TopicError):
        board_topic("ridge", name, Channel.CMD)
