"""The card-draw dialog of a tie that straddles a cut or a prize place (T19): the cards
drawn at the table keyed in, round by round (who drew each: the player, the nominee, a
member of the public), or a seeded digital draw whose seed is recorded with every card.
The services are the CLI's (``reelgate tournament draw``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.enums import Stage
from gateway.web.api.auth import api_of
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from storage.enums import DrawnBy

router = APIRouter()


def _tie(me: Viewer) -> tuple[str, Stage, int]:
    stage, credits = me.field("stage"), me.field("credits")
    if stage not in {s.value for s in Stage} or not credits.isdigit():
        raise OperatorError("draw: pick the tie from the standings")
    return me.field("tournament"), Stage(stage), int(credits)


def _keyed(me: Viewer) -> dict[int, svc.DrawnCard]:
    cards: dict[int, svc.DrawnCard] = {}
    for key in me.form:
        if not key.startswith("card:"):
            continue
        entry = key.removeprefix("card:")
        if not entry.isdigit():
            raise OperatorError("draw: unknown entry in the form")
        face = me.field(key)
        if not face:
            raise OperatorError(f"entry {entry}: key the card drawn (e.g. QH, 10S, AD)")
        by = me.field(f"by:{entry}") or DrawnBy.PLAYER.value
        if by not in {d.value for d in DrawnBy}:
            raise OperatorError(f"entry {entry}: drawn by the player, the nominee or the public")
        name = me.field(f"name:{entry}") or None
        cards[int(entry)] = svc.DrawnCard(Card.parse(face), DrawnBy(by), name)
    return cards


@router.post("/draws")
async def draw(request: Request, me: Viewer = viewer(P.TOURNAMENT_SETTINGS)) -> Response:
    async def work() -> str:
        ref, stage, credits = _tie(me)
        now = api_of(request).clock()
        if me.field("how") == "digital":
            seed, rounds = await svc.digital_draw(
                me.session, ref, stage, credits, actor=me.name, at=now
            )
            faces = "; ".join(
                ", ".join(f"entry {e} {c}" for e, c in sorted(r.cards.items())) for r in rounds
            )
            return f"digital draw (seed {seed.hex()[:16]}…): {faces}"
        tie = await svc.record_physical_draw(
            me.session, ref, stage, credits, _keyed(me), actor=me.name, at=now
        )
        return f"cards recorded for the tie at {credits} credits (round {tie.next_round})"

    out = await attempt(me, work)
    target = f"/console/standings?t={me.field('tournament')}&stage={me.field('stage')}"
    return done(target, out.value if out.ok and out.value else f"refused: {out.error}")
