"""The audit log, read-only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from gateway.accounts.roles import Permission as P
from gateway.web.api.auth import Caller, who
from gateway.web.api.models import REF_PATTERN, AuditRow
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
