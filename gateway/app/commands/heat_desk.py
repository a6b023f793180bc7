"""``reelgate heat ...`` at the desk: the heat schedule and what the director does around a heat.

schedule / reschedule / cancel (T10) / list / show; register a player (T9, T11, T16);
the floor attendant's roll call: present / absent / roll-call (T22); begin (T16,
T22) and finish; manual score (T23); malfunction (T20–T21),
restart / postpone (T20); proxy forms (T16); seat draw for an added final-stage
heat (T21).  The technician's side (test heat, recovery, orders to the running
gateway) is in :mod:`gateway.app.commands.heat`, which builds the ``heat`` command.
"""

from __future__ import annotations

from typing import Any

from gateway.accounts.roles import Permission
from gateway.app.deferred import Deferred
from gateway.app.options import (
    PLAYER_HELP,
    add_common,
    add_second,
)
from gateway.tournament.rules.enums import Stage

STAGES = [s.value for s in Stage]


def add_actions(actions: Any) -> None:
    """The director's actions, added to the ``heat`` command's sub-parsers."""
    p = actions.add_parser("schedule", help="put a heat on the schedule")
    add_common(p, read=True)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.add_argument("--start", required=True, help="venue-local YYYY-MM-DD HH:MM (or with offset)")
    p.add_argument("--bank", required=True)
    p.add_argument("--seconds", type=int, default=600, help="heat length")
    p.add_argument("--credits", type=int, default=1000, help="starting tournament credits")
    p.add_argument("--number", type=int, help="heat number (default: next in the stage)")
    p.add_argument("--announced-via", help="for a heat added later (rule 21): how announced")
    p.add_argument(
        "--sit-and-go",
        type=int,
        metavar="SEATS",
        dest="sit_and_go_seats",
        help="rule F6: start as soon as SEATS seats are filled; --start is then the latest start",
    )
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:schedule"))

    p = actions.add_parser("reschedule", help="move a heat, announced beforehand (rule 10)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--start", required=True)
    p.add_argument("--announced-via", required=True, help="MC, POS, marketing ...")
    p.add_argument("--announced-at", help="when it was announced (default: now)")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:reschedule"))

    p = actions.add_parser("cancel", help="drop a heat not yet run, announced (rule 10)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--announced-via", required=True)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:cancel"))

    p = actions.add_parser("list", help="heats of a tournament")
    add_common(p, read=True, write=False, desk=True)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("--stage", choices=STAGES)
    p.set_defaults(
        handler=Deferred("gateway.app.commands.heat_desk_handlers:list_"),
        remote=Deferred("gateway.app.remote_reads:heats"),
    )

    p = actions.add_parser("show", help="a heat and its seats")
    add_common(p, read=True, write=False)
    p.add_argument("heat", type=int)
    p.add_argument("--all", action="store_true", help="include moved and cancelled seats")
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:show"))

    p = actions.add_parser("register", help="register a player for a qualifying heat (11, 16)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("player", help=PLAYER_HELP)
    p.add_argument("--entry", type=int, help="use this entry (default: oldest valid)")
    p.set_defaults(
        handler=Deferred("gateway.app.commands.heat_desk_handlers:register_player"),
        remote=Deferred("gateway.app.remote:remote_register"),
    )

    for action, present in (("present", True), ("absent", False)):
        p = actions.add_parser(
            action, help=f"roll call before the start: mark seats {action} (rule 22)"
        )
        add_common(p, read=True)
        p.add_argument("heat", type=int)
        p.add_argument("seats", nargs="+", metavar="SEAT", help="seat numbers, e.g. 1 2 4 or 1,2,4")
        p.set_defaults(
            handler=Deferred("gateway.app.commands.heat_desk_handlers:mark"), present=present
        )

    p = actions.add_parser("roll-call", help="a heat's roll call and who would forfeit (22)")
    add_common(p, read=True, write=False)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:roll_call"))

    p = actions.add_parser("begin", help="start a heat: absent seats forfeit (rules 16, 22)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument(
        "--present",
        help="seat numbers present, e.g. 1,2,4 (or none); default: the roll call decides",
    )
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:begin"))

    p = actions.add_parser("finish", help="close a heat once every seat has its score")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:finish"))

    p = actions.add_parser("score", help="key in or correct a seat's score (rule 23)")
    add_common(p, read=True)
    p.add_argument("seat", type=int, help="seat id (see heat show)")
    p.add_argument("--credits", type=int, required=True)
    p.add_argument("--games-played", type=int, default=0)
    p.add_argument("--games-won", type=int, default=0)
    p.add_argument("--wagered", type=int, default=0)
    p.add_argument("--won", type=int, default=0)
    p.add_argument("--reason", required=True)
    add_second(p, Permission.HEAT_MANUAL_SCORE)
    p.set_defaults(
        handler=Deferred("gateway.app.commands.heat_desk_handlers:score"),
        remote=Deferred("gateway.app.remote:remote_score"),
    )

    p = actions.add_parser("reinstate-seat", help="undo a forfeit while the heat runs (23)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:reinstate_seat"))

    p = actions.add_parser("malfunction", help="a machine failed under a seat (rules 20–21)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--reason", required=True)
    p.add_argument(
        "--negligence",
        action="store_true",
        help="the player caused it: disqualified, buy-in forfeited (rule 20)",
    )
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:malfunction"))

    p = actions.add_parser("restart", help="tournament system failure: restart the heat (20)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--failed-at", required=True)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:restart"))

    p = actions.add_parser("postpone", help="not resolved in time: postpone the heat (20–21)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:postpone"))

    p = actions.add_parser("proxy", help="record a proxy form for an extra final seat (16)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--name", required=True)
    p.add_argument("--id-number", required=True)
    p.add_argument("--dob", required=True)
    p.add_argument("--received-at", help="when the signed form arrived (default: now)")
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:proxy"))

    p = actions.add_parser("added-heat-draw", help="seat waiting players in an added heat (21)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--seed", help="hex seed (default: a fresh random one)")
    p.set_defaults(handler=Deferred("gateway.app.commands.heat_desk_handlers:added"))
