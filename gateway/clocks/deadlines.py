"""The rules a back-dated write must still keep at the real time.

A back-dated write (:mod:`gateway.clocks.policy`) is the record of something that
happened earlier, keyed late.  It may not be a way round a deadline that has passed by
the time it is keyed.  The deadlines enforced here, each checked against the *real*
time when the write is back-dated (a training database skips them, as it skips every
clock check):

* T11b — no late entries: a registration for a heat that has started by the real time;
* the tournament's sale window — an entry sale once the qualifying period has ended
  (``qualifying_ends_at``) by the real time;
* S9-6b — Super 9 sales: a sale whose session at the real time differs from the one at
  the keyed time (sales for that session had closed, or had not yet opened);
* S9-6c — Super 9 hand-in: a hand-in whose session at the real time differs from the
  one at the keyed time (past the cut-off, the ticket is for the next session only).

Everything else the services check on the keyed time as on any time.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.clocks.policy import WriteTime, refuse_at_real_time
from gateway.super9.rules.calendar import SessionCalendar
from storage.tournament import Heat, Tournament


def _applies(write: WriteTime) -> bool:
    return write.backdated and not write.training


async def registration(session: AsyncSession, heat_id: int, write: WriteTime) -> None:
    """T11b at the real time: the heat must not have started."""
    if not _applies(write):
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
    if _applies(write) and ends is not None and write.real >= ends:
        raise refuse_at_real_time(
            write,
            "sale window",
            f"the qualifying period of {tournament.name} had ended "
            f"({ends.isoformat(timespec='minutes')}); entries are no longer sold",
        )


def super9_sale(calendar: SessionCalendar, write: WriteTime) -> None:
    """S9-6b at the real time: the sale would go to the same session."""
    if not _applies(write):
        return
    keyed, real = calendar.sale_session(write.at), calendar.sale_session(write.real)
    if keyed != real:
        now = f"sales are for {real.isoformat(timespec='minutes')}" if real else "sales are closed"
        raise refuse_at_real_time(write, "rule 6", now)


def super9_hand_in(calendar: SessionCalendar, sold_for: datetime, write: WriteTime) -> None:
    """S9-6c at the real time: the hand-in would enter the same session."""
    if not _applies(write):
        return
    local = sold_for.astimezone(calendar.tz)
    keyed = calendar.hand_in_session(write.at, local)
    real = calendar.hand_in_session(write.real, local)
    if keyed != real:
        now = (
            f"the ticket is for the session at {real.isoformat(timespec='minutes')}"
            if real
            else "the hand-in cut-off had passed"
        )
        raise refuse_at_real_time(write, "rule 6", now)
