"""Team tournaments, a house format (docs/rules.md#h1 to #h9): the stored teams, audited
under the acting account, and the team standings of a stage, made from the same
individual standings the desks and signs show (:func:`.standings.stage_standings`) by
the pure rules of :mod:`gateway.tournament.rules.teams`.

Who may do what (``gateway.accounts.roles``): a desk registers a team (``player.add``),
the director sets how teams score (``tournament.settings``), everyone reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.player_ref import PlayerNotFound
from gateway.tournament.rules.teams import (
    TeamFacts,
    TeamLine,
    TeamScoring,
    advancing,
    check_members,
    check_unlocked,
    member_scores,
    rank_stage,
    violation,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    find_tournament,
    record,
    require_actor,
    require_reason,
)
from gateway.tournament.services.lookup import player_by_ref
from gateway.tournament.services.people import active_disqualification
from gateway.tournament.services.standings import stage_standings
from storage.teams import Team, TeamMember, TeamSettings
from storage.tournament import (
    Entry,
    EntryStatus,
    Heat,
    HeatStatus,
    Player,
    Score,
    Seat,
    SeatStatus,
)

NAME_MAX = 80


@dataclass(frozen=True, slots=True)
class MemberView:
    player_id: int
    name: str
    captain: bool


@dataclass(frozen=True, slots=True)
class TeamView:
    team_id: int
    name: str
    members: tuple[MemberView, ...]
    registered_by: str
    registered_at: datetime

    @property
    def captain(self) -> MemberView:
        return next(m for m in self.members if m.captain)


@dataclass(frozen=True, slots=True)
class TeamStandings:
    tournament_id: int
    stage: Stage
    scoring: TeamScoring
    lines: tuple[TeamLine, ...]
    teams: dict[int, TeamView]  # by team id: names of the members for the lines
    through: frozenset[int] | None = None  # H10: the teams through the qualifying cut

    def goes_on(self, team_id: int) -> bool | None:
        """H10: whether the team is through the qualifying cut (None: no cut)."""
        return None if self.through is None else team_id in self.through


def scoring_of(row: TeamSettings) -> TeamScoring:
    return TeamScoring(row.scoring, row.best_n, row.min_size, row.max_size, row.advance)


async def team_scoring(session: AsyncSession, tournament_id: int) -> TeamScoring | None:
    """H1: how the tournament's teams score; None: the director has not set teams up."""
    row = await session.get(TeamSettings, tournament_id)
    return None if row is None else scoring_of(row)


_NOT_UNDER_WAY = (HeatStatus.SCHEDULED, HeatStatus.ARMED, HeatStatus.CANCELLED)


async def _played(session: AsyncSession, tournament_id: int, players: Sequence[int]) -> list[int]:
    """Of ``players``, those who have played in the tournament (H9): a score, or a seat
    marked present (or played) in a heat that has started, scored or not yet."""
    if not players:
        return []
    scored = select(Score.player_id).where(
        Score.tournament_id == tournament_id, Score.player_id.in_(players)
    )
    seated = (
        select(Seat.holder_player_id)
        .join(Heat, Heat.id == Seat.heat_id)
        .where(
            Heat.tournament_id == tournament_id,
            Heat.status.not_in(_NOT_UNDER_WAY),
            Seat.status.in_((SeatStatus.PRESENT, SeatStatus.PLAYED)),
            Seat.holder_player_id.in_(players),
        )
    )
    return sorted(set((await session.execute(scored.union(seated))).scalars()))


async def _members_of_all(session: AsyncSession, tournament_id: int) -> list[int]:
    rows = await session.execute(
        select(TeamMember.player_id).where(TeamMember.tournament_id == tournament_id)
    )
    return list(rows.scalars())


async def set_team_scoring(
    session: AsyncSession,
    tournament_ref: int | str,
    scoring: TeamScoring,
    *,
    actor: str,
    now: datetime,
    reason: str | None,
) -> TeamScoring:
    """H1: the director turns teams on, or changes how they score and how big they may
    be, with a reason; refused once any team member has a score (H9)."""
    actor = require_actor(actor)
    reason = require_reason(reason)
    tournament = await find_tournament(session, tournament_ref)
    members = await _members_of_all(session, tournament.id)
    check_unlocked("team settings", await _played(session, tournament.id, members))
    row = await session.get(TeamSettings, tournament.id)
    before = None if row is None else scoring_of(row)
    if row is None:
        row = TeamSettings(tournament_id=tournament.id)
        session.add(row)
    if before is not None:
        sizes = await _team_sizes(session, tournament.id)
        if sizes and not all(scoring.min_size <= s <= scoring.max_size for s in sizes):
            raise violation("H4", "team size: a registered team falls outside the new sizes")
    row.scoring, row.best_n = scoring.scoring, scoring.best_n
    row.min_size, row.max_size = scoring.min_size, scoring.max_size
    row.advance = scoring.advance
    row.set_by, row.set_at = actor, now
    await session.flush()
    await record(
        session, actor, "team.settings", f"tournament:{tournament.id}", reason,
        scoring=scoring.scoring, best_n=scoring.best_n, min_size=scoring.min_size,
        max_size=scoring.max_size, advance=scoring.advance,
        before=None if before is None else [before.scoring, before.best_n,
                                            before.min_size, before.max_size, before.advance],
    )  # fmt: skip
    return scoring


