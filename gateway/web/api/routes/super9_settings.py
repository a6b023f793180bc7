"""The Super 9 settings (read, and changed by the Promotion Director with a reason, as
``reelgate super9 settings|set``) and the state of a session's wheel feed."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.errors import OperatorError
from gateway.super9.desk.wheel_status import wheel_status
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.models import INT32
from gateway.web.api.routes import needs
from gateway.web.api.super9_desk import desk_in
from gateway.web.api.super9_settings_models import (
    Super9SettingsIn,
    Super9SettingsOut,
    WheelStatusOut,
)

router = APIRouter(prefix="/super9", tags=["super9"])
Key = Annotated[int, Path(ge=1, le=INT32)]


@router.get("/settings", openapi_extra=needs(P.SUPER9_READ))
async def settings(me: Caller = who(P.SUPER9_READ)) -> Super9SettingsOut:
    current = await (await desk_in(me.session)).settings()
    return Super9SettingsOut(**current.to_json())


@router.patch("/settings", openapi_extra=needs(P.SUPER9_SETTINGS))
async def change_settings(
    request: Request, body: Super9SettingsIn, me: Principal = who(P.SUPER9_SETTINGS)
) -> Super9SettingsOut:
    """The changed settings take effect for sessions opened after (an open session keeps
    the values it was opened with); the audit log keeps before and after."""
    changes = body.changes.model_dump(exclude_none=True)
    if not changes:
        raise OperatorError("changes: name at least one setting to change")

    async def run(
        session: AsyncSession, b: Super9SettingsIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        desk = await desk_in(session)
        new = await desk.change_settings(changes, actor=actor, reason=b.reason, now=now)
        return new.to_json()

    return Super9SettingsOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/sessions/{key}/wheel", openapi_extra=needs(P.SUPER9_READ))
async def wheel(key: Key, me: Caller = who(P.SUPER9_READ)) -> WheelStatusOut:
    """Whether the session takes wheel results now and the feed's last posted result."""
    return WheelStatusOut(**asdict(await wheel_status(me.session, key)))
