"""What the tournament commands share: options, one transaction per command, times in
the venue's zone, and output as a table or ``--json``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import enum
import getpass
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from rich.console import Console
from rich.table import Table
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.tournament.services.common import unit_of_work, utc_now
from storage.db import database_url, make_engine, make_sessionmaker

T = TypeVar("T")
DEFAULT_ZONE = "Africa/Johannesburg"


def add_common(parser: argparse.ArgumentParser, *, read: bool = False, write: bool = True) -> None:
    parser.add_argument(
        "--database",
        metavar="URL",
        help="database URL (default: $REELGATE_DATABASE_URL, else ./reelgate.db)",
    )
    if write:
        parser.add_argument(
            "--actor",
            default=None,
            help="who is making the change (default: $REELGATE_ACTOR or login)",
        )
        parser.add_argument(
            "--now",
            metavar="TIME",
            default=None,
            help="the time of the action (default: now); for keying in late",
        )
    if read:
        parser.add_argument("--json", action="store_true", help="machine-readable output")


def actor_of(args: argparse.Namespace) -> str:
    return str(args.actor or os.environ.get("REELGATE_ACTOR") or getpass.getuser())


def parse_time(text: str, zone: str = DEFAULT_ZONE, field: str = "time") -> datetime:
    """ISO date-time; without an offset it is venue-local time."""
    try:
        moment = datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    except ValueError:
        raise OperatorError(f"{field}: {text!r} is not a time (YYYY-MM-DD HH:MM)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=ZoneInfo(zone))


def parse_date(text: str, field: str = "date") -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise OperatorError(f"{field}: {text!r} is not a date (YYYY-MM-DD)") from None


def now_of(args: argparse.Namespace, zone: str = DEFAULT_ZONE) -> datetime:
    given = getattr(args, "now", None)
    return parse_time(given, zone, "--now") if given else utc_now()


def run(args: argparse.Namespace, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Bring the database to the current schema, then run ``work`` in one transaction."""
    return asyncio.run(_run(args.database, work))


async def _run(url: str | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    from storage.migrate import upgrade_async  # alembic loads slowly: only when needed

    resolved = database_url(url)
    await upgrade_async(resolved)
    engine = make_engine(resolved)
    try:
        async with unit_of_work(make_sessionmaker(engine)) as session:
            return await work(session)
    except IntegrityError as exc:
        # Two desks changed the same seat at the same moment; the loser's change is void.
        raise OperatorError(f"conflicting change, nothing saved; try again ({exc.orig})") from exc
    finally:
        await engine.dispose()


def plain(value: Any) -> Any:
    """JSON-able form of dataclasses, enums, datetimes."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return int(value.total_seconds())
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    return value


def emit(
    args: argparse.Namespace,
    data: Any,
    columns: Sequence[str] | None = None,
    rows: Sequence[Sequence[Any]] | None = None,
    title: str | None = None,
) -> int:
    """Print ``data`` as JSON with ``--json``, else as a table (or key: value lines)."""
    if getattr(args, "json", False):
        json.dump(plain(data), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    console = Console()
    if columns is not None and rows is not None:
        table = Table(*columns, title=title)
        for row in rows:
            table.add_row(*("" if v is None else str(plain(v)) for v in row))
        console.print(table)
    else:
        for key, value in (plain(data) or {}).items():
            console.print(f"{key}: {value}", highlight=False)
    return 0


def rands(cents: int) -> str:
    return f"R{cents // 100}.{cents % 100:02d}"