async def _team_sizes(session: AsyncSession, tournament_id: int) -> list[int]:
    counts: dict[int, int] = {}
    for team_id in await session.scalars(
        select(TeamMember.team_id).where(TeamMember.tournament_id == tournament_id)
    ):
        counts[team_id] = counts.get(team_id, 0) + 1
    return list(counts.values())


async def register_team(
    session: AsyncSession,
    tournament_ref: int | str,
    name: str,
    members: Sequence[int | str],
    captain: int | str,
    *,
    actor: str,
    now: datetime,
) -> TeamView:
    """H1–H4, H9: register a team at the desk, its members and its captain at once."""
    actor = require_actor(actor)
    name = (name or "").strip()
    if not name or len(name) > NAME_MAX:
        raise violation("H1", f"name: 1 to {NAME_MAX} characters")
    tournament = await find_tournament(session, tournament_ref)
    scoring = await team_scoring(session, tournament.id)
    if scoring is None:
        raise violation("H1", "teams: the director has not set this tournament up for teams")
    players = [await _player(session, ref, "members") for ref in members]
    ids = [p.id for p in players]
    captain_id = (await _player(session, captain, "captain")).id
    taken = await session.execute(
        select(Team.name).where(Team.tournament_id == tournament.id, Team.name == name)
    )
    if taken.first() is not None:
        raise violation("H1", f"name: team {name!r} is already registered")
    holders = await session.scalars(
        select(Entry.player_id)
        .where(
            Entry.tournament_id == tournament.id,
            Entry.player_id.in_(ids),
            Entry.status != EntryStatus.REFUNDED,
        )
        .distinct()
    )
    in_teams = {
        pid: team_name
        for pid, team_name in await session.execute(
            select(TeamMember.player_id, Team.name)
            .join(Team, Team.id == TeamMember.team_id)
            .where(TeamMember.tournament_id == tournament.id, TeamMember.player_id.in_(ids))
        )
    }
    check_members(scoring, ids, captain_id, list(holders), in_teams)
    for player in players:
        if await active_disqualification(session, tournament.id, player.id):
            raise violation("H8", f"members: player {player.id} is disqualified")
    check_unlocked("members", await _played(session, tournament.id, ids))
    team = Team(tournament_id=tournament.id, name=name, registered_by=actor, registered_at=now)
    session.add(team)
    await session.flush()
    for pid in ids:
        session.add(
            TeamMember(
                team_id=team.id, player_id=pid, tournament_id=tournament.id,
                captain=pid == captain_id, added_by=actor, added_at=now,
            )
        )  # fmt: skip
    await session.flush()
    await record(
        session, actor, "team.register", f"team:{team.id}", None,
        tournament_id=tournament.id, name=name, members=ids, captain=captain_id,
    )  # fmt: skip
    return (await _views(session, tournament.id, team.id))[team.id]


async def _player(session: AsyncSession, ref: int | str, field: str) -> Player:
    """The player a desk names (as :func:`.people.find_player`), a miss naming the field."""
    try:
        return await player_by_ref(session, ref, field)
    except PlayerNotFound as exc:
        raise RuleViolation(None, f"{field}: {exc}") from None


async def withdraw_team(
    session: AsyncSession, tournament_ref: int | str, team_ref: int | str, *, actor: str
) -> TeamView:
    """H9: a team withdrawn at the desk before any member has played (a mistake put
    right by registering it again); refused after."""
    actor = require_actor(actor)
    tournament = await find_tournament(session, tournament_ref)
    team = await find_team(session, tournament.id, team_ref)
    view = (await _views(session, tournament.id, team.id))[team.id]
    ids = [m.player_id for m in view.members]
    check_unlocked("withdraw", await _played(session, tournament.id, ids))
    for member in await session.scalars(select(TeamMember).where(TeamMember.team_id == team.id)):
        await session.delete(member)
    await session.flush()
    await session.delete(team)
    await session.flush()
    await record(
        session, actor, "team.withdraw", f"team:{team.id}", None,
        tournament_id=tournament.id, name=view.name, members=ids,
    )  # fmt: skip
    return view


