"""``reelgate tournament ...``: the Tournament Director's view of a tournament.

create / list / show / set (settings) and decision (T23, with a reason), standings
and qualifiers (T12–T14, T17), card draws for ties (T19: physical cards keyed in, or digital
from a recorded seed), verify-draws, seat-draw for the final stages (T14), expire.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.commands import tournament_prizes
from gateway.app.deferred import Deferred
from gateway.app.options import OneLineParser, add_common, add_second
from gateway.tournament.rules.enums import Stage
from gateway.tournament.settings import Validity

STAGES = [s.value for s in Stage]


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "tournament", help="slot tournament: settings, standings, qualifiers, card draws"
    )
    actions = parser.add_subparsers(
        dest="tournament_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("create", help="create a tournament")
    add_common(p, read=True)
    p.add_argument("name")
    p.add_argument(
        "--validity",
        choices=[v.value for v in Validity],
        default="same-day",
        help="entry validity: same-day (rules 7/8) or 48h (rules 5/6)",
    )
    p.add_argument("--seat-price-cents", type=int, default=5000, help="rule 5 (default R50)")
    p.add_argument(
        "--package",
        action="append",
        default=[],
        metavar="CODE:CENTS:SEATS[:CREDIT]",
        help="an entry package (rule 6); repeat; default single at the seat price, R200:20000:4",
    )
    p.add_argument("--direct", type=int, default=1, help="top entries straight to the final (13)")
    p.add_argument("--semi", type=int, default=49, help="semi-final places (rule 14)")
    p.add_argument("--final-quota", type=int, default=8, help="finalists from the semis (rule 17)")
    p.add_argument("--prize-places", type=int, default=3, help="places needing a strict order")
    p.add_argument("--zone", default="Africa/Johannesburg", help="venue time zone")
    p.add_argument("--postpone-after-min", type=int, default=30, help="rule 20 reasonable period")
    p.add_argument("--notice-min", type=int, default=60, help="rule 10 minimum notice")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:create"))

    p = actions.add_parser("list", help="list tournaments")
    add_common(p, read=True, write=False, desk=True)
    p.set_defaults(
        handler=Deferred("gateway.app.commands.tournament_handlers:list_"),
        remote=Deferred("gateway.app.remote_reads:tournaments"),
    )

    p = actions.add_parser("show", help="a tournament's settings")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:show"))

    p = actions.add_parser("set", help="change settings (director decision, rule 23)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument(
        "changes",
        nargs="+",
        metavar="KEY=VALUE",
        help="e.g. prize_places=5 validity=48h postpone_after_s=2700",
    )
    p.add_argument("--reason", required=True)
    add_second(p, Permission.TOURNAMENT_SETTINGS)
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:set_"))

    p = actions.add_parser("decision", help="record a director's decision (rule 23)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--about", required=True, help="what it concerns (player, heat, seat ...)")
    p.add_argument("--decision", required=True)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:decision"))

    p = actions.add_parser("standings", help="single-entry standings of a stage")
    add_common(p, read=True, write=False, desk=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.add_argument(
        "--limit",
        type=int,
        default=0,
        help="the top N places and anyone tied with the last, ranked in SQL (0: every entry)",
    )
    p.add_argument("--as-of", help="exclusion registers as of this time (default: now)")
    p.add_argument(
        "--venue",
        help="multi-venue: only the entries that played at this venue, at their places in "
        "the whole tournament's standings",
    )
    p.set_defaults(
        handler=Deferred("gateway.app.commands.tournament_handlers:standings"),
        remote=Deferred("gateway.app.remote_reads:standings"),
    )

    p = actions.add_parser("qualifiers", help="finalists, semi-finalists and pending ties")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("--as-of", help="exclusion registers as of this time (default: now)")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:qualifiers"))

    p = actions.add_parser("draw", help="break a tie by playing cards (rule 19)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, required=True)
    p.add_argument("--credits", type=int, required=True, help="the tied score")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--card",
        action="append",
        metavar="ENTRY=CARD[:public|nominee:NAME]",
        help="one physical card per tied entry, e.g. 17=QH or 18=7C:public:Lerato",
    )
    how.add_argument("--digital", action="store_true", help="deal from a seeded shuffle")
    p.add_argument("--seed", help="hex seed for --digital (default: a fresh random one)")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:draw"))

    p = actions.add_parser("verify-draws", help="recompute digital cards and seat draws")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:verify"))

    p = actions.add_parser("seat-draw", help="seat a final stage's qualifiers by draw (rule 14)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=["semi-final", "final"], required=True)
    p.add_argument("--seed", help="hex seed (default: a fresh random one)")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:seat_draw"))

    p = actions.add_parser("expire", help="mark unused entries past their validity (rules 5–8)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.set_defaults(handler=Deferred("gateway.app.commands.tournament_handlers:expire"))

    tournament_prizes.register(actions)
