"""The chaos suite's invariants, checked on the database as it is after each heat.

* each seat's score is stored exactly once — one journal ``heat_result`` per (run,
  machine), one tournament ``Score`` per seat — and EQUALS the machine's own tournament
  credits as it left tournament mode (taken on the machine's side: ``bank_host exits``);
* no heat played twice without a recorded T20 restart (runs that reached RUNNING, less
  one, never exceed the RESTARTED runs before the last);
* no machine left locked or in tournament mode once its link is back (``bank_host state``);
* the audit chain intact (:func:`storage.audit_verify.verify`);
* no tournament effect pending (:func:`storage.effects.pending`), every run settled.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.heats.scheduler import DUE
from gateway.tournament.services.seating import heat_seats
from storage import audit_verify, effects
from storage.journal import HeatResult, HeatRun, HeatRunMachine, HeatRunStep, MachineState, RunState
from storage.tournament import Heat, Score

Sessions = async_sessionmaker[AsyncSession]


@dataclass(slots=True)
class Findings:
    lost: int = 0
    doubled: int = 0
    wrong: int = 0
    replayed: int = 0
    stuck: int = 0
    unsettled: int = 0
    pending: int = 0
    audit_broken: int = 0
    malfunctions: int = 0
    scored: int = 0
    final_state: str = ""
    problems: list[str] = field(default_factory=list)

    def losses(self) -> int:
        return (self.lost + self.doubled + self.wrong + self.replayed + self.stuck
                + self.unsettled + self.pending + self.audit_broken)  # fmt: skip


async def next_run_id(sessions: Sessions) -> int:
    async with sessions() as s:
        return int(await s.scalar(select(func.max(HeatRun.id))) or 0) + 1


async def _runs(s: AsyncSession, heat_id: int | None, first_run: int) -> list[HeatRun]:
    """The runs of this chaos heat: the tournament heat's, or the test heat's (new runs)."""
    query = select(HeatRun).order_by(HeatRun.id)
    if heat_id is not None:
        query = query.where(HeatRun.heat_id == heat_id)
    else:
        query = query.where(HeatRun.heat_id.is_(None), HeatRun.id >= first_run)
    return list((await s.scalars(query)).all())


async def open_work(sessions: Sessions, heat_id: int | None, first_run: int) -> str:
    """What is left to do: ``unsettled`` (a run to recover), ``due`` (a tournament heat
    restarted under T20, to be played again) or ``""``."""
    async with sessions() as s:
        runs = await _runs(s, heat_id, first_run)
        if any(not r.settled for r in runs):
            return "unsettled"
        if heat_id is not None:
            heat = await s.get(Heat, heat_id)
            if heat is not None and heat.status in DUE:
                return "due"
    return ""


async def check(
    sessions: Sessions,
    heat_id: int | None,
    first_run: int,
    exits: dict[str, int],
    machines: list[dict[str, Any]],
) -> Findings:
    f = Findings()
    async with sessions() as s:
        runs = await _runs(s, heat_id, first_run)
        if not runs:
            f.problems.append("no run journaled")
            return f
        await _replays(s, runs, heat_id, f)
        f.unsettled = sum(not r.settled for r in runs)
        f.pending = len(await effects.pending(s))
        verified = await audit_verify.verify(s)
        if not verified.ok:
            f.audit_broken = 1
            f.problems.append(f"audit: {verified.problem}")
        final = runs[-1]
        f.final_state = final.state.value
        results = await _results(s, runs, f)
        if final.state is RunState.CLOSED:
            await _scores(s, final, results, exits, f)
            if heat_id is not None:
                await _tournament_scores(s, heat_id, final.id, results, f)
        elif heat_id is not None and final.state is not RunState.RESTARTED:
            f.problems.append(f"heat ended {final.state.value}")
    for m in machines:
        if m["in_tournament"] or m["play_locked"] or not m["play_enabled"]:
            f.stuck += 1
            f.problems.append(f"stuck: {m}")
    return f


async def _replays(s: AsyncSession, runs: list[HeatRun], heat_id: int | None, f: Findings) -> None:
    """A heat runs again only after a recorded T20 restart; a test heat runs once."""
    ids = [r.id for r in runs]
    played = set(
        (
            await s.scalars(
                select(HeatRunStep.run_id).where(
                    HeatRunStep.run_id.in_(ids), HeatRunStep.state == RunState.RUNNING
                )
            )
        ).all()
    )
    restarted = sum(r.state is RunState.RESTARTED for r in runs[:-1])
    allowed = 1 if heat_id is None else 1 + restarted
    if heat_id is None and len(runs) > 1:
        f.replayed += len(runs) - 1
        f.problems.append(f"test heat journaled {len(runs)} runs")
    elif len(played) > allowed:
        f.replayed += len(played) - allowed
        f.problems.append(f"{len(played)} runs played, {restarted} restarts recorded")
    if heat_id is not None:
        heat = await s.get(Heat, heat_id)
        if heat is not None and heat.restarts > sum(r.state is RunState.RESTARTED for r in runs):
            f.problems.append(f"heat.restarts {heat.restarts} without as many RESTARTED runs")


async def _results(s: AsyncSession, runs: list[HeatRun], f: Findings) -> dict[str, int]:
    """The final run's stored scores by machine; a (run, machine) stored twice is doubled."""
    rows = (
        await s.execute(
            select(HeatResult.run_id, HeatResult.machine_id, HeatResult.score).where(
                HeatResult.run_id.in_([r.id for r in runs])
            )
        )
    ).all()
    counts = Counter((run_id, machine_id) for run_id, machine_id, _ in rows)
    for key, n in counts.items():
        if n > 1:
            f.doubled += n - 1
            f.problems.append(f"heat_result {key} stored {n} times")
    final = runs[-1].id
    return {machine_id: score for run_id, machine_id, score in rows if run_id == final}


