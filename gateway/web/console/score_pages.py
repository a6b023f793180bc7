"""A manual score (T23, dual control) from the console: the director keys in or corrects
a seat's score of a collecting or closed heat (read off a machine whose link failed, or
a correction), with the reason; a second person approves it on the Approvals screen.

The form is the API's ``POST /seats/{key}/manual-score`` on the same permission
(``heat.manual-score``), model (:class:`ManualScore`) and dual-control request
(:func:`gateway.web.api.actions.request`: tried first against
:func:`gateway.tournament.services.enter_manual_score` in a savepoint, so a request the
rules refuse is refused at once and never waits).  On approval the score is stored under
the asker's name with the approver as the second person (``dual.request``,
``dual.approve`` and ``score.manual`` in the audit log).  A refusal is one line naming
the form's field (a 422 page) and changes nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Final

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.services.common import heat_label
from gateway.tournament.services.seating import SeatInfo, heat_seats
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.errors import ApiError
from gateway.web.api.models import ManualScore
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from storage.tournament import Heat, HeatStatus, Tournament

router = APIRouter()
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
SeatKey = Annotated[int | None, Query(ge=1, le=2_147_483_647)]

# The heats a score is keyed in for from the console: the machines' scores are being
# collected, or the heat is closed (the service also takes a heat in progress).
SCORABLE: Final = frozenset({HeatStatus.COLLECTING, HeatStatus.CLOSED})
# A count as a person types it: ASCII digits only, at most 18 (fits the BIGINT column).
_DIGITS = re.compile(r"[0-9]{1,18}")
METERS: Final = (
    ("games_played", "Games played"),
    ("games_won", "Games won"),
    ("credits_wagered", "Credits wagered"),
    ("credits_won", "Credits won"),
)


@dataclass(frozen=True)
class ScoreForm:
    heat: Heat
    tournament: Tournament | None
    seats: list[SeatInfo]

    @property
    def scorable(self) -> bool:
        return self.heat.status in SCORABLE


async def _form_of(me: Viewer, key: int) -> ScoreForm | None:
    heat = await me.session.get(Heat, key)
    if heat is None:
        return None
    tournament = await me.session.get(Tournament, heat.tournament_id)
    return ScoreForm(heat, tournament, await heat_seats(me.session, heat.id))


async def _page(
    request: Request,
    me: Viewer,
    key: int,
    seat: int | None,
    *,
    status: int = 200,
    error: str = "",
    values: dict[str, str] | None = None,
) -> Response:
    pages = console_of(request).pages
    form = await _form_of(me, key)
    if form is None:
        return pages.render(
            request, "score.html", me, status=404, active="heat", form=None,
            error=f"heat {key} does not exist",
        )  # fmt: skip
    chosen = next((s for s in form.seats if s.seat_id == seat), None)
    return pages.render(
        request, "score.html", me, status=status, active="heat", form=form,
        label=heat_label(form.heat), chosen=chosen, meters=METERS, values=values or {},
        waiting=await _waiting(me, form), error=error,
    )  # fmt: skip


async def _waiting(me: Viewer, form: ScoreForm) -> dict[int, list[dict[str, Any]]]:
    """The manual scores of this heat's seats asked for and not yet decided, by seat."""
    seats = {s.seat_id for s in form.seats}
    names = {u.id: u.name for u in await service.list_users(me.session)}
    found: dict[int, list[dict[str, Any]]] = {}
    for p in await service.list_pending(me.session):
        body = p.payload_dict() if p.kind == P.HEAT_MANUAL_SCORE.value else {}
        if body.get("seat_id") in seats:
            asked = {"id": p.id, "credits": body.get("credits"), "by": names.get(p.requested_by)}
            found.setdefault(body["seat_id"], []).append(asked)
    return found


@router.get("/heats/{key}/score", response_class=HTMLResponse)
async def score_page(
    request: Request, key: Key, seat: SeatKey = None, me: Viewer = viewer(P.HEAT_MANUAL_SCORE)
) -> Response:
    return await _page(request, me, key, seat)


def _count(me: Viewer, name: str, *, optional: bool) -> int:
    text = me.field(name)
    if not text and optional:
        return 0
    if not _DIGITS.fullmatch(text):
        raise OperatorError(f"{name}: a whole number, digits 0-9 only (at most 18)")
    return int(text)


def _field_of(why: str) -> str:
    """The service's refusal as one line naming the form's field it is about."""
    for name, _ in (("credits", ""), *METERS):
        if why.startswith(f"{name}:"):
            return why
    if "games_won" in why:
        return f"games_won: {why}"
    if "reason" in why:
        return f"reason: {why}"
    if "heat" in why and "seat" not in why:
        return f"heat: {why}"
    return f"seat: {why}"


@router.post("/heats/{key}/score")
async def ask_score(
    request: Request, key: Key, me: Viewer = viewer(P.HEAT_MANUAL_SCORE)
) -> Response:
    form = await _form_of(me, key)
    seat_text = me.field("seat")

    async def work() -> tuple[int, SeatInfo]:
        if form is None:
            raise OperatorError(f"heat: heat {key} does not exist")
        seat = next((s for s in form.seats if str(s.seat_id) == seat_text), None)
        if seat is None:
            raise OperatorError(f"seat: pick a seat of {heat_label(form.heat)}")
        if not form.scorable:
            raise OperatorError(
                f"heat: rule 23: {heat_label(form.heat)} is {form.heat.status.value}; "
                "a score is keyed in once its scores are being collected or it is closed"
            )
        data: dict[str, Any] = {"seat_id": seat.seat_id}
        data["credits"] = _count(me, "credits", optional=False)
        for name, _ in METERS:
            data[name] = _count(me, name, optional=True)
        if not me.field("reason"):
            raise OperatorError("reason: say why (it is in the record with the score, rule 23)")
        data["reason"] = me.field("reason")
        order = parse(ManualScore, data)
        try:
            pending = await actions.request(api_of(request), me, P.HEAT_MANUAL_SCORE, order)
        except ApiError as exc:
            raise OperatorError(_field_of(str(exc.detail))) from None
        except OperatorError as exc:
            raise OperatorError(_field_of(str(exc))) from None
        return pending.pending, seat

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        again = int(seat_text) if _DIGITS.fullmatch(seat_text[:10]) else None
        values = {name: me.field(name) for name in ("credits", "reason", *dict(METERS))}
        return await _page(request, me, key, again, status=422, error=out.error, values=values)
    pending, asked = out.value
    return done(
        f"/console/heats/{key}/score",
        f"manual score of seat {asked.seat_number} ({asked.played_by}) asked (action {pending}): "
        "it waits for a second person to approve it on Approvals (rule 23)",
    )
