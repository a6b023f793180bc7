"""The Schedule screen (issue 26, item 2): each bank's week, and the director's changes
to it.

Each form is the API's on the same service and permission, never a second rule path:
scheduling is ``POST /tournaments/{ref}/heats`` (:class:`HeatIn`, ``heat.schedule``),
moving and cancelling are ``POST /heats/{key}/reschedule`` and ``/cancel`` (T10, with
its notice period; ``heat.schedule``), postponing and restarting are
``/heats/{key}/postpone`` and ``/restart`` (T20, ``heat.conduct``).  The service refuses
a heat overlapping another on its bank (T10a) naming it.  Times are keyed in the venue's
zone.  A refusal is one line naming the form's field (a 422 page) and changes nothing;
every change is audited under the signed-in account by the service."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.web.api.auth import api_of
from gateway.web.api.director_models import CancelIn, ReasonIn, RescheduleIn, RestartIn
from gateway.web.api.models import HeatIn
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import Key, _tournaments
from gateway.web.console.schedule_week import (
    CANCELLABLE,
    DAYS,
    MOVABLE,
    POSTPONABLE,
    RESTARTABLE,
    week_of,
)
from gateway.web.console.score_pages import SCORABLE
from gateway.web.console.state import console_of
from storage.floor import FloorBank
from storage.tournament import Heat

router = APIRouter()
PATH = "/console/schedule"
STAGES = [s.value for s in Stage]
_DIGITS = re.compile(r"[0-9]{1,12}")  # ASCII digits only, and never a huge number


def _zone(request: Request) -> ZoneInfo:
    return console_of(request).pages.zone


def _now(request: Request) -> datetime:
    return api_of(request).clock()


def _week_start(text: str, today: date) -> date:
    if not text:
        return today
    try:
        found = date.fromisoformat(text)
    except ValueError:
        raise OperatorError("start: a date as YYYY-MM-DD") from None
    if not 2000 <= found.year <= 2100:
        raise OperatorError("start: a date between 2000 and 2100")
    return found


def _local(text: str, field: str, zone: ZoneInfo) -> datetime:
    """A time keyed on the form (``datetime-local``: no zone) is the venue's."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise OperatorError(f"{field}: a date and time, YYYY-MM-DD HH:MM") from None
    return found if found.tzinfo else found.replace(tzinfo=zone)


def _week_of(moment: datetime, shown: date, zone: ZoneInfo) -> date:
    """The week to show after a change: the one shown if the heat is in it, else the
    week that starts on the heat's day."""
    day = moment.astimezone(zone).date()
    return shown if shown <= day < shown + timedelta(days=DAYS) else day


def _at(start: date) -> str:
    return f"{PATH}?{urlencode({'start': start.isoformat()})}"


async def _page(
    request: Request,
    me: Viewer,
    start: date,
    *,
    status: int = 200,
    error: str = "",
    new_heat: bool = False,
) -> Response:
    """The week; ``new_heat``: the new-heat form refused, shown again as keyed."""
    zone = _zone(request)
    now = _now(request)
    week = await week_of(me.session, start, zone, now)
    banks = list((await me.session.scalars(select(FloorBank.name).order_by(FloorBank.name))).all())
    return console_of(request).pages.render(
        request, "schedule.html", me, status=status, active="schedule", week=week,
        tournaments=await _tournaments(me.session), banks=banks, stages=STAGES,
        today=now.astimezone(zone).date(), now=now, form=me.form if error and new_heat else {},
        error=error,
        can_schedule=me.can(P.HEAT_SCHEDULE), can_conduct=me.can(P.HEAT_CONDUCT),
        can_score=me.can(P.HEAT_MANUAL_SCORE), scorable=SCORABLE, movable=MOVABLE,
        cancellable=CANCELLABLE, postponable=POSTPONABLE, restartable=RESTARTABLE,
    )  # fmt: skip


def _shown(request: Request, me: Viewer) -> date:
    today = _now(request).astimezone(_zone(request)).date()
    try:
        return _week_start(me.field("start"), today)
    except OperatorError:
        return today


