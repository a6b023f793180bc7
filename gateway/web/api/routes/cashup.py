"""The day's cash-up (read-only): per cashier, reconciled (gateway/records/cashup.py).

Auditors and directors read any cashier's figures; a cashier reads their own only.
The reconciliation always covers the whole day.  ``desk`` labels the report (the desk
is not recorded on the rows); by default it is this API host's name.
"""

from __future__ import annotations

import socket
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Query

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role
from gateway.accounts.service import Principal
from gateway.records.canonical import to_record
from gateway.records.cashup import cashup_body
from gateway.records.training import is_training
from gateway.super9.venue import venue_zone
from gateway.web.api.auth import Caller, who
from gateway.web.api.errors import ApiError
from gateway.web.api.models import Day
from gateway.web.api.routes import needs

router = APIRouter(tags=["cash-up"])


def cashier_scope(me: Principal, cashier: str | None) -> str | None:
    """Whose figures ``me`` reads: a cashier their own only (another's: 403), anyone else
    the cashier asked for, or all.  The console's Cash-up screen asks the same."""
    if me.role is Role.CASHIER:
        if cashier is not None and cashier.strip().casefold() != me.name.casefold():
            raise ApiError(403, "cashier: a cashier reads their own cash-up only")
        return me.name
    return cashier


@router.get("/cashup", openapi_extra=needs(P.CASHUP_READ))
async def read_cashup(
    # A day the database's timestamps can hold (year 1 made the day's bounds overflow: 500).
    day: Annotated[Day, Query(alias="date", description="venue-local day, YYYY-MM-DD")],
    cashier: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
    desk: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    me: Caller = who(P.CASHUP_READ),
) -> dict[str, Any]:
    cashier = cashier_scope(me, cashier)
    zone = await venue_zone(me.session)
    body = await cashup_body(
        me.session, day, zone=zone, cashier=cashier, desk=desk or socket.gethostname()
    )
    report: dict[str, Any] = to_record(body, ZoneInfo(body["zone"]))
    return {"training": await is_training(me.session), **report}
