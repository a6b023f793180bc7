"""The director's tournament desk, as ``reelgate tournament ...`` does it: show, record a
decision (T23), the ties to draw and card draws for them (T19: physical cards keyed in,
or a seeded digital deal), verify the recorded draws, seat a final stage by draw (T14),
expire unused entries (T5–T8).  Each handler calls the CLI command's service with its
arguments."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import Card, parse_seed
from gateway.tournament.rules.enums import DrawnBy, Stage
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.services.draws import DrawnCard
from gateway.tournament.services.finals import verify_seat_draws
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.director_models import (
    CardsIn,
    DecisionIn,
    DecisionOut,
    DigitalIn,
    DrawOut,
    DrawRoundOut,
    ExpireOut,
    SeatDrawIn,
    SeatDrawOut,
    TieOut,
    VerifyOut,
)
from gateway.web.api.models import REF_PATTERN, Body, TournamentOut
from gateway.web.api.models import Stage as StageName
from gateway.web.api.routes import needs

router = APIRouter(tags=["tournament desk"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]


@router.get("/tournaments/{ref}", openapi_extra=needs(P.TOURNAMENT_READ))
async def show(request: Request, ref: Ref, me: Caller = who(P.TOURNAMENT_READ)) -> TournamentOut:
    """A tournament and its settings (``reelgate tournament show``)."""
    t = await find_tournament(me.session, ref)
    current = await load_settings(me.session, t)
    return TournamentOut(id=t.id, name=t.name, settings=current.to_json())


@router.post(
    "/tournaments/{ref}/decisions", status_code=201, openapi_extra=needs(P.TOURNAMENT_DECIDE)
)
async def decision(
    request: Request, ref: Ref, body: DecisionIn, me: Principal = who(P.TOURNAMENT_DECIDE)
) -> DecisionOut:
    """T23: a director's decision not covered by another action, with its reason."""

    async def run(s: AsyncSession, b: DecisionIn, actor: str, now: datetime) -> dict[str, Any]:
        await svc.record_decision(
            s, ref, subject=b.about, decision=b.decision, reason=b.reason, actor=actor
        )
        return {"recorded": True, "about": b.about, "decision": b.decision}

    return DecisionOut(**await actions.perform(api_of(request), me, run, body))


def _faces(cards: dict[int, Card]) -> dict[int, str]:
    return {entry: str(card) for entry, card in sorted(cards.items())}


async def _still_tied(s: AsyncSession, tid: int, stage: Stage, credits: int) -> list[TieOut]:
    table = await svc.stage_standings(s, tid, stage)
    return [TieOut.model_validate(t) for t in table.ties_to_draw if t.credits == credits]


@router.get("/tournaments/{ref}/ties", openapi_extra=needs(P.TOURNAMENT_READ))
async def ties(
    request: Request, ref: Ref, stage: StageName, me: Caller = who(P.TOURNAMENT_READ)
) -> list[TieOut]:
    """T19: the ties of a stage that a card draw must break (``tournament standings``
    prints the same lines): each tie's score, shared place, entries and next round."""
    t = await find_tournament(me.session, ref)
    table = await svc.stage_standings(me.session, t.id, Stage(stage))
    return [TieOut.model_validate(x) for x in table.ties_to_draw]


@router.post("/tournaments/{ref}/draws/cards", openapi_extra=needs(P.TOURNAMENT_DRAW))
async def draw_cards(
    request: Request, ref: Ref, body: CardsIn, me: Principal = who(P.TOURNAMENT_DRAW)
) -> DrawOut:
    """T19: one round of physical cards for a tie, one card per tied entry, keyed in
    (who drew it: the player, a nominee or a member of the public, named)."""

    async def run(s: AsyncSession, b: CardsIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        stage = Stage(b.stage)
        cards = {
            c.entry: DrawnCard(Card.parse(c.card), DrawnBy(c.drawn_by), c.drawer_name)
            for c in b.cards
        }
        tie = await svc.record_physical_draw(s, t.id, stage, b.credits, cards, actor=actor, at=now)
        faces = _faces({e: c.card for e, c in cards.items()})
        still = await _still_tied(s, t.id, stage, b.credits)
        return DrawOut(
            rounds=[DrawRoundOut(round=tie.next_round, cards=faces)],
            still_tied=still,
        ).model_dump()

    return DrawOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/tournaments/{ref}/draws/digital", openapi_extra=needs(P.TOURNAMENT_DRAW))
async def draw_digital(
    request: Request, ref: Ref, body: DigitalIn, me: Principal = who(P.TOURNAMENT_DRAW)
) -> DrawOut:
    """T19: break a tie with a seeded digital deal, round after round; the seed is
    recorded so anyone can recompute the cards (``verify-draws``)."""

    async def run(s: AsyncSession, b: DigitalIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        stage = Stage(b.stage)
        seed = parse_seed(b.seed) if b.seed else None
        used, rounds = await svc.digital_draw(
            s, t.id, stage, b.credits, actor=actor, at=now, seed=seed
        )
        still = await _still_tied(s, t.id, stage, b.credits)
        return DrawOut(
            seed=used.hex(),
            rounds=[DrawRoundOut(round=r.round, cards=_faces(r.cards)) for r in rounds],
            still_tied=still,
        ).model_dump()

    return DrawOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/tournaments/{ref}/verify-draws", openapi_extra=needs(P.TOURNAMENT_READ))
async def verify_draws(
    request: Request, ref: Ref, me: Caller = who(P.TOURNAMENT_READ)
) -> VerifyOut:
    """Recompute every digital card and seat draw from its recorded seed."""
    t = await find_tournament(me.session, ref)
    problems = await svc.verify_digital_draws(me.session, t.id)
    problems += await verify_seat_draws(me.session, t.id)
    return VerifyOut(ok=not problems, problems=problems)


@router.post("/tournaments/{ref}/seat-draw", openapi_extra=needs(P.TOURNAMENT_DRAW))
async def seat_draw(
    request: Request, ref: Ref, body: SeatDrawIn, me: Principal = who(P.TOURNAMENT_DRAW)
) -> SeatDrawOut:
    """T14: seat a final stage's qualifiers by draw from a recorded seed."""

    async def run(s: AsyncSession, b: SeatDrawIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        seed = parse_seed(b.seed) if b.seed else None
        draw = await svc.seat_stage(s, t.id, Stage(b.stage), actor=actor, at=now, seed=seed)
        seats = {
            e: {"heat": slot.heat_id, "seat": slot.seat_number}
            for e, slot in sorted(draw.seats.items())
        }
        return {"seed": draw.seed.hex(), "seats": seats}

    return SeatDrawOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/tournaments/{ref}/expire", openapi_extra=needs(P.TOURNAMENT_EXPIRE))
async def expire(request: Request, ref: Ref, me: Principal = who(P.TOURNAMENT_EXPIRE)) -> ExpireOut:
    """T5–T8: mark unused entries whose validity window has closed as expired."""

    async def run(s: AsyncSession, b: Body, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        return {"expired": await svc.expire_entries(s, t.id, now=now, actor=actor)}

    return ExpireOut(**await actions.perform(api_of(request), me, run, Body()))
