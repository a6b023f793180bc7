"""Keyed times for writes: live, back-dated, post-dated — and who may key which.

Theory of operation.  Every write has a *real* time (the host's clock when the command
runs) and, when the operator keys one (``--now``), a *keyed* time: when the thing
happened on paper.  Reads may key any time (a report as it stood last week).  For a
write the difference ``real - keyed`` decides:

* within :data:`SKEW` either way it is the same moment (two machines' clocks differ by a
  little; NTP keeps a casino's hosts well inside two minutes, and a desk keying "now"
  by hand rounds to the minute): a *live* write, nothing more is asked;
* keyed later than that is a *post-dated* write: refused — nobody records today what
  will happen next week;
* keyed earlier is a *back-dated* write: allowed only to an authenticated director with
  a reason, and refused where a rule the real time would have applied (a deadline that
  has passed by now: T11b no late entries, S9-6 sales and hand-in cut-offs, the
  qualifying period's end for sales) would break — see :mod:`gateway.clocks.deadlines`.

A *training* database (``reelgate db init --training``) takes any keyed time: whole
seasons are rehearsed on it.  Either way the keyed and the real time go into the audit
rows the write makes (:func:`audit_facts`).  Pure: no database, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from gateway.errors import OperatorError

SKEW = timedelta(minutes=2)


class Kind(StrEnum):
    LIVE = "live"
    BACKDATED = "back-dated"
    POSTDATED = "post-dated"


def kind_of(keyed: datetime, real: datetime) -> Kind:
    if keyed - real > SKEW:
        return Kind.POSTDATED
    if real - keyed > SKEW:
        return Kind.BACKDATED
    return Kind.LIVE


class ClockRefused(OperatorError):
    """A keyed time this write may not have; the message says why."""


@dataclass(frozen=True)
class WriteTime:
    """The time a write takes effect (``at``) and what is known about it."""

    at: datetime
    real: datetime
    keyed: bool = False
    training: bool = False
    kind: Kind = Kind.LIVE
    reason: str | None = None
    authorised_by: str | None = None

    @property
    def backdated(self) -> bool:
        return self.kind is Kind.BACKDATED

    def audit_facts(self) -> dict[str, Any] | None:
        """What every audit row of the write carries about its clock (None: live,
        unkeyed — the row's own ``at`` is the real time)."""
        if not self.keyed:
            return None
        facts: dict[str, Any] = {
            "keyed_at": self.at.isoformat(),
            "real_at": self.real.isoformat(),
            "kind": self.kind.value,
        }
        if self.training:
            facts["training"] = True
        if self.reason is not None:
            facts["reason"] = self.reason
        if self.authorised_by is not None:
            facts["authorised_by"] = self.authorised_by
        return facts


def judge(
    keyed: datetime | None,
    real: datetime,
    *,
    training: bool,
    reason: str | None = None,
    director: str | None = None,
    option: str = "--now",
) -> WriteTime:
    """The write's time, or :class:`ClockRefused` naming ``option``.  ``director`` is the
    name of an account already authenticated with the director's role (None: nobody)."""
    if keyed is None:
        return WriteTime(real, real, training=training)
    kind = kind_of(keyed, real)
    why = (reason or "").strip() or None
    if training:
        return WriteTime(keyed, real, True, True, kind, why, director)
    if kind is Kind.POSTDATED:
        raise ClockRefused(
            f"{option} {keyed.isoformat()} is {_span(keyed - real)} after the real time "
            f"{real.isoformat(timespec='seconds')}: post-dated writes are refused"
        )
    if kind is Kind.BACKDATED:
        if director is None:
            raise ClockRefused(
                f"{option} {keyed.isoformat()} is {_span(real - keyed)} before the real time: "
                "a back-dated write needs a director (--director NAME, password asked) "
                "and --reason"
            )
        if why is None:
            raise ClockRefused(
                f"{option}: a back-dated write needs --reason (why it is keyed late)"
            )
    return WriteTime(keyed, real, True, False, kind, why, director)


def _span(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h" if hours < 48 else f"{hours // 24} days"


def refuse_at_real_time(write: WriteTime, rule: str, message: str) -> ClockRefused:
    """The one line for a back-dated write that the real time's rule refuses."""
    return ClockRefused(
        f"{rule}: back-dated to {write.at.isoformat(timespec='minutes')}, but at the real time "
        f"{write.real.isoformat(timespec='minutes')} {message}"
    )