async def _refused(request: Request, me: Viewer, error: str, *, new_heat: bool = False) -> Response:
    shown = _shown(request, me)
    return await _page(request, me, shown, status=422, error=error, new_heat=new_heat)


def _named(exc: str, default: str, fields: dict[str, str]) -> str:
    """The service's refusal as one line starting with the form's field."""
    head, sep, _ = exc.partition(":")
    if sep and (head == default or head in fields.values()):
        return exc
    for words, field in fields.items():
        if words in exc:
            return f"{field}: {exc}"
    return f"{default}: {exc}"


@router.get("/schedule", response_class=HTMLResponse)
async def schedule(request: Request, start: str = "", me: Viewer = viewer(P.HEAT_READ)) -> Response:
    today = _now(request).astimezone(_zone(request)).date()
    try:
        shown = _week_start(start[:20], today)
    except OperatorError as exc:
        return await _page(request, me, today, status=422, error=str(exc))
    return await _page(request, me, shown)


@router.post("/schedule/heats")
async def add(request: Request, me: Viewer = viewer(P.HEAT_SCHEDULE)) -> Response:
    zone = _zone(request)

    async def work() -> tuple[str, datetime]:
        minutes = me.field("duration_minutes")
        if not _DIGITS.fullmatch(minutes) or not 1 <= int(minutes) <= 1440:
            raise OperatorError("duration_minutes: whole minutes, 1 to 1440")
        credits = me.field("starting_credits")
        body = parse(HeatIn, {
            "stage": me.field("stage") or "qualifying",
            "starts_at": _local(me.field("starts_at"), "starts_at", zone),
            "bank": me.field("bank"), "duration_seconds": int(minutes) * 60,
            "starting_credits": int(credits) if _DIGITS.fullmatch(credits) else credits,
            "announced_via": me.field("announced_via") or None,
            "sit_and_go_seats": _seats(me.field("sit_and_go_seats")),
        })  # fmt: skip
        ref = me.field("tournament")  # an id or a name, as the API's path takes it
        if not ref:
            raise OperatorError("tournament: pick the tournament")
        try:
            heat = await svc.schedule_heat(
                me.session, ref, stage=Stage(body.stage),
                starts_at=body.starts_at, bank_name=body.bank,
                duration_seconds=body.duration_seconds, starting_credits=body.starting_credits,
                actor=me.name, now=_now(request), announced_via=body.announced_via,
                sit_and_go_seats=body.sit_and_go_seats,
            )  # fmt: skip
        except OperatorError as exc:
            raise OperatorError(_named(str(exc), "starts_at", _ADD_FIELDS)) from None
        return f"{heat.stage.value} heat {heat.number}", body.starts_at

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _refused(request, me, out.error, new_heat=True)
    label, starts = out.value
    when = console_of(request).pages.venue_time(starts)
    return done(_at(_week_of(starts, _shown(request, me), zone)), f"{label} scheduled: {when}")


def _seats(text: str) -> int | None:
    """F6: the sit-and-go seats, blank for a heat with a fixed start."""
    if not text:
        return None
    if not _DIGITS.fullmatch(text):
        raise OperatorError("sit_and_go_seats: whole seats, or blank for a fixed start")
    return int(text)


# Which form field a service's refusal is about, by its words (the first match wins: an
# overlap names another heat and its tournament, whatever words that name holds).
_ADD_FIELDS = {
    "is taken from": "starts_at",
    "tournament '": "tournament",
    "starting credits": "starting_credits",
    "starting_credits": "starting_credits",
    "heat time": "duration_minutes",
    "is not on the floor": "bank",
    "no machine in service": "bank",
    "already exists": "stage",
    "cut is sealed": "announced_via",
    "sit_and_go_seats": "sit_and_go_seats",
}
_MOVE_FIELDS = {"is taken from": "starts_at", "announced at least": "announced_at",
                "announcement": "announced_at", "say how": "announced_via",
                "reason is required": "reason"}  # fmt: skip
_CANCEL_FIELDS = {"say how": "announced_via", "reason is required": "reason"}


