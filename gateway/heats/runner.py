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
played past the end unwatched (rule 20).

A director's pause locks every machine and stops the gateway's clock.  A native machine's
own timer cannot be stopped or extended over SAS (8C is refused in tournament mode), so
it keeps running through the pause and its backstop ends play that much early; for more
than a moment's pause the director should restart the heat (rule 20) instead.

Each playing machine is watched by its own task (events and live credits at the SAS
poll cadence); a machine that stops answering past the retry budget, tilts or loses
power is marked malfunctioned (rules 20/21 through the tournament hooks) and the heat
goes on for the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import gc
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from gateway.feed import FeedPublisher
from gateway.heat_limits import check_heat_limits, heat_limit_problem
from gateway.heats import states
from gateway.heats.hooks import Progress, ProgressNote, ProgressSink, TournamentHooks
from gateway.heats.spool import JournalWriter
from gateway.machines.capabilities import (
    PreparedLock,
    PreparedUnlock,
    TournamentMeterReader,
    Trigger,
    min_spacing,
)
from gateway.machines.driver import (
    TRANSIENT_ERRORS,
    DriverError,
    HeatScore,
    MachineEvent,
    MachineEventKind,
    MachineRefused,
    TournamentMeters,
    TournamentSupport,
)
from gateway.machines.links import MachineLink, close_links, open_links
from gateway.machines.scoring import tournament_credits
from storage.journal import ResultIn, RunState, RunView, SeatState

S = RunState

# Events that end a machine's part in a heat (rule 20: a malfunction of a slot machine),
# whether a SAS exception, an MQTT board event or an SNMP trap (gateway.machines.health) says so.
MALFUNCTION_EVENTS = frozenset(
    {
        MachineEventKind.TILT,
        MachineEventKind.POWER_LOST,
        MachineEventKind.OUT_OF_SERVICE,
        MachineEventKind.DOOR_OPENED,
    }
)
# A board's own SNMP trap that its link to the gateway is down counts too (gateway.machines.health
# delivers it only once it has not come back within a grace period).  A driver's
# LINK_DOWN is not here: a link that stays down shows as a machine that stops answering,
# and a broker restart (every MQTT board "offline" a moment) is no machine's fault.
TRAP_MALFUNCTION_EVENTS = MALFUNCTION_EVENTS | {MachineEventKind.LINK_DOWN}
_LIVE = frozenset({SeatState.ARMED, SeatState.PLAYING, SeatState.LOCKED})
_NATIVE = TournamentSupport.NATIVE.value
# How long before the end the ENDING step is journaled (a commit takes a few ms).
JOURNAL_AHEAD = timedelta(milliseconds=40)


class Command(enum.Enum):
    PAUSE = "pause"
    RESUME = "resume"
    ABORT = "abort"
    RESTART = "restart"


@dataclass(frozen=True, slots=True)
class Directive:
    command: Command
    reason: str = ""


@dataclass(slots=True)
class SeatOutcome:
    machine_id: str
    support: str | None = None
    state: SeatState = SeatState.PENDING
    unlock_ack_ms: float | None = None  # when its unlock was acknowledged, after the fire
    score: int | None = None
    meters: TournamentMeters | None = None
    error: str = ""


@dataclass(slots=True)
class HeatOutcome:
    run_id: int
    state: RunState
    started_at: datetime | None
    ends_at: datetime | None
    seats: dict[str, SeatOutcome]
    end_to_committed_ms: float | None = None  # from the start of collection
    committed_at: datetime | None = None  # when the last score of the heat was committed
    notes: list[str] = field(default_factory=list)


