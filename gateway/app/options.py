"""The options every command spells the same way, and how they are read.

``--database URL`` (every command that opens the database), ``--floor FILE``,
``--spool FILE``, ``--json``, ``--actor NAME`` (who makes a change; default
``$REELGATE_ACTOR``, else the login name) and ``--now TIME`` (when it happened, for
keying in late).  Times are ISO 8601; a time without a UTC offset is venue-local
(:data:`DEFAULT_ZONE`, or the tournament's zone).  Sub-command parsers are
:class:`OneLineParser`: a usage mistake is one line naming the option.
"""

from __future__ import annotations

import argparse
import getpass
import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import NoReturn
from zoneinfo import ZoneInfo

from gateway.errors import OperatorError

DEFAULT_ZONE = "Africa/Johannesburg"
DEFAULT_SPOOL = Path("reelgate-journal.spool")
TIME_HELP = "ISO 8601, e.g. 2026-11-20T18:30+02:00; without an offset it is venue-local time"


class OneLineParser(argparse.ArgumentParser):
    """A parser whose usage errors are one line naming the option, like every other
    operator error (``--help`` still prints the full usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"reelgate: error: {self.prog}: {message} (see --help)\n")


def add_database(parser: argparse.ArgumentParser) -> None:
    """``--database URL`` and ``--config FILE`` (whose ``[database] url`` it defaults to)."""
    from gateway.app.configfile import add_config

    parser.add_argument(
        "--database",
        metavar="URL",
        help="database URL: sqlite:///FILE or postgresql://USER@HOST/DB "
        "(default: $REELGATE_DATABASE_URL, else [database] url, else ./reelgate.db)",
    )
    add_config(parser)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_actor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--actor",
        metavar="NAME",
        default=None,
        help="who makes the change, in the audit log (default: $REELGATE_ACTOR or login)",
    )


def add_now(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", metavar="TIME", default=None, help=f"when it happened (default: now); {TIME_HELP}"
    )


def add_gateway(parser: argparse.ArgumentParser, *, floor_required: bool) -> None:
    """What a command talking to machines opens: database, floor file, journal spool."""
    add_database(parser)
    parser.add_argument(
        "--floor",
        metavar="FILE",
        required=floor_required,
        help="floor file (TOML) naming banks and machines",
    )
    parser.add_argument(
        "--spool",
        metavar="FILE",
        default=None,
        help="local file keeping journal writes while the database is unreachable "
        f"(default [serve] spool, else ./{DEFAULT_SPOOL})",
    )


def add_common(parser: argparse.ArgumentParser, *, read: bool = False, write: bool = True) -> None:
    """``--database``; with ``write`` also ``--actor`` and ``--now``; with ``read`` ``--json``."""
    add_database(parser)
    if write:
        add_actor(parser)
        add_now(parser)
    if read:
        add_json(parser)


def actor_of(args: argparse.Namespace) -> str:
    given = getattr(args, "actor", None)
    return str(given or os.environ.get("REELGATE_ACTOR") or getpass.getuser())


def parse_time(text: str, zone: str = DEFAULT_ZONE, field: str = "time") -> datetime:
    """ISO 8601 date-time; without an offset it is local time in ``zone``."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise OperatorError(f"{field}: {text!r} is not an ISO 8601 time ({TIME_HELP})") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=ZoneInfo(zone))


def parse_date(text: str, field: str = "date") -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise OperatorError(f"{field}: {text!r} is not a date (YYYY-MM-DD)") from None


def now_of(args: argparse.Namespace, zone: str = DEFAULT_ZONE) -> datetime:
    given = getattr(args, "now", None)
    return parse_time(given, zone, "--now") if given else datetime.now(UTC)


def trap_host(spec: str) -> tuple[str, int]:
    """``--snmp-traps HOST:PORT`` (port 0: a free one)."""
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OperatorError("--snmp-traps must be HOST:PORT (port 0: a free one)")
    return host, int(port)
