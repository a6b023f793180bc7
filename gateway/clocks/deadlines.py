"""The rules a back-dated write must still keep at the real time.

A back-dated write (:mod:`gateway.clocks.policy`) is the record of something that
happened earlier, keyed late.  It may not be a way round a deadline that has passed by
the time it is keyed.  The deadlines enforced here, each checked against the *real*
time when the write is back-dated (a training database skips them, as it skips every
clock check):

* T11b — no late entries: a registration for a heat that has started by the real time;
* the tournament's sale window — an entry sale once the qualifying period has ended
  (``qualifying_ends_at``) by the real time.

Super 9's own (S9-6b sales, S9-6c hand-in) are in :mod:`gateway.super9.deadlines`, on
:func:`applies` and :func:`~gateway.clocks.policy.refuse_at_real_time`: the clocks know
no Super 9.  Everything else the services check on the keyed time as on any time.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.clocks.policy import WriteTime, refuse_at_real_time
from storage.tournament import Heat, Tournament


def applies(write: WriteTime) -> bool:
    """A deadline is checked at the real time: the write is back-dated and not training."""
    return write.backdated and not write.training


async def registration(session: AsyncSession, heat_id: int, write: WriteTime) -> None:
    """T11b at the real time: the heat must not have started."""
    if not applies(write):
        return
    heat = await session.get(Heat, heat_id)
    if heat is not None and write.real >= heat.scheduled_start:
        raise refuse_at_real_time(
            write,
            "rule 11",
            f"heat {heat_id} had started ({heat.scheduled_start.isoformat(timespec='minutes')}); "
            "late entries are not accepted",
        )


def entry_sale(tournament: Tournament, write: WriteTime) -> None:
    """The tournament's sale window at the real time: the qualifying period is open."""
    ends = tournament.qualifying_ends_at
    if applies(write) and ends is not None and write.real >= ends:
        raise refuse_at_real_time(
            write,
            "sale window",
            f"the qualifying period of {tournament.name} had ended "
            f"({ends.isoformat(timespec='minutes')}); entries are no longer sold",
        )

