"""Standings, qualifiers and rule 19 card draws, read from storage and ranked by
:mod:`gateway.tournament.rules.ranking` (ties broken only by recorded draws)."""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.cards import Card, digital_card_round
from gateway.tournament.rules.enums import DrawMethod, DrawnBy, HeatStatus, Stage
from gateway.tournament.rules.ranking import (
    CutOutcome,
    QualifyingOutcome,
    ScoreLine,
    Standings,
    TieDraw,
    TieGroup,
    check_draw_round,
    prize_order,
    qualify_finalists,
    qualify_from_qualifying,
    rank,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    find_tournament,
    load_settings,
    record,
    require_actor,
    utc_now,
)
from gateway.tournament.services.people import disqualified_sets
from gateway.tournament.settings import TournamentSettings
from storage.tournament import (
    MAX_DRAW_ROUNDS,
    CardDraw,
    Entry,
    EntryStatus,
    Exclusion,
    Heat,
    Player,
    Score,
    Tournament,
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


@dataclass(frozen=True, slots=True)
class StageStandings:
    tournament_id: int
    stage: Stage
    standings: Standings
    lines: tuple[StandingLine, ...]
    cuts: tuple[int, ...]  # the places whose boundary decides something (rule 19)

    @property
    def ties_to_draw(self) -> tuple[TieGroup, ...]:
        """Unresolved ties that straddle a cut or a prize place: these need cards (rule 19)."""
        return tuple(t for t in self.standings.ties if any(t.straddles(c) for c in self.cuts))


def stage_cuts(settings: TournamentSettings, stage: Stage) -> tuple[int, ...]:
    if stage is Stage.QUALIFYING:  # rules 13, 14
        direct = settings.direct_final_places
        return (direct, direct + settings.semi_final_qualifiers)
    if stage is Stage.SEMI_FINAL:  # rule 17
        return (settings.finalists_from_semis,)
    return tuple(range(1, settings.prize_places + 1))  # winners: every prize place


async def stage_standings(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    *,
    as_of: datetime | None = None,
) -> StageStandings:
    """Every scored entry of a stage, ranked (rules 12–14, 17, 19).

    Left out (rule 2, rule 20): entries of players with a disqualification in force, and
    disqualified entries, and — as of ``as_of`` (default now) — scores of a player on an
    exclusion register that had started by ``as_of`` and had not ended before the score
    was played ("prior to or during the tournament").  Same rules as ``storage.ranking``.
    """
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    rows = (
        await session.execute(
            select(Score.entry_id, Score.player_id, Score.final_credits, Player.name, Heat.number)
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
    info = {r.entry_id: (r.name, r.number) for r in rows}
    lines = tuple(
        StandingLine(
            line.place,
            line.position,
            line.entry_id,
            line.player_id,
            info[line.entry_id][0],
            line.credits,
            line.tied,
            info[line.entry_id][1],
        )
        for line in standings.lines
    )
    return StageStandings(tournament.id, stage, standings, lines, stage_cuts(settings, stage))


async def _excluded_entries(
    session: AsyncSession, tournament_id: int, stage: Stage, as_of: datetime
) -> set[int]:
    on_register = (
        select(Score.entry_id)
        .join(Player, Player.id == Score.player_id)
        .join(Exclusion, Exclusion.id_number == Player.id_number)
        .where(
            Score.tournament_id == tournament_id,
            Score.stage == stage,
            Exclusion.valid_from <= as_of,
            or_(Exclusion.valid_until.is_(None), Exclusion.valid_until > Score.recorded_at),
        )
    )
    disqualified = select(Entry.id).where(
        Entry.tournament_id == tournament_id, Entry.status == EntryStatus.DISQUALIFIED
    )
    return set((await session.execute(on_register.union(disqualified))).scalars())


async def stage_over(session: AsyncSession, tournament_id: int, stage: Stage) -> bool:
    """Every heat of the stage run or cancelled (rule 13: "at the end of all qualifying heats")."""
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
    qualifying: QualifyingOutcome  # rules 13–14
    qualifying_over: bool
    finalists_from_semis: CutOutcome  # rule 17
    semis_over: bool
    winners: CutOutcome  # rule 19 prize places
    final_over: bool

    @property
    def finalists(self) -> tuple[int, ...]:
        """Rule 17: the semi-final quota plus the top qualifying single entry (rule 13)."""
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
        qualifying=qualify_from_qualifying(
            q.standings, settings.semi_final_qualifiers, settings.direct_final_places
        ),
        qualifying_over=await stage_over(session, tournament.id, Stage.QUALIFYING),
        finalists_from_semis=qualify_finalists(s.standings, settings.finalists_from_semis),
        semis_over=await stage_over(session, tournament.id, Stage.SEMI_FINAL),
        winners=prize_order(f.standings, settings.prize_places),
        final_over=await stage_over(session, tournament.id, Stage.FINAL),
    )


@dataclass(frozen=True, slots=True)
class DrawnCard:
    card: Card
    drawn_by: DrawnBy = DrawnBy.PLAYER
    drawer_name: str | None = None  # the nominee or the member of the public (rule 19)


async def _tie_to_draw(
    session: AsyncSession, tournament: Tournament, stage: Stage, credits: int, at: datetime
) -> tuple[StageStandings, TieGroup]:
    current = await stage_standings(session, tournament.id, stage, as_of=at)
    for tie in current.ties_to_draw:
        if tie.credits == credits:
            if tie.next_round > MAX_DRAW_ROUNDS:
                raise RuleViolation(19, f"more than {MAX_DRAW_ROUNDS} rounds: a director decision")
            return current, tie
    raise RuleViolation(
        19, f"no unresolved tie at {credits} credits decides a place in the {stage.value} stage"
    )


def _tie_context(tournament_id: int, stage: Stage, credits: int) -> str:
    return f"tournament={tournament_id}|stage={stage.value}|credits={credits}"


async def record_physical_draw(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    credits: int,
    cards: Mapping[int, DrawnCard],
    *,
    actor: str,
    at: datetime,
) -> TieGroup:
    """Key in one round of real cards for a tie (rule 19): every entry still tied at
    ``credits`` draws once; equal values draw again in the next round."""
    actor = require_actor(actor)
    tournament = await find_tournament(session, tournament_ref)
    current, tie = await _tie_to_draw(session, tournament, stage, credits, at)
    check_draw_round(tie, {e: c.card for e, c in cards.items()})
    faces = [(c.card.value, c.card.suit) for c in cards.values()]
    if len(set(faces)) != len(faces):
        raise RuleViolation(19, "two entries cannot draw the same card from one set")
    for drawn in cards.values():
        if drawn.drawn_by is not DrawnBy.PLAYER and not (drawn.drawer_name or "").strip():
            raise RuleViolation(
                19, f"name the {drawn.drawn_by.value} who drew for an absent player"
            )
    players = {line.entry_id: line.player_id for line in current.lines}
    for entry_id, drawn in sorted(cards.items()):
        session.add(
            CardDraw(
                tournament_id=tournament.id,
                stage=stage,
                tie_credits=credits,
                round=tie.next_round,
                entry_id=entry_id,
                player_id=players[entry_id],
                drawn_by=drawn.drawn_by,
                drawer_name=drawn.drawer_name,
                card_rank=drawn.card.value,
                card_suit=drawn.card.suit,
                method=DrawMethod.PHYSICAL,
                context=_tie_context(tournament.id, stage, credits),
                recorded_by=actor,
                recorded_at=at,
            )
        )
    await session.flush()
    await record(
        session,
        actor,
        "draw.physical",
        f"tournament:{tournament.id}",
        None,
        stage=stage,
        credits=credits,
        round=tie.next_round,
        cards={str(e): str(c.card) for e, c in sorted(cards.items())},
        drawn_by={str(e): c.drawn_by.value for e, c in sorted(cards.items())},
    )
    return tie


@dataclass(frozen=True, slots=True)
class DigitalRound:
    round: int
    cards: dict[int, Card]


async def digital_draw(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    credits: int,
    *,
    actor: str,
    at: datetime,
    seed: bytes | None = None,
    drawn_by: Mapping[int, DrawnCard] | None = None,
) -> tuple[bytes, list[DigitalRound]]:
    """Break a tie with seeded digital cards (rule 19), round after round until it is
    broken.  The seed is recorded with every card so anyone can recompute the deal
    (:mod:`gateway.tournament.rules.cards`)."""
    actor = require_actor(actor)
    tournament = await find_tournament(session, tournament_ref)
    seed = seed if seed is not None else secrets.token_bytes(32)
    if len(seed) < 16:
        raise RuleViolation(19, "seed must be at least 16 bytes")
    context = _tie_context(tournament.id, stage, credits)
    rounds: list[DigitalRound] = []
    current, tie = await _tie_to_draw(session, tournament, stage, credits, at)
    players = {line.entry_id: line.player_id for line in current.lines}
    for _ in range(MAX_DRAW_ROUNDS):
        cards = digital_card_round(seed, context, tie.next_round, tie.entry_ids)
        for entry_id, card in cards.items():
            who = (drawn_by or {}).get(entry_id)
            session.add(
                CardDraw(
                    tournament_id=tournament.id,
                    stage=stage,
                    tie_credits=credits,
                    round=tie.next_round,
                    entry_id=entry_id,
                    player_id=players[entry_id],
                    drawn_by=who.drawn_by if who else DrawnBy.PLAYER,
                    drawer_name=who.drawer_name if who else None,
                    card_rank=card.value,
                    card_suit=card.suit,
                    method=DrawMethod.DIGITAL,
                    seed=seed.hex(),
                    algorithm=DIGITAL_ALGORITHM,
                    context=context,
                    recorded_by=actor,
                    recorded_at=at,
                )
            )
        rounds.append(DigitalRound(tie.next_round, cards))
        await session.flush()
        after = await stage_standings(session, tournament.id, stage, as_of=at)
        still = [
            t
            for t in after.standings.ties
            if t.credits == credits
            and set(t.entry_ids) <= set(tie.entry_ids)
            and any(t.straddles(c) for c in after.cuts)
        ]
        if not still:
            break
        tie = still[0]
        if tie.next_round > MAX_DRAW_ROUNDS:
            raise RuleViolation(19, f"still tied after {MAX_DRAW_ROUNDS} rounds")
    await record(
        session,
        actor,
        "draw.digital",
        f"tournament:{tournament.id}",
        None,
        stage=stage,
        credits=credits,
        seed=seed.hex(),
        algorithm=DIGITAL_ALGORITHM,
        context=context,
        rounds=[
            {"round": r.round, "cards": {str(e): str(c) for e, c in r.cards.items()}}
            for r in rounds
        ],
    )
    return seed, rounds


async def verify_digital_draws(session: AsyncSession, tournament_ref: int | str) -> list[str]:
    """Recompute every digital card from its recorded seed; returns the mismatches."""
    tournament = await find_tournament(session, tournament_ref)
    draws = (
        (
            await session.execute(
                select(CardDraw).where(
                    CardDraw.tournament_id == tournament.id, CardDraw.method == DrawMethod.DIGITAL
                )
            )
        )
        .scalars()
        .all()
    )
    groups: dict[tuple[str, str, int], list[CardDraw]] = defaultdict(list)
    for d in draws:
        groups[(d.seed or "", d.context, d.round)].append(d)
    problems = []
    for (seed_hex, context, round_number), members in sorted(groups.items()):
        if not seed_hex:
            problems.append(f"{context} round {round_number}: digital draw without a seed")
            continue
        expected = digital_card_round(
            bytes.fromhex(seed_hex), context, round_number, [d.entry_id for d in members]
        )
        for d in members:
            card = expected[d.entry_id]
            if (card.value, card.suit) != (d.card_rank, d.card_suit):
                problems.append(
                    f"{context} round {round_number} entry {d.entry_id}: recorded "
                    f"{d.card_rank}/{d.card_suit.value}, seed gives {card}"
                )
    return problems