async def find_team(session: AsyncSession, tournament_id: int, ref: int | str) -> Team:
    """A team of the tournament by id or by name."""
    text = str(ref).strip()
    query = select(Team).where(Team.tournament_id == tournament_id)
    if text.isascii() and text.isdigit() and len(text) <= 18:
        row = (await session.execute(query.where(Team.id == int(text)))).scalar_one_or_none()
        if row is not None:
            return row
    row = (await session.execute(query.where(Team.name == text))).scalar_one_or_none()
    if row is None:
        raise violation("H1", f"team {text!r} is not registered in this tournament")
    return row


async def _views(
    session: AsyncSession, tournament_id: int, team_id: int | None = None
) -> dict[int, TeamView]:
    query = (
        select(Team, TeamMember, Player.name)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .join(Player, Player.id == TeamMember.player_id)
        .where(Team.tournament_id == tournament_id)
        .order_by(Team.name, TeamMember.captain.desc(), Player.name, Player.id)
    )
    if team_id is not None:
        query = query.where(Team.id == team_id)
    teams: dict[int, tuple[Team, list[MemberView]]] = {}
    for team, member, player_name in await session.execute(query):
        teams.setdefault(team.id, (team, []))[1].append(
            MemberView(member.player_id, player_name, member.captain)
        )
    return {
        tid: TeamView(tid, team.name, tuple(members), team.registered_by, team.registered_at)
        for tid, (team, members) in teams.items()
    }


async def list_teams(session: AsyncSession, tournament_ref: int | str) -> list[TeamView]:
    """Every team of the tournament, by name, the captain first in each."""
    tournament = await find_tournament(session, tournament_ref)
    return list((await _views(session, tournament.id)).values())


async def show_team(session: AsyncSession, tournament_ref: int | str, ref: int | str) -> TeamView:
    tournament = await find_tournament(session, tournament_ref)
    team = await find_team(session, tournament.id, ref)
    return (await _views(session, tournament.id, team.id))[team.id]


async def team_standings(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    *,
    as_of: datetime | None = None,
) -> TeamStandings:
    """H5–H8: the teams of a stage, ranked from the stage's individual standings (the
    same lines, with what T2/T20 leave out already left out); H10: under a team cut,
    the qualifying lines say who goes on, and a later stage places only those teams."""
    tournament = await find_tournament(session, tournament_ref)
    scoring = await team_scoring(session, tournament.id)
    if scoring is None:
        raise violation("H1", "teams: the director has not set this tournament up for teams")
    views = await _views(session, tournament.id)
    facts = [
        TeamFacts(v.team_id, v.name, tuple(m.player_id for m in v.members)) for v in views.values()
    ]

    async def ranked(of: Stage, through: frozenset[int] | None) -> tuple[TeamLine, ...]:
        individual = await stage_standings(session, tournament.id, of, as_of=as_of)
        best = member_scores((x.player_id, x.credits) for x in individual.lines)
        return rank_stage(facts, best, scoring, through)

    qualifying = await ranked(Stage.QUALIFYING, None)
    through = advancing(qualifying, scoring.advance)
    lines = qualifying if stage is Stage.QUALIFYING else await ranked(stage, through)
    return TeamStandings(tournament.id, stage, scoring, lines, views, through)


def team_facts(team: TeamView) -> dict[str, Any]:
    return {
        "team_id": team.team_id,
        "name": team.name,
        "captain": team.captain.player_id,
        "members": [{"player_id": m.player_id, "name": m.name, "captain": m.captain}
                    for m in team.members],
        "registered_by": team.registered_by,
        "registered_at": team.registered_at,
    }  # fmt: skip


def standings_facts(table: TeamStandings) -> dict[str, Any]:
    """The team standings as plain data (the CLI's ``--json``, the signed export)."""
    names = {m.player_id: m.name for t in table.teams.values() for m in t.members}
    return {
        "tournament_id": table.tournament_id,
        "stage": table.stage.value,
        "scoring": table.scoring.scoring,
        "best_n": table.scoring.best_n,
        "advance": table.scoring.advance,
        "lines": [
            {
                "place": x.place, "team_id": x.team_id, "name": x.name, "total": x.total,
                "tied": x.tied, "out": x.out, "goes_on": table.goes_on(x.team_id),
                "members": [
                    {"player_id": p, "name": names.get(p, ""), "score": s,
                     "counts": p in dict(x.counted)}
                    for p, s in x.scores.items()
                ],
            }
            for x in table.lines
        ],
    }  # fmt: skip
