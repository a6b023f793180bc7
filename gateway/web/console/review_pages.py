"""Standings with the qualifying cut and the ties still to draw (T12–T14, T19); the
dual-control queue, where a second account approves or rejects a pending action
(:mod:`gateway.accounts.dual`, the API's runners); and the decisions and audit trail."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.records.verify_runs import last_verification, verify_and_record
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.amendments import amended_entries
from gateway.tournament.services.setup import record_decision
from gateway.web.api import actions
from gateway.web.api.auth import api_of, database_url
from gateway.web.api.errors import ApiError
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import _chosen, _tournaments
from gateway.web.console.state import console_of
from storage.audit import AuditEntry

router = APIRouter()
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]


@router.get("/standings", response_class=HTMLResponse)
async def standings(
    request: Request, t: str = "", stage: str = "qualifying", me: Viewer = viewer(P.HEAT_READ)
) -> Response:
    tournament = await _chosen(me.session, t)
    chosen = Stage(stage) if stage in {s.value for s in Stage} else Stage.QUALIFYING
    found = await svc.stage_standings(me.session, tournament.id, chosen) if tournament else None
    ties = found.ties_to_draw if found else ()
    tied_entries = {e for tie in ties for e in tie.entry_ids}
    amended = await amended_entries(me.session, tournament.id, chosen) if tournament else set()
    return console_of(request).pages.render(
        request, "standings.html", me, active="standings", tournament=tournament,
        tournaments=await _tournaments(me.session), found=found, stage=chosen.value,
        stages=[s.value for s in Stage], ties=ties, tied_entries=tied_entries, amended=amended,
        has_feed=console_of(request).feed is not None,
        rendered_at=datetime.now(UTC).isoformat(timespec="milliseconds"),  # newer: reload
    )  # fmt: skip


@router.get("/pending", response_class=HTMLResponse)
async def pending(request: Request, me: Viewer = viewer(None)) -> Response:
    rows = await service.list_pending(me.session)
    names = {u.id: u.name for u in await service.list_users(me.session)}
    return console_of(request).pages.render(
        request, "pending.html", me, active="pending", rows=rows, names=names
    )


@router.post("/pending/{key}/{verdict}")
async def decide(request: Request, key: Key, verdict: str, me: Viewer = viewer(None)) -> Response:
    async def work() -> str:
        if verdict not in ("approve", "reject"):
            raise OperatorError("verdict: approve or reject")
        try:
            if verdict == "approve":
                decision = await actions.approve(api_of(request), me, key)
            else:
                decision = await actions.reject(api_of(request), me, key)
        except ApiError as exc:
            raise OperatorError(str(exc.detail)) from None
        return decision.status

    out = await attempt(me, work)
    if not out.ok:
        rows = await service.list_pending(me.session)
        names = {u.id: u.name for u in await service.list_users(me.session)}
        return console_of(request).pages.render(
            request, "pending.html", me, status=422, active="pending", rows=rows, names=names,
            error=out.error,
        )  # fmt: skip
    return done("/console/pending", f"action {key}: {out.value} by {me.name}")


@router.get("/audit", response_class=HTMLResponse)
async def audit(request: Request, subject: str = "", me: Viewer = viewer(P.AUDIT_READ)) -> Response:
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(200)
    if subject:
        query = query.where(AuditEntry.subject == subject[:200])
    rows = (await me.session.scalars(query)).all()
    return console_of(request).pages.render(
        request, "audit.html", me, active="audit", rows=rows, subject=subject,
        tournaments=await _tournaments(me.session), can_decide=me.can(P.TOURNAMENT_SETTINGS),
        verified=await last_verification(me.session),
    )  # fmt: skip


@router.post("/audit/verify")
async def verify_chain(request: Request, me: Viewer = viewer(P.AUDIT_READ)) -> Response:
    """``audit verify`` from the desk: the same checks as ``POST /audit/verify``, the
    outcome recorded under the account and shown on this page and the Tonight board."""
    url = database_url(request)
    if url is None:
        return done("/console/audit", "refused: this server has no database bound")
    outcome = await verify_and_record(me.session, url, me.name)
    return done("/console/audit", outcome.headline())


@router.post("/decisions")
async def decision(request: Request, me: Viewer = viewer(P.TOURNAMENT_SETTINGS)) -> Response:
    async def work() -> None:
        await record_decision(
            me.session, me.field("tournament"), subject=me.field("subject"),
            decision=me.field("decision"), reason=me.field("reason"), actor=me.name,
        )  # fmt: skip

    out = await attempt(me, work)
    if not out.ok:
        return done("/console/audit", f"refused: {out.error}")
    return done("/console/audit", "decision recorded (rule 23)")
