"""Bounded JSON loading for untrusted MQTT payloads (board messages and the signage feed).

``json.loads`` on wire bytes has three ways to fail that are not ``JSONDecodeError``:
nesting deep enough to raise ``RecursionError`` (``[`` * 5000), an integer longer than
Python's int-string limit (a bare ``ValueError`` at 4 301 digits, and quadratic time
below it), and bytes that are not UTF-8.  :func:`loads` closes all three *before* or
*while* parsing, and every failure is one :class:`JsonLimitError`:

* size: more than ``max_bytes`` is refused without looking at it;
* depth: a pre-scan counts bracket depth outside strings.  Escaped pairs (``\\x``) are
  removed first, so every remaining ``"`` delimits a string and ``"[^"]*+"`` removes
  the strings in linear time (possessive, no backtracking); the depth is then the
  largest running sum over the brackets left.  A payload with fewer brackets than the
  limit skips that sum.  The scan is conservative: a stray quote in invalid JSON can
  only make it count more brackets, never fewer;
* numbers: ``parse_int`` / ``parse_float`` refuse more than ``max_digits`` characters
  and non-finite floats (``1e999``), and ``NaN`` / ``Infinity`` literals are refused;
* text: the payload must be UTF-8 (no UTF-16 guessing as ``json.loads(bytes)`` does),
  and a string may not hold a lone surrogate (``"\\ud800"``), which nothing downstream
  (UTF-8 logs, PostgreSQL) could store.

Callers translate :class:`JsonLimitError` into their own typed error.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

DEFAULT_MAX_DEPTH = 32  # board and feed messages nest 3-4 levels
DEFAULT_MAX_DIGITS = 40  # a 64-bit meter is 20 digits; a float repr is at most 24 chars

_ESCAPED_PAIR = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*+"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.__getitem__


class JsonLimitError(ValueError):
    """Not JSON, or JSON beyond the size, depth or number limits."""


def nesting_depth(payload: bytes) -> int:
    """Largest bracket depth outside strings (an upper bound for invalid JSON)."""
    if b"[" not in payload and b"{" not in payload:
        return 0
    plain = _STRING.sub(b"", _ESCAPED_PAIR.sub(b"", payload)) if b'"' in payload else payload
    brackets = plain.translate(None, _NOT_BRACKET)
    return max(accumulate(map(_STEP, brackets)), default=0)


def loads(
    payload: bytes,
    *,
    max_bytes: int,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_digits: int = DEFAULT_MAX_DIGITS,
) -> Any:
    """Parse untrusted JSON bytes; :class:`JsonLimitError` for anything unacceptable."""
    if len(payload) > max_bytes:
        raise JsonLimitError(f"payload of {len(payload)} bytes is too large (over {max_bytes})")
    payload = bytes(payload)
    if payload.count(b"[") + payload.count(b"{") > max_depth:
        depth = nesting_depth(payload)
        if depth > max_depth:
            raise JsonLimitError(f"nesting depth {depth} is over {max_depth}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonLimitError(f"not JSON: not UTF-8 ({exc.reason} at byte {exc.start})") from None

    def parse_int(raw: str) -> int:
        if len(raw) > max_digits:
            raise JsonLimitError(f"number of {len(raw)} digits is over {max_digits}")
        return int(raw)

    def parse_float(raw: str) -> float:
        if len(raw) > max_digits:
            raise JsonLimitError(f"number of {len(raw)} characters is over {max_digits}")
        value = float(raw)
        if not math.isfinite(value):
            raise JsonLimitError(f"number {raw} is out of range")
        return value

    try:
        data = json.loads(
            text, parse_int=parse_int, parse_float=parse_float, parse_constant=_no_constant
        )
    except json.JSONDecodeError as exc:
        raise JsonLimitError(f"not JSON ({exc})") from None
    if "\\u" in text and _has_lone_surrogate(data):
        raise JsonLimitError("a string holds a lone UTF-16 surrogate")
    return data


def _no_constant(raw: str) -> Any:
    raise JsonLimitError(f"{raw} is not a JSON number")


def _has_lone_surrogate(data: Any) -> bool:
    # Iterative walk (depth is bounded, but a stack costs nothing extra).
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
