"""``audit verify`` as a regulator runs it: the chain, the checkpoints, the sealed
results (storage.audit_verify), then the standings at every cut.

Each ``stage.close`` row chains the stage's standings when its last heat closed.  They
are recomputed here from today's sealed facts (scores, disqualifications, card draws,
through the same ranking the desk uses): an entry whose credits differ from the chained
cut, that was ranked at the cut and no longer is, or that is ranked now but was not, is
named.  (A card draw made after the close may still reorder tied places; credits and
membership cannot change once the stage is closed, except by a recorded
disqualification, which is itself sealed.)  A cut that cannot be recomputed (settings
edited in the database so that they no longer load) is named, and the next one checked.
"""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.people import disqualified_sets
from gateway.tournament.services.stage_close import STAGE_CLOSE_ACTION
from gateway.tournament.services.standings import stage_standings
from storage import audit
from storage.audit import AuditEntry, Finding, VerifyResult
from storage.audit_verify import CheckSignature


async def verify(session: AsyncSession, *, check_signature: CheckSignature | None) -> VerifyResult:
    result = await audit.verify(session, check_signature=check_signature)
    if result.keyed_from is not None:
        found = await standings_at_cuts(session)
        result.findings.extend(found)
        result.ok = result.ok and not found
    return result


async def standings_at_cuts(session: AsyncSession) -> list[Finding]:
    rows = (
        await session.execute(
            select(AuditEntry.id, AuditEntry.subject, AuditEntry.details, AuditEntry.at)
            .where(AuditEntry.action == STAGE_CLOSE_ACTION)
            .order_by(AuditEntry.id)
        )
    ).all()
    found: list[Finding] = []
    for audit_id, subject, details, at in rows:
        try:
            found.extend(await _one_cut(session, audit_id, subject, details, at))
        except DBAPIError:
            raise  # the database itself failed: nothing more can be verified
        except Exception as exc:  # e.g. edited settings no longer load
            found.append(
                Finding("standings", f"cut at audit row {audit_id}", f"cannot be recomputed: {exc}")
            )
    return found


async def _one_cut(
    session: AsyncSession, audit_id: int, subject: str, details: str, at: datetime
) -> list[Finding]:
    found: list[Finding] = []
    data = json.loads(details)
    tournament_id = int(subject.split(":", 1)[1])
    stage = Stage(data["stage"])
    chained = {int(e): int(c) for _place, e, c in data.get("standings", [])}
    now = await stage_standings(session, tournament_id, stage, as_of=at)
    current = {line.entry_id: line.credits for line in now.standings.lines}
    _, bad_entries = await disqualified_sets(session, tournament_id)
    label = f"tournament {tournament_id} {stage.value} cut (audit row {audit_id})"
    for entry_id, credits in sorted(chained.items()):
        if entry_id not in current:
            if entry_id not in bad_entries:
                found.append(Finding("standings", label, f"entry {entry_id} no longer ranked"))
        elif current[entry_id] != credits:
            found.append(
                Finding(
                    "standings",
                    label,
                    f"entry {entry_id}: {current[entry_id]} credits now, {credits} at the cut",
                )
            )
    for entry_id in sorted(set(current) - set(chained)):
        found.append(Finding("standings", label, f"entry {entry_id} ranked, not at the cut"))
    return found
