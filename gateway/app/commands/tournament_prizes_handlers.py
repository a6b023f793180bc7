"""The handlers of ``reelgate tournament prizes ...`` (its parser:
:mod:`.tournament_prizes`), imported only when one of them runs."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import close_engine, guarded, open_engine, run
from gateway.app.identity import host_actor
from gateway.app.keyed import second_name
from gateway.app.machine_prizes import deliver_from_host
from gateway.app.options import now_of
from gateway.app.output import emit, rands
from gateway.errors import OperatorError
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.prizes import split_by_weights
from gateway.tournament.services import machine_prizes as mp
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.prizes import (
    PrizeLine,
    apportion_surplus,
    pay_prize,
    payout_facts,
    prize_lines,
    set_schedule,
)
from gateway.tournament.services.standings import StageStandings, stage_standings
from storage.db import make_sessionmaker


def _amounts(items: Sequence[str], what: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for item in items:
        place, sep, cents = item.partition("=")
        try:
            if not sep or int(place) in out:
                raise ValueError
            out[int(place)] = int(cents)
        except ValueError:
            raise OperatorError(f"{what} {item!r}: expected PLACE=CENTS, each place once") from None
    return out


def _weights(text: str) -> list[int]:
    try:
        return [int(w) for w in text.split(",")]
    except ValueError:
        raise OperatorError(f"--weights {text!r}: whole numbers, comma-separated") from None


def schedule(args: argparse.Namespace) -> int:
    minimums = _amounts(args.places, "place")

    async def work(session: AsyncSession) -> tuple[PrizeLine, ...]:
        t = await find_tournament(session, args.tournament)
        stage = Stage(args.stage)
        await set_schedule(
            session, t.id, stage, minimums, actor=host_actor(), now=now_of(args, t.venue_tz),
            reason=args.reason,
        )  # fmt: skip
        return await prize_lines(session, t.id, stage)

    return show(args, run(args, work))


def apportion(args: argparse.Namespace) -> int:
    if args.weights and args.share:
        raise OperatorError("give --share PLACE=CENTS or --weights, not both")
    if args.weights:
        parts = split_by_weights(args.surplus_cents, _weights(args.weights))
        shares = dict(enumerate(parts, start=1))
    else:
        shares = _amounts(args.share, "share")

    async def work(session: AsyncSession) -> tuple[PrizeLine, ...]:
        t = await find_tournament(session, args.tournament)
        stage = Stage(args.stage)
        await apportion_surplus(
            session, t.id, stage, args.surplus_cents, shares, reason=args.reason,
            actor=host_actor(), now=now_of(args, t.venue_tz),
        )  # fmt: skip
        return await prize_lines(session, t.id, stage)

    return show(args, run(args, work))


def pay(args: argparse.Namespace) -> int:
    if args.to_machine is not None:
        return _pay_to_machine(args)

    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        payout = await pay_prize(
            session, t.id, Stage(args.stage), args.place, signer=args.signer,
            signature=args.signature, witness=second_name(args), actor=host_actor(),
            now=now_of(args, t.venue_tz),
        )  # fmt: skip
        return payout_facts(payout)

    return emit(args, run(args, work))


def list_(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[PrizeLine, ...]:
        t = await find_tournament(session, args.tournament)
        return await prizes_for(session, await stage_standings(session, t.id, Stage(args.stage)))

    return show(args, run(args, work))


async def prizes_for(session: AsyncSession, table: StageStandings) -> tuple[PrizeLine, ...]:
    """The stage's prize places against its standings (for ``tournament standings``)."""
    return await prize_lines(session, table.tournament_id, table.stage, table.lines)


def show(args: argparse.Namespace, lines: Sequence[PrizeLine], title: str | None = None) -> int:
    return emit(
        args,
        {"prizes": lines},
        ["place", "advertised", "surplus", "prize", "entry", "player", "paid"],
        [
            [
                x.place,
                rands(x.minimum_cents),
                rands(x.surplus_cents),
                rands(x.total_cents),
                x.entry_id,
                x.player_name,
                rands(x.paid_cents) if x.paid_cents is not None else "no",
            ]
            for x in lines
        ],
        title=title or "prizes (T15: advertised minimum + apportioned surplus)",
    )


def _pay_to_machine(args: argparse.Namespace) -> int:
    """P2, P4: journal the transfer (every check of a desk payout, the witness's
    password), then send it at once; the outcome is the transfer's row."""

    async def work(session: AsyncSession) -> tuple[int, datetime]:
        t = await find_tournament(session, args.tournament)
        now = now_of(args, t.venue_tz)
        row = await mp.journal_prize(
            session, t.id, Stage(args.stage), args.place, machine_id=args.to_machine,
            signer=args.signer, signature=args.signature, witness=second_name(args),
            actor=host_actor(), now=now,
        )  # fmt: skip
        return row.id, now

    transfer_id, at = run(args, work)  # the outcome is stored at the command's time
    rows = asyncio.run(deliver(args, at))
    mine = [r for r in rows if r["id"] == transfer_id]
    return show_transfers(args, mine)


async def deliver(args: argparse.Namespace, at: datetime | None) -> list[dict[str, object]]:
    """Every open transfer sent or recovered; outcomes stored at ``at`` (None: the real
    time, as the machine answers)."""
    url, engine = await open_engine(args.database)
    clock = (lambda: at) if at is not None else (lambda: datetime.now(UTC))
    try:
        rows = await guarded(
            url, deliver_from_host(make_sessionmaker(engine), actor=host_actor(), clock=clock)
        )
        return [mp.transfer_facts(r) for r in rows]
    finally:
        await close_engine(engine)


def machine_setting(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, object]:
        row = await mp.set_setting(
            session, allowed=bool(args.allow), reason=args.reason, actor=host_actor(),
            now=now_of(args), expiration_days=args.expiration_days,
        )  # fmt: skip
        return {"allowed": row.allowed, "expiration_days": row.expiration_days}

    return emit(args, run(args, work))


def machine_deliver(args: argparse.Namespace) -> int:
    return show_transfers(args, asyncio.run(deliver(args, None)))


def machine_list(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[dict[str, object]]:
        return [mp.transfer_facts(r) for r in await mp.transfers(session)]

    return show_transfers(args, run(args.database, work))


def show_transfers(args: argparse.Namespace, rows: Sequence[dict[str, object]]) -> int:
    return emit(
        args,
        {"transfers": list(rows)},
        ["id", "prize", "machine", "amount", "transaction", "status", "reason"],
        [
            [
                r["id"],
                r["ref"],
                r["machine"],
                rands(int(str(r["amount_cents"]))),
                r["transaction_id"],
                r["status"],
                r["reason"] or "",
            ]
            for r in rows
        ],
        title="prizes to the machine (P4, P5)",
    )
