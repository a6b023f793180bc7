"""The Cash-up screen (issue 26): a venue day's cash-up, and the signed records of the
day, a tournament or a heat to take away.

The figures are ``GET /cashup``'s body (:func:`gateway.records.cashup.cashup_body`, as
``reelgate cashup`` builds it) behind the same permission, ``cashup.read``, and the
API's own rule of whose figures a role reads (:func:`cashier_scope`: a cashier their
own only).  The desk is this host's name, as over the API.

A signed export is ``reelgate export``'s document (:func:`build_export`) signed with
the key ``reelgate export`` finds (:func:`signing_key_file`), handed out as a zip of
the three files the command writes.  No API route exports, and the command line has no
permission (it runs on the host), so the console asks ``audit.read`` on top of the
screen's ``cashup.read``: only an auditor or a director hold both.  ``audit.read``
because an export is a signed record of the audit trail; ``cashup.read`` because a
day's export holds every cashier's figures, which a cashier may not read.  An export
is a read: like the command, it writes no audit row."""

from __future__ import annotations

import io
import os
import socket
import zipfile
from datetime import date
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import select

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.records.cashup import cashup_body, day_window
from gateway.records.chain import signing_key_file
from gateway.records.document import ExportContext
from gateway.records.exporter import build_export, export_files, file_stem
from gateway.records.keys import RecordKeyError, load_signing_key
from gateway.super9.venue import venue_zone
from gateway.web.api.auth import api_of, database_url
from gateway.web.api.errors import ApiError
from gateway.web.api.models import Day, Name
from gateway.web.api.routes.cashup import cashier_scope
from gateway.web.console.acting import parse
from gateway.web.console.auth import PageForbidden, Viewer, viewer
from gateway.web.console.desk_pages import _tournaments
from gateway.web.console.state import console_of
from storage.tournament import Heat

router = APIRouter()
PATH = "/console/cashup"
NO_KEY = "no signing key is configured on this gateway: signed records are not offered"


class DayIn(BaseModel):
    """The screen's query, checked as ``GET /cashup`` checks its own."""

    date: Day
    cashier: Name | None = None


class ExportIn(BaseModel):
    kind: Literal["cashup", "tournament", "heat"]
    id: str = Field(min_length=1, max_length=100)


def _today(request: Request) -> date:
    return api_of(request).clock().astimezone(console_of(request).pages.zone).date()


def _key_file(request: Request) -> Path | None:
    """The signing key file this serving process would sign with (or None)."""
    url = database_url(request)
    return None if url is None else signing_key_file(url)


async def _context(request: Request, me: Viewer, day: date, cashier: str | None) -> dict[str, Any]:
    try:
        scope = cashier_scope(me, cashier)
    except ApiError as exc:
        raise PageForbidden(str(exc.detail), me, me.csrf) from None
    zone = await venue_zone(me.session)
    body = await cashup_body(me.session, day, zone=zone, cashier=scope, desk=socket.gethostname())
    context: dict[str, Any] = {"report": body, "exports": me.can(P.AUDIT_READ)}
    if context["exports"]:
        start, end = day_window(day, zone)
        heats = await me.session.scalars(
            select(Heat)
            .where(Heat.scheduled_start >= start, Heat.scheduled_start < end)
            .order_by(Heat.scheduled_start, Heat.id)
        )
        context.update(
            signing=_key_file(request) is not None,
            no_key=NO_KEY,
            tournaments=await _tournaments(me.session),
            heats=list(heats),
        )
    return context


async def _page(
    request: Request, me: Viewer, day: date, cashier: str | None, *, status: int = 200,
    error: str = "",
) -> Response:  # fmt: skip
    context = await _context(request, me, day, cashier)
    return console_of(request).pages.render(
        request, "cashup.html", me, status=status, active="cashup", error=error, day=day,
        previous=date.fromordinal(day.toordinal() - 1), next=date.fromordinal(day.toordinal() + 1),
        cashier=cashier or "", **context,
    )  # fmt: skip


@router.get("/cashup", response_class=HTMLResponse)
async def cashup(
    request: Request,
    day: str = Query("", alias="date"),
    cashier: str = "",
    me: Viewer = viewer(P.CASHUP_READ),
) -> Response:
    try:
        asked = parse(
            DayIn, {"date": day.strip() or _today(request), "cashier": cashier.strip() or None}
        )
    except OperatorError as exc:
        return await _page(request, me, _today(request), None, status=422, error=str(exc))
    return await _page(request, me, asked.date, asked.cashier)


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, data in files.items():
            bundle.writestr(name, data)
    return out.getvalue()


@router.get("/cashup/export")
async def export(
    request: Request, kind: str = "", id: str = "", me: Viewer = viewer(P.CASHUP_READ)
) -> Response:
    if not me.can(P.AUDIT_READ):
        raise PageForbidden(f"role {me.role.value} may not {P.AUDIT_READ.value}", me, me.csrf)
    today = _today(request)
    shown = date.fromisoformat(id) if kind == "cashup" and _is_day(id) else today
    try:
        asked = parse(ExportIn, {"kind": kind, "id": id.strip()})
        key_file = _key_file(request)
        if key_file is None:
            raise OperatorError(NO_KEY)
        try:
            key = load_signing_key(key_file)
        except RecordKeyError as exc:
            raise OperatorError(f"signing key: {exc}") from None
        # The record's venue as ``reelgate export`` names it by default.
        venue = os.environ.get("REELGATE_VENUE") or socket.gethostname()
        ctx = ExportContext(venue, await venue_zone(me.session), api_of(request).clock())
        try:
            document = await build_export(me.session, asked.kind, asked.id, ctx)
        except OperatorError as exc:
            raise OperatorError(f"id: {exc}") from None
    except OperatorError as exc:
        return await _page(request, me, shown, None, status=422, error=str(exc))
    return Response(
        _zip(export_files(document, key)),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{file_stem(document)}.zip"',
            "Cache-Control": "no-store",
        },
    )


def _is_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return 1900 <= int(text[:4]) <= 2200
