"""Roulette wheel result feed: line codec, debouncer and serial/TCP carriers."""

from protocols.wheel.codec import (
    DOUBLE_ZERO,
    GameStateLine,
    Garbage,
    LineFramer,
    OtherLine,
    WarningFlag,
    WheelLine,
    WheelState,
    encode_line,
    parse_line,
)
from protocols.wheel.debounce import Debouncer, WheelResult
from protocols.wheel.transport import WheelLink, open_wheel, parse_wheel_url, read_results

__all__ = [
    "DOUBLE_ZERO",
    "Debouncer",
    "GameStateLine",
    "Garbage",
    "LineFramer",
    "OtherLine",
    "WarningFlag",
    "WheelLine",
    "WheelLink",
    "WheelResult",
    "WheelState",
    "encode_line",
    "open_wheel",
    "parse_line",
    "parse_wheel_url",
    "read_results",
]
