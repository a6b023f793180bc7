"""The audit log, read-only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from gateway.accounts.roles import Permission as P
from gateway.records.verify_runs import verify_and_record
from gateway.web.api.auth import Caller, database_url, who
from gateway.web.api.errors import ApiError
from gateway.web.api.models import REF_PATTERN, AuditRow, AuditVerified
from gateway.web.api.routes import needs
from storage.audit import AuditEntry

router = APIRouter(tags=["audit"])


@router.get("/audit", openapi_extra=needs(P.AUDIT_READ))
async def read_audit(
    request: Request,
    subject: Annotated[str | None, Query(pattern=REF_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    me: Caller = who(P.AUDIT_READ),
) -> list[AuditRow]:
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if subject is not None:
        query = query.where(AuditEntry.subject == subject)
    session = me.session
    rows = (await session.scalars(query)).all()
    return [
        AuditRow(
            id=r.id,
            at=r.at,
            actor=r.actor,
            action=r.action,
            subject=r.subject,
            reason=r.reason,
            details=r.details_dict(),
        )
        for r in reversed(rows)
    ]


@router.post("/audit/verify", openapi_extra=needs(P.AUDIT_READ))
async def verify_audit(request: Request, me: Caller = who(P.AUDIT_READ)) -> AuditVerified:
    """Verify the chain now, as ``reelgate audit verify`` does on the host, and record the
    outcome under the caller (the Tonight board shows the last one)."""
    url = database_url(request)
    if url is None:
        raise ApiError(503, "audit verify: this server has no database bound")
    done = await verify_and_record(me.session, url, me.name)
    r = done.result
    return AuditVerified(
        ok=r.ok,
        headline=done.headline(),
        rows_checked=r.rows_checked,
        last_id=r.last_id,
        checkpoints=r.checkpoints,
        sealed_rows=r.sealed_rows,
        signatures_checked=done.signatures_checked,
        findings=[f.line() for f in r.findings],
        amendments=len(r.amendments),
    )
