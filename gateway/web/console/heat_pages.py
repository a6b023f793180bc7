"""The director's live heat: timer, seats with their live credits, events, the orders
(start, pause, resume, abort, restart) with confirmation, and each order's outcome with
what every machine acknowledged.

Orders are queued through the journal (:func:`gateway.heats.orders.queue_order`, as
``reelgate heat direct`` and the API) and carried out by the gateway holding the bank,
which stamps the outcome; the page polls the order until it is done and then shows the
machines' states from the heat run (locked, playing, malfunction)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.heats.orders import ORDERS, queue_order
from gateway.tournament.services.seating import SeatInfo, heat_seats
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.control import MachineLive
from gateway.web.console.score_pages import SCORABLE
from gateway.web.console.state import Console, console_of
from storage.floor import FloorBank, FloorMachine
from storage.journal import DirectorCommand, HeatRun, HeatRunMachine
from storage.lease import BankLease
from storage.tournament import Heat, HeatStatus, Tournament

router = APIRouter()
Bank = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,32}$")]
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
HeatKey = Annotated[int | None, Query(ge=1, le=2_147_483_647)]
_UNDER_WAY = (HeatStatus.ARMED, HeatStatus.RUNNING, HeatStatus.ENDING, HeatStatus.COLLECTING)
_WAITING = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED)


async def _latest_run(session: AsyncSession, bank: str) -> HeatRun | None:
    query = select(HeatRun).where(HeatRun.bank_name == bank).order_by(HeatRun.id.desc()).limit(1)
    return (await session.scalars(query)).first()


async def _heat_of_bank(session: AsyncSession, bank: str) -> tuple[Heat | None, Heat | None]:
    """The heat under way (else the last one played) and the next one waiting."""
    heats = (
        await session.scalars(
            select(Heat).where(Heat.bank_name == bank).order_by(Heat.scheduled_start)
        )
    ).all()
    current = next((h for h in heats if h.status in _UNDER_WAY), None)
    waiting = [h for h in heats if h.status in _WAITING]
    if current is None and waiting:
        current = waiting[0]  # its seats, before it starts (the page follows it live)
    if current is None:
        run = await _latest_run(session, bank)
        current = next((h for h in heats if run is not None and h.id == run.heat_id), None)
    later = [h for h in waiting if current is None or h.id != current.id]
    return current, (later[0] if later else None)


def _live_seats(console: Console, heat_id: int | None) -> dict[str, dict[str, Any]]:
    if heat_id is None:
        return {}
    prefix = f"heat/{heat_id}/seat/"
    return {t[len(prefix) :]: p for t, p in console.retained().items() if t.startswith(prefix)}


def _feed_state(console: Console, heat_id: int | None) -> dict[str, Any]:
    found = console.retained().get(f"heat/{heat_id}/state") if heat_id is not None else None
    return found if isinstance(found, dict) else {}


@router.get("/heat", response_class=HTMLResponse)
async def heats(request: Request, me: Viewer = viewer(P.HEAT_DIRECT)) -> Response:
    banks = (await me.session.scalars(select(FloorBank).order_by(FloorBank.name))).all()
    rows = []
    for bank in banks:
        current, waiting = await _heat_of_bank(me.session, bank.name)
        rows.append((bank, current, waiting))
    return console_of(request).pages.render(request, "heats.html", me, active="heat", rows=rows)


async def _acks(session: AsyncSession, console: Console, bank: str) -> list[dict[str, Any]]:
    """Per machine of the bank's latest run: its state in the journal and what the
    gateway holding the bank saw it acknowledge."""
    run = await _latest_run(session, bank)
    if run is None:
        return []
    seats = (
        await session.scalars(
            select(HeatRunMachine)
            .where(HeatRunMachine.run_id == run.id)
            .order_by(HeatRunMachine.position)
        )
    ).all()
    control = console.control
    live: dict[str, MachineLive] = (
        dict(control.live(bank)) if control and control.drives(bank) else {}
    )
    out = []
    for s in seats:
        seen = live.get(s.machine_id)
        out.append({
            "machine": s.machine_id,
            "journal": s.state.value,
            "note": s.note,
            "unlocked": s.unlocked_at,
            "acknowledged": seen.acknowledged if seen else None,
            "error": seen.error if seen else "",
            "state": seen.heat_state if seen else None,
        })  # fmt: skip
    return out


async def _heat_context(
    me: Viewer, console: Console, bank: str, heat_id: int | None = None, *, now: datetime
) -> dict[str, Any]:
    current, waiting = await _heat_of_bank(me.session, bank)
    if heat_id is not None:  # the heat a page shows stays its heat (its result, later)
        shown = await me.session.get(Heat, heat_id)
        current = shown if shown is not None and shown.bank_name == bank else current
    seats: list[SeatInfo] = await heat_seats(me.session, current.id) if current else []
    tournament = await me.session.get(Tournament, current.tournament_id) if current else None
    run = await _latest_run(me.session, bank)
    machines = (
        await me.session.scalars(
            select(FloorMachine.machine_id).where(FloorMachine.bank_name == bank)
        )
    ).all()
    startable = current if current is not None and current.status in _WAITING else waiting
    feed_state = _feed_state(console, current.id if current else None)
    return {
        **_controls(run, current, feed_state),
        "bank": bank,
        "bank_machines": list(machines),
        "startable": startable,
        "heat": current,
        "next_heat": waiting,
        "tournament": tournament,
        "seats": seats,
        "live": _live_seats(console, current.id if current else None),
        "feed_state": feed_state,
        "run": run,
        "acks": await _acks(me.session, console, bank),
        "official": current is not None and current.status is HeatStatus.CLOSED,
        "has_feed": console.feed is not None,
        "unheld": await _unheld(me.session, bank, now),
        # A manual score (T23) for a seat of a collecting or closed heat: its own page.
        "can_score": me.can(P.HEAT_MANUAL_SCORE),
        "scorable": current is not None and current.status in SCORABLE,
        "played": await _played(me.session, bank),
    }


async def _played(session: AsyncSession, bank: str) -> list[Heat]:
    """The bank's last heats collecting or closed: their results and manual scores."""
    query = (
        select(Heat)
        .where(Heat.bank_name == bank, Heat.status.in_(SCORABLE))
        .order_by(Heat.scheduled_start.desc())
        .limit(5)
    )
    return list((await session.scalars(query)).all())