class HeatRunner:
    def __init__(
        self,
        writer: JournalWriter,
        links: Mapping[str, MachineLink],
        *,
        hooks: TournamentHooks | None = None,
        feed: FeedPublisher | None = None,
        progress: ProgressSink | None = None,
        poll_interval_s: float = 0.2,  # SAS: at most one poll every 200 ms per machine
        late_grace_s: float = 2.0,
        game_end_wait_s: float = 30.0,
        stop_after: RunState | None = None,
    ) -> None:
        self.writer = writer
        self.links = links
        self.hooks = hooks
        self.feed = feed
        self.progress = progress
        self.poll_interval_s = poll_interval_s
        self.late_grace_s = late_grace_s
        # After the end-of-heat lock, how long to wait for a game in progress to end
        # before scoring what the meters say (flagged for the director, rule 23).
        self.game_end_wait_s = game_end_wait_s
        # Machines whose last game event seen was GAME_STARTED (no GAME_ENDED yet): the
        # lock lets that game complete first (SAS LP 01), so its meters are read after it.
        self._in_game: set[str] = set()
        self.stop_after = stop_after  # tests: stop driving once this state is journaled
        self.directives: asyncio.Queue[Directive] = asyncio.Queue()
        self._stop_watch = asyncio.Event()
        self._watchers: list[asyncio.Task[None]] = []
        self._results: dict[str, HeatScore] = {}
        self._handling: list[asyncio.Task[None]] = []  # malfunctions being handled
        # Scores whose credit-meter cross-check failed, with the flag journaled for each.
        self.mismatches: dict[str, str] = {}
        self.restart_reason = "tournament system failure (rule 20)"
        # The run being driven (None before :meth:`drive`): the live feed finds heats by it.
        self.current_run: int | None = None
        # Called once, as soon as the floor is back in hand (recovery measures this).
        self.on_control: Callable[[], None] | None = None

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
    ) -> HeatOutcome:
        check_heat_limits(credits, seconds)  # nothing journaled, nothing touched
        run_id = await self.writer.journal.create_run(
            bank, machines, credits=credits, seconds=seconds, heat_id=heat_id, attempt=attempt
        )
        return await self.drive(await self.writer.journal.run(run_id), resumed=False)

    def direct(self, command: Command, reason: str = "") -> None:
        """A director's command for the heat being driven (start is :meth:`run_new`)."""
        self.directives.put_nowait(Directive(command, reason))

    async def drive(self, view: RunView, *, resumed: bool = True) -> HeatOutcome:
        self.view = view
        self.run_id = view.id
        self.current_run = view.id
        self.resumed = resumed
        self.ends_at = view.ends_at
        self.paused_left_ms = view.paused_left_ms
        self.out = HeatOutcome(
            run_id=view.id,
            state=view.state,
            started_at=view.started_at,
            ends_at=view.ends_at,
            seats={
                m: SeatOutcome(m, support=view.supports.get(m), state=s)
                for m, s in view.machines.items()
            },
        )
        if resumed:
            await self._reload_results()
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
                await self.writer.step(self.run_id, nxt, **extra)  # journal first...
                state = nxt  # ...then the floor, in the next turn of the loop
                self.resumed = False
        finally:
            await self._stop_watchers()
            await self._settle_malfunctions()
        self.out.state = state
        return self.out

    # -- state actions -------------------------------------------------------------------
    async def _act(self, state: RunState) -> tuple[RunState | None, dict[str, Any]]:
        if state in (S.SCHEDULED, S.ARMED):
            problem = heat_limit_problem(self.view.credits, self.view.seconds)
            if problem is not None:  # a journaled heat no machine can carry: never arm it
                return S.ABORTED, {"note": f"heat refused: {problem}"}
        if state is S.SCHEDULED:
            return S.ARMED, {}
        if state is S.ARMED:
            await self._arm()
            if not self._seats_in(_LIVE):
                # Not one machine could be armed: the tournament system is in trouble.
                self.restart_reason = "no machine of the bank could be armed (rule 20)"
                return S.RESTARTED, {"note": self.restart_reason}
            # Let every link's poll spacing run out, so no unlock waits on its link.
            await asyncio.sleep(self._spacing())
            now = datetime.now(UTC)
            self.ends_at = now + timedelta(seconds=self.view.seconds)
            self.out.started_at, self.out.ends_at = now, self.ends_at
            playing = {m: SeatState.PLAYING for m in self._seats_in({SeatState.ARMED})}
            return S.RUNNING, {"started_at": now, "ends_at": self.ends_at, "seats": playing}
        if state is S.RUNNING:
            return await self._running()
        if state is S.PAUSED:
            return await self._paused()
        if state is S.ENDING:
            if self.resumed and self.ends_at is not None:
                late = self._late_end(datetime.now(UTC))
                if late[0] is S.RESTARTED:
                    return late
            if self.ends_at is not None:  # never a moment early: the clock is the authority
                wait = (self.ends_at - datetime.now(UTC)).total_seconds()
                if wait > 0:
                    await asyncio.sleep(wait)
            await self._lock_all(SeatState.LOCKED)
            return S.COLLECTING, {}
        if state is S.COLLECTING:
            await self._collect()
            return S.CLOSED, {}
        if state is S.CLOSED:
            await self._release()
            if self.hooks is not None and self.view.heat_id is not None:
                await self.hooks.heat_finished(self.view.heat_id, datetime.now(UTC))
            return None, {}
        if state in (S.ABORTED, S.RESTARTED):
            await self._release()
            if state is S.RESTARTED and self.hooks is not None and self.view.heat_id is not None:
                # Rule 20: the tournament side voids this attempt and the heat runs again.
                await self.hooks.heat_restarted(self.view.heat_id, self.restart_reason)
            return None, {}
        raise AssertionError(f"unhandled state {state}")  # pragma: no cover

    async def _arm(self) -> None:
        """Lock each machine and enter tournament mode (idempotent on a resume)."""
        credits, seconds = self.view.credits, self.view.seconds
        targets = self._seats_in({SeatState.PENDING, SeatState.ARMED})

        async def arm(machine_id: str) -> tuple[str, str]:
            link = self.links[machine_id]
            ident = await link.call(link.driver.identity)
            await link.call(link.driver.lock)
            await link.call(lambda: link.driver.enter_tournament(credits, seconds))
            return machine_id, ident.tournament.value

        results = await asyncio.gather(*(arm(m) for m in targets), return_exceptions=True)
        supports: dict[str, str] = {}
        for machine_id, result in zip(targets, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                await self._malfunction(machine_id, f"arming failed: {_why(result)}")
            else:
                supports[machine_id] = result[1]
                self.out.seats[machine_id].support = result[1]
                self.out.seats[machine_id].state = SeatState.ARMED
        await self.writer.set_seats(
            self.run_id, dict.fromkeys(supports, SeatState.ARMED), supports=supports
        )

    async def _running(self) -> tuple[RunState | None, dict[str, Any]]:
        assert self.ends_at is not None
        now = datetime.now(UTC)
        if self.resumed and now >= self.ends_at:
            return self._late_end(now)
        if self.resumed:
            # Recovery has just interrogated every machine: let the poll spacing run out,
            # so the unlocks leave in one tight loop again (else each waits on its link).
            await asyncio.sleep(self._spacing())
        await self._fire()
        self._start_watchers()
        self._in_control()
        if not self.resumed:
            await self._announce_start()
        # The watchers stop a poll spacing before the end, so every link is idle and the
        # lock at the end leaves on time; then wait out the clock to the exact end.
        # The ENDING step is journaled just ahead of the end (its write must not delay the
        # lock); the lock itself waits for the exact end, after a restart too.
        quiet = timedelta(seconds=self._spacing() + 0.05)
        directive = await self._wait_directive(self.ends_at - quiet)
        if directive is None:
            await self._stop_watchers()
            directive = await self._wait_directive(self.ends_at - JOURNAL_AHEAD)
        await self._stop_watchers()
        if directive is None:
            return S.ENDING, {}
        if directive.command is Command.PAUSE:
            left_ms = max(0, int((self.ends_at - datetime.now(UTC)).total_seconds() * 1000))
            self.paused_left_ms = left_ms
            return S.PAUSED, {"paused_left_ms": left_ms, "note": directive.reason}
        if directive.command is Command.ABORT:
            return S.ABORTED, {"note": directive.reason}
        if directive.command is Command.RESTART:
            return await self._restart(directive.reason)
        raise AssertionError(f"unexpected directive {directive}")  # pragma: no cover

    def _late_end(self, now: datetime) -> tuple[RunState, dict[str, Any]]:
        """Resumed after the heat's end: fair only if every machine stopped by itself."""
        assert self.ends_at is not None
        if now <= self.ends_at + timedelta(seconds=self.late_grace_s):
            return S.ENDING, {}
        unwatched = [
            m
            for m in self._seats_in({SeatState.ARMED, SeatState.PLAYING})
            if self.out.seats[m].support == TournamentSupport.HOST_TIMED.value
        ]
        if unwatched:
            # Host-timed machines have no timer of their own: they may have played on
            # after the end while the gateway was down.  Rule 20: restart the heat.
            self.restart_reason = (
                f"gateway down past the end; host-timed {', '.join(unwatched)} (rule 20)"
            )
            return S.RESTARTED, {"note": self.restart_reason}
        return S.ENDING, {"note": "resumed after the end: machine timers stopped play"}

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
                return S.ABORTED, {"note": directive.reason}
            if directive.command is Command.RESTART:
                return await self._restart(directive.reason)

    async def _restart(self, reason: str) -> tuple[RunState, dict[str, Any]]:
        self.restart_reason = reason or "director restart (rule 20)"
        return S.RESTARTED, {"note": self.restart_reason}

    async def _fire(self) -> None:
        """Unlock every armed machine together: one gather, no retries on the first try.

        A driver may offer ``prepare_unlock()``: everything done ahead (frame built, link
        idle), returning a zero-argument callable that sends at once and returns an
        awaitable for the acknowledgement.  Then all sends go out in one tight loop
        before any acknowledgement is awaited (least skew); other machines unlock in one
        gather, each its own coroutine, which also leaves in one pass of the event loop.
        """
        targets = self._seats_in({SeatState.ARMED, SeatState.PLAYING})
        fired = self._trigger_all(targets, _prepared_unlock)
        t0 = time.perf_counter()

        async def unlock(machine_id: str) -> float:
            link = self.links[machine_id]
            if machine_id in fired:
                await fired[machine_id]
            else:
                await link.once(link.driver.unlock)
            return (time.perf_counter() - t0) * 1000

        results = await asyncio.gather(*(unlock(m) for m in targets), return_exceptions=True)
        for machine_id, result in zip(targets, results, strict=True):
            seat = self.out.seats[machine_id]
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                try:  # a late start beats no start; the retry is recorded as such
                    link = self.links[machine_id]
                    await link.call(link.driver.unlock)
                    seat.unlock_ack_ms = (time.perf_counter() - t0) * 1000
                    seat.error = f"late start after {_why(result)}"
                except DriverError as exc:
                    await self._malfunction(machine_id, f"unlock failed: {_why(exc)}")
                    continue
            else:
                seat.unlock_ack_ms = result
            seat.state = SeatState.PLAYING

    async def _announce_start(self) -> None:
        started = self.out.started_at or datetime.now(UTC)
        if self.hooks is not None and self.view.heat_id is not None:
            await self.hooks.heat_started(self.view.heat_id, started)  # rule 22
        if self.feed is not None:
            await self.feed.publish(
                f"heat/{self._feed_key()}/state",
                {
                    "state": "running",
                    "started_at": started.isoformat(),
                    "ends_at": self.ends_at.isoformat() if self.ends_at else None,
                    "machines": self._seats_in({SeatState.PLAYING}),
                },
                retain=True,
            )

    def _trigger_all(
        self, targets: list[str], prepare: Callable[[object], Trigger | None]
    ) -> dict[str, Awaitable[None]]:
        """Fire a prepared command (:mod:`gateway.machines.capabilities`) at every target
        whose driver offers it, in one tight loop; returns the acknowledgements to await.
        A machine whose link is not ready (nothing sent) is left to the plain path."""
        triggers: list[tuple[str, Trigger]] = []
        for machine_id in targets:
            with contextlib.suppress(DriverError):
                trigger = prepare(self.links[machine_id].driver)
                if trigger is not None:
                    triggers.append((machine_id, trigger))
        fired: dict[str, Awaitable[None]] = {}
        collecting = gc.isenabled()
        gc.disable()  # no collector pause in the middle of the burst (a bounded loop)
        try:
            for machine_id, trigger in triggers:
                with contextlib.suppress(DriverError):
                    fired[machine_id] = trigger()  # sends now; an awaitable for the ACK
        finally:
            if collecting:
                gc.enable()
        return fired

    async def _lock_all(self, new_state: SeatState | None) -> None:
        """Lock every machine in play together (the heat's end, a pause): prepared locks
        in one tight loop where the driver offers them, then the ordinary retried lock
        for any machine whose fired lock was not acknowledged."""
        targets = self._seats_in({SeatState.ARMED, SeatState.PLAYING, SeatState.LOCKED})
        fired = self._trigger_all(targets, _prepared_lock)

        async def lock(machine_id: str) -> None:
            link = self.links[machine_id]
            if machine_id in fired:
                try:
                    await fired[machine_id]
                    return
                except DriverError:
                    pass  # not acknowledged: the retried lock below
            await link.call(link.driver.lock)

        results = await asyncio.gather(*(lock(m) for m in targets), return_exceptions=True)
        for machine_id, result in zip(targets, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                await self._malfunction(machine_id, f"lock at the end failed: {_why(result)}")
            elif new_state is not None:
                self.out.seats[machine_id].state = new_state

    async def _collect(self) -> None:
        """Read every locked machine's score and store it (group commits as they arrive).

        The locks were acknowledged before this state (``_lock_all``), but SAS LP 01 lets
        a game in progress complete first: a machine whose last game event seen was
        GAME_STARTED is polled for events until GAME_ENDED (``game_end_wait_s`` at most;
        then scored as its meters stand and flagged for the director, rule 23) before its
        meters are read.  The others are read at once.  A NATIVE machine whose driver
        reads the tournament meters alone (SAS LP 99) is scored from them: starting credits
        - credits wagered + credits won is its tournament credit meter (rule 12), stored
        with the raw meters one poll after the lock.  Its credit meter (LP 1A) is read one
        poll later, after the commit, as a cross-check: a difference is flagged for the
        director (journal seat note, the seat's error, the outcome's notes), the stored
        score stands.  Other machines report credits and meters in one driver call.
        """
        t_end = time.perf_counter()
        targets = self._seats_in({SeatState.LOCKED, SeatState.PLAYING, SeatState.ARMED})
        queue: asyncio.Queue[ResultIn | None] = asyncio.Queue()
        to_check: list[str] = []

        unfinished: dict[str, str] = {}

        async def read(machine_id: str) -> None:
            link = self.links[machine_id]
            if machine_id in self._in_game:  # only then: the others are read at once
                flag = await self._await_game_end(machine_id)
                if flag:
                    unfinished[machine_id] = flag
            try:
                score = await self._read_score(machine_id)
            except DriverError as exc:
                await self._malfunction(machine_id, f"score unreadable: {_why(exc)}")
                return
            if score is None:
                score = await link.call(link.driver.heat_score)
            else:
                to_check.append(machine_id)
            self._results[machine_id] = score
            m = score.meters
            await queue.put(
                ResultIn(
                    machine_id=machine_id,
                    score=score.credits,
                    games_played=m.games_played,
                    games_won=m.games_won,
                    credits_wagered=m.credits_wagered,
                    credits_won=m.credits_won,
                    collected_at=datetime.now(UTC),
                )
            )

        async def guarded(machine_id: str) -> None:
            try:
                await read(machine_id)
            except DriverError as exc:  # the full read after a refused meter read
                await self._malfunction(machine_id, f"score unreadable: {_why(exc)}")

        async def commit() -> None:
            done = False
            while not done:
                batch = [await queue.get()]
                # Replies of one poll round arrive within a few ms: let them gather (until
                # 1 ms passes with none, 10 ms at most) so one commit stores them all.
                for _ in range(10):
                    seen = queue.qsize()
                    await asyncio.sleep(0.001)
                    if queue.qsize() == seen:
                        break
                while not queue.empty():
                    batch.append(queue.get_nowait())
                done = batch[-1] is None or None in batch
                rows = [r for r in batch if r is not None]
                if rows:
                    await self.writer.store_results(self.run_id, rows)
                    self.out.committed_at = datetime.now(UTC)
                    self.out.end_to_committed_ms = (time.perf_counter() - t_end) * 1000

        committer = asyncio.create_task(commit())
        await asyncio.gather(*(guarded(m) for m in targets))
        await queue.put(None)
        await committer
        if self.out.committed_at is None:  # nothing to store (every seat already scored)
            self.out.committed_at = datetime.now(UTC)
            self.out.end_to_committed_ms = (time.perf_counter() - t_end) * 1000
        # Only after the commit: a flag must never reach the journal ahead of its score.
        for machine_id, flag in unfinished.items():
            if machine_id in self._results:
                await self._flag(machine_id, flag)
        await asyncio.gather(*(self._cross_check(m) for m in to_check))
        await self._settle_malfunctions()  # rule 20/21 handled before the heat closes
        for machine_id, score in self._results.items():
            seat = self.out.seats[machine_id]
            if seat.state is not SeatState.MALFUNCTION:
                seat.state = SeatState.SCORED
            seat.score, seat.meters = score.credits, score.meters
            self._emit(Progress.SCORE, machine_id=machine_id, value=score.credits)
        if self.hooks is not None and self.view.heat_id is not None:
            for machine_id, score in self._results.items():
                await self.hooks.record_score(self.view.heat_id, machine_id, score)

    async def _read_score(self, machine_id: str) -> HeatScore | None:
        """A NATIVE machine's score from its tournament meters alone (one poll), or None
        when the driver or the machine cannot (the caller then reads credits and meters)."""
        link = self.links[machine_id]
        driver = link.driver
        if not isinstance(driver, TournamentMeterReader):
            return None
        if self.out.seats[machine_id].support != _NATIVE:
            return None
        try:
            meters = await link.call(driver.tournament_meters)
        except MachineRefused:
            return None  # no tournament meters after all: the full read decides
        # rule 12: the score is the tournament credit meter = start - wagered + won
        score = tournament_credits(self.view.credits, meters.credits_wagered, meters.credits_won)
        if score < 0:
            return None  # meters that cannot be right: let the credit meter decide
        return HeatScore(credits=score, meters=meters)

    async def _cross_check(self, machine_id: str) -> None:
        """Compare a score computed from the meters with the credit meter (SAS LP 1A)."""
        link = self.links[machine_id]
        computed = self._results[machine_id].credits
        try:
            meter = await link.call(link.driver.credits)
        except DriverError as exc:
            flag = f"cross-check unread ({_why(exc)}); score {computed} from meters stands"
        else:
            if meter == computed:
                return
            flag = (
                f"cross-check mismatch: credit meter {meter}, score {computed} from the "
                "tournament meters (stored; for the director to review)"
            )
        self.mismatches[machine_id] = flag
        await self._flag(machine_id, flag)

    async def _flag(self, machine_id: str, flag: str) -> None:
        """A scored seat for the director to review: seat error, outcome note, journal."""
        seat = self.out.seats[machine_id]
        seat.error = f"{seat.error}; {flag}" if seat.error else flag
        self.out.notes.append(f"{machine_id}: {flag}")
        await self.writer.set_seats(self.run_id, {machine_id: SeatState.SCORED}, note=flag)

    async def _release(self) -> None:
        """Return every machine to normal play: exit tournament mode, enable play."""
        targets = [m for m, s in self.out.seats.items() if s.state is not SeatState.RELEASED]

        async def release(machine_id: str) -> None:
            link = self.links[machine_id]
            await link.call(link.driver.exit_tournament)
            await link.call(link.driver.unlock)

        results = await asyncio.gather(*(release(m) for m in targets), return_exceptions=True)
        released: list[str] = []
        for machine_id, result in zip(targets, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                seat = self.out.seats[machine_id]
                pending = f"release pending: {_why(result)}"
                seat.error = f"{seat.error}; {pending}" if seat.error else pending
                self.out.notes.append(f"{machine_id}: not yet back in normal play")
            else:
                released.append(machine_id)
                self.out.seats[machine_id].state = SeatState.RELEASED
        if released:
            await self.writer.set_seats(self.run_id, dict.fromkeys(released, SeatState.RELEASED))
        if all(s.state is SeatState.RELEASED for s in self.out.seats.values()):
            await self.writer.settle(self.run_id)

    # -- supervision during play -----------------------------------------------------------
    def _start_watchers(self) -> None:
        self._stop_watch.clear()
        self._watchers = [
            asyncio.create_task(self._watch(m), name=f"watch-{m}")
            for m in self._seats_in({SeatState.PLAYING})
        ]

    async def _stop_watchers(self) -> None:
        """Stop the per-machine watchers; one stuck in a long poll is cancelled, so the
        lock at the end never waits behind it."""
        self._stop_watch.set()
        if self._watchers:
            _, stuck = await asyncio.wait(self._watchers, timeout=0.02)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*self._watchers, return_exceptions=True)
        self._watchers = []

    def _quiet_before_end(self) -> bool:
        """True once a poll now could still hold up the lock at the end (poll spacing)."""
        if self.ends_at is None:
            return False
        left = (self.ends_at - datetime.now(UTC)).total_seconds()
        return left < self._spacing() + 0.05

    async def _watch(self, machine_id: str) -> None:
        link = self.links[machine_id]
        tick = 0
        while not self._stop_watch.is_set() and not self._quiet_before_end():
            if self.out.seats[machine_id].state is SeatState.MALFUNCTION:
                return  # marked from outside (an SNMP trap): out of the heat
            try:
                events = await link.call(link.driver.poll_events)
                self._track_games(machine_id, events)
                bad = [e for e in events if e.kind in MALFUNCTION_EVENTS]
                if bad:
                    self._spawn_malfunction(machine_id, f"machine reported {bad[0].kind.value}")
                    return
                if tick % 2 == 0 and not (self._stop_watch.is_set() or self._quiet_before_end()):
                    credits = await link.call(link.driver.credits)
                    self._emit(Progress.CREDITS, machine_id=machine_id, value=credits)
            except TRANSIENT_ERRORS as exc:
                self._spawn_malfunction(machine_id, f"stopped answering: {_why(exc)}")
                return
            except DriverError:
                pass  # a refused read is not a malfunction; keep watching
            tick += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_watch.wait(), self.poll_interval_s)

    def _track_games(self, machine_id: str, events: list[MachineEvent]) -> None:
        """Follow whether a game is in progress: the last game event seen decides."""
        for e in events:
            if e.kind is MachineEventKind.GAME_STARTED:
                self._in_game.add(machine_id)
            elif e.kind is MachineEventKind.GAME_ENDED:
                self._in_game.discard(machine_id)

    async def _await_game_end(self, machine_id: str) -> str:
        """After the lock: poll events until the game in progress ends, at most
        ``game_end_wait_s``.  Returns a flag for the director if it did not (rule 23: the
        director decides on the score), else ""."""
        link = self.links[machine_id]
        # A paced driver (SAS: 200 ms) spaces its polls itself; pace the others here.
        pause = 0.0 if min_spacing(link.driver) else self.poll_interval_s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.game_end_wait_s
        why = f"game still in progress {self.game_end_wait_s:g} s after the lock"
        while machine_id in self._in_game:
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                events = await asyncio.wait_for(link.call(link.driver.poll_events), left)
            except TimeoutError:
                break
            except DriverError as exc:
                why = f"game end not seen ({_why(exc)})"
                break
            self._track_games(machine_id, events)
            if pause and machine_id in self._in_game:
                await asyncio.sleep(min(pause, max(0.0, deadline - loop.time())))
        if machine_id not in self._in_game:
            return ""
        self._in_game.discard(machine_id)
        return f"{why}; scored from the meters as they stood (for the director, rule 23)"

    def report_event(self, event: MachineEvent, source: str = "SNMP trap") -> bool:
        """An event about a seat from outside the heat's own polling (an SNMP trap from
        :mod:`gateway.machines.health`).  A malfunction kind on a playing seat ends its part in the
        heat (rules 20/21); returns True if it did."""
        if self.current_run is None:
            return False  # not driving a heat yet
        seat = self.out.seats.get(event.machine_id)
        if seat is None or event.kind not in TRAP_MALFUNCTION_EVENTS:
            return False
        if seat.state is not SeatState.PLAYING or self.out.state is not S.RUNNING:
            return False  # not playing (yet, or any more): arming and the end handle it
        self._spawn_malfunction(event.machine_id, f"{source}: {event.kind.value}")
        return True

    def _spawn_malfunction(self, machine_id: str, reason: str) -> None:
        """Handle a malfunction in its own task: stopping the watchers (which may cancel
        the watcher that found it) must never cut the rule 20/21 handling short."""
        task = asyncio.create_task(self._malfunction(machine_id, reason))
        self._handling.append(task)

    async def _settle_malfunctions(self) -> None:
        while self._handling:
            pending, self._handling = self._handling, []
            await asyncio.gather(*pending)

    async def _malfunction(self, machine_id: str, reason: str) -> None:
        """Rule 20/21: the machine leaves the heat; its player is handled by the services."""
        seat = self.out.seats[machine_id]
        if seat.state is SeatState.MALFUNCTION:
            return
        seat.state, seat.error = SeatState.MALFUNCTION, reason
        await self.writer.set_seats(self.run_id, {machine_id: SeatState.MALFUNCTION}, note=reason)
        self._emit(Progress.MALFUNCTION, machine_id=machine_id, detail=reason)
        link = self.links[machine_id]
        with contextlib.suppress(DriverError, TimeoutError):
            await asyncio.wait_for(link.once(link.driver.lock), 1.0)  # stop play if it can
        if self.hooks is not None and self.view.heat_id is not None:
            await self.hooks.machine_malfunctioned(self.view.heat_id, machine_id, reason)

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

    async def _reload_results(self) -> None:
        for r in await self.writer.journal.results(self.run_id):
            seat = self.out.seats[r.machine_id]
            meters = TournamentMeters(r.games_played, r.games_won, r.credits_wagered, r.credits_won)
            self._results[r.machine_id] = HeatScore(credits=r.score, meters=meters)
            seat.score, seat.meters = r.score, meters

    def _spacing(self) -> float:
        """The longest minimum gap between two polls to one machine on any link (SAS: 200 ms).

        Drivers that pace their polls are :class:`PacedLink`; others are taken as unpaced.
        """
        return max((min_spacing(x.driver) for x in self.links.values()), default=0.0)

    def _seats_in(self, wanted: set[SeatState] | frozenset[SeatState]) -> list[str]:
        return [m for m, s in self.out.seats.items() if s.state in wanted]

    def _feed_key(self) -> str:
        return str(self.view.heat_id) if self.view.heat_id is not None else f"run-{self.run_id}"

    def _note_state(self, state: RunState) -> None:
        self.out.state = state
        left = None
        if self.ends_at is not None and state is S.RUNNING:
            left = max(0.0, (self.ends_at - datetime.now(UTC)).total_seconds())
        self._emit(Progress.STATE, state=state.value, seconds_left=left)

    def _emit(self, kind: Progress, **kw: Any) -> None:
        if self.progress is not None:
            self.progress(ProgressNote(kind=kind, run_id=self.run_id, **kw))


def _prepared_unlock(driver: object) -> Trigger | None:
    return driver.prepare_unlock() if isinstance(driver, PreparedUnlock) else None


def _prepared_lock(driver: object) -> Trigger | None:
    return driver.prepare_lock() if isinstance(driver, PreparedLock) else None


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


__all__ = ["Command", "HeatOutcome", "HeatRunner", "SeatOutcome", "close_links", "open_links"]
