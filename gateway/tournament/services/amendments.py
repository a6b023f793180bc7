"""Amendments: a legitimate change to a stage after its cut was sealed.

Theory of operation
-------------------
When a stage's last heat closes, the standings at that moment are chained as a
``stage.close`` row and signed by a checkpoint (:mod:`.stage_close`); ``audit verify``
recomputes them from the sealed scores.  The rules still allow a few changes after that:
a Tournament Director's manual score or correction (T23, under dual control), a heat
added to the stage (T10 for qualifying, T21b for the final stages) and the restart of a
heat that failed (T20, T21).  Each is written, in the change's own transaction, as a
``stage.amend`` row: the stage's standings after the change, what changed (kind, heat,
seat, entry, old and new credits), the reason, the requester and the approver, the
entries the change touches and the stage's heats still open (an added or restarted
heat whose scores are yet to come); and a signed checkpoint is asked for, whose reason
names the change.  The cut is sealed again.

The verifier (:mod:`gateway.records.verify`) then checks each cut against the one
before it — only the entries an amendment names, or seated in a heat the earlier cut
listed as open, may differ — and today's standings against the latest cut.  So a
documented change reads "intact, N amendments" while a score row edited behind the
gateway's back still differs from every chained cut and from its seal.

A change the rules no longer allow — anything that would move the qualifying cut
once the semi-final seats were drawn from it (T14), or the semi-final cut once the
final's were (T17) — is refused in one line naming the rule, before anything is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import heat_label, record
from gateway.tournament.services.stage_close import STAGE_CLOSE_ACTION
from gateway.tournament.services.standings import stage_standings
from storage import audit
from storage.audit import AuditEntry
from storage.tournament import Heat, Seat

AMEND_ACTION = "stage.amend"
CUT_ACTIONS = (STAGE_CLOSE_ACTION, AMEND_ACTION)
_OVER = (HeatStatus.CLOSED, HeatStatus.CANCELLED)
# The stage whose seats are drawn from a stage's cut, and the rule that draws them.
_NEXT = {Stage.QUALIFYING: (Stage.SEMI_FINAL, 14), Stage.SEMI_FINAL: (Stage.FINAL, 17)}


@dataclass(frozen=True, slots=True)
class CutRecord:
    """One chained cut of a stage: its close, or an amendment of it."""

    audit_id: int
    action: str
    at: datetime
    actor: str
    reason: str | None
    tournament_id: int
    stage: Stage
    standings: dict[int, int]  # entry id -> credits
    open_heats: tuple[int, ...]  # heats of the stage whose scores were still to come
    details: dict[str, Any]

    @property
    def is_amendment(self) -> bool:
        return self.action == AMEND_ACTION

    @property
    def affected(self) -> frozenset[int]:
        return frozenset(int(e) for e in self.details.get("entries", ()))

    def listing(self) -> dict[str, Any]:
        """What ``audit verify`` and the exports show of an amendment."""
        return {
            "audit_row": self.audit_id,
            "at": self.at.isoformat(),
            "tournament": self.tournament_id,
            "stage": self.stage.value,
            "kind": self.details.get("kind"),
            "rule": self.details.get("rule"),
            "change": self.details.get("change"),
            "reason": self.reason,
            "requested_by": self.details.get("requested_by", self.actor),
            "approved_by": self.details.get("approved_by"),
        }


def _cut_record(row: Any) -> CutRecord | None:
    audit_id, subject, action, at, actor, reason, details = row
    prefix, _, ref = str(subject).partition(":")
    data = json.loads(details)
    if prefix != "tournament" or not ref.isdigit() or not isinstance(data, dict):
        return None
    try:
        stage = Stage(str(data.get("stage")))
    except ValueError:
        return None
    return CutRecord(
        audit_id=int(audit_id),
        action=str(action),
        at=at,
        actor=str(actor),
        reason=reason,
        tournament_id=int(ref),
        stage=stage,
        standings={int(e): int(c) for _place, e, c in data.get("standings", [])},
        open_heats=tuple(int(h) for h in data.get("open_heats", ())),
        details=data,
    )


def _cut_rows(tournament_id: int | None = None) -> Any:
    query = select(
        AuditEntry.id,
        AuditEntry.subject,
        AuditEntry.action,
        AuditEntry.at,
        AuditEntry.actor,
        AuditEntry.reason,
        AuditEntry.details,
    ).where(AuditEntry.action.in_(CUT_ACTIONS))
    if tournament_id is not None:
        query = query.where(AuditEntry.subject == f"tournament:{tournament_id}")
    return query.order_by(AuditEntry.id)


async def cut_records(
    session: AsyncSession, tournament_id: int | None = None
) -> dict[tuple[int, Stage], list[CutRecord]]:
    """Every chained cut, oldest first, by (tournament, stage)."""
    out: dict[tuple[int, Stage], list[CutRecord]] = {}
    for row in (await session.execute(_cut_rows(tournament_id))).all():
        found = _cut_record(row)
        if found is not None:
            out.setdefault((found.tournament_id, found.stage), []).append(found)
    return out


async def amendments(session: AsyncSession, tournament_id: int, stage: Stage) -> list[CutRecord]:
    """The stage's amendments, oldest first."""
    records = (await cut_records(session, tournament_id)).get((tournament_id, stage), [])
    return [r for r in records if r.is_amendment]


