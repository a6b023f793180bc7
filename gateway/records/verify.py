"""``audit verify`` as a regulator runs it: the chain, the checkpoints, the sealed
results (storage.audit_verify), then the standings at every cut.

Each ``stage.close`` row chains the stage's standings when its last heat closed; each
``stage.amend`` row (:mod:`gateway.tournament.services.amendments`) chains them again
after a change the rules allow once the cut is sealed (a T23 manual score, a T10/T21b
added heat, a T20/T21 restart), naming the change.  Two checks:

* **Cut to cut.**  Between one chained cut and the next, only the entries the amendment
  names, and the entries seated in a heat the earlier cut listed as still open, may
  change credits, appear or disappear (and a disqualified entry may drop out).  Anything
  else moved without a record.
* **Latest cut to today.**  The standings are recomputed from today's sealed facts
  (scores, disqualifications, card draws, through the same ranking the desk uses) as of
  the latest cut; an entry whose credits differ from it, that was ranked there and no
  longer is, or that is ranked now but was not, is named — unless it is seated in a heat
  that cut listed as open (an added or restarted heat still to score).

The amendments are listed in the result ("intact, N amendments").  (A card draw made
after the close may still reorder tied places; places are not compared, credits and
membership are.)  A stage whose cuts cannot be recomputed (settings edited in the database
so that they no longer load) is named, and the next one checked.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from itertools import pairwise

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.amendments import CutRecord, cut_records
from gateway.tournament.services.people import disqualified_sets
from gateway.tournament.services.standings import stage_standings
from storage import audit_verify
from storage.audit import AuditCheckpoint, Finding, VerifyResult
from storage.audit_verify import CheckSignature
from storage.tournament import Seat


async def verify(session: AsyncSession, *, check_signature: CheckSignature | None) -> VerifyResult:
    result = await audit_verify.verify(session, check_signature=check_signature)
    if result.keyed_from is not None:
        found, listed = await standings_at_cuts(session)
        result.findings.extend(found)
        result.amendments = listed
        result.ok = result.ok and not found
    return result


def _label(cut: CutRecord) -> str:
    return f"tournament {cut.tournament_id} {cut.stage.value} cut (audit row {cut.audit_id})"


def _differences(
    before: dict[int, int],
    after: dict[int, int],
    allowed: Collection[int],
    gone_ok: Collection[int],
) -> Iterable[str]:
    """What changed from ``before`` to ``after`` outside ``allowed``, one line each."""
    for entry_id, credits in sorted(before.items()):
        if entry_id in allowed:
            continue
        if entry_id not in after:
            if entry_id not in gone_ok:
                yield f"entry {entry_id} no longer ranked"
        elif after[entry_id] != credits:
            yield f"entry {entry_id}: {after[entry_id]} credits now, {credits} at the cut"
    for entry_id in sorted(set(after) - set(before) - set(allowed)):
        yield f"entry {entry_id} ranked, not at the cut"


async def _seated_in(session: AsyncSession, heats: Collection[int]) -> set[int]:
    if not heats:
        return set()
    rows = await session.execute(select(Seat.entry_id).where(Seat.heat_id.in_(list(heats))))
    return set(rows.scalars())


async def _checkpoint_after(session: AsyncSession, audit_id: int) -> int | None:
    """The signed checkpoint that seals an audit row: the first at or after it."""
    found = await session.scalar(
        select(AuditCheckpoint.id)
        .where(AuditCheckpoint.position >= audit_id)
        .order_by(AuditCheckpoint.position, AuditCheckpoint.id)
        .limit(1)
    )
    return None if found is None else int(found)


async def standings_at_cuts(session: AsyncSession) -> tuple[list[Finding], list[dict[str, object]]]:
    """Findings at the cuts, and the amendments listed (oldest first)."""
    found: list[Finding] = []
    listed: list[dict[str, object]] = []
    for (tournament_id, stage), cuts in sorted(
        (await cut_records(session)).items(), key=lambda kv: (kv[0][0], kv[0][1].value)
    ):
        try:
            stage_found, stage_listed = await _one_stage(session, tournament_id, stage, cuts)
        except DBAPIError:
            raise  # the database itself failed: nothing more can be verified
        except Exception as exc:  # e.g. edited settings no longer load: named, and on
            where = f"tournament {tournament_id} {stage.value} cut (audit row {cuts[-1].audit_id})"
            found.append(Finding("standings", where, f"cannot be recomputed: {exc}"))
            continue
        found.extend(stage_found)
        listed.extend(stage_listed)
    return found, listed


async def _one_stage(
    session: AsyncSession, tournament_id: int, stage: Stage, cuts: list[CutRecord]
) -> tuple[list[Finding], list[dict[str, object]]]:
    """One stage's chained cuts, each against the one before, the latest against today."""
    found: list[Finding] = []
    listed: list[dict[str, object]] = []
    _, bad_entries = await disqualified_sets(session, tournament_id)
    for before, cut in pairwise(cuts):
        allowed = set(cut.affected) | await _seated_in(session, before.open_heats)
        for problem in _differences(before.standings, cut.standings, allowed, bad_entries):
            since = f"{problem} since audit row {before.audit_id}"
            found.append(Finding("standings", _label(cut), since))
    for cut in cuts:
        if cut.is_amendment:
            entry = cut.listing()
            entry["checkpoint"] = await _checkpoint_after(session, cut.audit_id)
            listed.append(entry)
    latest = cuts[-1]
    now = await stage_standings(session, tournament_id, stage, as_of=latest.at)
    current = {line.entry_id: line.credits for line in now.standings.lines}
    still_open = await _seated_in(session, latest.open_heats)
    for problem in _differences(latest.standings, current, still_open, bad_entries):
        found.append(Finding("standings", _label(latest), problem))
    return found, listed
