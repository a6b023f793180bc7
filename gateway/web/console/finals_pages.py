"""Final seating and proxy forms: the seats of the semi-finals and the final drawn from
a recorded seed (T14, T17), and the signed proxy form of a player's extra seat in a final
stage (T16).  The services are the CLI's (``reelgate tournament seat-stage``, ``proxy``)."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.seating import heat_seats
from gateway.web.api.auth import api_of
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import _chosen, _tournaments
from gateway.web.console.state import console_of

router = APIRouter()
_FINALS = (Stage.SEMI_FINAL, Stage.FINAL)


@router.get("/finals", response_class=HTMLResponse)
async def finals(request: Request, t: str = "", me: Viewer = viewer(P.HEAT_READ)) -> Response:
    tournament = await _chosen(me.session, t)
    stages = []
    if tournament is not None:
        for stage in _FINALS:
            heats = await svc.list_heats(me.session, tournament.id, stage)
            seats = {h.heat_id: await heat_seats(me.session, h.heat_id) for h in heats}
            stages.append((stage.value, heats, seats))
    return console_of(request).pages.render(
        request, "finals.html", me, active="finals", tournament=tournament,
        tournaments=await _tournaments(me.session), stages=stages,
        can_seat=me.can(P.HEAT_SCHEDULE), can_proxy=me.can(P.HEAT_REGISTER),
    )  # fmt: skip


def _back(me: Viewer) -> str:
    return f"/console/finals?t={me.field('tournament')}"


@router.post("/finals/seat")
async def seat(request: Request, me: Viewer = viewer(P.HEAT_SCHEDULE)) -> Response:
    async def work() -> str:
        stage = me.field("stage")
        if stage not in {s.value for s in _FINALS}:
            raise OperatorError("stage: semi-final or final")
        drawn = await svc.seat_stage(
            me.session, me.field("tournament"), Stage(stage), actor=me.name,
            at=api_of(request).clock(),
        )  # fmt: skip
        return f"{len(drawn.seats)} seats drawn for the {stage} (seed {drawn.seed.hex()[:16]}…)"

    out = await attempt(me, work)
    return done(_back(me), out.value if out.ok and out.value else f"refused: {out.error}")


@router.post("/finals/proxy")
async def proxy(request: Request, me: Viewer = viewer(P.HEAT_REGISTER)) -> Response:
    async def work() -> str:
        seat_text, born = me.field("seat"), me.field("date_of_birth")
        if not seat_text.isdigit():
            raise OperatorError("seat: pick the seat from the list")
        try:
            birthday = date.fromisoformat(born)
        except ValueError:
            raise OperatorError("date_of_birth: the nominee's, as YYYY-MM-DD") from None
        found = await svc.add_proxy(
            me.session, int(seat_text), nominee_name=me.field("name"),
            nominee_id_number=me.field("id_number"), nominee_date_of_birth=birthday,
            received_at=api_of(request).clock(), actor=me.name,
        )  # fmt: skip
        return f"proxy form recorded: {found.nominee_name} plays the seat (rule 16)"

    out = await attempt(me, work)
    return done(_back(me), out.value if out.ok and out.value else f"refused: {out.error}")
