"""The Players screen of the desks (issue 26, item 3): find a player by what they show
(name, Rewards card or ID number), add one, load an exclusion register, disqualify and
ask for a reinstatement.

Each form is the API's on the same service and permission, never a second rule path:
adding is ``POST /players`` (the API's :class:`PlayerIn` checks the form, then T1–T3),
the register is ``reelgate players import-exclusions`` (the same CSV, checked whole
first: one bad line refuses it all, every bad line named with its line number), a
disqualification is ``POST /tournaments/{ref}/disqualifications`` (a director's decision,
T23: it takes effect at once, as over the API and the CLI), and a reinstatement is
``POST /disqualifications/{key}/reinstate``: a dual-control request
(:func:`gateway.web.api.actions.request`) that a second account approves on the
Approvals screen.  A refusal is one line naming the form's field (a 422 page) and
changes nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from gateway.tournament.rules.eligibility import exclusions_for
from gateway.tournament.rules.exclusion_csv import ExclusionCsvError
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.lookup import search_players
from gateway.tournament.services.people import exclusion_register
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.cashier_models import DisqualifyIn
from gateway.web.api.errors import ApiError
from gateway.web.api.models import PlayerIn, Reinstate
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import _tournaments
from gateway.web.console.state import console_of
from storage.tournament import Disqualification, Player, Tournament

router = APIRouter()
PATH = "/console/players"
RULES = (1, 2, 3, 12, 20, 23)  # the rules a disqualification may cite (the API's)
SOURCE_MAX = 200


def _now(request: Request) -> datetime:
    return api_of(request).clock()


def _found(q: str) -> str:
    """The screen with a search (encoded: a name may hold any character)."""
    return f"{PATH}?{urlencode({'q': q[:100]})}" if q else PATH


def _add_field(exc: OperatorError) -> str:
    """The service's refusal of a new player as one line starting with the form's field:
    T1 (age) is the date of birth's, T2–T3 (a register) the ID number's."""
    why = str(exc)
    if isinstance(exc, RuleViolation) and exc.rule == 1:
        return f"date_of_birth: {why}"
    if isinstance(exc, RuleViolation) and exc.rule in (2, 3):
        return f"id_number: {why}"
    head, sep, _ = why.partition(":")
    if sep and head in ("id_number", "name", "date_of_birth", "card_number"):
        return why
    return f"id_number: {why}"


async def _context(me: Viewer, q: str, now: datetime) -> dict[str, Any]:
    found: list[Player] = []
    error = ""
    if q:
        try:
            found = await search_players(me.session, q)
        except OperatorError as exc:
            error = f"q: {exc}" if not str(exc).startswith("search:") else str(exc)
    ids = [p.id for p in found]
    standing: dict[int, list[tuple[Disqualification, str]]] = {i: [] for i in ids}
    barred: dict[int, list[Any]] = {}
    asked: dict[int, int] = {}  # disqualification -> the pending reinstatement
    if ids:
        rows = await me.session.execute(
            select(Disqualification, Tournament.name)
            .join(Tournament, Tournament.id == Disqualification.tournament_id)
            .where(Disqualification.player_id.in_(ids), Disqualification.revoked_at.is_(None))
            .order_by(Disqualification.id)
        )
        for dq, name in rows.all():
            standing[dq.player_id].append((dq, name))
        for p in found:
            register = await exclusion_register(me.session, p.id_number)
            barred[p.id] = exclusions_for(p.id_number, register, now)
        for pending in await service.list_pending(me.session):
            if pending.kind == P.PLAYER_REINSTATE.value:
                key = pending.payload_dict().get("disqualification_id")
                if isinstance(key, int):
                    asked[key] = pending.id
    return {
        "q": q, "players": found, "standing": standing, "barred": barred, "asked": asked,
        "tournaments": await _tournaments(me.session), "rules": RULES, "error": error,
    }  # fmt: skip


async def _page(
    request: Request,
    me: Viewer,
    q: str,
    *,
    status: int = 200,
    error: str = "",
    **extra: Any,
) -> Response:
    context = await _context(me, q[:100], _now(request))
    if error:
        context["error"] = error
    return console_of(request).pages.render(
        request, "players.html", me, status=status, active="players",
        zone_name=console_of(request).pages.zone.key, **context, **extra,
    )  # fmt: skip


@router.get("/players", response_class=HTMLResponse)
async def players(request: Request, q: str = "", me: Viewer = viewer(P.PLAYER_READ)) -> Response:
    return await _page(request, me, q)


@router.post("/players/add")
async def add(request: Request, me: Viewer = viewer(P.PLAYER_ADD)) -> Response:
    async def work() -> Player:
        body = parse(
            PlayerIn,
            {
                "id_number": me.field("id_number"),
                "name": me.field("name"),
                "date_of_birth": me.field("date_of_birth"),
                "card_number": me.field("card_number") or None,
            },
        )
        try:
            return await svc.add_player(
                me.session, id_number=body.id_number, name=body.name,
                date_of_birth=body.date_of_birth, actor=me.name, now=_now(request),
                card_number=body.card_number,
            )  # fmt: skip
        except OperatorError as exc:
            raise OperatorError(_add_field(exc)) from None

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, me.field("q"), status=422, error=out.error, added=me.form)
    p = out.value
    return done(_found(p.name), f"player {p.name} added (ID …{p.id_number[-4:]})")


def _source(me: Viewer) -> str:
    source = me.field("source")
    if not source or len(source) > SOURCE_MAX:
        raise OperatorError(f"source: where the register came from, 1 to {SOURCE_MAX} characters")
    return source


@router.post("/players/exclusions")
async def import_register(request: Request, me: Viewer = viewer(P.PLAYER_EXCLUSIONS)) -> Response:
    problems: list[tuple[int, str]] = []

    async def work() -> tuple[int, list[str]]:
        source = _source(me)
        text = str(me.form.get("register", ""))
        if not text.strip():
            raise OperatorError("register: paste the register, its header line first")
        try:
            result = await svc.import_exclusions(
                me.session, text, source=source, actor=me.name, now=_now(request),
                venue_zone=console_of(request).pages.zone.key,
            )  # fmt: skip
        except ExclusionCsvError as exc:
            problems.extend(exc.problems)
            raise OperatorError(f"register: {exc}") from None
        named = []
        for tournament_id, player_id in result.players_disqualified:
            player = await me.session.get(Player, player_id)
            tournament = await me.session.get(Tournament, tournament_id)
            named.append(
                f"{player.name if player else player_id} "
                f"({tournament.name if tournament else tournament_id})"
            )
        return result.added, named

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(
            request, me, me.field("q"), status=422, error=out.error, problems=problems,
            imported=me.form,
        )  # fmt: skip
    added, named = out.value
    line = f"{added} register line{'' if added == 1 else 's'} imported"
    if named:
        line += f"; disqualified under rule 2: {', '.join(named)}"
    else:
        line += "; nobody holding entries is barred by it"
    return done(PATH, line)


@router.post("/players/disqualify")
async def disqualify(request: Request, me: Viewer = viewer(P.PLAYER_DISQUALIFY)) -> Response:
    async def work() -> str:
        rule = me.field("rule")
        if not rule.isdigit() or int(rule) not in RULES:
            raise OperatorError(f"rule: one of {', '.join(map(str, RULES))}")
        if not me.field("reason"):
            raise OperatorError("reason: say why (it is in the record of the decision)")
        body = parse(
            DisqualifyIn,
            {"player": me.field("player"), "rule": int(rule), "reason": me.field("reason")},
        )
        tournament = me.field("tournament")
        if not tournament:
            raise OperatorError("tournament: pick the tournament")
        dq = await svc.disqualify(
            me.session, tournament, body.player, rule=body.rule, reason=body.reason,
            actor=me.name, now=_now(request),
        )  # fmt: skip
        player = await me.session.get(Player, dq.player_id)
        return f"{player.name if player else dq.player_id} disqualified (rule {dq.rule})"

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, me.field("q"), status=422, error=out.error)
    return done(_found(me.field("q")), out.value)


@router.post("/players/reinstate")
async def reinstate(request: Request, me: Viewer = viewer(P.PLAYER_REINSTATE)) -> Response:
    async def work() -> int:
        key = me.field("disqualification")
        if not key.isdigit():
            raise OperatorError("disqualification: pick a disqualification in force")
        if not me.field("reason"):
            raise OperatorError("reason: say why (it is in the record of the decision)")
        order = parse(Reinstate, {"disqualification_id": int(key), "reason": me.field("reason")})
        try:
            pending = await actions.request(api_of(request), me, P.PLAYER_REINSTATE, order)
        except ApiError as exc:
            raise OperatorError(str(exc.detail)) from None
        return pending.pending

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, me.field("q"), status=422, error=out.error)
    return done(
        _found(me.field("q")),
        f"reinstatement asked (action {out.value}): it waits for a second person to approve "
        "it on Approvals",
    )
