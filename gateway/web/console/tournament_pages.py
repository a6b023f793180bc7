"""The Tournaments screen of the director (issue 26, item 1): the tournaments, a new one
(blank, or copied from another as a template), and a change of a tournament's settings.

Each form is the API's on the same service and permission, never a second rule path:
the list is ``GET /tournaments`` (``tournament.read``), a new tournament is
``POST /tournaments`` (``tournament.create``: the API's :class:`TournamentIn`, then the
route's own runner, so :class:`TournamentSettings` and ``create_tournament`` check it),
and a change is ``PATCH /tournaments/{ref}/settings`` (``tournament.settings``): a
dual-control request (:func:`gateway.web.api.actions.request`, tried first against
``change_settings`` so a refused change never waits) that a second director approves on
the Approvals screen.  "Copy as template" fills the new-tournament form with another
tournament's stored settings; it is created like any other.  A refusal is one line
naming the form's field (a 422 page) and changes nothing."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel
from sqlalchemy import select

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.settings import TournamentSettings
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.errors import ApiError
from gateway.web.api.models import SettingsChange, TournamentIn
from gateway.web.api.routes.tournaments import run_create
from gateway.web.console import tournament_form as tf
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from storage.tournament import Tournament

router = APIRouter()
PATH = "/console/tournaments"
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
B = TypeVar("B", bound=BaseModel)


def _form(me: Viewer) -> dict[str, str]:
    """The posted form as text (the packages keep their lines)."""
    out = {k: me.field(k) for k in (*tf.KEYS, *tf.PERIOD, "name", "reason", "template")}
    packages = me.form.get("packages", "")
    out["packages"] = packages.strip() if isinstance(packages, str) else ""
    return out


def _parse(model: type[B], data: dict[str, Any]) -> B:
    """The API's model; its first problem named by the form's field (``packages: package
    2 seats: ...`` rather than ``settings.packages.1.seats``)."""
    try:
        return parse(model, data)
    except OperatorError as exc:
        where, sep, why = str(exc).partition(": ")
        parts = where.split(".")
        if parts[0] in ("settings", "changes") and len(parts) > 1:
            parts = parts[1:]
        if parts[0] == "packages" and len(parts) > 1 and parts[1].isdigit():
            where = f"packages: package {int(parts[1]) + 1} {'.'.join(parts[2:])}".rstrip()
        else:
            where = ".".join(parts)
        raise OperatorError(f"{where}{sep}{why}") from None


async def _pending(me: Viewer) -> dict[str, int]:
    """Tournament reference -> the settings change waiting for a second director."""
    out: dict[str, int] = {}
    for pending in await service.list_pending(me.session):
        if pending.kind == P.TOURNAMENT_SETTINGS.value:
            ref = pending.payload_dict().get("tournament")
            out[str(ref)] = pending.id
    return out


async def _page(
    request: Request,
    me: Viewer,
    *,
    edit: str = "",
    copy: str = "",
    status: int = 200,
    error: str = "",
    posted: dict[str, str] | None = None,
) -> Response:
    session = me.session
    tournaments = list((await session.scalars(select(Tournament).order_by(Tournament.id))).all())
    shown: Tournament | None = None
    template: Tournament | None = None
    current: dict[str, str] = {}
    for ref, role in ((edit, "edit"), (copy, "copy")):
        if not ref:
            continue
        try:
            found = await find_tournament(session, ref)
        except OperatorError as exc:
            error = error or f"{role}: {exc}"
            continue
        if role == "edit":
            shown = found
            current = tf.values_of(await load_settings(session, found))
        else:
            template = found
    start = tf.values_of(TournamentSettings())
    if template is not None:
        start = tf.values_of(await load_settings(session, template))
    pages = console_of(request).pages
    return pages.render(
        request, "tournaments.html", me, status=status, active="tournaments", error=error,
        tournaments=tournaments, shown=shown, current=current, source=template,
        new=posted if posted is not None and not edit else start,
        changed=posted if posted is not None and edit else current,
        fields=tf.FIELDS, pending=await _pending(me), zone_name=pages.zone.key,
    )  # fmt: skip


@router.get("/tournaments", response_class=HTMLResponse)
async def tournaments(
    request: Request, edit: str = "", copy: str = "", me: Viewer = viewer(P.TOURNAMENT_READ)
) -> Response:
    return await _page(request, me, edit=edit[:100], copy=copy[:100])


@router.post("/tournaments/create")
async def create(request: Request, me: Viewer = viewer(P.TOURNAMENT_CREATE)) -> Response:
    form = _form(me)

    async def work() -> dict[str, Any]:
        zone = console_of(request).pages.zone
        settings = tf.settings_body(form)
        body = _parse(
            TournamentIn,
            {
                "name": form["name"],
                "settings": settings,
                **{key: tf.moment(form, key, zone) for key in tf.PERIOD if form.get(key)},
            },
        )
        try:
            return await actions.perform(api_of(request), me, run_create, body)
        except OperatorError as exc:
            raise OperatorError(tf.named(exc, settings)) from None

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(
            request, me, copy=form["template"], status=422, error=out.error, posted=form
        )
    made = out.value
    return done(
        f"{PATH}?{urlencode({'edit': made['id']})}",
        f"tournament {made['name']} created (no. {made['id']})",
    )


@router.post("/tournaments/{key}/settings")
async def change(
    request: Request, key: Key, me: Viewer = viewer(P.TOURNAMENT_SETTINGS)
) -> Response:
    form = _form(me)

    async def work() -> tuple[int, list[str]]:
        tournament = await find_tournament(me.session, key)
        before = (await load_settings(me.session, tournament)).to_json()
        if not form["reason"]:
            raise OperatorError("reason: say why (it is in the record of the decision, rule 23)")
        given = _parse(SettingsChange, {
            "tournament": str(tournament.id), "changes": tf.settings_body(form),
            "reason": form["reason"],
        }).changes.changes()  # fmt: skip
        changes = {k: v for k, v in given.items() if before.get(k) != v}
        if not changes:
            raise OperatorError("settings: no setting differs from the tournament's")
        order = _parse(
            SettingsChange,
            {"tournament": str(tournament.id), "changes": changes, "reason": form["reason"]},
        )
        try:
            pending = await actions.request(api_of(request), me, P.TOURNAMENT_SETTINGS, order)
        except ApiError as exc:
            raise OperatorError(str(exc.detail)) from None
        except OperatorError as exc:
            raise OperatorError(tf.named(exc, changes)) from None
        return pending.pending, sorted(changes)

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, edit=str(key), status=422, error=out.error, posted=form)
    pending, keys = out.value
    return done(
        f"{PATH}?{urlencode({'edit': key})}",
        f"change of {', '.join(keys)} asked (action {pending}): it waits for a second "
        "director to approve it on Approvals",
    )
