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
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from zoneinfo import ZoneInfo

from rich.console import Console
from rich.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    InterfaceError,
    OperationalError,
)
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.tournament.services.common import unit_of_work, utc_now
from storage.db import database_url, make_engine, make_sessionmaker
from storage.types import ValueTooLong

T = TypeVar("T")
DEFAULT_ZONE = "Africa/Johannesburg"


class OneLineParser(argparse.ArgumentParser):
    """Sub-command parser whose usage errors are one line naming the option, like every
    other operator error (``--help`` still prints the full usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"reelgate: error: {self.prog}: {message} (see --help)\n")


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


def safe_url(url: str) -> str:
    """The URL as it may be printed (no password)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url)


def resolve_database(url: str | None) -> str:
    """``--database``, else ``$REELGATE_DATABASE_URL``, else ./reelgate.db; checked."""
    resolved = database_url(url)
    try:
        parsed = make_url(resolved)
    except ArgumentError:
        raise OperatorError(f"--database: not a database URL: {resolved!r}") from None
    file = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if file and file != ":memory:" and not file.startswith("file:"):
        folder = Path(file).expanduser().resolve().parent
        if not folder.is_dir():  # say so before SQLite fails with "unable to open"
            raise OperatorError(f"--database {resolved}: folder {folder} does not exist")
    return resolved


def _cannot_open(url: str, exc: BaseException) -> OperatorError:
    text = str(getattr(exc, "orig", None) or exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return OperatorError(f"--database {safe_url(url)}: cannot open: {first}")


async def open_database(url: str | None) -> str:
    """Resolve the URL and bring that database to the current schema, with one-line
    errors for a bad URL, an unreachable server or a schema newer than this Reelgate."""
    from alembic.util.exc import CommandError  # alembic loads slowly: only when needed

    from storage.migrate import upgrade_async

    resolved = resolve_database(url)
    try:
        await upgrade_async(resolved)
    except ArgumentError as exc:  # e.g. no such dialect / driver
        raise OperatorError(f"--database {safe_url(resolved)}: {exc}") from exc
    except CommandError as exc:  # e.g. a revision this Reelgate does not know
        raise OperatorError(f"--database {safe_url(resolved)}: {exc}") from exc
    except (OSError, DBAPIError) as exc:
        raise _cannot_open(resolved, exc) from exc
    return resolved


async def _run(url: str | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    resolved = await open_database(url)
    engine = make_engine(resolved)
    try:
        async with unit_of_work(make_sessionmaker(engine)) as session:
            return await work(session)
    except ValueTooLong as exc:
        raise OperatorError(f"{exc}; nothing saved") from exc
    except IntegrityError as exc:
        # Two desks changed the same seat at the same moment; the loser's change is void.
        raise OperatorError(f"conflicting change, nothing saved; try again ({exc.orig})") from exc
    except (OperationalError, InterfaceError, OSError) as exc:  # server gone, database locked
        raise _cannot_open(resolved, exc) from exc
    finally:
        await engine.dispose()


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
    """Print ``data`` as JSON with ``--json``, else as a table (or key: value lines).

    Instants are shown in ``zone`` (the venue's), to the minute in tables."""
    where = ZoneInfo(zone) if zone else None
    if getattr(args, "json", False):
        json.dump(plain(data, where), sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
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
