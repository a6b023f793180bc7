"""``reelgate hotseat ...``: hot-seat draws and wild cards (house clauses HS1–HS7,
docs/rules.md).

commit (a heat's draws, before it starts: only the seed's hash is shown), draw (at the
heat's close: the draws from the recorded seats, the seed revealed), show (the
commitment, and after the draw the seed and the winners), wildcard-commit and
wildcard-draw (a stage's wild card), pay (a won prize: the winner signs, keying their ID
or card; the witness is a second account that types its password).
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.deferred import Deferred
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second

HANDLERS = "gateway.app.commands.hotseat_handlers"
STAGES = ["qualifying", "semi-final"]


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "hotseat", help="hot-seat draws and wild cards, committed before and revealed after"
    )
    actions = parser.add_subparsers(
        dest="hotseat_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )
    p = actions.add_parser("commit", help="commit a heat's draws before it starts (HS2, HS4)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--draws", type=int, required=True, help="how many draws (1-20)")
    p.add_argument("--prize-cents", type=int, required=True, help="the prize of each draw")
    p.set_defaults(handler=Deferred(f"{HANDLERS}:commit"))

    p = actions.add_parser("draw", help="take a closed heat's draws; reveal the seed (HS5)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=Deferred(f"{HANDLERS}:draw"))

    p = actions.add_parser("show", help="a heat's commitment, seed and winners")
    add_common(p, read=True, write=False)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=Deferred(f"{HANDLERS}:show"))

    p = actions.add_parser("wildcard-commit", help="commit a stage's wild card (HS6)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.set_defaults(handler=Deferred(f"{HANDLERS}:wildcard_commit"))

    p = actions.add_parser("wildcard-draw", help="draw the wild card of an over stage (HS6)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.set_defaults(handler=Deferred(f"{HANDLERS}:wildcard_draw"))

    p = actions.add_parser("pay", help="pay a won draw's prize, signed and witnessed (HS7)")
    add_common(p, read=True)
    p.add_argument("draw", type=int, help="the draw's id (from draw --json)")
    p.add_argument("--signer", required=True, help=f"the winner, signing: {PLAYER_HELP}")
    p.add_argument("--signature", required=True, help="signature / receipt reference")
    add_second(p, Permission.HOTSEAT_PRIZE_RECEIPT, option="--witness", dest="witness")
    p.add_argument(
        "--to-machine",
        metavar="MACHINE",
        help="pay it as promotional credits to this machine by SAS AFT (rules P1-P6)",
    )
    p.set_defaults(handler=Deferred(f"{HANDLERS}:pay"))
