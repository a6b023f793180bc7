"""Super 9's deadlines a back-dated write must still keep at the real time
(:mod:`gateway.clocks.deadlines` holds the tournament's; a training database skips them):

* S9-6b — sales: a sale whose session at the real time differs from the one at the keyed
  time (sales for that session had closed, or had not yet opened);
* S9-6c — hand-in: a hand-in whose session at the real time differs from the one at the
  keyed time (past the cut-off, the ticket is for the next session only).
"""

from __future__ import annotations

from datetime import datetime

from gateway.clocks.deadlines import applies
from gateway.clocks.policy import WriteTime, refuse_at_real_time
from gateway.super9.rules.calendar import SessionCalendar


def super9_sale(calendar: SessionCalendar, write: WriteTime) -> None:
    """S9-6b at the real time: the sale would go to the same session."""
    if not applies(write):
        return
    keyed, real = calendar.sale_session(write.at), calendar.sale_session(write.real)
    if keyed != real:
        now = f"sales are for {real.isoformat(timespec='minutes')}" if real else "sales are closed"
        raise refuse_at_real_time(write, "rule 6", now)


def super9_hand_in(calendar: SessionCalendar, sold_for: datetime, write: WriteTime) -> None:
    """S9-6c at the real time: the hand-in would enter the same session."""
    if not applies(write):
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
