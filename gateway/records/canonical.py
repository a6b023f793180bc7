"""Canonical JSON: the exact bytes an export's signature covers.

The form (docs/records.md, "Exports") is RFC 8785 (JCS) restricted to what a record
needs, which Python's ``json`` produces byte for byte: object keys sorted, no
insignificant white space, strings as UTF-8 with only ``"``, ``\\`` and control
characters escaped, and **no floating-point numbers** — money is integer cents, credits
integer credits, so a number is always a JSON integer.  Integers are kept within
±(2^53 − 1) so every JSON reader (JavaScript included) reads them exactly.  Instants are
ISO 8601 strings with their UTC offset, dates ``YYYY-MM-DD``.

:func:`to_record` turns the values the services return (datetimes, dates, enums, tuples,
dataclasses) into that vocabulary; :func:`canonical_bytes` refuses anything else, so a
float or a naive time can never slip into a signed document.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

MAX_SAFE_INTEGER = 2**53 - 1


class NotCanonical(ValueError):
    """A value that has no place in a signed record (a float, a naive time, ...)."""


def to_record(value: Any, zone: ZoneInfo) -> Any:
    """``value`` as JSON-able record values; instants shown in ``zone`` with the offset."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, enum.Enum):
        return to_record(value.value, zone)
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise NotCanonical(f"time {value.isoformat()} has no UTC offset")
        return value.astimezone(zone).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_record(getattr(value, f.name), zone) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_record(v, zone) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_record(v, zone) for v in value]
    if isinstance(value, set | frozenset):
        return [to_record(v, zone) for v in sorted(value)]
    raise NotCanonical(f"{type(value).__name__} {value!r} is not a record value")


def check(value: Any, where: str = "$") -> None:
    """Refuse anything but objects with string keys, arrays, strings, safe integers,
    booleans and null (``where`` names the place, as a JSON path)."""
    if value is None or isinstance(value, bool | str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise NotCanonical(f"{where}: integer {value} beyond ±(2^53 - 1)")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotCanonical(f"{where}: key {key!r} is not a string")
            check(item, f"{where}.{key}")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            check(item, f"{where}[{i}]")
        return
    raise NotCanonical(f"{where}: {type(value).__name__} is not allowed (no floats)")


def canonical_bytes(document: Any) -> bytes:
    """The canonical UTF-8 bytes of ``document`` (checked first)."""
    check(document)
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")
