"""Command output: a table (or key: value lines) for people, JSON with ``--json``.

Instants are shown in the venue's zone, to the minute in tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo


def plain(value: Any, zone: ZoneInfo | None = None) -> Any:
    """JSON-able form of dataclasses, enums, datetimes (in ``zone`` when given)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), zone) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return (value.astimezone(zone) if zone and value.tzinfo else value).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return int(value.total_seconds())
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): plain(v, zone) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v, zone) for v in value]
    return value


def cell(value: Any, zone: ZoneInfo | None = None) -> str:
    """One value as a person reads it: venue-local minutes, lists and dicts as JSON."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        local = value.astimezone(zone) if zone and value.tzinfo else value
        return local.strftime("%Y-%m-%d %H:%M")
    shown = plain(value, zone)
    if isinstance(shown, dict | list):
        return json.dumps(shown, ensure_ascii=False)
    return str(shown)


def emit(
    args: argparse.Namespace,
    data: Any,
    columns: Sequence[str] | None = None,
    rows: Sequence[Sequence[Any]] | None = None,
    title: str | None = None,
    zone: str | None = None,
) -> int:
    """Print ``data`` as JSON with ``--json``, else as a table (or key: value lines)."""
    where = ZoneInfo(zone) if zone else None
    if getattr(args, "json", False):
        json.dump(plain(data, where), sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console  # rich loads slowly: only for tables
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)
    if columns is not None and rows is not None:
        table = Table(*columns, title=title)
        for row in rows:
            table.add_row(*(cell(v, where) for v in row))
        console.print(table)
    else:
        for key, value in _fields(data).items():
            console.print(f"{key}: {cell(value, where)}", highlight=False, soft_wrap=True)
    return 0


def _fields(data: Any) -> dict[str, Any]:
    """A dataclass or dict as its top-level fields, values left as they are."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        return {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    return dict(data or {})


def rands(cents: int) -> str:
    return f"R{cents // 100}.{cents % 100:02d}"


MANUAL_MARK = "manual (T23)"  # a score a director keyed in or corrected, wherever shown


def score_mark(source: Any) -> str:
    """The mark of a stored score's source (``storage.enums.ScoreSource``): machine scores
    carry none, keyed-in or corrected ones :data:`MANUAL_MARK`."""
    return MANUAL_MARK if getattr(source, "value", source) == "manual" else ""
