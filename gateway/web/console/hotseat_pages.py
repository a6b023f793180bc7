"""The hot-seat card of a heat's page (house clauses HS2–HS5, docs/rules.md): the
commitment before the heat, the seed and the winning seats after; a director commits the
draws before the heat starts and takes them once it has closed.  The services are the
API's and the CLI's (``reelgate hotseat``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.rules.hotseat import MAX_DRAWS, heat_subject
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services.hotseat import Announcement
from gateway.web.api.auth import api_of
from gateway.web.api.models import INT32
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from storage.tournament import Heat

router = APIRouter()
HeatKey = Annotated[int, Path(ge=1, le=INT32)]


async def hotseat_of(me: Viewer, heat: Heat | None) -> Announcement | None:
    """What the heat page's hot-seat card shows (None: no draws committed)."""
    return None if heat is None else await hs.announcement(me.session, heat_subject(heat.id))


def _whole(me: Viewer, field: str, low: int, high: int) -> int:
    text = me.field(field)
    if not text.isdigit() or not low <= int(text) <= high:
        raise OperatorError(f"{field}: a whole number from {low} to {high}")
    return int(text)


async def _page(me: Viewer, heat_id: int) -> str:
    heat = await me.session.get(Heat, heat_id)
    bank = heat.bank_name if heat is not None else ""
    return f"/console/heat/{bank}?heat={heat_id}"


@router.post("/heats/{key}/hotseat")
async def commit(
    request: Request, key: HeatKey, me: Viewer = viewer(P.TOURNAMENT_DRAW)
) -> Response:
    async def work() -> str:
        draws = _whole(me, "draws", 1, MAX_DRAWS)
        prize = _whole(me, "prize_cents", 0, 10**11)
        row = await hs.commit_heat(
            me.session, key, draws=draws, prize_cents=prize, actor=me.name,
            now=api_of(request).clock(),
        )  # fmt: skip
        return f"HS4: {draws} draws committed, commitment {row.commitment}"

    out = await attempt(me, work)
    return done(
        await _page(me, key), out.value if out.ok and out.value else f"refused: {out.error}"
    )


@router.post("/heats/{key}/hotseat/draw")
async def draw(request: Request, key: HeatKey, me: Viewer = viewer(P.TOURNAMENT_DRAW)) -> Response:
    async def work() -> str:
        taken = await hs.take_heat_draws(
            me.session, key, actor=me.name, now=api_of(request).clock()
        )
        won = ", ".join(f"draw {d.draw_index + 1}: seat {d.winner or 'void'}" for d in taken)
        return f"HS5: seed revealed; {won}"

    out = await attempt(me, work)
    return done(
        await _page(me, key), out.value if out.ok and out.value else f"refused: {out.error}"
    )
