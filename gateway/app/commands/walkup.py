"""``reelgate walkup ...``: walk-up play at the machine, a house format (docs/rules.md#w1 to #w9).

set (the director: a tournament's walk-up window on a bank, the session's time and
credits, with a reason, W1), windows (every window, and whether it is open now), sessions
(offers, sessions under way and finished, with the entry's score, W8), confirm (an
attendant confirms a player's offer at the machine, W5).
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.app.deferred import Deferred
from gateway.app.options import OneLineParser, add_common

H = "gateway.app.commands.walkup_handlers"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "walkup", help="walk-up play: windows per bank, sessions at the machine (W1-W9)"
    )
    actions = parser.add_subparsers(
        dest="walkup_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("set", help="a tournament's walk-up window on a bank (W1)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("bank")
    p.add_argument("--opens", required=True, metavar="HH:MM", help="venue time, e.g. 18:00")
    p.add_argument("--closes", required=True, metavar="HH:MM", help="venue time, e.g. 23:00")
    p.add_argument("--seconds", type=int, required=True, help="a session's time (W6)")
    p.add_argument("--credits", type=int, required=True, help="a session's starting credits")
    p.add_argument(
        "--confirm-seconds", type=int, default=30,
        help="how long an offer waits for its confirm (W5, default 30)",
    )  # fmt: skip
    p.add_argument("--off", action="store_true", help="turn walk-up off on the bank")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred(f"{H}:set_"))

    p = actions.add_parser("windows", help="every walk-up window, and whether it is open now")
    add_common(p, read=True, write=False)
    p.add_argument("--now", help="judge 'open now' at this venue time (default: now)")
    p.set_defaults(handler=Deferred(f"{H}:windows"))

    p = actions.add_parser("sessions", help="walk-up offers and sessions, newest first (W8)")
    add_common(p, read=True, write=False)
    p.add_argument("--tournament", help="one tournament only")
    p.set_defaults(handler=Deferred(f"{H}:sessions"))

    p = actions.add_parser("confirm", help="an attendant confirms a player's offer (W5)")
    add_common(p, read=True)
    p.add_argument("session", type=int, help="the offer's session number")
    p.set_defaults(handler=Deferred(f"{H}:confirm"))
