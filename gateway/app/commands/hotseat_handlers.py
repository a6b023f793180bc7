"""The handlers of ``reelgate hotseat ...`` (its parser: :mod:`.hotseat`), imported only
when one of them runs."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.commands.tournament_prizes_handlers import deliver, show_transfers
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import second_name
from gateway.app.options import now_of
from gateway.app.output import emit, rands
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.hotseat import heat_subject, wildcard_subject
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services import machine_prizes
from gateway.tournament.services.common import find_tournament, get
from gateway.tournament.services.hotseat import Announcement
from storage.hotseat import HotseatDraw
from storage.tournament import Heat, Tournament


def _facts(a: Announcement | None, subject: str) -> dict[str, Any]:
    if a is None:
        return {"subject": subject, "commitment": None}
    return {
        "subject": a.subject,
        "commitment": a.commitment,
        "draws": a.draws,
        "prize_cents": a.prize_cents,
        "seed": a.seed,
        "winners": [{"index": i, "winner": w, "prize_cents": c} for i, w, c in a.winners],
    }


def _show(args: argparse.Namespace, facts: dict[str, Any]) -> int:
    rows = [
        [w["index"], w["winner"] or "void", rands(w["prize_cents"])]
        for w in facts.get("winners", [])
    ]
    title = f"{facts['subject']}: commitment {facts['commitment']}" + (
        f", seed {facts['seed']}" if facts.get("seed") else ", seed not revealed (HS5)"
    )
    return emit(args, facts, ["draw", "winner", "prize"], rows, title=title)


def _draws(draws: Sequence[HotseatDraw]) -> list[dict[str, Any]]:
    return [
        {
            "id": d.id,
            "index": d.draw_index,
            "moment": d.moment,
            "picks": json.loads(d.picks),
            "winner": d.winner,
            "entry_id": d.entry_id,
            "prize_cents": d.prize_cents,
        }
        for d in draws
    ]


async def _heat_zone(session: AsyncSession, heat_id: int) -> str:
    heat = await get(session, Heat, heat_id, "heat")
    t = await get(session, Tournament, heat.tournament_id, "tournament")
    return t.venue_tz


def commit(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _heat_zone(session, args.heat)
        await hs.commit_heat(
            session, args.heat, draws=args.draws, prize_cents=args.prize_cents,
            actor=host_actor(), now=now_of(args, zone),
        )  # fmt: skip
        subject = heat_subject(args.heat)
        return _facts(await hs.announcement(session, subject), subject)

    return _show(args, run(args, work))


def draw(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await _heat_zone(session, args.heat)
        taken = await hs.take_heat_draws(
            session, args.heat, actor=host_actor(), now=now_of(args, zone)
        )
        subject = heat_subject(args.heat)
        return {**_facts(await hs.announcement(session, subject), subject), "draws": _draws(taken)}

    return _show(args, run(args, work))


def show(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        subject = heat_subject(args.heat)
        return _facts(await hs.announcement(session, subject), subject)

    return _show(args, run(args, work))


def wildcard_commit(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        row = await hs.commit_wildcard(
            session, t.id, Stage(args.stage), actor=host_actor(), now=now_of(args, t.venue_tz)
        )
        return _facts(await hs.announcement(session, row.subject), row.subject)

    return _show(args, run(args, work))


def wildcard_draw(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        taken = await hs.draw_wildcard(
            session, t.id, Stage(args.stage), actor=host_actor(), now=now_of(args, t.venue_tz)
        )
        subject = wildcard_subject(t.id, args.stage)
        return {
            **_facts(await hs.announcement(session, subject), subject),
            "draws": _draws([taken]),
        }

    return _show(args, run(args, work))


def pay(args: argparse.Namespace) -> int:
    if args.to_machine is not None:
        return _pay_to_machine(args)

    async def work(session: AsyncSession) -> dict[str, Any]:
        paid = await hs.pay_draw(
            session, args.draw, signer=args.signer, signature=args.signature,
            witness=second_name(args), actor=host_actor(), now=now_of(args),
        )  # fmt: skip
        return {
            "draw": paid.id,
            "entry_id": paid.entry_id,
            "amount_cents": paid.prize_cents,
            "witness": paid.witness,
            "paid_at": paid.paid_at,
        }

    return emit(args, run(args, work))


def _pay_to_machine(args: argparse.Namespace) -> int:
    """P2, P4: journal the draw's transfer (the checks of the cash payout, the witness's
    password), then send it at once; the outcome is the transfer's row."""

    async def work(session: AsyncSession) -> tuple[int, datetime]:
        now = now_of(args)
        row = await machine_prizes.journal_draw(
            session, args.draw, machine_id=args.to_machine, signer=args.signer,
            signature=args.signature, witness=second_name(args), actor=host_actor(), now=now,
        )  # fmt: skip
        return row.id, now

    transfer_id, at = run(args, work)
    rows = asyncio.run(deliver(args, at))
    return show_transfers(args, [r for r in rows if r["id"] == transfer_id])