@router.post("/schedule/heats/{key}/reschedule")
async def reschedule(request: Request, key: Key, me: Viewer = viewer(P.HEAT_SCHEDULE)) -> Response:
    """T10: moved with the notice period; refused in one line when it is too late."""
    zone = _zone(request)

    async def work() -> tuple[str, datetime]:
        announced = me.field("announced_at")
        body = parse(RescheduleIn, {
            "starts_at": _local(me.field("starts_at"), "starts_at", zone),
            "announced_via": me.field("announced_via"),
            "announced_at": _local(announced, "announced_at", zone) if announced else None,
            "reason": me.field("reason"),
        })  # fmt: skip
        now = _now(request)
        try:
            heat = await svc.reschedule_heat(
                me.session, key, new_start=body.starts_at, announced_via=body.announced_via,
                announced_at=body.announced_at or now, reason=body.reason, actor=me.name,
                now=now,
            )  # fmt: skip
        except OperatorError as exc:
            raise OperatorError(_named(str(exc), "starts_at", _MOVE_FIELDS)) from None
        return f"{heat.stage.value} heat {heat.number}", body.starts_at

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _refused(request, me, out.error)
    label, starts = out.value
    when = console_of(request).pages.venue_time(starts)
    return done(_at(_week_of(starts, _shown(request, me), zone)), f"{label} moved to {when}")


async def _simple(
    request: Request, me: Viewer, act: Callable[[], Awaitable[str]], fields: dict[str, str]
) -> Response:
    """Cancel, postpone, restart: the service's answer, back to the week shown."""
    out = await attempt(me, act)
    if not out.ok or out.value is None:
        return await _refused(request, me, _named(out.error, "heat", fields))
    return done(_at(_shown(request, me)), str(out.value))


@router.post("/schedule/heats/{key}/cancel")
async def cancel(request: Request, key: Key, me: Viewer = viewer(P.HEAT_SCHEDULE)) -> Response:
    """T10: a heat not yet run is dropped, announced; qualifying entries handed back."""

    async def work() -> str:
        body = parse(
            CancelIn, {"announced_via": me.field("announced_via"), "reason": me.field("reason")}
        )
        entries = await svc.cancel_heat(
            me.session, key, announced_via=body.announced_via, reason=body.reason,
            actor=me.name, now=_now(request),
        )  # fmt: skip
        heat = await me.session.get(Heat, key)
        label = f"{heat.stage.value} heat {heat.number}" if heat else f"heat {key}"
        return f"{label} cancelled; entries affected: {len(entries)}"

    return await _simple(request, me, work, _CANCEL_FIELDS)


@router.post("/schedule/heats/{key}/postpone")
async def postpone(request: Request, key: Key, me: Viewer = viewer(P.HEAT_CONDUCT)) -> Response:
    """T20: not resolved in time; the seats stay, a new time follows under T10."""

    async def work() -> str:
        body = parse(ReasonIn, {"reason": me.field("reason")})
        heat = await svc.postpone_heat(
            me.session, key, now=_now(request), actor=me.name, reason=body.reason
        )
        return f"{heat.stage.value} heat {heat.number} postponed: give it a new time (rule 10)"

    return await _simple(request, me, work, {"reason is required": "reason"})


@router.post("/schedule/heats/{key}/restart")
async def restart(request: Request, key: Key, me: Viewer = viewer(P.HEAT_CONDUCT)) -> Response:
    """T20: the system failed; the whole heat starts again, seats kept."""
    zone = _zone(request)

    async def work() -> str:
        body = parse(RestartIn, {
            "failed_at": _local(me.field("failed_at"), "failed_at", zone),
            "reason": me.field("reason"),
        })  # fmt: skip
        heat = await svc.restart_heat(
            me.session, key, failed_at=body.failed_at, now=_now(request), actor=me.name,
            reason=body.reason,
        )  # fmt: skip
        return f"{heat.stage.value} heat {heat.number} restarted ({heat.restarts} restart(s))"

    return await _simple(
        request, me, work, {"not resolved within": "failed_at", "reason is required": "reason"}
    )
