"""A Super 9 write keyed from paper, over the API and in the console: the CLI's ``--now``
(:mod:`gateway.app.commands.super9`) as the body fields ``keyed_at`` and
``keyed_reason``, judged by the same policy (:mod:`gateway.clocks.policy`) against the
server's clock.

* No ``keyed_at``: the write happens now (the server's clock), as every API write.
* Within the policy's skew of now: live.
* Later than that: post-dated, refused.
* Earlier: back-dated — only by a promotion director's account (the CLI's
  ``--director``, here the caller, already authenticated) with ``keyed_reason``, and
  never past the S9-6 cut-offs of the real time (:mod:`gateway.super9.deadlines`).
* A training database takes any keyed time (rehearsals keyed from paper).

The verdict goes into every audit row the write makes (``details.clock``), as at the
host's command line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from gateway.accounts.roles import Role
from gateway.accounts.service import Principal
from gateway.clocks.policy import ClockRefused, Kind, WriteTime, judge, kind_of
from gateway.web.api.auth import Api
from storage import audit

# A back-dated Super 9 write is authorised by the promotion's director (as at the CLI).
BACKDATE_ROLES = frozenset({Role.PROMOTION_DIRECTOR})


def judged(api: Api, me: Principal, keyed: datetime | None, reason: str | None) -> WriteTime:
    """The write's time, or one line naming ``keyed_at`` / ``keyed_reason``."""
    real = api.clock()
    training = bool(api.training)
    director = me.name if me.role in BACKDATE_ROLES else None
    if keyed is not None and not training and kind_of(keyed, real) is Kind.BACKDATED:
        if director is None:
            raise ClockRefused(
                f"keyed_at {keyed.isoformat(timespec='minutes')} is before the real time "
                f"{real.isoformat(timespec='minutes')}: a back-dated write is keyed by a "
                f"promotion director's account (role {me.role.value} may not); nothing saved"
            )
        if not (reason or "").strip():
            raise ClockRefused("keyed_reason: a back-dated write needs a reason (why keyed late)")
    return judge(keyed, real, training=training, reason=reason, director=director,
                 option="keyed_at")  # fmt: skip


@contextmanager
def recorded(write: WriteTime) -> Iterator[WriteTime]:
    """Every audit row written inside the block carries the write's clock facts."""
    facts = write.audit_facts()
    if facts is None:
        yield write
        return
    with audit.annotated(clock=facts):
        yield write