async def _unheld(session: AsyncSession, bank: str, now: datetime) -> bool:
    """No gateway holds the bank: orders are refused (:func:`queue_order`), say so first."""
    held = await session.get(BankLease, bank)
    return held is None or held.released or held.expires_at <= now


PAUSE_STATES: Final = ("running",)
RESUME_STATES: Final = ("paused",)
STOP_STATES: Final = ("armed", "running", "paused", "ending", "collecting")  # abort, restart


def _controls(run: HeatRun | None, heat: Heat | None, feed: dict[str, Any]) -> dict[str, Any]:
    """The run state the orders are offered for: an order shows only in the states that
    can take it (a closed heat's page offered all four; the gateway refused them).  The
    page's script shows and hides them again as the live state moves."""
    state = "none"
    if run is not None and heat is not None and run.heat_id == heat.id:
        state = run.state.value
    live = feed.get("state")
    if isinstance(live, str) and heat is not None:
        state = live  # the gateway's feed is newer than the journal read
    return {
        "order_state": state,
        "pause_states": PAUSE_STATES,
        "resume_states": RESUME_STATES,
        "stop_states": STOP_STATES,
    }


@router.get("/heat/{bank}", response_class=HTMLResponse)
async def heat_page(
    request: Request,
    bank: Bank,
    order: int | None = None,
    heat: HeatKey = None,
    me: Viewer = viewer(P.HEAT_DIRECT),
) -> Response:
    console = console_of(request)
    if await me.session.get(FloorBank, bank) is None:
        missing = f"bank {bank!r} is not on the floor"
        return console.pages.render(
            request, "heats.html", me, status=404, active="heat", rows=[], error=missing
        )
    context = await _heat_context(me, console, bank, heat, now=_now(request))
    return console.pages.render(
        request, "heat.html", me, active="heat", order=order, orders=ORDERS, **context
    )


@router.get("/heat/{bank}/acks", response_class=HTMLResponse)
async def acks(request: Request, bank: Bank, me: Viewer = viewer(P.HEAT_DIRECT)) -> Response:
    console = console_of(request)
    rows = await _acks(me.session, console, bank)
    return console.pages.render(request, "heat_acks.html", me, acks=rows)


@router.get("/heat/{bank}/standings", response_class=HTMLResponse)
async def heat_standings(
    request: Request, bank: Bank, heat: HeatKey = None, me: Viewer = viewer(P.HEAT_DIRECT)
) -> Response:
    console = console_of(request)
    context = await _heat_context(me, console, bank, heat, now=_now(request))
    return console.pages.render(request, "heat_seats.html", me, **context)


@router.post("/heat/{bank}/orders")
async def give_order(request: Request, bank: Bank, me: Viewer = viewer(P.HEAT_DIRECT)) -> Response:
    order = me.field("order")
    heat_text = me.field("heat")

    async def work() -> DirectorCommand:
        if heat_text and not heat_text.isdigit():
            raise OperatorError("heat: pick a heat from the list")
        heat_id = int(heat_text) if heat_text else None
        return await queue_order(
            me.session, bank=bank, order=order, heat_id=heat_id, reason=me.field("reason"),
            actor=me.name, now=_now(request),
        )  # fmt: skip

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        console = console_of(request)
        context = await _heat_context(me, console, bank, now=_now(request))
        return console.pages.render(
            request, "heat.html", me, status=422, active="heat", order=None, orders=ORDERS,
            error=out.error, **context,
        )  # fmt: skip
    await me.session.flush()
    return done(
        f"/console/heat/{bank}?order={out.value.id}", f"order {out.value.id} ({order}) given"
    )


def _now(request: Request) -> datetime:
    from gateway.web.api.auth import api_of

    return api_of(request).clock()


@router.get("/orders/{key}", response_class=HTMLResponse)
async def order_outcome(request: Request, key: Key, me: Viewer = viewer(P.HEAT_DIRECT)) -> Response:
    cmd = await me.session.get(DirectorCommand, key)
    console = console_of(request)
    if cmd is None:
        return Response("unknown order", status_code=404)
    return console.pages.render(request, "order.html", me, cmd=cmd)
