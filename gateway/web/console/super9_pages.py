"""The Super 9 desk: sessions and the jackpot, the cash desk sale, hand-in keying, the
live draw with "No spin" voids, manual spins keyed twice and confirmed by a second
person, claims, closing, and prize receipts witnessed by a second account.

Every action is the API's (:mod:`gateway.web.api.routes.super9_table`, ``…tickets``) on
the same desk in the request's transaction (:func:`~gateway.web.api.super9_desk.desk_in`);
forms are validated by the API's own models; dual-control actions (rules 26, 29) become
pending actions that appear on the approvals screen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel
from sqlalchemy import select

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.clocks.policy import WriteTime
from gateway.errors import OperatorError
from gateway.super9.desk import Super9Desk
from gateway.super9.desk.core import Disqualified
from gateway.super9.rules.calendar import hand_in_cutoff, session_words
from gateway.super9.rules.verification import Verification
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.keyed_time import judged, recorded
from gateway.web.api.super9_desk import desk_in, hand_in_at, sell_at
from gateway.web.api.super9_models import (
    CalendarChangeIn,
    ClaimIn,
    HandInIn,
    ManualSpin,
    OpenIn,
    Receipt,
    SaleIn,
    VoidIn,
)
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.render import rand
from gateway.web.console.state import console_of
from storage.enums import Tender
from storage.super9 import SessionStatus, Super9Session, Super9Ticket
from storage.tournament import Player

router = APIRouter()
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
_FORM_SKIP = frozenset({"csrf", "back", "keyed_at"})


def _local(text: str, field: str, zone: ZoneInfo) -> str:
    """A time keyed on a form (``datetime-local``: no zone) is the venue's; ISO 8601."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise OperatorError(f"{field}: a date and time, YYYY-MM-DD HH:MM") from None
    return (found if found.tzinfo else found.replace(tzinfo=zone)).isoformat()


async def _keyed(me: Viewer, desk: Super9Desk) -> dict[str, object]:
    """The form's "keyed from paper" fields as the API takes them (venue time)."""
    if not me.field("keyed_at"):
        return {"keyed_at": None}
    return {"keyed_at": _local(me.field("keyed_at"), "keyed_at", (await desk.calendar()).tz)}


def _write(request: Request, me: Viewer, body: Any) -> WriteTime:
    """The write's time: now, or keyed from paper (:mod:`gateway.web.api.keyed_time`)."""
    return judged(api_of(request), me, body.keyed_at, body.keyed_reason)


def _fields(me: Viewer, model: type[BaseModel], **extra: Any) -> dict[str, object]:
    data: dict[str, object] = {
        k: me.field(k) for k in model.model_fields if k not in _FORM_SKIP and me.field(k) != ""
    }
    if "signed" in model.model_fields:
        data["signed"] = me.field("signed") == "on"
    data.update(extra)
    return data


async def _sessions(me: Viewer) -> list[Super9Session]:
    query = select(Super9Session).order_by(Super9Session.starts_at.desc()).limit(30)
    return list((await me.session.scalars(query)).all())


# A draw opened this late is still its session's; a session further back has passed.
LATE_OPEN = timedelta(hours=1)


def openable(
    calendar: list[datetime], taken: set[datetime], now: datetime
) -> tuple[list[datetime], datetime | None]:
    """The sessions the desk may open for the draw, and the one to pick by default.

    Sessions already opened or closed, and sessions that passed (more than
    :data:`LATE_OPEN` ago), are not offered (the page offered them, and picked one by
    default).  The default is the latest one whose hand-in cut-off has passed (the one
    to open now), else the next one."""
    offered = [at for at in calendar if at not in taken and at > now - LATE_OPEN]
    ready = [at for at in offered if hand_in_cutoff(at) < now]
    return offered, (ready[-1] if ready else offered[0] if offered else None)


@router.get("/super9", response_class=HTMLResponse)
async def super9(request: Request, me: Viewer = viewer(P.SUPER9_READ)) -> Response:
    return await _desk_page(request, me)


async def _desk_page(
    request: Request, me: Viewer, *, status: int = 200, error: str = ""
) -> Response:
    desk = await desk_in(me.session)
    cal = await desk.calendar()
    now = api_of(request).clock()
    today = now.astimezone(cal.tz).date()
    sessions = await _sessions(me)
    taken = {s.starts_at for s in sessions if s.status is not SessionStatus.SCHEDULED}
    upcoming, default = openable(cal.between(today, today + timedelta(days=6)), taken, now)
    return console_of(request).pages.render(
        request, "super9.html", me, status=status, active="super9", sessions=sessions,
        upcoming=upcoming, default_session=default, jackpot=await desk.jackpot(),
        history=await desk.jackpot_history(), error=error,
    )  # fmt: skip


