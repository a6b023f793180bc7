"""T19 card draws for ties: physical cards keyed in by staff, or digital cards dealt
from a recorded seed (:mod:`gateway.tournament.rules.cards`), and their verification.

Clauses: docs/rules.md#t19.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.cards import Card, digital_card_round
from gateway.tournament.rules.enums import DrawMethod, DrawnBy, Stage
from gateway.tournament.rules.ranking import TieGroup, check_draw_round
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import find_tournament, record, require_actor
from gateway.tournament.services.standings import StageStandings, stage_standings
from storage.tournament import MAX_DRAW_ROUNDS, CardDraw, Tournament

DIGITAL_ALGORITHM = "hmac-sha256-fisher-yates/v1"  # see gateway.tournament.rules.cards


@dataclass(frozen=True, slots=True)
class DrawnCard:
    card: Card
    drawn_by: DrawnBy = DrawnBy.PLAYER
    drawer_name: str | None = None  # the nominee or the member of the public (T19)


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
    """Key in one round of real cards for a tie (T19): every entry still tied at
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
    """Break a tie with seeded digital cards (T19), round after round until it is
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
