"""Restart after failure: finish what the journal says was under way.

On start the gateway replays its outage spool, then reads every unsettled heat run of
the bank and interrogates each of its machines (a credit-meter read: does it answer?).
Then, per run:

* scheduled / armed — nothing has been played: carry on arming and start the heat;
* running with time left — resume: unlock again (harmless if still unlocked), keep the
  heat clock from the journal, watch and end as usual;
* running past its end — collect, because native machines stopped on their own timer
  (the backstop) — unless a host-timed machine was left unwatched past the end, which
  makes the scores unfair: the whole heat is restarted (rule 20);
* ending / collecting / closed — lock, collect what is not stored yet, release;
* aborted / restarted — release the machines;
* paused — left paused for the director (machines stay locked by design).

More than half of a run's machines silent at once is a tournament-system failure, not
a machine malfunction: the run is restarted (rule 20) rather than played short-handed.
A machine silent on its own is malfunctioned (rules 20/21) and the heat goes on.
Scores are stored through the journal's unique key, so nothing is lost or stored twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gateway.feed import FeedPublisher
from gateway.heats import states
from gateway.heats.hooks import ProgressSink, TournamentHooks
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import DriverError
from gateway.machines.links import MachineLink
from storage.journal import RunState, RunView, SeatState

S = RunState
_NEEDS_RELEASE = frozenset(SeatState) - {SeatState.RELEASED, SeatState.PENDING}


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
    hooks: TournamentHooks | None = None,
    feed: FeedPublisher | None = None,
    progress: ProgressSink | None = None,
    on_control: Callable[[Recovery], None] | None = None,
    drive: bool = True,
) -> list[Recovery]:
    """Bring every unsettled run of ``bank`` to rest (or back under way)."""
    t0 = time.perf_counter()
    await writer.flush()
    reports: list[Recovery] = []
    for view in await writer.journal.unsettled_runs(bank):
        report = await _recover_run(
            writer, links, view, t0, hooks=hooks, feed=feed, progress=progress,
            on_control=on_control, drive=drive,
        )  # fmt: skip
        reports.append(report)
    return reports


async def _recover_run(
    writer: JournalWriter,
    links: Mapping[str, MachineLink],
    view: RunView,
    t0: float,
    *,
    hooks: TournamentHooks | None,
    feed: FeedPublisher | None,
    progress: ProgressSink | None,
    on_control: Callable[[Recovery], None] | None,
    drive: bool,
) -> Recovery:
    missing = [m for m in view.machines if m not in links]
    if missing:
        raise RuntimeError(f"heat run {view.id}: no link for {', '.join(missing)}")
    touched = [m for m, s in view.machines.items() if s in _NEEDS_RELEASE]
    live = [m for m, s in view.machines.items() if s not in {SeatState.RELEASED}]
    still_running = (
        view.state is S.RUNNING and view.ends_at is not None and view.ends_at > datetime.now(UTC)
    )
    playing_seats = frozenset(
        m for m, s in view.machines.items() if s in (SeatState.ARMED, SeatState.PLAYING)
    )
    unlock = playing_seats if still_running else frozenset()
    silent = await interrogate(links, live, unlock=unlock) if live else []
    report = Recovery(view.id, view.state, "resume", silent=silent)
    if unlock and len(set(silent) & unlock) * 2 <= len(unlock):
        # Play is already back on for the answering machines: the floor is in hand.
        report.in_control_s = time.perf_counter() - t0
        if on_control is not None:
            on_control(report)
            on_control = None

    if view.state is S.PAUSED:
        report.decision = "paused"
    elif view.state in (S.CLOSED, S.ABORTED, S.RESTARTED):
        report.decision = "release"
    elif (
        view.state in (S.ARMED, S.RUNNING, S.ENDING)
        and touched
        and len([m for m in silent if m in touched]) * 2 > len(touched)
    ):
        # Most of the bank silent at once: the tournament system itself is in trouble.
        report.decision = "restart"
        note = f"recovery: {len(silent)} of {len(touched)} machines silent (rule 20)"
        states.check(view.state, S.RESTARTED)
        await writer.step(view.id, S.RESTARTED, note=note)  # the runner tells the services
        view = await writer.journal.run(view.id)
    elif silent:
        # Single machines silent: malfunctioned (rules 20/21), the heat goes on.
        playing = [m for m in silent if view.machines[m] not in {SeatState.MALFUNCTION}]
        if playing:
            await writer.set_seats(
                view.id,
                dict.fromkeys(playing, SeatState.MALFUNCTION),
                note="silent at gateway restart",
            )
            if hooks is not None and view.heat_id is not None:
                for m in playing:
                    await hooks.machine_malfunctioned(view.heat_id, m, "silent at gateway restart")
            view = await writer.journal.run(view.id)

    if report.decision == "paused" or not drive:
        report.in_control_s = time.perf_counter() - t0
        if on_control is not None:
            on_control(report)
        return report

    runner = HeatRunner(writer, links, hooks=hooks, feed=feed, progress=progress)
    if report.decision == "restart":
        runner.restart_reason = f"recovery: {len(silent)} machines silent (rule 20)"

    def controlled() -> None:
        if on_control is not None:
            report.in_control_s = time.perf_counter() - t0
            on_control(report)
        elif report.in_control_s is None:
            report.in_control_s = time.perf_counter() - t0

    runner.on_control = controlled
    report.outcome = await runner.drive(view, resumed=True)
    if report.outcome.state is S.RESTARTED and report.decision == "resume":
        report.decision = "restart"
    return report
