"""``reelgate tournament prizes ...``: T15 prizes of a stage.

schedule (the advertised minimum per place), apportion (the director's decision on the
surplus, every cent accounted for), pay (the winner signs, keying their ID or card; the
witness is a second account that types its password, as with ``super9 sign``) and list
(each place: advertised, surplus, who holds it, paid).
The same lines are added to ``reelgate tournament standings``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import second_name
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second, now_of
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

STAGES = [s.value for s in Stage]


def register(actions: Any) -> None:
    """Add ``prizes`` to the ``tournament`` actions."""
    parser: argparse.ArgumentParser = actions.add_parser(
        "prizes", help="T15 prizes: schedule, surplus, payouts"
    )
    sub = parser.add_subparsers(
        dest="prizes_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = sub.add_parser("schedule", help="the advertised minimum per place (T15)")
    _common(p)
    p.add_argument("places", nargs="+", metavar="PLACE=CENTS", help="e.g. 1=500000 2=250000")
    p.add_argument("--reason", help="needed to change an advertised schedule")
    p.set_defaults(handler=_schedule)

    p = sub.add_parser("apportion", help="apportion the surplus beyond the minimums (T15)")
    _common(p)
    p.add_argument("--surplus-cents", type=int, required=True)
    p.add_argument(
        "--share", action="append", default=[], metavar="PLACE=CENTS", help="a place's share"
    )
    p.add_argument("--weights", help="or split by weights over places 1.., e.g. 50,30,20")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_apportion)

    p = sub.add_parser("pay", help="pay a place to its winner, signed and witnessed (T15)")
    _common(p)
    p.add_argument("--place", type=int, required=True)
    p.add_argument("--signer", required=True, help=f"the winner, signing: {PLAYER_HELP}")
    p.add_argument("--signature", required=True, help="signature / receipt reference")
    # The witness is a second account that types its password (dual control).
    add_second(p, Permission.TOURNAMENT_PRIZE_RECEIPT, option="--witness", dest="witness")
    p.set_defaults(handler=_pay)

    p = sub.add_parser("list", help="each prize place: advertised, surplus, holder, paid")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="final")
    p.set_defaults(handler=_list)


def _common(p: argparse.ArgumentParser) -> None:
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="final")


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


def _schedule(args: argparse.Namespace) -> int:
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


def _apportion(args: argparse.Namespace) -> int:
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


def _pay(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        payout = await pay_prize(
            session, t.id, Stage(args.stage), args.place, signer=args.signer,
            signature=args.signature, witness=second_name(args), actor=host_actor(),
            now=now_of(args, t.venue_tz),
        )  # fmt: skip
        return payout_facts(payout)

    return emit(args, run(args, work))


def _list(args: argparse.Namespace) -> int:
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