async def amended_entries(session: AsyncSession, tournament_id: int, stage: Stage) -> set[int]:
    """Entries whose score an amendment changed (the "amended" mark of the standings)."""
    return {e for r in await amendments(session, tournament_id, stage) for e in r.affected}


async def cut_sealed(session: AsyncSession, tournament_id: int, stage: Stage) -> bool:
    """Whether the stage's cut has been chained (its last heat closed at least once)."""
    records = await cut_records(session, tournament_id)
    return bool(records.get((tournament_id, stage)))


async def refuse_if_drawn_from(session: AsyncSession, tournament_id: int, stage: Stage) -> None:
    """T14 / T17: once the next stage's seats are drawn from this cut, it stands."""
    following = _NEXT.get(stage)
    if following is None:
        return
    next_stage, rule = following
    drawn = await session.scalar(
        select(func.count())
        .select_from(Seat)
        .join(Heat, Heat.id == Seat.heat_id)
        .where(Heat.tournament_id == tournament_id, Seat.stage == next_stage)
    )
    if drawn:
        raise RuleViolation(
            rule,
            f"the {next_stage.value} seats were drawn from the {stage.value} cut; "
            f"it can no longer change",
        )


async def _open_heats(session: AsyncSession, tournament_id: int, stage: Stage) -> list[int]:
    rows = await session.execute(
        select(Heat.id).where(
            Heat.tournament_id == tournament_id, Heat.stage == stage, Heat.status.not_in(_OVER)
        )
    )
    return sorted(rows.scalars())


async def amend_cut(
    session: AsyncSession,
    heat: Heat,
    *,
    kind: str,
    rule: int | str,  # a sheet clause (10), or a house clause ("W6")
    change: dict[str, Any],
    entries: list[int],
    reason: str,
    actor: str,
    approved_by: str | None,
    at: datetime,
) -> bool:
    """Chain the amended cut of ``heat``'s stage if that cut was sealed; False if not.

    Call after the change is flushed, in its transaction."""
    stage = Stage(heat.stage)
    if not await cut_sealed(session, heat.tournament_id, stage):
        return False
    await session.flush()
    standings = await stage_standings(session, heat.tournament_id, stage, as_of=at)
    await record(
        session,
        actor,
        AMEND_ACTION,
        f"tournament:{heat.tournament_id}",
        reason,
        stage=stage,
        kind=kind,
        rule=rule,
        heat=heat.id,
        change=change,
        entries=sorted(set(entries)),
        requested_by=actor,
        approved_by=approved_by,
        open_heats=await _open_heats(session, heat.tournament_id, stage),
        standings=[[line.place, line.entry_id, line.credits] for line in standings.standings.lines],
    )
    audit.request_checkpoint(
        session, f"{stage.value} cut amended: {kind} ({heat_label(heat)}, rule {rule})"
    )
    return True
