"""The registration desk: players found by name or card (never by a database id),
entries sold with a printable receipt, registration with the machine allocated, and the
roll call (the week's schedule is :mod:`schedule_pages`).  Each action is the API's
service (``gateway.tournament``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import PurchaseKind
from gateway.tournament.services.cashdesk import tender_of
from gateway.tournament.services.common import load_settings
from gateway.tournament.services.lookup import search_players
from gateway.web.api.auth import api_of
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from storage.enums import Tender
from storage.tournament import Entry, EntryPurchase, Heat, HeatStatus, Player, Tournament

router = APIRouter()
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
_OPEN = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED)


def _now(request: Request) -> datetime:
    return api_of(request).clock()


async def _tournaments(session: AsyncSession) -> list[Tournament]:
    return list((await session.scalars(select(Tournament).order_by(Tournament.id.desc()))).all())


async def _chosen(session: AsyncSession, ref: str) -> Tournament | None:
    found = await _tournaments(session)
    for t in found:
        if str(t.id) == ref or t.name == ref:
            return t
    return found[0] if found else None


async def _desk_context(me: Viewer, tournament: Tournament | None, q: str) -> dict[str, Any]:
    found: list[Player] = []
    error = ""
    if q:
        try:
            found = await search_players(me.session, q)
        except OperatorError as exc:
            error = str(exc)
    heats = []
    packages: list[Any] = []
    if tournament is not None:
        heats = [h for h in await svc.list_heats(me.session, tournament.id) if h.status in _OPEN]
        packages = list((await load_settings(me.session, tournament)).packages)
    unused: dict[int, int] = {}
    for p in found:
        if tournament is not None:
            rows = await me.session.scalars(
                select(Entry).where(Entry.player_id == p.id, Entry.tournament_id == tournament.id)
            )
            unused[p.id] = sum(1 for e in rows.all() if e.status.value == "available")
    return {
        "tournament": tournament, "tournaments": await _tournaments(me.session), "q": q,
        "players": found, "heats": heats, "packages": packages, "unused": unused,
        "error": error,
    }  # fmt: skip


@router.get("/desk", response_class=HTMLResponse)
async def desk(
    request: Request, t: str = "", q: str = "", me: Viewer = viewer(P.PLAYER_READ)
) -> Response:
    tournament = await _chosen(me.session, t)
    context = await _desk_context(me, tournament, q[:100])
    return console_of(request).pages.render(request, "desk.html", me, active="desk", **context)


async def _refused(request: Request, me: Viewer, error: str) -> Response:
    tournament = await _chosen(me.session, me.field("tournament"))
    context = await _desk_context(me, tournament, me.field("q"))
    context["error"] = error
    return console_of(request).pages.render(
        request, "desk.html", me, status=422, active="desk", **context
    )


@router.post("/desk/sell")
async def sell(request: Request, me: Viewer = viewer(P.ENTRY_SELL)) -> Response:
    async def work() -> int:
        quantity = me.field("quantity") or "1"
        if not quantity.isdigit() or not 1 <= int(quantity) <= 50:
            raise OperatorError("quantity: 1 to 50")
        tender = me.field("tender")
        if tender and tender not in {t.value for t in Tender}:
            raise OperatorError("tender: cash, card or comp")
        sale = await svc.sell_entries(
            me.session, me.field("tournament"), me.field("player"),
            package_code=me.field("package") or "single", quantity=int(quantity),
            payment=PurchaseKind.CARD if me.field("payment") == "card" else PurchaseKind.CASH,
            complimentary=me.field("complimentary") == "on", cashier=me.name,
            tender=Tender(tender) if tender else None,
            now=_now(request), reference=me.field("reference") or None,
        )  # fmt: skip
        return sale.purchase.id

    out = await attempt(me, work)
    if not out.ok:
        return await _refused(request, me, out.error)
    return done(f"/console/desk/receipts/{out.value}", "sale recorded")


@router.get("/desk/receipts/{key}", response_class=HTMLResponse)
async def receipt(request: Request, key: Key, me: Viewer = viewer(P.PLAYER_READ)) -> Response:
    purchase = await me.session.get(EntryPurchase, key)
    if purchase is None:
        return await _refused(request, me, f"receipt {key}: no such sale")
    player = await me.session.get(Player, purchase.player_id)
    tournament = await me.session.get(Tournament, purchase.tournament_id)
    entries = (await me.session.scalars(select(Entry).where(Entry.purchase_id == key))).all()
    return console_of(request).pages.render(
        request, "receipt.html", me, active="desk", purchase=purchase, player=player,
        tournament=tournament, entries=entries, tender=tender_of(purchase).value,
    )  # fmt: skip


@router.post("/desk/register")
async def register(request: Request, me: Viewer = viewer(P.HEAT_REGISTER)) -> Response:
    async def work() -> tuple[int, str, str]:
        heat_text = me.field("heat")
        if not heat_text.isdigit():
            raise OperatorError("heat: pick a heat from the list")
        seat = await svc.register_for_heat(
            me.session, int(heat_text), me.field("player"), actor=me.name, now=_now(request)
        )
        heat = await me.session.get(Heat, seat.heat_id)
        player = await svc.find_player(me.session, me.field("player"))
        return (
            seat.seat_number,
            seat.machine_id,
            f"{player.name} in heat {heat.number if heat else ''}",
        )

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _refused(request, me, out.error)
    number, machine, who = out.value
    target = f"/console/desk?t={me.field('tournament')}&q={me.field('q')}"
    return done(target, f"registered {who}: seat {number}, machine {machine}")


@router.get("/heats/{key}/roll-call", response_class=HTMLResponse)
async def roll_call(request: Request, key: Key, me: Viewer = viewer(P.HEAT_READ)) -> Response:
    call = await svc.roll_call(me.session, key)
    return console_of(request).pages.render(
        request, "roll_call.html", me, active="schedule", call=call,
        can_mark=me.can(P.HEAT_REGISTER) and not call.started,
    )  # fmt: skip


@router.post("/heats/{key}/roll-call")
async def mark(request: Request, key: Key, me: Viewer = viewer(P.HEAT_REGISTER)) -> Response:
    seat = me.field("seat")

    async def work() -> None:
        if not seat.isdigit():
            raise OperatorError("seat: pick a seat")
        await svc.mark_attendance(
            me.session, key, [int(seat)], present=me.field("present") == "yes",
            at=_now(request), actor=me.name,
        )  # fmt: skip

    out = await attempt(me, work)
    if not out.ok:
        call = await svc.roll_call(me.session, key)
        return console_of(request).pages.render(
            request, "roll_call.html", me, status=422, active="schedule", call=call,
            can_mark=not call.started, error=out.error,
        )  # fmt: skip
    return done(f"/console/heats/{key}/roll-call", f"seat {seat} marked")