async def _session_page(
    request: Request, me: Viewer, key: int, *, status: int = 200, error: str = ""
) -> Response:
    desk = await desk_in(me.session)
    report = await desk.report(key)
    awaiting = {
        f"{d.get('ticket')}{d.get('kind')}"
        for d in (p.payload_dict() for p in await service.list_pending(me.session))
        if d.get("session") == key and "signature" in d
    }  # receipts asked for, waiting for their witness (rule 26)
    pages = console_of(request).pages
    return pages.render(
        request, "super9_session.html", me, status=status, active="super9", report=report,
        key=key, error=error, has_feed=console_of(request).feed is not None, awaiting=awaiting,
    )  # fmt: skip


@router.get("/super9/sessions/{key}", response_class=HTMLResponse)
async def session_page(request: Request, key: Key, me: Viewer = viewer(P.SUPER9_READ)) -> Response:
    return await _session_page(request, me, key)


@router.get("/super9/sessions/{key}/draw", response_class=HTMLResponse)
async def draw_fragment(request: Request, key: Key, me: Viewer = viewer(P.SUPER9_READ)) -> Response:
    report = await (await desk_in(me.session)).report(key)
    return console_of(request).pages.render(request, "super9_draw.html", me, report=report, key=key)


Work = Callable[[], Awaitable[str]]


async def _act(request: Request, me: Viewer, key: int | None, work: Work) -> Response:
    out = await attempt(me, work)
    if key is None:  # a refusal: the desk's page again, the one line on it (422)
        if not out.ok:
            return await _desk_page(request, me, status=422, error=out.error)
        return done("/console/super9", out.value or "")
    if not out.ok:
        return await _session_page(request, me, key, status=422, error=out.error)
    return done(f"/console/super9/sessions/{key}", out.value or "done")


def _now(request: Request) -> datetime:
    return api_of(request).clock()


@router.post("/super9/calendar")
async def change_calendar(request: Request, me: Viewer = viewer(P.SUPER9_SESSIONS)) -> Response:
    """S9-4: a one-off session added to the calendar, or one cancelled, with a reason."""

    async def work() -> str:
        desk = await desk_in(me.session)
        tz = (await desk.calendar()).tz
        at = _local(me.field("at"), "at", tz) if me.field("at") else ""
        extra = {"cancel": me.field("cancel") == "on", "at": at, **await _keyed(me, desk)}
        body = parse(CalendarChangeIn, _fields(me, CalendarChangeIn, **extra))
        with recorded(_write(request, me, body)) as write:
            await desk.change_calendar(
                body.at, cancel=body.cancel, actor=me.name, reason=body.reason, now=write.at
            )
        done_ = "cancelled" if body.cancel else "added"
        return f"session of {session_words(body.at, tz)} {done_} (rule 4)"

    return await _act(request, me, None, work)


@router.post("/super9/open")
async def open_session(request: Request, me: Viewer = viewer(P.SUPER9_SESSIONS)) -> Response:
    async def work() -> str:
        desk = await desk_in(me.session)
        tz = (await desk.calendar()).tz
        extra = await _keyed(me, desk)
        if me.field("session_at"):  # a session keyed by its time (from paper)
            extra["starts_at"] = _local(me.field("session_at"), "session_at", tz)
        body = parse(OpenIn, _fields(me, OpenIn, **extra))
        with recorded(_write(request, me, body)) as write:
            sid = await desk.open_session(body.starts_at, actor=me.name, now=write.at)
        return f"session {sid} ({session_words(body.starts_at, tz)}) open for the draw"

    return await _act(request, me, None, work)


@router.post("/super9/sell")
async def sell(request: Request, me: Viewer = viewer(P.SUPER9_SELL)) -> Response:
    async def work() -> str:
        desk = await desk_in(me.session)
        body = parse(SaleIn, _fields(me, SaleIn, **await _keyed(me, desk)))
        with recorded(_write(request, me, body)) as write:
            await sell_at(
                desk, body.ticket, body.player, Tender(body.tender), actor=me.name, write=write
            )
        price = (await desk.settings()).buy_in_cents
        starts = await desk.sold_for(body.ticket)
        when = "-" if starts is None else session_words(starts, (await desk.calendar()).tz)
        return (
            f"ticket {body.ticket} sold for the session of {when}: "
            f"{rand(price)} {body.tender} (rule 5)"
        )

    out = await attempt(me, work)
    if not out.ok:
        return await _desk_page(request, me, status=422, error=out.error)
    return done(f"/console/super9/tickets/{me.field('ticket')}/receipt", out.value or "")


