"""Standings and qualifiers, read from storage and ranked by
:mod:`gateway.tournament.rules.ranking` (ties broken only by recorded draws)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.rules.ranking import (
    CutOutcome,
    QualifyingOutcome,
    RankedLine,
    ScoreLine,
    Standings,
    TieDraw,
    TieGroup,
    prize_order,
    qualify_finalists,
    qualify_from_qualifying,
    rank,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import live_standings
from gateway.tournament.services.common import (
    find_tournament,
    load_settings,
    utc_now,
)
from gateway.tournament.services.people import disqualified_sets
from gateway.tournament.settings import TournamentSettings
from storage.enums import ScoreSource
from storage.ranking import on_exclusion_register
from storage.tournament import (
    CardDraw,
    Entry,
    EntryStatus,
    Heat,
    Player,
    Score,
)

DIGITAL_ALGORITHM = "hmac-sha256-fisher-yates/v1"  # see gateway.tournament.rules.cards


@dataclass(frozen=True, slots=True)
class StandingLine:
    place: int
    position: int
    entry_id: int
    player_id: int
    player_name: str
    credits: int
    tied: bool
    heat_number: int
    manual: bool = False  # a director keyed the score in or corrected it (T23)


@dataclass(frozen=True, slots=True)
class StageStandings:
    tournament_id: int
    stage: Stage
    standings: Standings
    lines: tuple[StandingLine, ...]
    cuts: tuple[int, ...]  # the places whose boundary decides something (T19)
    # Qualifying only: the one qualifier rule's reading of these lines (T13, T14a).
    qualifying: QualifyingOutcome | None = None

    def goes_on(self, entry_id: int) -> str | None:
        """Qualifying: where the entry goes (see ``QualifyingOutcome.verdict``)."""
        return None if self.qualifying is None else self.qualifying.verdict(entry_id)

    @property
    def ties_to_draw(self) -> tuple[TieGroup, ...]:
        """Unresolved ties that straddle a cut or a prize place: these need cards (T19)."""
        return tuple(t for t in self.standings.ties if any(t.straddles(c) for c in self.cuts))


def qualifying_outcome(settings: TournamentSettings, standings: Standings) -> QualifyingOutcome:
    """The one qualifier rule (T13, T14a) with the tournament's settings: what the signs,
    the console, ``tournament standings|qualifiers``, the exports and seating all use."""
    return qualify_from_qualifying(
        standings,
        settings.semi_final_qualifiers,
        settings.direct_final_places,
        top_player_excluded=settings.top_player_excluded,
    )


def _ranked(settings: TournamentSettings, tournament_id: int, stage: Stage,
            standings: Standings, lines: tuple[StandingLine, ...]) -> StageStandings:  # fmt: skip
    if stage is not Stage.QUALIFYING:
        return StageStandings(tournament_id, stage, standings, lines, stage_cuts(settings, stage))
    outcome = qualifying_outcome(settings, standings)  # the cut widened past T14a entries
    return StageStandings(tournament_id, stage, standings, lines, outcome.cut_places, outcome)


def stage_cuts(settings: TournamentSettings, stage: Stage) -> tuple[int, ...]:
    """The cut places before any entry is known (T14a may widen the qualifying one:
    :func:`qualifying_outcome`)."""
    if stage is Stage.QUALIFYING:  # T13, T14
        direct = settings.direct_final_places
        return (direct, direct + settings.semi_final_qualifiers)
    if stage is Stage.SEMI_FINAL:  # T17
        return (settings.finalists_from_semis,)
    return tuple(range(1, settings.prize_places + 1))  # winners: every prize place


async def stage_standings(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    *,
    as_of: datetime | None = None,
) -> StageStandings:
    """Every scored entry of a stage, ranked (T12–T14, T17, T19).

    Left out (T2, T20): entries of players with a disqualification in force, and
    disqualified entries, and — as of ``as_of`` (default now) — scores of a player on an
    exclusion register that had started by ``as_of`` and had not ended before the score
    was played ("prior to or during the tournament").  Same rules as ``storage.ranking``
    (the SQL live standings).
    """
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    rows = (
        await session.execute(
            select(
                Score.entry_id,
                Score.player_id,
                Score.final_credits,
                Player.name,
                Heat.number,
                Score.source,
            )
            .join(Player, Player.id == Score.player_id)
            .join(Heat, Heat.id == Score.heat_id)
            .where(Score.tournament_id == tournament.id, Score.stage == stage)
        )
    ).all()
    draws = (
        await session.execute(
            select(CardDraw).where(CardDraw.tournament_id == tournament.id, CardDraw.stage == stage)
        )
    ).scalars()
    players, entries = await disqualified_sets(session, tournament.id)
    entries |= await _excluded_entries(session, tournament.id, stage, as_of or utc_now())
    standings = rank(
        (ScoreLine(r.entry_id, r.player_id, r.final_credits) for r in rows),
        (TieDraw(d.entry_id, d.tie_credits, d.round, d.card_rank) for d in draws),
        players,
        entries,
    )
    info = {r.entry_id: (r.name, r.number, r.source) for r in rows}
    return _ranked(settings, tournament.id, stage, standings, _named(standings.lines, info))


async def top_standings(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    *,
    limit: int,
    as_of: datetime | None = None,
) -> StageStandings:
    """The top ``limit`` places (and everyone tied with the last of them) straight from
    SQL window functions (:func:`.live_standings.standings`): the live view, fast at any
    size.  Same lines, places and ties as the top of :func:`stage_standings`; its
    qualifying reading (cuts, who goes on) holds for the lines read, so ask for the
    widened cut and more (the signs do: :func:`.signage.leaderboard`)."""
    if limit < 1:
        raise RuleViolation(None, f"limit: at least 1 line, got {limit}")
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    table = await live_standings.standings(session, tournament.id, stage, limit=limit, as_of=as_of)
    ids = [r.entry_id for r in table.rows]
    info = {
        r.entry_id: (r.name, r.number, r.source)
        for r in await session.execute(
            select(Score.entry_id, Player.name, Heat.number, Score.source)
            .join(Player, Player.id == Score.player_id)
            .join(Heat, Heat.id == Score.heat_id)
            .where(Score.entry_id.in_(ids), Score.stage == stage)
        )
    }
    ranked = Standings(
        tuple(
            RankedLine(r.position, r.place, r.entry_id, r.player_id, r.credits, r.tied)
            for r in table.rows
        ),
        table.ties,
    )
    return _ranked(settings, tournament.id, stage, ranked, _named(ranked.lines, info))


def _named(
    lines: tuple[RankedLine, ...], info: dict[int, tuple[str, int, ScoreSource]]
) -> tuple[StandingLine, ...]:
    """Ranked lines with each entry's player name, heat number and whether its score was
    keyed in by a director (``info``)."""
    return tuple(
        StandingLine(
            x.place,
            x.position,
            x.entry_id,
            x.player_id,
            info[x.entry_id][0],
            x.credits,
            x.tied,
            info[x.entry_id][1],
            info[x.entry_id][2] is ScoreSource.MANUAL,
        )
        for x in lines
    )


async def _excluded_entries(
    session: AsyncSession, tournament_id: int, stage: Stage, as_of: datetime
) -> set[int]:
    on_register = select(Score.entry_id).where(
        Score.tournament_id == tournament_id,
        Score.stage == stage,
        on_exclusion_register(as_of),  # T2, the same test as the SQL standings
    )
    disqualified = select(Entry.id).where(
        Entry.tournament_id == tournament_id, Entry.status == EntryStatus.DISQUALIFIED
    )
    return set((await session.execute(on_register.union(disqualified))).scalars())


async def stage_over(session: AsyncSession, tournament_id: int, stage: Stage) -> bool:
    """Every heat of the stage run or cancelled (T13: "at the end of all qualifying heats")."""
    statuses = (
        (
            await session.execute(
                select(Heat.status).where(Heat.tournament_id == tournament_id, Heat.stage == stage)
            )
        )
        .scalars()
        .all()
    )
    return bool(statuses) and all(s in (HeatStatus.CLOSED, HeatStatus.CANCELLED) for s in statuses)


@dataclass(frozen=True, slots=True)
class Qualifiers:
    qualifying: QualifyingOutcome  # T13–T14
    qualifying_over: bool
    finalists_from_semis: CutOutcome  # T17
    semis_over: bool
    winners: CutOutcome  # T19 prize places
    final_over: bool

    @property
    def finalists(self) -> tuple[int, ...]:
        """T17: the semi-final quota plus the top qualifying single entry (T13)."""
        return self.qualifying.direct_finalists + self.finalists_from_semis.selected


async def qualifiers(
    session: AsyncSession, tournament_ref: int | str, *, as_of: datetime | None = None
) -> Qualifiers:
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    q = await stage_standings(session, tournament.id, Stage.QUALIFYING, as_of=as_of)
    s = await stage_standings(session, tournament.id, Stage.SEMI_FINAL, as_of=as_of)
    f = await stage_standings(session, tournament.id, Stage.FINAL, as_of=as_of)
    return Qualifiers(
        qualifying=q.qualifying or qualifying_outcome(settings, q.standings),  # always set
        qualifying_over=await stage_over(session, tournament.id, Stage.QUALIFYING),
        finalists_from_semis=qualify_finalists(s.standings, settings.finalists_from_semis),
        semis_over=await stage_over(session, tournament.id, Stage.SEMI_FINAL),
        winners=prize_order(f.standings, settings.prize_places),
        final_over=await stage_over(session, tournament.id, Stage.FINAL),
    )
