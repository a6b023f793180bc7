"""A heat close and, with the stage's last heat, the stage close: both signed.

Closing a heat asks for a signed checkpoint of the audit chain (storage.audit).  When
the heat was the last one of its stage still to run, the stage's standings at that
moment — every ranked entry's place and credits — are chained as a ``stage.close`` row
(the standings at the cut, which the verifier recomputes from the sealed scores) and
the checkpoint says so.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.services.common import heat_label, record
from gateway.tournament.services.standings import stage_over, stage_standings
from storage import audit
from storage.tournament import Heat

STAGE_CLOSE_ACTION = "stage.close"


async def close_stage_if_over(
    session: AsyncSession, heat: Heat, *, actor: str, at: datetime
) -> bool:
    """Checkpoint the heat close; chain the standings if it closed the stage."""
    if not await stage_over(session, heat.tournament_id, heat.stage):
        audit.request_checkpoint(session, f"{heat_label(heat)} closed")
        return False
    standings = await stage_standings(session, heat.tournament_id, heat.stage, as_of=at)
    await record(
        session,
        actor,
        STAGE_CLOSE_ACTION,
        f"tournament:{heat.tournament_id}",
        None,
        stage=heat.stage,
        closed_by_heat=heat.id,
        standings=[[line.place, line.entry_id, line.credits] for line in standings.standings.lines],
    )
    audit.request_checkpoint(session, f"{heat_label(heat)} closed; {heat.stage.value} stage closed")
    return True
