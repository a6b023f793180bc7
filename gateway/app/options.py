"""The options every command spells the same way, and how they are read.

``--database URL`` (every command that opens the database), ``--floor FILE``,
``--spool FILE``, ``--json``, ``--now TIME`` (when it happened: any time for a read;
for a write see :mod:`gateway.clocks.policy` — back-dated needs ``--director NAME`` and
``--reason``, post-dated is refused, a training database takes any time) and, on every
write, ``--server URL`` / ``--token-file FILE`` (send it through the API with a token).
Who makes a change is never an option: a direct write is recorded as the host's
operating-system account (:mod:`gateway.app.identity`), an API write as the token's
account.  Times are ISO 8601; a time without a UTC offset is venue-local
(:data:`DEFAULT_ZONE`, or the tournament's zone).  Sub-command parsers are
:class:`OneLineParser`: a usage mistake is one line naming the option.
"""

from __future__ import annotations

import argparse
from datetime import date, datetime
from typing import TYPE_CHECKING, NoReturn
from zoneinfo import ZoneInfo

from gateway.app.configfile import add_config
from gateway.app.defaults import DEFAULT_SPOOL as DEFAULT_SPOOL  # re-exported
from gateway.app.second import SecondPerson
from gateway.errors import OperatorError

if TYPE_CHECKING:
    from gateway.accounts.roles import Permission
    from gateway.clocks.policy import WriteTime

DEFAULT_ZONE = "Africa/Johannesburg"
TIME_HELP = "ISO 8601, e.g. 2026-11-20T18:30+02:00; without an offset it is venue-local time"


class OneLineParser(argparse.ArgumentParser):
    """A parser whose usage errors are one line naming the option, like every other
    operator error (``--help`` still prints the full usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"reelgate: error: {self.prog}: {message} (see --help)\n")


def add_database(parser: argparse.ArgumentParser) -> None:
    """``--database URL`` and ``--config FILE`` (whose ``[database] url`` it defaults to)."""
    parser.add_argument(
        "--database",
        metavar="URL",
        help="database URL: sqlite:///FILE or postgresql://USER@HOST/DB "
        "(default: $REELGATE_DATABASE_URL, else [database] url, else ./reelgate.db)",
    )
    add_config(parser)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_now(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", metavar="TIME", default=None, help=f"when it happened (default: now); {TIME_HELP}"
    )


def add_write(parser: argparse.ArgumentParser, *, now: bool = True) -> None:
    """A command that changes something: ``--now``/``--director`` (with ``now``) and
    ``--server``/``--token-file``; its handler must run through ``database.run(args, …)``."""
    if now:
        add_now(parser)
        parser.add_argument(
            "--director",
            metavar="NAME",
            help="the director's account authorising a back-dated --now (password asked)",
        )
    add_remote(parser, "send the change through the API at URL")
    parser.set_defaults(writes=True)


def add_remote(parser: argparse.ArgumentParser, what: str = "read it from the API at URL") -> None:
    """``--server URL`` / ``--token-file FILE``: through the API with a token (a desk);
    the parser's ``remote`` default is the handler that does it."""
    parser.add_argument(
        "--server", metavar="URL", help=f"{what} (token: $REELGATE_TOKEN or --token-file)"
    )
    parser.add_argument("--token-file", metavar="FILE", help="file holding the API token")


PLAYER_HELP = (
    "the player: id:N (player number), card:N or idnum:N (ID or passport number); a bare "
    "value is a card or ID number, never a player number"
)
FIRST_HELP = (
    "your own account, the first person of this dual-control write (its password is "
    "asked before the second person's); the write is recorded under it"
)


def add_first(parser: argparse.ArgumentParser) -> None:
    """A dual-control write's first person on the host: an account too, not just the
    operating-system login (:func:`gateway.app.keyed.preflight`)."""
    parser.add_argument("--as", dest="as_account", metavar="ACCOUNT", help=FIRST_HELP)


def add_second(
    parser: argparse.ArgumentParser,
    permission: Permission,
    *,
    option: str = "--second",
    dest: str = "second",
) -> None:
    """A dual-control write's second person: an account named here that types its
    password (:mod:`gateway.app.people`); its role must be one that approves
    ``permission`` (``gateway.accounts.dual.APPROVERS``)."""
    parser.add_argument(
        option,
        dest=dest,
        metavar="ACCOUNT",
        help="the second person's account (dual control; its password is asked), not the "
        "--as account; required on the gateway host, refused with --server (approve the "
        "pending action)",
    )
    add_first(parser)
    parser.set_defaults(second_person=SecondPerson(permission, dest, option))


def add_reasons(parser: argparse.ArgumentParser) -> None:
    """Give every write with ``--now`` a ``--reason`` (why it is keyed late) where the
    command has none of its own; run once the whole parser tree is built."""
    dests = {a.dest for a in parser._actions}
    if "now" in dests and "reason" not in dests and parser.get_default("writes"):
        parser.add_argument("--reason", help="why a back-dated --now is keyed late")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                add_reasons(child)


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


def add_common(
    parser: argparse.ArgumentParser, *, read: bool = False, write: bool = True, desk: bool = False
) -> None:
    """``--database``; with ``write`` the write options (:func:`add_write`); with
    ``read`` ``--json``; with ``desk`` (a read a desk may ask of the API) ``--server``."""
    add_database(parser)
    if write:
        add_write(parser)
    elif desk:
        add_remote(parser)
    if read:
        add_json(parser)


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
    """When the command acts: for a write, its judged time (:func:`write_of`)."""
    if getattr(args, "writes", False):
        return write_of(args, zone).at
    from gateway.app.keyed import REAL_CLOCK  # deferred for start-up: keyed loads SQLAlchemy

    given = getattr(args, "now", None)
    return parse_time(given, zone, "--now") if given else REAL_CLOCK()


def write_of(args: argparse.Namespace, zone: str = DEFAULT_ZONE) -> WriteTime:
    """The write's keyed ``--now`` judged against the real time (refused in one line
    when it may not stand), recorded in every audit row the write makes."""
    from gateway.app.keyed import write_time  # deferred for start-up (SQLAlchemy)

    given = getattr(args, "now", None)
    keyed = parse_time(given, zone, "--now") if given else None
    return write_time(keyed, getattr(args, "reason", None))


def trap_host(spec: str) -> tuple[str, int]:
    """``--snmp-traps HOST:PORT`` (port 0: a free one)."""
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OperatorError("--snmp-traps must be HOST:PORT (port 0: a free one)")
    return host, int(port)