Serial = Annotated[str, Path(pattern=r"^[A-Za-z0-9_./-]{1,32}$")]


@router.get("/super9/tickets/{serial}/receipt", response_class=HTMLResponse)
async def sale_receipt(
    request: Request, serial: Serial, me: Viewer = viewer(P.SUPER9_READ)
) -> Response:
    """S9-5: the cash desk's receipt of a ticket sold: the session it is for, the price,
    the tender and the cashier; printable."""
    ticket = await me.session.scalar(select(Super9Ticket).where(Super9Ticket.serial == serial))
    if ticket is None:
        return await _desk_page(request, me, status=404, error=f"ticket {serial}: not sold")
    player = await me.session.get(Player, ticket.player_id)
    played = await me.session.get(Super9Session, ticket.session_id)
    tz = (await (await desk_in(me.session)).calendar()).tz
    starts = played.starts_at if played is not None else None
    return console_of(request).pages.render(
        request, "super9_receipt.html", me, active="super9", ticket=ticket, player=player,
        when="-" if starts is None else session_words(starts, tz),
        cutoff="-" if starts is None else session_words(hand_in_cutoff(starts), tz),
    )  # fmt: skip


@router.post("/super9/hand-in")
async def hand_in(request: Request, me: Viewer = viewer(P.SUPER9_HAND_IN)) -> Response:
    serial = me.field("ticket")

    async def work() -> str:
        desk = await desk_in(me.session)
        body = parse(HandInIn, _fields(me, HandInIn, **await _keyed(me, desk)))
        section = Verification(body.name, body.id, body.contact, body.signed)
        try:
            with recorded(_write(request, me, body)) as write:
                await hand_in_at(desk, serial, body.numbers, section, actor=me.name, write=write)
        except Disqualified as exc:  # recorded (rule 9): kept, and said as the outcome
            return f"not entered: {exc}"
        starts = await desk.sold_for(serial)
        when = "-" if starts is None else session_words(starts, (await desk.calendar()).tz)
        return f"ticket {serial} handed in for the session of {when}"

    return await _act(request, me, None, work)


@router.post("/super9/sessions/{key}/void")
async def void(request: Request, key: Key, me: Viewer = viewer(P.SUPER9_SPIN)) -> Response:
    async def work() -> str:
        body = parse(VoidIn, _fields(me, VoidIn))
        seq = await (await desk_in(me.session)).void_spin(
            key,
            game_no=body.game,
            seq=body.seq,
            actor=me.name,
            reason=body.reason,
            now=_now(request),
        )
        return f"spin {seq}: No spin (rule 18)"

    return await _act(request, me, key, work)


@router.post("/super9/sessions/{key}/manual-spin")
async def manual_spin(
    request: Request, key: Key, me: Viewer = viewer(P.SUPER9_MANUAL_SPIN)
) -> Response:
    async def work() -> str:
        body = parse(ManualSpin, _fields(me, ManualSpin, session=key))
        pending = await actions.request(api_of(request), me, P.SUPER9_MANUAL_SPIN, body)
        return (
            f"manual spin {body.number} waits for the second person "
            f"(approval {pending.pending}, rule 29)"
        )

    return await _act(request, me, key, work)


@router.post("/super9/sessions/{key}/claim")
async def claim(request: Request, key: Key, me: Viewer = viewer(P.SUPER9_CLAIM)) -> Response:
    async def work() -> str:
        body = parse(ClaimIn, _fields(me, ClaimIn))
        c = await (await desk_in(me.session)).claim(
            key, body.ticket, body.duplicate, actor=me.name, now=_now(request)
        )
        verdict = "valid" if c.valid else f"not valid ({c.reason})"
        return f"claim of {c.ticket}: {verdict}"

    return await _act(request, me, key, work)


@router.post("/super9/sessions/{key}/close")
async def close(request: Request, key: Key, me: Viewer = viewer(P.SUPER9_SESSIONS)) -> Response:
    async def work() -> str:
        await (await desk_in(me.session)).close_session(key, actor=me.name, now=_now(request))
        return f"session {key} closed; prizes fixed"

    return await _act(request, me, key, work)


@router.post("/super9/sessions/{key}/receipt")
async def receipt(
    request: Request, key: Key, me: Viewer = viewer(P.SUPER9_PRIZE_RECEIPT)
) -> Response:
    async def work() -> str:
        body = parse(Receipt, _fields(me, Receipt, session=key))
        pending = await actions.request(api_of(request), me, P.SUPER9_PRIZE_RECEIPT, body)
        return (
            f"receipt for {body.ticket} waits for the witness (approval {pending.pending}, rule 26)"
        )

    return await _act(request, me, key, work)
