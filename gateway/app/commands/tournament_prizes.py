"""``reelgate tournament prizes ...``: T15 prizes of a stage.

schedule (the advertised minimum per place), apportion (the director's decision on the
surplus, every cent accounted for), pay (the winner signs, keying their ID or card; the
witness is a second account that types its password, as with ``super9 sign``) and list
(each place: advertised, surplus, who holds it, paid).
The same lines are added to ``reelgate tournament standings``.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.deferred import Deferred
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second
from gateway.tournament.rules.enums import Stage

STAGES = [s.value for s in Stage]


def register(actions: Any) -> None:
    """Add ``prizes`` to the ``tournament`` actions."""
    parser: argparse.ArgumentParser = actions.add_parser(
        "prizes", help="T15 prizes: schedule, surplus, payouts"
    )
    sub = parser.add_subparsers(
        dest="prizes_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = sub.add_parser("schedule", help="the advertised minimum per place (T15)")
    _common(p)
    p.add_argument("places", nargs="+", metavar="PLACE=CENTS", help="e.g. 1=500000 2=250000")
    p.add_argument("--reason", help="needed to change an advertised schedule")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_prizes_handlers:schedule"))

    p = sub.add_parser("apportion", help="apportion the surplus beyond the minimums (T15)")
    _common(p)
    p.add_argument("--surplus-cents", type=int, required=True)
    p.add_argument(
        "--share", action="append", default=[], metavar="PLACE=CENTS", help="a place's share"
    )
    p.add_argument("--weights", help="or split by weights over places 1.., e.g. 50,30,20")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_prizes_handlers:apportion"))

    p = sub.add_parser("pay", help="pay a place to its winner, signed and witnessed (T15)")
    _common(p)
    p.add_argument("--place", type=int, required=True)
    p.add_argument("--signer", required=True, help=f"the winner, signing: {PLAYER_HELP}")
    p.add_argument("--signature", required=True, help="signature / receipt reference")
    # The witness is a second account that types its password (dual control).
    add_second(p, Permission.TOURNAMENT_PRIZE_RECEIPT, option="--witness", dest="witness")
    p.add_argument(
        "--to-machine",
        metavar="MACHINE",
        help="pay it as promotional credits to this machine by SAS AFT (rules P1-P6; "
        "the venue must allow it: prizes machine-setting)",
    )
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_prizes_handlers:pay"))

    p = sub.add_parser(
        "machine-setting", help="allow or forbid prizes paid to the machine (P1, a reason)"
    )
    add_common(p, read=True)
    way = p.add_mutually_exclusive_group(required=True)
    way.add_argument("--allow", action="store_true", help="where the jurisdiction permits it")
    way.add_argument("--forbid", action="store_true")
    p.add_argument("--reason", required=True, help="the jurisdiction's terms, or why not")
    p.add_argument("--expiration-days", type=int, default=30, help="the credits' life (1-9999)")
    p.set_defaults(
        handler=Deferred("gateway.app.commands.tournament_prizes_handlers:machine_setting")
    )

    p = sub.add_parser(
        "machine-deliver",
        help="send, or recover after a crash, every prize transfer not yet settled (P4, P5)",
    )
    add_common(p, read=True)
    p.set_defaults(
        handler=Deferred("gateway.app.commands.tournament_prizes_handlers:machine_deliver")
    )

    p = sub.add_parser("machine-list", help="prize transfers to machines and their outcome")
    add_common(p, read=True, write=False)
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_prizes_handlers:machine_list"))

    p = sub.add_parser("list", help="each prize place: advertised, surplus, holder, paid")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="final")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_prizes_handlers:list_"))


def _common(p: argparse.ArgumentParser) -> None:
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="final")
