"""``reelgate heat ...`` at the desk: the heat schedule and what the director does around a heat.

schedule / reschedule / cancel (T10) / list / show; register a player (T9, T11, T16);
the floor attendant's roll call: present / absent / roll-call (T22); begin (T16,
T22) and finish; manual score (T23); malfunction (T20–T21),
restart / postpone (T20); proxy forms (T16); seat draw for an added final-stage
heat (T21).  The technician's side (test heat, recovery, orders to the running
gateway) is in :mod:`gateway.app.commands.heat`, which builds the ``heat`` command.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import keyed_field, second_name
from gateway.app.options import (
    PLAYER_HELP,
    add_common,
    add_second,
    now_of,
    parse_date,
    parse_time,
    write_of,
)
from gateway.app.output import cell, emit, score_mark
from gateway.app.remote import remote_register, remote_score
from gateway.clocks import deadlines
from gateway.errors import OperatorError
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import parse_seed
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.attendance import present_at_start
from gateway.tournament.services.common import find_tournament, get
from gateway.tournament.services.setup import summarise_heat
from storage.tournament import Heat, Seat, Tournament

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
    p.set_defaults(handler=_schedule)

    p = actions.add_parser("reschedule", help="move a heat, announced beforehand (rule 10)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--start", required=True)
    p.add_argument("--announced-via", required=True, help="MC, POS, marketing ...")
    p.add_argument("--announced-at", help="when it was announced (default: now)")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_reschedule)

    p = actions.add_parser("cancel", help="drop a heat not yet run, announced (rule 10)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--announced-via", required=True)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_cancel)

    p = actions.add_parser("list", help="heats of a tournament")
    add_common(p, read=True, write=False)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("--stage", choices=STAGES)
    p.set_defaults(handler=_list)

    p = actions.add_parser("show", help="a heat and its seats")
    add_common(p, read=True, write=False)
    p.add_argument("heat", type=int)
    p.add_argument("--all", action="store_true", help="include moved and cancelled seats")
    p.set_defaults(handler=_show)

    p = actions.add_parser("register", help="register a player for a qualifying heat (11, 16)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("player", help=PLAYER_HELP)
    p.add_argument("--entry", type=int, help="use this entry (default: oldest valid)")
    p.set_defaults(handler=_register, remote=remote_register)

    for action, present in (("present", True), ("absent", False)):
        p = actions.add_parser(
            action, help=f"roll call before the start: mark seats {action} (rule 22)"
        )
        add_common(p, read=True)
        p.add_argument("heat", type=int)
        p.add_argument("seats", nargs="+", metavar="SEAT", help="seat numbers, e.g. 1 2 4 or 1,2,4")
        p.set_defaults(handler=_mark, present=present)

    p = actions.add_parser("roll-call", help="a heat's roll call and who would forfeit (22)")
    add_common(p, read=True, write=False)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=_roll_call)

    p = actions.add_parser("begin", help="start a heat: absent seats forfeit (rules 16, 22)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument(
        "--present",
        help="seat numbers present, e.g. 1,2,4 (or none); default: the roll call decides",
    )
    p.set_defaults(handler=_begin)

    p = actions.add_parser("finish", help="close a heat once every seat has its score")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.set_defaults(handler=_finish)

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
    p.set_defaults(handler=_score, remote=remote_score)

    p = actions.add_parser("reinstate-seat", help="undo a forfeit while the heat runs (23)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_reinstate_seat)

    p = actions.add_parser("malfunction", help="a machine failed under a seat (rules 20–21)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--reason", required=True)
    p.add_argument(
        "--negligence",
        action="store_true",
        help="the player caused it: disqualified, buy-in forfeited (rule 20)",
    )
    p.set_defaults(handler=_malfunction)

    p = actions.add_parser("restart", help="tournament system failure: restart the heat (20)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--failed-at", required=True)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_restart)

    p = actions.add_parser("postpone", help="not resolved in time: postpone the heat (20–21)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_postpone)

    p = actions.add_parser("proxy", help="record a proxy form for an extra final seat (16)")
    add_common(p, read=True)
    p.add_argument("seat", type=int)
    p.add_argument("--name", required=True)
    p.add_argument("--id-number", required=True)
    p.add_argument("--dob", required=True)
    p.add_argument("--received-at", help="when the signed form arrived (default: now)")
    p.set_defaults(handler=_proxy)

    p = actions.add_parser("added-heat-draw", help="seat waiting players in an added heat (21)")
    add_common(p, read=True)
    p.add_argument("heat", type=int)
    p.add_argument("--seed", help="hex seed (default: a fresh random one)")
    p.set_defaults(handler=_added)


async def _zone_of_heat(session: AsyncSession, heat_id: int) -> str:
    heat = await get(session, Heat, heat_id, "heat")
    return (await get(session, Tournament, heat.tournament_id, "tournament")).venue_tz


async def _zone_of_seat(session: AsyncSession, seat_id: int) -> str:
    seat = await get(session, Seat, seat_id, "seat")
    return await _zone_of_heat(session, seat.heat_id)


def _keyed(
    args: argparse.Namespace, text: str | None, zone: str, option: str, now: datetime
) -> datetime:
    """A time keyed in its own option, judged like ``--now`` (see ``keyed_field``)."""
    if not text:
        return now
    return keyed_field(parse_time(text, zone, option), option, getattr(args, "reason", None))


def _schedule(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> Any:
        t = await find_tournament(session, args.tournament)
        heat = await svc.schedule_heat(
            session,
            t.id,
            stage=Stage(args.stage),
            starts_at=parse_time(args.start, t.venue_tz),
            bank_name=args.bank,
            duration_seconds=args.seconds,
            starting_credits=args.credits,
            actor=host_actor(),
            now=now_of(args, t.venue_tz),
            number=args.number,
            announced_via=args.announced_via,
        )
        return await summarise_heat(session, heat)

    return emit(args, run(args, work))


def _reschedule(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> Any:
        zone = await _zone_of_heat(session, args.heat)
        now = now_of(args, zone)
        heat = await svc.reschedule_heat(
            session,
            args.heat,
            new_start=parse_time(args.start, zone, "--start"),
            announced_via=args.announced_via,
            announced_at=_keyed(args, args.announced_at, zone, "--announced-at", now),
            reason=args.reason,
            actor=host_actor(),
            now=now,
        )
        return await summarise_heat(session, heat)

    return emit(args, run(args, work))


def _cancel(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        entries = await svc.cancel_heat(
            session,
            args.heat,
            announced_via=args.announced_via,
            reason=args.reason,
            actor=host_actor(),
            now=now_of(args, zone),
        )
        return {"heat": args.heat, "status": "cancelled", "entries_released": entries}

    return emit(args, run(args, work))


def _list(args: argparse.Namespace) -> int:
    stage = Stage(args.stage) if args.stage else None
    heats = run(args, lambda session: svc.list_heats(session, args.tournament, stage))
    return emit(
        args,
        heats,
        ["heat", "stage", "no.", "starts", "bank", "seats", "booked", "status"],
        [
            [h.heat_id, h.stage, h.number, h.starts_at, h.bank_name, h.seats, h.booked, h.status]
            for h in heats
        ],
    )


def _show(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        heat = await get(session, Heat, args.heat, "heat")
        return {
            "heat": await summarise_heat(session, heat),
            "seats": await svc.heat_seats(session, heat.id, include_inactive=args.all),
        }

    data = run(args, work)
    if args.json:
        return emit(args, data)
    h = data["heat"]
    return emit(
        args,
        data,
        [
            "seat id",
            "seat",
            "machine",
            "entry",
            "holder",
            "played by",
            "status",
            "credits",
            "score",
        ],
        [
            [
                s.seat_id,
                s.seat_number,
                s.machine_id,
                s.entry_id,
                s.holder_name,
                s.played_by,
                s.status,
                s.credits,
                score_mark(s.source),
            ]
            for s in data["seats"]
        ],
        title=f"{h.label} ({h.status.value}) {cell(h.starts_at)} bank {h.bank_name}",
    )


def _register(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        write = write_of(args, zone)
        await deadlines.registration(session, args.heat, write)  # T11b at the real time
        seat = await svc.register_for_heat(
            session,
            args.heat,
            args.player,
            actor=host_actor(),
            now=write.at,
            entry_id=args.entry,
        )
        return {
            "seat_id": seat.id,
            "seat": seat.seat_number,
            "machine": seat.machine_id,
            "entry": seat.entry_id,
        }

    return emit(args, run(args, work))


def _seat_list(text: str, field: str = "--present") -> list[int]:
    if text.strip().lower() in ("", "none", "-"):
        return []
    try:
        numbers = {int(part) for part in text.split(",") if part.strip()}
    except ValueError:
        raise OperatorError(f"{field} {text!r}: seat numbers separated by commas") from None
    if any(n < 1 for n in numbers):
        raise OperatorError(f"{field} {text!r}: seat numbers start at 1")
    return sorted(numbers)


def _begin(args: argparse.Namespace) -> int:
    given = None if args.present is None else _seat_list(args.present)

    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await get(session, Heat, args.heat, "heat")
        present = given
        if present is None:  # the roll call and the tournament's setting decide (T22)
            present = sorted(await present_at_start(session, heat))
        forfeited = await svc.begin_heat(
            session, args.heat, present_seats=present, at=now_of(args, zone), actor=host_actor()
        )
        return {"heat": args.heat, "present": present, "forfeited": forfeited}

    return emit(args, run(args, work))


def _roll_call_out(args: argparse.Namespace, call: svc.RollCall, zone: str) -> int:
    data = {
        "heat": call.heat_id,
        "label": call.label,
        "status": call.heat_status,
        "roll_call_taken": call.taken,
        "unmarked_at_start": call.unmarked_at_start,
        "present": call.present,
        "forfeit_at_start": call.absent,
        "seats": call.seats,
    }
    if args.json:
        return emit(args, data, zone=zone)
    marks = {True: "present", False: "absent", None: ""}
    title = (
        f"{call.label} ({call.heat_status}) roll call; unmarked seats at the start: "
        f"{call.unmarked_at_start.value}{'' if call.taken else ' (no roll call taken yet)'}"
    )
    return emit(
        args,
        data,
        ["seat", "machine", "player", "mark", "marked at", "by", "at the start"],
        [
            [
                s.seat_number,
                s.machine_id,
                s.played_by,
                marks[s.mark],
                s.marked_at,
                s.marked_by,
                "plays" if s.counts_present else "forfeits (rule 22)",
            ]
            for s in call.seats
        ],
        title=title,
        zone=zone,
    )


def _mark(args: argparse.Namespace) -> int:
    seats = sorted({n for text in args.seats for n in _seat_list(text, "SEAT")})
    if not seats:
        raise OperatorError("SEAT: name at least one seat number")

    async def work(session: AsyncSession) -> tuple[svc.RollCall, str]:
        zone = await _zone_of_heat(session, args.heat)
        call = await svc.mark_attendance(
            session,
            args.heat,
            seats,
            present=args.present,
            at=now_of(args, zone),
            actor=host_actor(),
        )
        return call, zone

    call, zone = run(args, work)
    return _roll_call_out(args, call, zone)


def _roll_call(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[svc.RollCall, str]:
        return await svc.roll_call(session, args.heat), await _zone_of_heat(session, args.heat)

    call, zone = run(args, work)
    return _roll_call_out(args, call, zone)


def _finish(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[dict[str, Any], str]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await svc.finish_heat(session, args.heat, at=now_of(args, zone), actor=host_actor())
        return {"heat": heat.id, "status": heat.status, "ended_at": heat.ended_at}, zone

    data, zone = run(args, work)
    return emit(args, data, zone=zone)


def _score(args: argparse.Namespace) -> int:
    score = HeatScore(
        args.credits, TournamentMeters(args.games_played, args.games_won, args.wagered, args.won)
    )

    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_seat(session, args.seat)
        s = await svc.enter_manual_score(
            session,
            args.seat,
            score,
            reason=args.reason,
            actor=host_actor(),
            at=now_of(args, zone),
            approved_by=second_name(args),
        )
        return {
            "seat": s.seat_id,
            "entry": s.entry_id,
            "credits": s.final_credits,
            "source": s.source,
        }

    return emit(args, run(args, work))


def _reinstate_seat(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_seat(session, args.seat)
        seat = await svc.reinstate_seat(
            session, args.seat, reason=args.reason, actor=host_actor(), at=now_of(args, zone)
        )
        return {"seat": seat.id, "status": seat.status}

    return emit(args, run(args, work))


def _malfunction(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> Any:
        zone = await _zone_of_seat(session, args.seat)
        return await svc.mark_seat_malfunctioned(
            session,
            args.seat,
            at=now_of(args, zone),
            actor=host_actor(),
            reason=args.reason,
            negligence=args.negligence,
        )

    return emit(args, run(args, work))


def _restart(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await svc.restart_heat(
            session,
            args.heat,
            failed_at=parse_time(args.failed_at, zone, "--failed-at"),
            now=now_of(args, zone),
            actor=host_actor(),
            reason=args.reason,
        )
        return {"heat": heat.id, "status": heat.status, "restarts": heat.restarts}

    return emit(args, run(args, work))


def _postpone(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await svc.postpone_heat(
            session, args.heat, now=now_of(args, zone), actor=host_actor(), reason=args.reason
        )
        return {"heat": heat.id, "status": heat.status}

    return emit(args, run(args, work))


def _proxy(args: argparse.Namespace) -> int:
    dob = parse_date(args.dob, "--dob")

    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_seat(session, args.seat)
        now = now_of(args, zone)
        proxy = await svc.add_proxy(
            session,
            args.seat,
            nominee_name=args.name,
            nominee_id_number=args.id_number,
            nominee_date_of_birth=dob,
            received_at=_keyed(args, args.received_at, zone, "--received-at", now),
            actor=host_actor(),
        )
        return {"proxy": proxy.id, "seat": proxy.seat_id, "nominee": proxy.nominee_name}

    return emit(args, run(args, work))


def _added(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        draw = await svc.seat_waiting_in_added_heat(
            session,
            args.heat,
            actor=host_actor(),
            at=now_of(args, zone),
            seed=parse_seed(args.seed) if args.seed else None,
        )
        return {
            "seed": draw.seed.hex(),
            "seats": {e: s.seat_number for e, s in sorted(draw.seats.items())},
        }

    return emit(args, run(args, work))
