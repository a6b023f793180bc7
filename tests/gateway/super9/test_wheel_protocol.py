"""Wheel line codec, framer, debouncer (reference: shared/reference/roulette-wheel.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocols.wheel import (
    DOUBLE_ZERO,
    Debouncer,
    GameStateLine,
    Garbage,
    LineFramer,
    OtherLine,
    WarningFlag,
    WheelResult,
    WheelState,
    encode_line,
    parse_line,
)


def test_reference_example_line() -> None:
    assert parse_line(b"*X;2;151;23;0;161;0") == GameStateLine(
        WheelState.PLACE_BETS, 151, 23, WarningFlag.NONE, 161, 0
    )


def test_double_zero_and_flags_in_hex() -> None:
    line = parse_line(b"*X;5;9;00;A;200;1")
    assert isinstance(line, GameStateLine)
    assert line.number == DOUBLE_ZERO
    assert line.flags == WarningFlag.MISFIRE | WarningFlag.SENSOR_FAULT


def test_other_families_are_not_garbage() -> None:
    assert parse_line(b"*P;1") == OtherLine("P", ("1",))


def test_garbage_is_reported_not_raised() -> None:
    cases = [
        b"",
        b"X;2;1;2;0;1;0",
        b"*X;2;151;23;0;161",
        b"*X;9;1;2;0;1;0",
        b"*X;5;1;37;0;1;0",
        b"*X;5;1;-3;0;1;0",
        b"*X;5;a;3;0;1;0",
        b"\xff\xfe",
        b"*X;5;1; 3;0;1;0",
    ]
    for raw in cases:
        assert isinstance(parse_line(raw), Garbage), raw


def test_framer_resyncs_on_bare_cr_lf_and_overlong_lines() -> None:
    framer = LineFramer()
    data = b"*X;1;1;0;0;150;0\r\n" + b"A" * 500 + b"\r\n*X;2;1;0;0;150;0\n\r\n*X;3;1;0;0;1"
    lines = framer.feed(data)
    assert [type(x).__name__ for x in lines] == ["GameStateLine", "Garbage", "GameStateLine"]
    assert framer.feed(b"50;0\r") == [parse_line(b"*X;3;1;0;0;150;0")]


@given(
    st.sampled_from(list(WheelState)),
    st.integers(0, 99999),
    st.integers(0, 37),
    st.integers(0, 15),
    st.integers(0, 999),
    st.integers(0, 1),
)
def test_encode_parse_round_trip(
    state: WheelState, game: int, number: int, flags: int, speed: int, direction: int
) -> None:
    line = GameStateLine(state, game, number, WarningFlag(flags), speed, direction)
    assert parse_line(encode_line(line).rstrip(b"\r\n")) == line


@given(st.binary(max_size=300))
def test_framer_never_raises_on_noise(noise: bytes) -> None:
    framer = LineFramer()
    for item in framer.feed(noise):
        assert isinstance(item, GameStateLine | OtherLine | Garbage)


def _feed(bouncer: Debouncer, *raw: bytes) -> list[WheelResult]:
    out = []
    for r in raw:
        result = bouncer.feed(parse_line(r))
        if result is not None:
            out.append(result)
    return out


def test_debouncer_posts_once_per_game_after_confirmations() -> None:
    bouncer = Debouncer(confirmations=2)
    posted = _feed(
        bouncer,
        b"*X;4;7;3;0;1;0",
        b"*X;5;7;12;0;1;0",
        b"*X;5;7;12;0;1;0",
        b"*X;5;7;12;0;1;0",
        b"*X;5;7;12;0;1;0",
        b"garbage",
        b"*X;1;8;12;0;1;1",
    )
    assert posted == [WheelResult(7, 12)]
    assert bouncer.counts["repeat"] == 2
    assert bouncer.counts["garbage"] == 1


def test_debouncer_sensor_bounce_restarts_the_count() -> None:
    bouncer = Debouncer(confirmations=3)
    posted = _feed(
        bouncer, b"*X;5;7;12;0;1;0", b"*X;5;7;13;0;1;0", b"*X;5;7;13;0;1;0", b"*X;5;7;13;0;1;0"
    )
    assert posted == [WheelResult(7, 13)]
    assert bouncer.counts["conflict"] == 1


def test_debouncer_ignores_flagged_results_and_restarts() -> None:
    bouncer = Debouncer(confirmations=2)
    # misspin: the wheel flags the result itself
    assert _feed(bouncer, b"*X;5;7;12;2;1;0", b"*X;5;7;12;2;1;0") == []
    # ball removed during the spin: a half-confirmed result is forgotten
    assert _feed(bouncer, b"*X;5;8;30;0;1;0", b"*X;3;8;30;1;1;0", b"*X;5;8;4;0;1;0") == []
    assert _feed(bouncer, b"*X;5;8;4;0;1;0") == [WheelResult(8, 4)]
    assert _feed(bouncer, b"*X;5;9;00;0;1;0", b"*X;5;9;00;0;1;0") == []
    assert bouncer.counts["flagged"] == 2
    assert bouncer.counts["double-zero"] == 2
