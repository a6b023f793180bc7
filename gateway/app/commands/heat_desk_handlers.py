"""The handlers of the desk's ``reelgate heat ...`` actions (their parser:
:mod:`.heat_desk`), imported only when one of them runs."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import keyed_field, second_name
from gateway.app.options import (
    now_of,
    parse_date,
    parse_time,
    write_of,
)
from gateway.app.output import cell, emit, score_mark
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


def schedule(args: argparse.Namespace) -> int:
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
            sit_and_go_seats=args.sit_and_go_seats,
        )
        return await summarise_heat(session, heat)

    return emit(args, run(args, work))


def reschedule(args: argparse.Namespace) -> int:
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


def cancel(args: argparse.Namespace) -> int:
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


def list_(args: argparse.Namespace) -> int:
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


def show(args: argparse.Namespace) -> int:
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


def register_player(args: argparse.Namespace) -> int:
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


def begin(args: argparse.Namespace) -> int:
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


def mark(args: argparse.Namespace) -> int:
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


def roll_call(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[svc.RollCall, str]:
        return await svc.roll_call(session, args.heat), await _zone_of_heat(session, args.heat)

    call, zone = run(args, work)
    return _roll_call_out(args, call, zone)


def finish(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[dict[str, Any], str]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await svc.finish_heat(session, args.heat, at=now_of(args, zone), actor=host_actor())
        return {"heat": heat.id, "status": heat.status, "ended_at": heat.ended_at}, zone

    data, zone = run(args, work)
    return emit(args, data, zone=zone)


def score(args: argparse.Namespace) -> int:
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


def reinstate_seat(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_seat(session, args.seat)
        seat = await svc.reinstate_seat(
            session, args.seat, reason=args.reason, actor=host_actor(), at=now_of(args, zone)
        )
        return {"seat": seat.id, "status": seat.status}

    return emit(args, run(args, work))


def malfunction(args: argparse.Namespace) -> int:
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


def restart(args: argparse.Namespace) -> int:
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


def postpone(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _zone_of_heat(session, args.heat)
        heat = await svc.postpone_heat(
            session, args.heat, now=now_of(args, zone), actor=host_actor(), reason=args.reason
        )
        return {"heat": heat.id, "status": heat.status}

    return emit(args, run(args, work))


def proxy(args: argparse.Namespace) -> int:
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


def added(args: argparse.Namespace) -> int:
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
