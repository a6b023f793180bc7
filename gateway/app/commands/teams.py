"""``reelgate teams ...``: team tournaments, a house format (docs/rules.md#h1 to #h12).

set (the director: how teams score, how big they may be and the team cut, with a
reason), add (the desk registers a team: name, members, captain), withdraw (before any
member has played), list, show, standings (a stage's team standings, from its
individual standings), prizes (the team prize schedule: shown, or advertised with
``--prize PLACE=CENTS``, H11), pay (a team place to its captain, witnessed, H12).
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.deferred import Deferred
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second

STAGES = ["qualifying", "semi-final", "final"]  # gateway.tournament.rules.enums.Stage
H = "gateway.app.commands.teams_handlers"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "teams", help="team tournaments: settings, registration, team standings (H1-H9)"
    )
    actions = parser.add_subparsers(
        dest="teams_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("set", help="how teams score and how big they may be (H1, H4, H6)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--scoring", choices=["sum", "best-n"], default="sum")
    p.add_argument("--best", type=int, metavar="N", help="with --scoring best-n: n (H6)")
    p.add_argument("--min-size", type=int, default=2, help="smallest team (H4, default 2)")
    p.add_argument("--max-size", type=int, default=4, help="largest team (H4, default 4)")
    p.add_argument(
        "--advance", type=int, metavar="N",
        help="the team cut: the top N qualifying teams go on (H10; default none)",
    )  # fmt: skip
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred(f"{H}:set_"))

    p = actions.add_parser("add", help="register a team at the desk (H1-H4)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("name", help="the team's name, unique in the tournament")
    p.add_argument(
        "--member", action="append", required=True, metavar="PLAYER",
        help=f"a member, once each (the captain too): {PLAYER_HELP}",
    )  # fmt: skip
    p.add_argument("--captain", required=True, metavar="PLAYER", help="one of the members (H3)")
    p.set_defaults(handler=Deferred(f"{H}:add"))

    p = actions.add_parser("withdraw", help="withdraw a team before any member has played (H9)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("team", help="team id or name")
    p.set_defaults(handler=Deferred(f"{H}:withdraw"))

    p = actions.add_parser("list", help="the tournament's teams and their members")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.set_defaults(handler=Deferred(f"{H}:list_"))

    p = actions.add_parser("show", help="one team: members, captain, who registered it")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("team", help="team id or name")
    p.set_defaults(handler=Deferred(f"{H}:show"))

    p = actions.add_parser("standings", help="a stage's team standings (H5-H8)")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.set_defaults(handler=Deferred(f"{H}:standings"))

    p = actions.add_parser("prizes", help="the team prize schedule of a stage (H11)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.add_argument(
        "--prize", action="append", metavar="PLACE=CENTS",
        help="advertise a team place's prize, once per place (omit to show)",
    )  # fmt: skip
    p.add_argument("--reason", help="why an advertised schedule changes (raise or add only)")
    p.set_defaults(handler=Deferred(f"{H}:prizes"))

    p = actions.add_parser("pay", help="pay a team place to its captain, witnessed (H12)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("place", type=int)
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.add_argument("--signer", required=True, help=f"the captain, signing: {PLAYER_HELP}")
    p.add_argument("--signature", required=True, help="signature / receipt reference")
    add_second(p, Permission.TEAM_PRIZE_RECEIPT, option="--witness", dest="witness")
    p.set_defaults(handler=Deferred(f"{H}:pay"))
