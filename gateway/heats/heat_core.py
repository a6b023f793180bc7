"""The state every phase of a heat shares (:class:`HeatCore`), and the T20/T21 path.

The heat runner is split by phase: :mod:`gateway.heats.floor_actions` (arm, unlock, end
lock, release), :mod:`gateway.heats.watch` (play), :mod:`gateway.heats.collect` (scores)
and :mod:`gateway.heats.runner` (the state loop).  Each phase is a mixin over this class,
which holds the heat being driven, its seats, and marks a machine malfunctioned.

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gateway.feed import FeedPublisher
from gateway.heat_formats import TIMED, HeatFormat
from gateway.heats.hooks import Progress, ProgressNote, ProgressSink, TournamentSide
from gateway.heats.spool import JournalWriter
from gateway.heats.sync_start import SyncStart
from gateway.machines.capabilities import LiveCredits, min_spacing
from gateway.machines.driver import (
    DriverError,
    MachineEvent,
    MachineEventKind,
    TournamentSupport,
)
from gateway.machines.links import MachineLink
from gateway.scores import HeatScore, TournamentMeters
from storage.effects import EffectIn, EffectKind
from storage.journal import MachineState, RunState, RunView
from storage.journal_ops import SeatsOp
from storage.lease import StaleOwner

log = logging.getLogger(__name__)

S = RunState

_LIVE = frozenset({MachineState.ARMED, MachineState.PLAYING, MachineState.LOCKED})
_NATIVE = TournamentSupport.NATIVE.value


class Command(enum.Enum):
    PAUSE = "pause"
    RESUME = "resume"
    ABORT = "abort"
    RESTART = "restart"
    FINISH = "finish"  # F4: every machine is done before the time (games or credits)


@dataclass(frozen=True, slots=True)
class Directive:
    command: Command
    reason: str = ""


@dataclass(slots=True)
class MachineOutcome:
    machine_id: str
    support: str | None = None
    state: MachineState = MachineState.PENDING
    unlock_ack_ms: float | None = None  # when its unlock was acknowledged, after the fire
    unlocked_at: datetime | None = None  # the same, as a time: its proof of play (T20)
    score: int | None = None
    meters: TournamentMeters | None = None
    error: str = ""
    # The last order the machine acknowledged during the heat ("unlocked", "locked"): what
    # a director sees after a pause or resume (the console's live heat).
    acknowledged: str | None = None


@dataclass(slots=True)
class HeatOutcome:
    run_id: int
    state: RunState
    started_at: datetime | None
    ends_at: datetime | None
    seats: dict[str, MachineOutcome]
    end_to_committed_ms: float | None = None  # from the start of collection
    committed_at: datetime | None = None  # when the last score of the heat was committed
    notes: list[str] = field(default_factory=list)


class HeatCore:
    """What every phase of a heat shares: the heat, its seats and the T20/T21 path."""

    view: RunView
    run_id: int
    resumed: bool
    ends_at: datetime | None
    paused_left_ms: int | None
    out: HeatOutcome
    format: HeatFormat = TIMED  # F1: how the heat ends per machine (set by the runner)

    def __init__(
        self,
        writer: JournalWriter,
        links: Mapping[str, MachineLink],
        *,
        tournament: TournamentSide | None = None,
        feed: FeedPublisher | None = None,
        progress: ProgressSink | None = None,
        poll_interval_s: float = 0.2,  # SAS: at most one poll every 200 ms per machine
        late_grace_s: float = 2.0,
        game_end_wait_s: float = 30.0,
        stop_after: RunState | None = None,
        start_at: SyncStart | None = None,
    ) -> None:
        self.writer = writer
        # A synchronised start (a heat across gateways): fire at this instant, not at once.
        self.start_at = start_at
        self._fire_at: datetime | None = None  # that instant by this host's clock, once armed
        self.links = links
        if tournament is None:  # every path drains: a tournament heat's effects never wait
            from gateway.tournament.bridge import TournamentBridge

            tournament = TournamentBridge(writer.journal.sessions)
        self.tournament = tournament
        self.feed = feed
        self.progress = progress
        self.poll_interval_s = poll_interval_s
        self.late_grace_s = late_grace_s
        # After the end-of-heat lock, how long to wait for a game in progress to end
        # before scoring what the meters say (flagged for the director, T23).
        self.game_end_wait_s = game_end_wait_s
        # Machines whose last game event seen was GAME_STARTED (no GAME_ENDED yet): the
        # lock lets that game complete first (SAS LP 01), so its meters are read after it.
        self._in_game: set[str] = set()
        self.stop_after = stop_after  # tests: stop driving once this state is journaled
        self.directives: asyncio.Queue[Directive] = asyncio.Queue()
        self._stop_watch = asyncio.Event()
        self._watchers: list[asyncio.Task[None]] = []
        # The watchers' quiet time before the end, and their last turn's lead (both set
        # as they start, and again a second before the end: :meth:`Watching._take_quiet`).
        self._quiet_s = 0.05
        self._last_turn_s = 0.05
        self._results: dict[str, HeatScore] = {}
        self._credits_shown: dict[str, int] = {}  # the live display's credits per seat
        self._handling: list[asyncio.Task[None]] = []  # malfunctions being handled
        # Scores whose credit-meter cross-check failed, with the flag journaled for each.
        self.mismatches: dict[str, str] = {}
        self.restart_reason = "tournament system failure (rule 20)"
        # The run being driven (None before :meth:`drive`): the live feed finds heats by it.
        self.current_run: int | None = None
        # Called once, as soon as the floor is back in hand (recovery measures this).
        self.on_control: Callable[[], None] | None = None

    async def _flag(self, machine_id: str, flag: str) -> None:
        """A scored seat for the director to review: seat error, outcome note, journal."""
        seat = self.out.seats[machine_id]
        seat.error = f"{seat.error}; {flag}" if seat.error else flag
        self.out.notes.append(f"{machine_id}: {flag}")
        await self.writer.write(SeatsOp(self.run_id, {machine_id: MachineState.SCORED}, note=flag))

    def _track_games(self, machine_id: str, events: list[MachineEvent]) -> None:
        """Follow whether a game is in progress: the last game event seen decides."""
        for e in events:
            if e.kind is MachineEventKind.GAME_STARTED:
                self._in_game.add(machine_id)
            elif e.kind is MachineEventKind.GAME_ENDED:
                self._in_game.discard(machine_id)

    async def _seat_done(self, machine_id: str, reason: str) -> None:
        """F2–F4: the machine has played its heat under the format.  Its end is journaled
        first (seat LOCKED, with the clause), then it is locked (a game in progress
        completes first, LP 01); its score is collected with the others' at the heat's
        end.  A lock that fails here is done again by the end's lock of every seat."""
        seat = self.out.seats[machine_id]
        if seat.state is not MachineState.PLAYING:
            return
        seat.state = MachineState.LOCKED
        await self.writer.write(
            SeatsOp(self.run_id, {machine_id: MachineState.LOCKED}, note=reason)
        )
        log.info("heat run %s: %s done (%s)", self.run_id, machine_id, reason,
                 extra={"machine": machine_id})  # fmt: skip
        self._emit(Progress.DONE, machine_id=machine_id, detail=reason)
        link = self.links[machine_id]
        try:
            await link.call(link.driver.lock)
            seat.acknowledged = "locked"
        except DriverError as exc:
            log.warning("heat run %s: lock of done %s failed (%s); the end locks it again",
                        self.run_id, machine_id, _why(exc))  # fmt: skip
        self._check_all_done()

    def _check_all_done(self) -> None:
        """F4: a heat with a format other than timed ends once no machine plays on."""
        if self.format.timed or self._seats_in({MachineState.PLAYING}):
            return
        if not self._seats_in({MachineState.LOCKED}):
            return  # nobody finished by the format (all malfunctioned): the time decides
        self.directives.put_nowait(
            Directive(Command.FINISH, f"rule F4: every machine done ({self.format.spec()})")
        )

    async def _relock_done(self) -> None:
        """F5: resumed, a machine journaled done is locked again (the lock may not have
        left before the gateway stopped); never unlocked."""
        for machine_id in self._seats_in({MachineState.LOCKED}):
            link = self.links[machine_id]
            with contextlib.suppress(DriverError):
                await link.call(link.driver.lock)

    def _spawn_malfunction(self, machine_id: str, reason: str) -> None:
        """Handle a malfunction in its own task: stopping the watchers (which may cancel
        the watcher that found it) must never cut the T20/T21 handling short."""
        task = asyncio.create_task(self._malfunction(machine_id, reason))
        self._handling.append(task)

    async def _settle_malfunctions(self) -> None:
        while self._handling:
            pending, self._handling = self._handling, []
            await asyncio.gather(*pending)

    async def _malfunction(self, machine_id: str, reason: str) -> None:
        """T20/T21: the machine leaves the heat; its player is handled by the services."""
        seat = self.out.seats[machine_id]
        if seat.state is MachineState.MALFUNCTION:
            return
        seat.state, seat.error = MachineState.MALFUNCTION, reason
        log.warning(
            "heat run %s: machine %s malfunctioned (%s); the heat goes on",
            self.run_id, machine_id, reason, extra={"machine": machine_id},
        )  # fmt: skip
        effect = EffectIn(EffectKind.MALFUNCTION, datetime.now(UTC), machine_id, {"reason": reason})
        await self.writer.write(
            SeatsOp(
                self.run_id, {machine_id: MachineState.MALFUNCTION}, note=reason, effects=[effect]
            )
        )
        self._emit(Progress.MALFUNCTION, machine_id=machine_id, detail=reason)
        link = self.links[machine_id]
        with contextlib.suppress(DriverError, TimeoutError):
            await asyncio.wait_for(link.once(link.driver.lock), 1.0)  # stop play if it can
        await self._drain()
        self._check_all_done()  # F4: the last machine playing may have been this one

    async def _drain(self) -> None:
        """Carry the run's pending tournament effects into the tournament now.  One that
        cannot be applied now (the database away, a bug) stays pending: the scheduler's
        periodic drain or a recovery applies it later, and the run is not settled before."""
        if self.view.heat_id is None:
            return  # a technician's test heat: no tournament side
        try:
            await self.tournament.drain(self.run_id)
        except StaleOwner:
            raise
        except Exception:
            log.exception("heat run %s: tournament effects left pending", self.run_id)

    def _seats_in(self, wanted: set[MachineState] | frozenset[MachineState]) -> list[str]:
        return [m for m, s in self.out.seats.items() if s.state in wanted]

    def _spacing(self) -> float:
        """The longest minimum gap between two polls to one machine on any link (SAS: 200 ms).

        Drivers that pace their polls are :class:`PacedLink`; others are taken as unpaced.
        """
        return max((min_spacing(x.driver) for x in self.links.values()), default=0.0)

    def _show_credits(self, machine_id: str, value: int, *, again: bool = False) -> None:
        """A seat's credits to the live display, only when they change (``again``: also
        when they do not, as the collection's reads confirm the last credits)."""
        if again or self._credits_shown.get(machine_id) != value:
            self._credits_shown[machine_id] = value
            self._emit(Progress.CREDITS, machine_id=machine_id, value=value)

    @contextlib.contextmanager
    def _following(self, machine_id: str) -> Iterator[None]:
        """While inside, a driver that reports in real time shows each event's credits
        as the event is read (:meth:`LiveCredits.follow_live_credits`)."""
        driver = self.links[machine_id].driver
        if not isinstance(driver, LiveCredits):
            yield
            return
        driver.follow_live_credits(lambda value: self._show_credits(machine_id, value))
        try:
            yield
        finally:
            driver.follow_live_credits(None)

    def _emit(self, kind: Progress, **kw: Any) -> None:
        if self.progress is not None:
            # The heat id rides on every note: a run resumed after a restart is no live
            # heat of the scheduler's, and its feed must still find the heat's topics.
            note = ProgressNote(kind=kind, run_id=self.run_id, heat_id=self.view.heat_id, **kw)
            self.progress(note)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
