"""``reelgate heat ...``: every heat command, the director's and the technician's.

The director's (schedule, register, roll call, begin, score, incidents ...) are in
:mod:`gateway.app.commands.heat_desk`; here the technician's test heat (``heat run``),
crash recovery (``heat recover``) and the director's orders to the running gateway
(``heat direct``: queued for the process holding the bank, then the outcome it stamps
is awaited and printed, exit 1 when it refused or did not answer in ``--wait``).

``heat run`` first brings any heat the journal left unfinished on the bank to rest (a
crashed gateway), then runs one heat now on the bank's active machines and prints, per
machine: id, start skew (when its unlock was acknowledged, after the first one), score,
tournament meters and final state.  ``heat recover`` does only the first part.  Both
hold the bank's lease while they drive it (:mod:`gateway.heats.ownership`): with the
bank held by another process (``reelgate serve``) they refuse in one line, exit 2.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.app.capture_args import capture_options
from gateway.app.commands import heat_desk
from gateway.app.deferred import Deferred
from gateway.app.options import add_gateway, add_json, add_write


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "heat", help="heats: schedule, registration, scores, incidents; test heat, recovery"
    )
    actions = parser.add_subparsers(dest="heat_action", required=True, metavar="ACTION")
    heat_desk.add_actions(actions)

    run = actions.add_parser("run", help="run one heat now on a bank (technician's test heat)")
    add_gateway(run, floor_required=True)
    run.add_argument("--bank", required=True)
    run.add_argument("--seconds", type=int, required=True, help="heat length in seconds")
    run.add_argument("--credits", type=int, required=True, help="tournament credits per seat")
    limit = run.add_mutually_exclusive_group()
    limit.add_argument(
        "--games", type=int, metavar="N", help="rule F2: each machine is done after N games"
    )
    limit.add_argument(
        "--credit-limited",
        type=int,
        nargs="?",
        const=1,
        metavar="MIN_BET",
        help="rule F3: each machine is done under MIN_BET credits (default 1)",
    )
    add_json(run)
    run.add_argument("--trace", action="store_true", help="print each state step to stderr")
    capture_options(run, required=False)  # one file per port: FILE.<host>_<port>
    # Fault tests: stop right after journaling this state, before its floor action, and
    # wait there to be killed (the worst moment for a crash).
    run.add_argument("--hold-in", metavar="STATE", help=argparse.SUPPRESS)
    run.set_defaults(handler=Deferred("gateway.app.commands.heat_handlers:run"))

    direct = actions.add_parser(
        "direct", help="a director's order to the running gateway (reelgate serve)"
    )
    direct.add_argument("order", choices=["start", "pause", "resume", "abort", "restart"])
    add_gateway(direct, floor_required=False)
    direct.add_argument("--bank", required=True)
    direct.add_argument("--heat", type=int, help="the heat to start (start only)")
    direct.add_argument("--reason", default="", help="why (required to abort or restart)")
    direct.add_argument(
        "--wait",
        type=float,
        default=30.0,
        metavar="S",
        help="wait up to S seconds for the gateway's outcome (default 30; 0: only queue)",
    )
    add_write(direct, now=False)
    direct.set_defaults(handler=Deferred("gateway.app.commands.heat_handlers:direct"))

    rec = actions.add_parser("recover", help="finish or restart what a crash left on a bank")
    add_gateway(rec, floor_required=False)
    rec.add_argument("--bank", required=True)
    add_json(rec)
    rec.add_argument("--trace", action="store_true", help="print each state step to stderr")
    rec.set_defaults(handler=Deferred("gateway.app.commands.heat_handlers:recover"))
