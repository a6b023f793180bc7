"""Packed BCD fields, most significant byte first (sas.md §1 "encodings")."""

from __future__ import annotations

from protocols.sas.errors import BcdError


def bcd_encode(value: int, width: int) -> bytes:
    """``value`` as ``width`` bytes of packed BCD; raises :class:`BcdError` if it won't fit."""
    if width < 0:
        raise BcdError(f"BCD width must be >= 0, not {width}")
    if not isinstance(value, int) or isinstance(value, bool):
        raise BcdError(f"BCD value must be an int, not {type(value).__name__}")
    if value < 0 or value >= 10 ** (2 * width):
        raise BcdError(f"{value} does not fit in {width} BCD byte(s) (0..{10 ** (2 * width) - 1})")
    return bytes.fromhex(f"{value:0{2 * width}d}") if width else b""


def bcd_decode(data: bytes | bytearray | memoryview) -> int:
    """Integer value of packed BCD bytes; raises :class:`BcdError` on a nibble above 9."""
    text = bytes(data).hex()
    if not text:
        return 0
    # hex() yields only 0-9a-f, so isdecimal() is exactly "every nibble <= 9"
    if not text.isdecimal():
        raise BcdError(f"invalid BCD nibble in {text!r}", bytes(data))
    return int(text)
