"""Restart after failure: finish what the journal says was under way.

On start the gateway replays its outage spool, then reads every unsettled heat run of
the bank and interrogates each of its machines (a credit-meter read: does it answer?).
Then, per run:

* scheduled / armed — nothing has been played: carry on arming and start the heat;
* running with time left — resume: unlock again (harmless if still unlocked), keep the
  heat clock from the journal, watch and end as usual;
* running past its end — collect, because native machines stopped on their own timer
  (the backstop) — unless a host-timed machine was left unwatched past the end, which
  makes the scores unfair: the whole heat is restarted (T20);
* ending / collecting / closed — lock, collect what is not stored yet, release;
* aborted / restarted — release the machines;
* paused — left paused for the director (machines stay locked by design).

More than half of a run's machines silent at once is a tournament-system failure, not
a machine malfunction: the run is restarted (T20) rather than played short-handed —
the same judgement the runner makes while arming (:mod:`gateway.heats.decisions`).  A
machine silent on its own is malfunctioned (T20/T21) and the heat goes on.

Every recovery first drains the bank's pending tournament effects (a crash between a
step and its drain), and every run it drives drains its own: no path finishes a heat on
the floor without its tournament side.  Scores are stored through the journal's unique
key and reach the tournament through effects applied exactly once, so nothing is lost
or stored twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from structlog.contextvars import bound_contextvars

from gateway.feed import FeedPublisher
from gateway.heats import states
from gateway.heats.decisions import is_system_failure
from gateway.heats.hooks import ProgressSink, TournamentSide, run_fields
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import DriverError
from gateway.machines.links import MachineLink
from storage.effects import EffectIn, EffectKind
from storage.journal import MachineState, RunState, RunView
from storage.journal_ops import SeatsOp, StepOp

S = RunState
_NEEDS_RELEASE = frozenset(MachineState) - {MachineState.RELEASED, MachineState.PENDING}


@dataclass(slots=True)
class Recovery:
    run_id: int
    found_state: RunState
    decision: str  # resume | restart | release | paused
    silent: list[str] = field(default_factory=list)
    in_control_s: float | None = None  # from the start of recovery to floor back in hand
    outcome: HeatOutcome | None = None


async def interrogate(
    links: Mapping[str, MachineLink],
    machines: list[str],
    *,
    within_s: float = 1.5,
    unlock: frozenset[str] = frozenset(),
) -> list[str]:
    """Ask each machine for its credit meter; return those that did not answer.

    Machines in ``unlock`` (seats of a heat still running) are asked with the unlock
    itself: its acknowledgement answers the question and play resumes at once, one poll
    spacing sooner than a read followed by an unlock.
    """

    async def ask(machine_id: str) -> None:
        link = links[machine_id]
        op = link.driver.unlock if machine_id in unlock else link.driver.credits
        await asyncio.wait_for(link.call(op), within_s)

    results = await asyncio.gather(*(ask(m) for m in machines), return_exceptions=True)
    silent = []
    for machine_id, result in zip(machines, results, strict=True):
        if isinstance(result, BaseException):
            if not isinstance(result, DriverError | TimeoutError | OSError):
                raise result
            silent.append(machine_id)
    return silent


async def recover_bank(
    writer: JournalWriter,
    links: Mapping[str, MachineLink],
    bank: str,
    *,
    tournament: TournamentSide | None = None,
    feed: FeedPublisher | None = None,
    progress: ProgressSink | None = None,
    on_control: Callable[[Recovery], None] | None = None,
    drive: bool = True,
    skip_heats: Collection[int] = (),
) -> list[Recovery]:
    """Bring every unsettled run of ``bank`` to rest (or back under way); runs of
    ``skip_heats`` (walk-up sessions whose runners are driving them) are left alone."""
    t0 = time.perf_counter()
    await writer.flush()
    if tournament is None:
        from gateway.tournament.bridge import TournamentBridge

        tournament = TournamentBridge(writer.journal.sessions)
    side: TournamentSide = tournament
    views = [
        v for v in await writer.journal.unsettled_runs(bank) if v.heat_id not in skip_heats
    ]

    async def one(view: RunView) -> Recovery:
        if view.heat_id is not None:
            await side.drain(view.id)  # effects a crash left behind, first
        context = _Context(writer, links, t0, side, feed, progress, on_control, drive)
        with bound_contextvars(**run_fields(view)):
            return await _recover_run(context, view)

    if _disjoint(views):
        # Runs on machines of their own (walk-up sessions, docs/rules.md#w7) go on side by
        # side: one waiting for another's end would lose its own time.
        return list(await asyncio.gather(*(one(v) for v in views)))
    return [await one(view) for view in views]


def _disjoint(views: list[RunView]) -> bool:
    seen: set[str] = set()
    for view in views:
        if seen & set(view.machines):
            return False
        seen |= set(view.machines)
    return len(views) > 1


@dataclass(slots=True)
class _Context:
    writer: JournalWriter
    links: Mapping[str, MachineLink]
    t0: float
    tournament: TournamentSide
    feed: FeedPublisher | None
    progress: ProgressSink | None
    on_control: Callable[[Recovery], None] | None
    drive: bool

    def in_control(self, report: Recovery) -> None:
        """The floor is back in hand: say so once."""
        if report.in_control_s is None:
            report.in_control_s = time.perf_counter() - self.t0
        callback, self.on_control = self.on_control, None
        if callback is not None:
            callback(report)


async def _recover_run(ctx: _Context, view: RunView) -> Recovery:
    missing = [m for m in view.machines if m not in ctx.links]
    if missing:
        raise RuntimeError(f"heat run {view.id}: no link for {', '.join(missing)}")
    still_running = (
        view.state is S.RUNNING and view.ends_at is not None and view.ends_at > datetime.now(UTC)
    )
    playing_seats = frozenset(
        m for m, s in view.machines.items() if s in (MachineState.ARMED, MachineState.PLAYING)
    )
    unlock = playing_seats if still_running else frozenset()
    live = [m for m, s in view.machines.items() if s is not MachineState.RELEASED]
    silent = await interrogate(ctx.links, live, unlock=unlock) if live else []
    report = Recovery(view.id, view.state, "resume", silent=silent)
    if unlock and not is_system_failure(silent, unlock):
        ctx.in_control(report)  # play is already back on for the answering machines
    view = await _decide(ctx, view, report)
    if report.decision == "paused" or not ctx.drive:
        ctx.in_control(report)
        return report
    runner = HeatRunner(
        ctx.writer, ctx.links, tournament=ctx.tournament, feed=ctx.feed, progress=ctx.progress
    )
    runner.on_control = lambda: ctx.in_control(report)
    report.outcome = await runner.drive(view, resumed=True)
    if report.outcome.state is S.RESTARTED and report.decision == "resume":
        report.decision = "restart"
    return report


async def _decide(ctx: _Context, view: RunView, report: Recovery) -> RunView:
    """Paused, release, restart (most of the bank silent) or resume (single machines
    silent are malfunctions); returns the run as journaled after the decision."""
    touched = [m for m, s in view.machines.items() if s in _NEEDS_RELEASE]
    silent = report.silent
    if view.state is S.PAUSED:
        report.decision = "paused"
    elif view.state in (S.CLOSED, S.ABORTED, S.RESTARTED):
        report.decision = "release"
    elif view.state in (S.ARMED, S.RUNNING, S.ENDING) and is_system_failure(silent, touched):
        # Most of the bank silent at once: the tournament system itself is in trouble.
        report.decision = "restart"
        reason = f"recovery: {len(silent)} of {len(touched)} machines silent (T20)"
        states.check(view.state, S.RESTARTED)
        effect = EffectIn(EffectKind.RESTARTED, datetime.now(UTC), None, {"reason": reason})
        await ctx.writer.write(StepOp(view.id, S.RESTARTED, note=reason, effects=[effect]))
    elif silent:
        # Single machines silent: malfunctioned (T20/T21), the heat goes on.
        playing = [m for m in silent if view.machines[m] is not MachineState.MALFUNCTION]
        if not playing:
            return view
        reason = "silent at gateway restart"
        now = datetime.now(UTC)
        await ctx.writer.write(
            SeatsOp(
                view.id,
                dict.fromkeys(playing, MachineState.MALFUNCTION),
                note=reason,
                effects=[
                    EffectIn(EffectKind.MALFUNCTION, now, m, {"reason": reason}) for m in playing
                ],
            )
        )
        if view.heat_id is not None:
            await ctx.tournament.drain(view.id)
    else:
        return view
    return await ctx.writer.journal.run(view.id)
