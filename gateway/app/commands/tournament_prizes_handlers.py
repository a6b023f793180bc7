"""The handlers of ``reelgate tournament prizes ...`` (its parser:
:mod:`.tournament_prizes`), imported only when one of them runs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import second_name
from gateway.app.options import now_of
from gateway.app.output import emit, rands
from gateway.errors import OperatorError
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.prizes import split_by_weights
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
