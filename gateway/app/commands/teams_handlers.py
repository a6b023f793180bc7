"""The handlers of ``reelgate teams ...`` (the parser: :mod:`.teams`), imported only when
one runs.  Clauses: docs/rules.md#h1 to #h12."""

from __future__ import annotations

import argparse
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.keyed import second_name
from gateway.app.options import now_of
from gateway.app.output import emit
from gateway.errors import OperatorError
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.team_prizes import (
    pay_team_prize,
    set_team_schedule,
    team_prize_facts,
    team_prize_lines,
)
from gateway.tournament.services.teams import (
    TeamStandings,
    TeamView,
    list_teams,
    register_team,
    set_team_scoring,
    show_team,
    standings_facts,
    team_facts,
    team_standings,
    withdraw_team,
)


def set_(args: argparse.Namespace) -> int:
    scoring = TeamScoring(args.scoring, args.best, args.min_size, args.max_size, args.advance)

    async def work(session: AsyncSession) -> TeamScoring:
        t = await find_tournament(session, args.tournament)
        return await set_team_scoring(
            session, t.id, scoring, actor=host_actor(), now=now_of(args, t.venue_tz),
            reason=args.reason,
        )  # fmt: skip

    return emit(args, run(args, work))


def add(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamView:
        t = await find_tournament(session, args.tournament)
        return await register_team(
            session, t.id, args.name, args.member, args.captain, actor=host_actor(),
            now=now_of(args, t.venue_tz),
        )  # fmt: skip

    return _show_teams(args, [run(args, work)])


def withdraw(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamView:
        return await withdraw_team(session, args.tournament, args.team, actor=host_actor())

    return _show_teams(args, [run(args, work)], title="withdrawn (H9)")


def list_(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[TeamView]:
        return await list_teams(session, args.tournament)

    return _show_teams(args, run(args.database, work))


def show(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamView:
        return await show_team(session, args.tournament, args.team)

    return _show_teams(args, [run(args.database, work)])


def _show_teams(args: argparse.Namespace, teams: list[TeamView], title: str = "teams") -> int:
    return emit(
        args,
        {"teams": [team_facts(t) for t in teams]},
        ["team", "name", "captain", "members", "registered by"],
        [[t.team_id, t.name, t.captain.name, _names(t), t.registered_by] for t in teams],
        title=title,
    )


def _names(team: TeamView) -> str:
    return ", ".join(m.name for m in team.members)


def standings(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamStandings:
        return await team_standings(session, args.tournament, Stage(args.stage))

    table = run(args.database, work)
    how = "sum" if table.scoring.best_n is None else f"best {table.scoring.best_n}"
    return emit(
        args,
        standings_facts(table),
        ["place", "team", "score", "counted", "goes on"],
        [
            [
                "out" if x.out else "-" if x.place is None else f"{x.place}{'=' if x.tied else ''}",
                x.name,
                x.total,
                ", ".join(str(c) for _, c in x.counted),
                {None: "", True: "yes", False: "no"}[table.goes_on(x.team_id)],
            ]
            for x in table.lines
        ],
        title=f"{table.stage.value} team standings ({how}; H6, ties by countback H7"
        + ("" if table.scoring.advance is None else f"; top {table.scoring.advance} go on, H10")
        + ")",
    )


def _places(values: list[str]) -> dict[int, int]:
    out: dict[int, int] = {}
    for text in values:
        place, sep, cents = text.partition("=")
        if not sep or not place.strip().isdigit() or not cents.strip().isdigit():
            raise OperatorError(f"--prize: {text!r} is not PLACE=CENTS")
        if int(place) in out:
            raise OperatorError(f"--prize: place {int(place)} is given twice")
        out[int(place)] = int(cents)
    return out


def prizes(args: argparse.Namespace) -> int:
    amounts = _places(args.prize) if args.prize else None
    stage = Stage(args.stage)

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        t = await find_tournament(session, args.tournament)
        if amounts is not None:
            await set_team_schedule(
                session, t.id, stage, amounts, actor=host_actor(),
                now=now_of(args, t.venue_tz), reason=args.reason,
            )  # fmt: skip
        return team_prize_facts(await team_prize_lines(session, t.id, stage))

    lines = run(args, work) if amounts is not None else run(args.database, work)
    return emit(
        args,
        {"stage": stage.value, "prizes": lines},
        ["place", "prize (c)", "team", "paid (c)", "paid by", "witness"],
        [[x["place"], x["cents"], x["team"] or "", x["paid_cents"] or "", x["paid_by"] or "",
          x["witness"] or ""] for x in lines],
        title=f"{stage.value} team prizes (H11, H12)",
    )  # fmt: skip


def pay(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        t = await find_tournament(session, args.tournament)
        paid = await pay_team_prize(
            session, t.id, Stage(args.stage), args.place, signer=args.signer,
            signature=args.signature, witness=second_name(args), actor=host_actor(),
            now=now_of(args, t.venue_tz),
        )  # fmt: skip
        return {"place": paid.place, "team_id": paid.team_id, "captain": paid.player_id,
                "amount_cents": paid.amount_cents, "witness": paid.witness,
                "paid_at": paid.paid_at}  # fmt: skip

    return emit(args, run(args, work))
