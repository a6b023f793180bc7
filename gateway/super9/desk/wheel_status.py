"""Where a session's wheel feed stands, as the stored spins show it: whether the session
takes wheel results now (drawing), the wheel it was opened on, and the last result the
feed posted — so a desk sees a silent feed and turns to rule 29 manual spins."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from storage.super9 import SessionStatus, SpinSource, Super9Session, Super9Spin


@dataclass(frozen=True, slots=True)
class WheelStatus:
    session: int
    status: str  # scheduled | drawing | closed
    taking_results: bool  # drawing: a wheel result now becomes a spin
    wheel_url: str | None
    wheel_spins: int
    manual_spins: int  # rule 29
    voided: int  # rule 18
    last_game: int | None  # the wheel's game number of its last posted result
    last_number: int | None
    last_result_at: datetime | None  # when the feed last posted a result


async def wheel_status(db: AsyncSession, session_id: int) -> WheelStatus:
    row = await db.get(Super9Session, session_id)
    if row is None:
        raise OperatorError(f"session {session_id} does not exist")
    spins = list(
        await db.scalars(
            select(Super9Spin).where(Super9Spin.session_id == session_id).order_by(Super9Spin.seq)
        )
    )
    wheel = [s for s in spins if s.source is SpinSource.WHEEL]
    last = wheel[-1] if wheel else None
    return WheelStatus(
        session=row.id,
        status=row.status.value,
        taking_results=row.status is SessionStatus.DRAWING,
        wheel_url=row.wheel_url,
        wheel_spins=len(wheel),
        manual_spins=sum(1 for s in spins if s.source is SpinSource.MANUAL),
        voided=sum(1 for s in spins if s.voided),
        last_game=None if last is None else last.game_no,
        last_number=None if last is None else last.number,
        last_result_at=None if last is None else last.recorded_at,
    )
