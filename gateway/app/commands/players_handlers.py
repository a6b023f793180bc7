"""The handlers of ``reelgate players ...`` (its parser: :mod:`.players`), imported only
when one of them runs."""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import (
    now_of,
    parse_date,
)
from gateway.app.output import emit
from gateway.app.remote import call
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.people import list_players
from storage.tournament import Disqualification, Entry, Score, Seat


def add(args: argparse.Namespace) -> int:
    dob = parse_date(args.dob, "--dob")

    async def work(session: AsyncSession) -> dict[str, Any]:
        p = await svc.add_player(
            session,
            id_number=args.id_number,
            name=args.name,
            date_of_birth=dob,
            card_number=args.card,
            actor=host_actor(),
            now=now_of(args),
        )
        return {"id": p.id, "id_number": p.id_number, "name": p.name}

    return emit(args, run(args, work))


def list_(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [
            {
                "id": p.id,
                "id_number": p.id_number,
                "name": p.name,
                "date_of_birth": p.date_of_birth,
                "card": p.card_number,
            }
            for p in await list_players(session)
        ]

    data = run(args, work)
    return emit(
        args,
        data,
        ["id", "id number", "name", "born", "card"],
        [[d["id"], d["id_number"], d["name"], d["date_of_birth"], d["card"]] for d in data],
    )


def show(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        p = await svc.find_player(session, args.player)
        entries = (
            (
                await session.execute(
                    select(Entry)
                    .where(Entry.tournament_id == t.id, Entry.player_id == p.id)
                    .order_by(Entry.id)
                )
            )
            .scalars()
            .all()
        )
        seats = (
            await session.execute(
                select(Seat, Score.final_credits)
                .outerjoin(Score, Score.seat_id == Seat.id)
                .where(Seat.holder_player_id == p.id, Seat.entry_id.in_([e.id for e in entries]))
                .order_by(Seat.id)
            )
        ).all()
        dqs = (
            (
                await session.execute(
                    select(Disqualification).where(
                        Disqualification.tournament_id == t.id, Disqualification.player_id == p.id
                    )
                )
            )
            .scalars()
            .all()
        )
        return {
            "id": p.id,
            "name": p.name,
            "id_number": p.id_number,
            "date_of_birth": p.date_of_birth,
            "card": p.card_number,
            "entries": [{"entry": e.id, "status": e.status} for e in entries],
            "seats": [
                {
                    "seat": s.id,
                    "heat": s.heat_id,
                    "stage": s.stage,
                    "number": s.seat_number,
                    "machine": s.machine_id,
                    "entry": s.entry_id,
                    "status": s.status,
                    "credits": c,
                }
                for s, c in seats
            ],
            "disqualifications": [
                {
                    "id": d.id,
                    "rule": d.rule,
                    "reason": d.reason,
                    "entry": d.entry_id,
                    "revoked": d.revoked_at is not None,
                }
                for d in dqs
            ],
        }

    data = run(args, work)
    if args.json:
        return emit(args, data)
    print(
        f"player {data['id']}: {data['name']}, ID {data['id_number']}, born "
        f"{data['date_of_birth']}, card {data['card'] or '-'}"
    )
    statuses: dict[str, list[int]] = {}
    for e in data["entries"]:
        statuses.setdefault(e["status"].value, []).append(e["entry"])
    print("entries: " + ("; ".join(f"{k} {v}" for k, v in statuses.items()) or "none"))
    for d in data["disqualifications"]:
        scope = f"entry {d['entry']}" if d["entry"] else "all entries"
        state = "revoked" if d["revoked"] else "in force"
        print(f"disqualification {d['id']} (rule {d['rule']}, {scope}, {state}): {d['reason']}")
    columns = ["seat id", "stage", "heat", "seat", "machine", "entry", "status", "credits"]
    keys = ["seat", "stage", "heat", "number", "machine", "entry", "status", "credits"]
    return emit(args, data, columns, [[x[k] for k in keys] for x in data["seats"]])


def _read_register(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise OperatorError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError:
        raise OperatorError(f"{path}: not UTF-8 text") from None


def import_(args: argparse.Namespace) -> int:
    text = _read_register(args.file)

    async def work(session: AsyncSession) -> dict[str, Any]:
        result = await svc.import_exclusions(
            session,
            text,
            source=args.source or args.file.name,
            actor=host_actor(),
            now=now_of(args),
            venue_zone=args.zone,
        )
        return {
            "added": result.added,
            "disqualified": [
                {"tournament": t, "player": p} for t, p in result.players_disqualified
            ],
        }

    return emit(args, run(args, work))


def disqualify(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        dq = await svc.disqualify(
            session,
            args.tournament,
            args.player,
            rule=args.rule,
            reason=args.reason,
            actor=host_actor(),
            now=now_of(args),
            entry_id=args.entry,
        )
        return {"disqualification": dq.id, "player": dq.player_id, "rule": dq.rule}

    return emit(args, run(args, work))


def remote_import(args: argparse.Namespace) -> int:
    """The register's rows, checked here first as the file is (a bad line is named by its
    line), then sent as they are; the API checks them again and stores them."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from gateway.tournament.rules.exclusion_csv import parse_exclusion_csv

    text = _read_register(args.file)
    try:
        zone = ZoneInfo(args.zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise OperatorError(f"--zone: {args.zone!r} is not a time zone") from None
    parse_exclusion_csv(text, zone)
    header, *lines = list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))
    names = [h.strip() for h in header]
    rows = [
        {k: v.strip() for k, v in zip(names, line, strict=True) if v.strip()}
        for line in lines
        if any(cell.strip() for cell in line)
    ]
    body = {"source": args.source or args.file.name, "zone": args.zone, "rows": rows}
    return emit(args, call(args, "POST", "/exclusions/imports", body))


def remote_disqualify(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"player": args.player, "rule": args.rule, "reason": args.reason}
    if args.entry is not None:
        body["entry"] = args.entry
    path = f"/tournaments/{args.tournament}/disqualifications"
    return emit(args, call(args, "POST", path, body))


def reinstate(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        dq = await svc.reinstate(
            session,
            args.disqualification,
            reason=args.reason,
            actor=host_actor(),
            now=now_of(args),
        )
        return {"disqualification": dq.id, "revoked_at": dq.revoked_at}

    return emit(args, run(args, work))
