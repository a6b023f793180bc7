"""The handlers of ``reelgate walkup ...`` (the parser: :mod:`.walkup`), imported only when
one runs.  Clauses: docs/rules.md#w1 to #w9."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import now_of
from gateway.app.output import emit
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.walkup import (
    SessionRow,
    WindowRow,
    confirm_offer,
    list_sessions,
    list_windows,
    set_window,
)
from storage.tournament import Heat


def set_(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, object]:
        t = await find_tournament(session, args.tournament)
        row = await set_window(
            session, t.id, args.bank, opens=args.opens, closes=args.closes,
            seconds=args.seconds, credits=args.credits, confirm_seconds=args.confirm_seconds,
            enabled=not args.off, actor=host_actor(), reason=args.reason,
            at=now_of(args, t.venue_tz),
        )  # fmt: skip
        return {
            "tournament": t.id, "bank": row.bank_name, "opens": row.opens,
            "closes": row.closes, "seconds": row.duration_seconds,
            "credits": int(row.starting_credits), "confirm_seconds": row.confirm_seconds,
            "enabled": row.enabled,
        }  # fmt: skip

    return emit(args, run(args, work))


def windows(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[WindowRow]:
        return await list_windows(session, at=now_of(args))

    rows = run(args.database, work)
    return emit(
        args,
        {"windows": [asdict(w) for w in rows]},
        ["tournament", "bank", "window", "session", "credits", "on", "open now"],
        [
            [w.tournament, w.bank, f"{w.opens}-{w.closes}", f"{w.duration_seconds}s",
             w.starting_credits, "yes" if w.enabled else "off", "yes" if w.open_now else "no"]
            for w in rows
        ],
        title="walk-up windows (W1, W2)",
    )


def sessions(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[SessionRow]:
        tid = None
        if args.tournament:
            tid = (await find_tournament(session, args.tournament)).id
        return await list_sessions(session, tournament_id=tid)

    rows = run(args.database, work)
    return emit(
        args,
        {"sessions": [asdict(r) | {"active": r.active} for r in rows]},
        ["session", "machine", "player", "entry", "status", "heat", "score", "offered"],
        [
            [r.id, r.machine, r.player_name, r.entry_id,
             r.heat_status or r.status, r.heat_id or "-",
             "-" if r.score is None else r.score, r.offered_at]
            for r in rows
        ],
        title="walk-up sessions (W5-W8)",
    )


def confirm(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> Heat:
        return await confirm_offer(session, args.session, at=now_of(args), actor=host_actor())

    heat = run(args, work)
    return emit(args, {"session": args.session, "heat": heat.id, "bank": heat.bank_name})