async def _malfunctioned(s: AsyncSession, run_id: int) -> set[str]:
    """Machines the run marked malfunctioned (T20/T21): a tournament heat's MALFUNCTION
    effects; a released seat keeps its reason in its note (the state moves on)."""
    found = {
        e.machine_id
        for e in await effects.history(s, run_id)
        if e.kind is effects.EffectKind.MALFUNCTION and e.machine_id is not None
    }
    rows = await s.execute(
        select(HeatRunMachine.machine_id).where(
            HeatRunMachine.run_id == run_id,
            (HeatRunMachine.state == MachineState.MALFUNCTION) | (HeatRunMachine.note != ""),
        )
    )
    return found | {m for (m,) in rows.all()}


async def _scores(
    s: AsyncSession, final: HeatRun, results: dict[str, int], exits: dict[str, int], f: Findings
) -> None:
    """Every seat of a closed run scored (or malfunctioned), equal to the machine's exit."""
    seats = (
        await s.execute(
            select(HeatRunMachine.machine_id, HeatRunMachine.state).where(
                HeatRunMachine.run_id == final.id
            )
        )
    ).all()
    failed = await _malfunctioned(s, final.id)
    for machine_id, state in seats:
        score = results.get(machine_id)
        if score is None and machine_id in failed:
            f.malfunctions += 1
        elif score is None:
            f.lost += 1
            f.problems.append(f"run {final.id} {machine_id} ({state.value}): no score stored")
        elif exits.get(machine_id) != score:
            f.wrong += 1
            f.problems.append(
                f"run {final.id} {machine_id}: stored {score}, machine left with "
                f"{exits.get(machine_id)}"
            )
        else:
            f.scored += 1


async def _tournament_scores(
    s: AsyncSession, heat_id: int, run_id: int, results: dict[str, int], f: Findings
) -> None:
    """T12: one Score per seat, equal to its machine's stored result; none without one."""
    for seat in await heat_seats(s, heat_id):
        rows = (await s.scalars(select(Score).where(Score.seat_id == seat.seat_id))).all()
        want = results.get(seat.machine_id)
        if len(rows) > 1:
            f.doubled += len(rows) - 1
            f.problems.append(f"seat {seat.seat_number}: {len(rows)} scores")
        if want is None:
            if rows:
                f.wrong += 1
                f.problems.append(f"seat {seat.seat_number}: a score without a result")
            continue
        if not rows:
            f.lost += 1
            f.problems.append(
                f"seat {seat.seat_number} ({seat.machine_id}, {seat.status.value}): "
                f"run {run_id} result {want} never reached the tournament"
            )
        elif rows[0].final_credits != want:
            f.wrong += 1
            f.problems.append(f"seat {seat.seat_number}: score {rows[0].final_credits} != {want}")
