"""Drive one heat on one bank through its states, journaling each step first.

Theory of operation
-------------------
A heat is a loop over :mod:`gateway.heats.states`: in each state the runner performs
that state's floor action, decides the next state, writes it to the journal, and only
then moves on.  So after a crash the journal's state says which floor action may have
been half done, and every floor action is safe to do again (locking a locked machine,
re-entering tournament mode with the same credits and time, unlocking an unlocked one,
exiting tournament mode twice, re-reading meters).  :meth:`HeatRunner.drive` therefore
both runs a new heat and resumes one from the journal after a restart.

Start: every machine is armed first (locked, tournament mode with the heat's credits
and time); then the RUNNING step is journaled with the heat clock's end; then all
unlocks are fired in one gather, without retries, so they leave within one pass of the
event loop (the start skew).  The gateway's clock is the authority for the end; the
machine's own timer is only the backstop (native 8C machines).  Host-timed machines have
no backstop, which is why recovery restarts a heat whose host-timed machines may have
played past the end unwatched (T20).

A director's pause locks every machine and stops the gateway's clock.  A native machine's
own timer cannot be stopped or extended over SAS (8C is refused in tournament mode), so
it keeps running through the pause and its backstop ends play that much early; for more
than a moment's pause the director should restart the heat (T20) instead.

Each playing machine is watched by its own task (events and live credits at the SAS
poll cadence); a machine that stops answering past the retry budget, tilts or loses
power is marked malfunctioned (T20/T21) and the heat goes on for the others.

The tournament side follows from the journal alone: the steps that matter to it (the
start, the bank's scores, a malfunction, the close, a restart, an abort) write their
tournament effects in the same commit (:mod:`storage.effects`), and the runner drains
them through :class:`~gateway.heats.hooks.TournamentSide` after the floor action —
never in the way of the start's unlocks or the end's lock.  A crash between a step and
its drain leaves the effect pending for the next drain (a recovery, the scheduler);
a run is settled only once its effects are applied and its machines back in normal
play.

The phases live beside this module, each a mixin over :class:`~gateway.heats.heat_core.HeatCore`:
:mod:`~gateway.heats.floor_actions` (arm, unlock, end lock, release),
:mod:`~gateway.heats.watch` (play) and :mod:`~gateway.heats.collect` (scores).  A heat whose
credits or time no machine can carry (:mod:`gateway.heat_limits`) is never armed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from structlog.contextvars import bound_contextvars

from gateway.heat_formats import TIMED, HeatFormat
from gateway.heat_limits import check_heat_limits, heat_limit_problem
from gateway.heats import states
from gateway.heats.collect import Collecting
from gateway.heats.collector_pause import pause_collector, resume_collector
from gateway.heats.decisions import is_system_failure, unproven_seats
from gateway.heats.floor_actions import FloorActions
from gateway.heats.heat_core import _LIVE, Command, Directive, HeatOutcome, MachineOutcome
from gateway.heats.hooks import Progress, run_fields
from gateway.heats.sync_start import JOURNAL_LEAD, SPIN_S, perf_deadline
from gateway.heats.watch import TRAP_MALFUNCTION_EVENTS, Watching
from gateway.machines.capabilities import HeatBaseline
from gateway.machines.driver import (
    MachineEvent,
    TournamentSupport,
)
from gateway.machines.links import close_links, open_links
from storage.effects import EffectIn, EffectKind
from storage.journal import MachineState, RunState, RunView
from storage.journal_ops import SeatsOp, StepOp

S = RunState
log = logging.getLogger(__name__)
Step = tuple[RunState | None, dict[str, Any]]  # the next state, and what to journal with it

# How long before the end the ENDING step is journaled (a commit takes a few ms).
JOURNAL_AHEAD = timedelta(milliseconds=40)
# The longest the collector waits at a heat's end (normally until the scores are stored).
END_PAUSE_LIMIT_S = 5.0
# When the watchers' quiet before the end is taken again from the links' spacing.
QUIET_TAKEN_AHEAD = timedelta(seconds=1)


class HeatRunner(FloorActions, Watching, Collecting):
    """Drives one heat; see the module docstring."""

    # -- public ------------------------------------------------------------------------
    async def run_new(
        self,
        bank: str,
        machines: list[str],
        *,
        credits: int,
        seconds: int,
        heat_id: int | None = None,
        attempt: int = 1,
        heat_format: HeatFormat = TIMED,
    ) -> HeatOutcome:
        check_heat_limits(credits, seconds)  # nothing journaled, nothing touched
        run_id = await self.writer.journal.create_run(
            bank,
            machines,
            credits=credits,
            seconds=seconds,
            heat_id=heat_id,
            attempt=attempt,
            format=None if heat_format.timed else heat_format.spec(),  # F5: journaled
        )
        return await self.drive(await self.writer.journal.run(run_id), resumed=False)

    def direct(self, command: Command, reason: str = "") -> None:
        """A director's command for the heat being driven (start is :meth:`run_new`)."""
        self.directives.put_nowait(Directive(command, reason))

    async def drive(self, view: RunView, *, resumed: bool = True) -> HeatOutcome:
        """Run or resume the heat of ``view`` (see the module); every log line meanwhile,
        of this task and of the watchers it starts, carries the bank, heat and run."""
        with bound_contextvars(**run_fields(view)):
            return await self._drive(view, resumed=resumed)

    async def _drive(self, view: RunView, *, resumed: bool) -> HeatOutcome:
        self.view = view
        self.run_id = view.id
        self.current_run = view.id
        self.resumed = resumed
        self.ends_at = view.ends_at
        self.paused_left_ms = view.paused_left_ms
        self.format = HeatFormat.parse(view.format)  # F5: the run's own, as journaled
        self.out = HeatOutcome(
            run_id=view.id,
            state=view.state,
            started_at=view.started_at,
            ends_at=view.ends_at,
            seats={
                m: MachineOutcome(m, support=view.supports.get(m), state=s)
                for m, s in view.machines.items()
            },
        )
        if resumed:
            await self._reload_results()
            self._restore_baselines()
        state = view.state
        try:
            while True:
                self._note_state(state)
                if self.stop_after is not None and state is self.stop_after:
                    break
                nxt, extra = await self._act(state)
                self._in_control()
                if nxt is None:
                    break
                states.check(state, nxt)
                await self.writer.write(StepOp(self.run_id, nxt, **extra))  # journal first...
                state = nxt  # ...then the floor, in the next turn of the loop
                self.resumed = False
        finally:
            resume_collector(self)  # whatever path left the end early
            await self._stop_watchers()
            await self._settle_malfunctions()
        self.out.state = state
        return self.out

    # -- state actions -------------------------------------------------------------------
    async def _act(self, state: RunState) -> tuple[RunState | None, dict[str, Any]]:
        """Do ``state``'s floor action; return the next state and what to journal with it."""
        if state in (S.SCHEDULED, S.ARMED):
            problem = heat_limit_problem(self.view.credits, self.view.seconds)
            if problem is not None:  # a journaled heat no machine can carry: never arm it
                return S.ABORTED, {"note": f"heat refused: {problem}"}
        actions: dict[RunState, Callable[[], Awaitable[Step]]] = {
            S.SCHEDULED: self._scheduled,
            S.ARMED: self._armed,
            S.RUNNING: self._running,
            S.PAUSED: self._paused,
            S.ENDING: self._ending,
            S.COLLECTING: self._collecting,
            S.CLOSED: self._closed,
            S.ABORTED: self._finished,
            S.RESTARTED: self._finished,
        }
        return await actions[state]()

    async def _scheduled(self) -> Step:
        if self.start_at is not None:  # the agreed instant, journaled before arming
            return S.ARMED, {"note": self.start_at.note()}
        return S.ARMED, {}

    async def _armed(self) -> Step:
        silent = await self._arm()
        if not self._seats_in(_LIVE):
            # Not one machine could be armed: the tournament system is in trouble.
            return self._restart("no machine of the bank could be armed (T20)")
        if is_system_failure(silent, list(self.out.seats)):
            # The same outage found during a recovery restarts the heat: so does this.
            return self._restart(
                f"{len(silent)} of {len(self.out.seats)} machines silent while arming (T20)"
            )
        # Let every link's poll spacing run out, so no unlock waits on its link.
        await asyncio.sleep(self._spacing())
        now = await self._await_start()
        self.ends_at = now + timedelta(seconds=self.view.seconds)
        self.out.started_at, self.out.ends_at = now, self.ends_at
        playing = {m: MachineState.PLAYING for m in self._seats_in({MachineState.ARMED})}
        # T22: the announced start.  A synchronised start gives the tournament the agreed
        # instant itself (the centre's clock): never a moment before the scheduled start.
        started = EffectIn(EffectKind.STARTED, self.start_at.at if self.start_at else now)
        return S.RUNNING, {
            "started_at": now,
            "ends_at": self.ends_at,
            "seats": playing,
            "effects": [started],
        }

    async def _await_start(self) -> datetime:
        """The heat's start: now, or (synchronised) the agreed instant by this host's
        clock, waited for to just ahead of it so RUNNING is journaled before it comes."""
        now = datetime.now(UTC)
        if self.start_at is None:
            return now
        at = self.start_at.local
        ahead = (at - now - JOURNAL_LEAD).total_seconds()
        if ahead > 0:
            await asyncio.sleep(ahead)
        elif at < now:
            log.warning(
                "synchronised start missed by %.0f ms (armed too late): firing now",
                (now - at).total_seconds() * 1000,
            )
            self.start_at = None
            return now
        self._fire_at = at
        return at

    async def _ending(self) -> Step:
        if self.resumed and self.ends_at is not None:
            late = await self._late_end(datetime.now(UTC))
            if late[0] is S.RESTARTED:
                return late
        # No collector passes from the lock to the last score stored (collector_pause;
        # paused already a second before the end, unless this run was resumed here).
        pause_collector(self, END_PAUSE_LIMIT_S)
        await self._stop_watchers()  # wound down as ENDING was journaled (_running)
        if self.ends_at is not None:  # never a moment early: the clock is the authority
            wait = (self.ends_at - datetime.now(UTC)).total_seconds()
            if wait > 0:
                await asyncio.sleep(wait)
        await self._lock_all(MachineState.LOCKED)
        return S.COLLECTING, {}

    async def _collecting(self) -> Step:
        await self._collect()
        return S.CLOSED, {"effects": [EffectIn(EffectKind.CLOSED, datetime.now(UTC))]}

    async def _closed(self) -> Step:
        """Scores stored: the machines go back to play, then the heat closes (its effect,
        journaled with the step, is applied now or by whoever drains next)."""
        await self._release()
        await self._drain()
        await self._settle()
        return None, {}

    async def _finished(self) -> Step:
        """ABORTED or RESTARTED: release the floor; the tournament voids the attempt
        (T20: the heat runs again, or is postponed; an abort waits for the director)."""
        await self._release()
        await self._drain()
        await self._settle()
        return None, {}

    async def _running(self) -> tuple[RunState | None, dict[str, Any]]:
        assert self.ends_at is not None
        now = datetime.now(UTC)
        if self.resumed and now >= self.ends_at:
            return await self._late_end(now)
        if self.resumed:
            # Recovery has just interrogated every machine: let the poll spacing run out,
            # so the unlocks leave in one tight loop again (else each waits on its link).
            await asyncio.sleep(self._spacing())
        if self.resumed:
            await self._relock_done()  # F5: a machine journaled done stays locked
        await self._fire(at=None if self.resumed else await self._until_burst())
        self._start_watchers()
        self._check_all_done()  # F4: resumed with every machine done
        self._in_control()
        await self._record_unlocks()
        await self._announce_start()
        # The watchers stop a poll spacing before the end, so every link is idle and the
        # lock at the end leaves on time; then wait out the clock to the exact end.
        # The spacing is taken again a second before the end: by then the links that
        # report in real time poll at 40 ms, and the quiet shrinks with them.
        # The ENDING step is journaled just ahead of the end (its write must not delay the
        # lock); the lock itself waits for the exact end, after a restart too.
        directive = await self._wait_directive(self.ends_at - QUIET_TAKEN_AHEAD)
        if directive is None:
            # No collector passes from here to the last score stored (collector_pause):
            # a full pass at a thousand machines (~140 ms) near the end would hold up
            # the watchers' stop, the ENDING step and so the lock.
            pause_collector(self, END_PAUSE_LIMIT_S)
            self._take_quiet()
            quiet = timedelta(seconds=self._quiet_s)
            directive = await self._wait_directive(self.ends_at - quiet)
        if directive is None:
            # Told now, the watchers wind down while ENDING is journaled (its commit
            # waits on the database, not on the loop); _ending gathers them before the
            # lock.  At a thousand machines stopping them takes tens of ms of the loop.
            self._wind_down_watchers()
            directive = await self._wait_directive(self.ends_at - JOURNAL_AHEAD)
        if directive is None:
            return S.ENDING, {}
        if directive.command is Command.FINISH:
            # F4: every machine is done before the time: the heat ends now, journaled
            # with its new end so a recovery does not wait out the old one.
            await self._stop_watchers()
            self.ends_at = datetime.now(UTC)
            self.out.ends_at = self.ends_at
            return S.ENDING, {"ends_at": self.ends_at, "note": directive.reason}
        resume_collector(self)  # not the end after all
        await self._stop_watchers()
        if directive.command is Command.PAUSE:
            left_ms = max(0, int((self.ends_at - datetime.now(UTC)).total_seconds() * 1000))
            self.paused_left_ms = left_ms
            return S.PAUSED, {"paused_left_ms": left_ms, "note": directive.reason}
        if directive.command is Command.ABORT:
            return self._abort(directive.reason)
        if directive.command is Command.RESTART:
            return self._restart(directive.reason or "director restart (T20)")
        raise AssertionError(f"unexpected directive {directive}")  # pragma: no cover

    async def _until_burst(self) -> float | None:
        """Sleep to a few ms before the agreed instant; the burst spins the rest (its
        frames are built first).  None: fire at once."""
        at, self._fire_at = self._fire_at, None
        if at is None:
            return None
        left = (at - datetime.now(UTC)).total_seconds()
        if left > SPIN_S:
            await asyncio.sleep(left - SPIN_S)
        elif left < 0:  # arming or the RUNNING commit ran past it: say by how much
            log.warning("synchronised start: fired %.0f ms after the agreed instant", -left * 1000)
        return perf_deadline(at, datetime.now(UTC), time.perf_counter())

    def _restore_baselines(self) -> None:
        """Hand each machine's journaled entry meters back to a driver that scores from
        differences (a restarted gateway did not see the entry)."""
        for machine_id, baseline in self.view.baselines.items():
            link = self.links.get(machine_id)
            if link is not None and isinstance(link.driver, HeatBaseline):
                link.driver.restore_heat_baseline(baseline)

    async def _late_end(self, now: datetime) -> tuple[RunState, dict[str, Any]]:
        """Resumed after the heat's end: the heat stands only on each machine's own proof
        that it played (T20; :mod:`gateway.heats.decisions`)."""
        assert self.ends_at is not None
        if now <= self.ends_at + timedelta(seconds=self.late_grace_s):
            return S.ENDING, {}
        in_play = self._seats_in({MachineState.ARMED, MachineState.PLAYING})
        unwatched = [
            m for m in in_play if self.out.seats[m].support == TournamentSupport.HOST_TIMED.value
        ]
        if unwatched:
            # Host-timed machines have no timer of their own: they may have played on
            # after the end while the gateway was down.  T20: restart the heat.
            return self._restart(
                f"gateway down past the end; host-timed {', '.join(unwatched)} (T20)"
            )
        unproven = unproven_seats(in_play, self.view.unlocked, await self._games_played(in_play))
        if in_play and len(unproven) == len(in_play):
            return self._restart(
                "the heat never started on the floor: no unlock acknowledged (T20)"
            )
        for machine_id in unproven:  # never played: the seat's T20 remedy, not a score
            self._spawn_malfunction(machine_id, "never started: no unlock acknowledged (T20)")
        await self._settle_malfunctions()
        return S.ENDING, {"note": "resumed after the end: machine timers stopped play"}

    async def _games_played(self, machines: list[str]) -> dict[str, int]:
        """Games each machine's tournament meters show (proof of play), where it says.
        All machines are asked together: one after another, a thousand-machine bank
        resumed after its end would wait a round trip per machine."""
        ask = [m for m in machines if m not in self.view.unlocked]  # the rest are proven
        found = await asyncio.gather(*(self._meters_if_readable(m) for m in ask))
        return {
            m: meters.games_played
            for m, meters in zip(ask, found, strict=True)
            if meters is not None
        }

    async def _paused(self) -> tuple[RunState | None, dict[str, Any]]:
        await self._lock_all(None)
        while True:
            directive = await self.directives.get()
            if directive.command is Command.RESUME:
                left = (self.paused_left_ms or 0) / 1000
                self.ends_at = datetime.now(UTC) + timedelta(seconds=left)
                self.out.ends_at = self.ends_at
                return S.RUNNING, {"ends_at": self.ends_at, "clear_pause": True}
            if directive.command is Command.ABORT:
                return self._abort(directive.reason)
            if directive.command is Command.RESTART:
                return self._restart(directive.reason or "director restart (T20)")

    def _restart(self, reason: str) -> tuple[RunState, dict[str, Any]]:
        """T20: this attempt is void; its effect tells the tournament with the step."""
        self.restart_reason = reason
        effect = EffectIn(EffectKind.RESTARTED, datetime.now(UTC), None, {"reason": reason})
        return S.RESTARTED, {"note": reason, "effects": [effect]}

    def _abort(self, reason: str) -> tuple[RunState, dict[str, Any]]:
        effect = EffectIn(EffectKind.ABORTED, datetime.now(UTC), None, {"reason": reason})
        return S.ABORTED, {"note": reason, "effects": [effect]}

    async def _record_unlocks(self) -> None:
        """Journal which machines acknowledged their unlock: their proof of play (T20).
        After the fire and the watchers' start, so it never delays the start."""
        acked = {
            m: seat.unlocked_at
            for m, seat in self.out.seats.items()
            if seat.unlocked_at is not None and m not in self.view.unlocked
        }
        if acked:
            await self.writer.write(SeatsOp(self.run_id, {}, unlocked_at=acked))

    async def _announce_start(self) -> None:
        started = self.out.started_at or datetime.now(UTC)
        await self._drain()  # T22: the start reaches the tournament (after a restart too)
        if self.feed is not None:
            await self.feed.publish(
                f"heat/{self._feed_key()}/state",
                {
                    "state": "running",
                    "started_at": started.isoformat(),
                    "ends_at": self.ends_at.isoformat() if self.ends_at else None,
                    "machines": self._seats_in({MachineState.PLAYING}),
                },
                retain=True,
            )

    # -- supervision during play -----------------------------------------------------------
    def report_event(self, event: MachineEvent, source: str = "SNMP trap") -> bool:
        """An event about a seat from outside the heat's own polling (an SNMP trap from
        :mod:`gateway.machines.health`).  A malfunction kind on a playing seat ends its part in the
        heat (T20/T21); returns True if it did."""
        if self.current_run is None:
            return False  # not driving a heat yet
        seat = self.out.seats.get(event.machine_id)
        if seat is None or event.kind not in TRAP_MALFUNCTION_EVENTS:
            return False
        if seat.state is not MachineState.PLAYING or self.out.state is not S.RUNNING:
            return False  # not playing (yet, or any more): arming and the end handle it
        self._spawn_malfunction(event.machine_id, f"{source}: {event.kind.value}")
        return True

    # -- helpers ----------------------------------------------------------------------------
    def _in_control(self) -> None:
        callback, self.on_control = self.on_control, None
        if callback is not None:
            callback()

    async def _wait_directive(self, until: datetime) -> Directive | None:
        """Wait until ``until`` or a director's command (a stray RESUME is ignored)."""
        while True:
            left = (until - datetime.now(UTC)).total_seconds()
            try:
                directive = await asyncio.wait_for(self.directives.get(), max(0.0, left))
            except TimeoutError:
                return None
            if directive.command is not Command.RESUME:
                return directive

    def _note_state(self, state: RunState) -> None:
        self.out.state = state
        left = None
        if self.ends_at is not None and state is S.RUNNING:
            left = max(0.0, (self.ends_at - datetime.now(UTC)).total_seconds())
        self._emit(Progress.STATE, state=state.value, seconds_left=left)


__all__ = ["Command", "HeatOutcome", "HeatRunner", "MachineOutcome", "close_links", "open_links"]
