"""``reelgate players ...``: players, exclusion registers and disqualification (T1–T4,
T20, T23).

Clauses: docs/rules.md#t1 to #t4, #t20, #t23.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.deferred import Deferred
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "players", help="tournament players, exclusion registers, disqualification"
    )
    actions = parser.add_subparsers(
        dest="players_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("add", help="register a player in person (rules 1–4)")
    add_common(p, read=True)
    p.add_argument("--id-number", required=True, help="national ID or passport number")
    p.add_argument("--name", required=True)
    p.add_argument("--dob", required=True, help="date of birth YYYY-MM-DD (rule 1)")
    p.add_argument("--card", help="Rewards card number, optional (rule 4)")
    p.set_defaults(
        handler=Deferred("gateway.app.commands.players_handlers:add"),
        remote=Deferred("gateway.app.remote:remote_add_player"),
    )

    p = actions.add_parser("list", help="list players")
    add_common(p, read=True, write=False, desk=True)
    p.set_defaults(
        handler=Deferred("gateway.app.commands.players_handlers:list_"),
        remote=Deferred("gateway.app.remote_reads:players"),
    )

    p = actions.add_parser("show", help="a player's entries, seats and scores")
    add_common(p, read=True, write=False)
    p.add_argument("player", help=PLAYER_HELP)
    p.add_argument("--tournament", "-t", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.players_handlers:show"))

    p = actions.add_parser("import-exclusions", help="load an exclusion register CSV (2–3)")
    add_common(p, read=True)
    p.add_argument("file", type=Path)
    p.add_argument("--source", help="where the list came from (default: the file name)")
    p.add_argument("--zone", default="Africa/Johannesburg", help="zone of dates in the file")
    p.set_defaults(
        handler=Deferred("gateway.app.commands.players_handlers:import_"),
        remote=Deferred("gateway.app.commands.players_handlers:remote_import"),
    )

    p = actions.add_parser("disqualify", help="disqualify a player or one entry (rules 2, 20, 23)")
    add_common(p, read=True)
    p.add_argument("player", help=PLAYER_HELP)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("--rule", type=int, required=True, choices=[1, 2, 3, 12, 20, 23])
    p.add_argument("--reason", required=True)
    p.add_argument("--entry", type=int, help="only this entry")
    p.set_defaults(
        handler=Deferred("gateway.app.commands.players_handlers:disqualify"),
        remote=Deferred("gateway.app.commands.players_handlers:remote_disqualify"),
    )

    p = actions.add_parser("reinstate", help="revoke a disqualification (rule 23)")
    add_common(p, read=True)
    p.add_argument("disqualification", type=int)
    p.add_argument("--reason", required=True)
    add_second(p, Permission.PLAYER_REINSTATE)
    p.set_defaults(handler=Deferred("gateway.app.commands.players_handlers:reinstate"))
