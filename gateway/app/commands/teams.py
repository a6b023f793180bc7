"""``reelgate teams ...``: team tournaments, a house format (docs/rules.md#h1 to #h9).

set (the director: how teams score and how big they may be, with a reason), add (the
desk registers a team: name, members, captain), withdraw (before any member has played),
list, show, standings (a stage's team standings, from its individual standings).
"""

from __future__ import annotations

import argparse
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, now_of
from gateway.app.output import emit
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.common import find_tournament
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

STAGES = [s.value for s in Stage]


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "teams", help="team tournaments: settings, registration, team standings (H1-H9)"
    )
    actions = parser.add_subparsers(
        dest="teams_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("set", help="how teams score and how big they may be (H1, H4, H6)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("--scoring", choices=["sum", "best-n"], default="sum")
    p.add_argument("--best", type=int, metavar="N", help="with --scoring best-n: n (H6)")
    p.add_argument("--min-size", type=int, default=2, help="smallest team (H4, default 2)")
    p.add_argument("--max-size", type=int, default=4, help="largest team (H4, default 4)")
    p.add_argument("--reason", required=True)
    p.set_defaults(handler=_set)

    p = actions.add_parser("add", help="register a team at the desk (H1-H4)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("name", help="the team's name, unique in the tournament")
    p.add_argument(
        "--member", action="append", required=True, metavar="PLAYER",
        help=f"a member, once each (the captain too): {PLAYER_HELP}",
    )  # fmt: skip
    p.add_argument("--captain", required=True, metavar="PLAYER", help="one of the members (H3)")
    p.set_defaults(handler=_add)

    p = actions.add_parser("withdraw", help="withdraw a team before any member has played (H9)")
    add_common(p, read=True)
    p.add_argument("tournament")
    p.add_argument("team", help="team id or name")
    p.set_defaults(handler=_withdraw)

    p = actions.add_parser("list", help="the tournament's teams and their members")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.set_defaults(handler=_list)

    p = actions.add_parser("show", help="one team: members, captain, who registered it")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("team", help="team id or name")
    p.set_defaults(handler=_show)

    p = actions.add_parser("standings", help="a stage's team standings (H5-H8)")
    add_common(p, read=True, write=False)
    p.add_argument("tournament")
    p.add_argument("--stage", choices=STAGES, default="qualifying")
    p.set_defaults(handler=_standings)


def _set(args: argparse.Namespace) -> int:
    scoring = TeamScoring(args.scoring, args.best, args.min_size, args.max_size)

    async def work(session: AsyncSession) -> TeamScoring:
        t = await find_tournament(session, args.tournament)
        return await set_team_scoring(
            session, t.id, scoring, actor=host_actor(), now=now_of(args, t.venue_tz),
            reason=args.reason,
        )  # fmt: skip

    return emit(args, run(args, work))


def _add(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamView:
        t = await find_tournament(session, args.tournament)
        return await register_team(
            session, t.id, args.name, args.member, args.captain, actor=host_actor(),
            now=now_of(args, t.venue_tz),
        )  # fmt: skip

    return _show_teams(args, [run(args, work)])


def _withdraw(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamView:
        return await withdraw_team(session, args.tournament, args.team, actor=host_actor())

    return _show_teams(args, [run(args, work)], title="withdrawn (H9)")


def _list(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[TeamView]:
        return await list_teams(session, args.tournament)

    return _show_teams(args, run(args.database, work))


def _show(args: argparse.Namespace) -> int:
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


def _standings(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> TeamStandings:
        return await team_standings(session, args.tournament, Stage(args.stage))

    table = run(args.database, work)
    how = "sum" if table.scoring.best_n is None else f"best {table.scoring.best_n}"
    return emit(
        args,
        standings_facts(table),
        ["place", "team", "score", "counted"],
        [
            [
                "-" if x.place is None else f"{x.place}{'=' if x.tied else ''}",
                x.name,
                x.total,
                ", ".join(str(c) for _, c in x.counted),
            ]
            for x in table.lines
        ],
        title=f"{table.stage.value} team standings ({how}; H6, ties by countback H7)",
    )
