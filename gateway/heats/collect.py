"""Score collection after a heat's end (T12), stored in group commits.

Clauses: docs/rules.md#t12.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gateway.heats.collector_pause import resume_collector
from gateway.heats.heat_core import _NATIVE, HeatCore, _why
from gateway.heats.hooks import Progress
from gateway.machines.capabilities import LiveCredits, TournamentMeterReader, min_spacing
from gateway.machines.driver import DriverError, MachineRefused
from gateway.machines.scoring import tournament_credits
from gateway.scores import HeatScore, TournamentMeters
from storage.journal import MachineState, ResultIn
from storage.journal_ops import ResultsOp


@dataclass(slots=True)
class _Collection:
    """One collection's working set: rows on their way to the journal, seats to check."""

    t_end: float  # perf_counter at the start of collection
    queue: asyncio.Queue[ResultIn | None] = field(default_factory=asyncio.Queue)
    to_check: list[str] = field(default_factory=list)  # scored from meters: cross-check
    unfinished: dict[str, str] = field(default_factory=dict)  # game still on: the flag


async def _next_batch(queue: asyncio.Queue[ResultIn | None]) -> list[ResultIn | None]:
    """The next row and any that follow it closely: replies of one poll round arrive within
    a few ms, so wait until 1 ms passes with none (10 ms at most) and commit them at once."""
    batch = [await queue.get()]
    for _ in range(10):
        seen = queue.qsize()
        await asyncio.sleep(0.001)
        if queue.qsize() == seen:
            break
    while not queue.empty():
        batch.append(queue.get_nowait())
    return batch


def _result_row(machine_id: str, score: HeatScore) -> ResultIn:
    m = score.meters
    return ResultIn(
        machine_id=machine_id,
        score=score.credits,
        games_played=m.games_played,
        games_won=m.games_won,
        credits_wagered=m.credits_wagered,
        credits_won=m.credits_won,
        collected_at=datetime.now(UTC),
    )


class Collecting(HeatCore):
    """Score collection after the end (a phase of the runner)."""

    async def _collect(self) -> None:
        """Read every locked machine's score and store it (group commits as they arrive).

        The locks were acknowledged before this state (``_lock_all``), but SAS LP 01 lets
        a game in progress complete first, and the watchers went quiet a poll spacing
        before the end (so the lock leaves on time): a game pressed in that last moment
        has not been seen.  So every machine is polled for events once after the lock
        (all machines together), and one whose last game event is GAME_STARTED is polled
        on until GAME_ENDED (``game_end_wait_s`` at most; then scored as its meters stand
        and flagged for the director, T23) before its meters are read: every game
        started before the end is in the score.  A NATIVE machine whose driver
        reads the tournament meters alone (SAS LP 99) is scored from them: starting credits
        - credits wagered + credits won is its tournament credit meter (T12), stored
        with the raw meters one poll after the lock.  Its credit meter (LP 1A) is read one
        poll later, after the commit, as a cross-check: a difference is flagged for the
        director (journal seat note, the seat's error, the outcome's notes), the stored
        score stands.  Other machines report credits and meters in one driver call.
        """
        run = _Collection(t_end=time.perf_counter())
        targets = self._seats_in({MachineState.LOCKED, MachineState.PLAYING, MachineState.ARMED})
        committer = asyncio.create_task(self._commit_all(run))
        await asyncio.gather(*(self._read_guarded(run, m) for m in targets))
        await run.queue.put(None)
        await committer
        resume_collector(self)  # the scores are stored: the end's pause is over
        if self.out.committed_at is None:  # nothing to store (every seat already scored)
            self._note_commit(run)
        # Only after the commit: a flag must never reach the journal ahead of its score.
        for machine_id, flag in run.unfinished.items():
            if machine_id in self._results:
                await self._flag(machine_id, flag)
        # The stored scores reach the standings while the credit meters are read for the
        # cross-check: a mismatch is only flagged for the director, the stored score
        # stands (T12, T23), so the standings need not wait a poll round for it.
        checks = asyncio.gather(*(self._check_credit_meter(m) for m in run.to_check))
        try:
            await self._drain()
        except BaseException:  # a lost lease: no flag is written after it
            checks.cancel()
            raise
        for machine_id, flag in zip(run.to_check, await checks, strict=True):
            if flag:
                self.mismatches[machine_id] = flag
                await self._flag(machine_id, flag)
        await self._settle_malfunctions()  # T20/T21 handled before the heat closes
        await self._report_scores()

    async def _read_guarded(self, run: _Collection, machine_id: str) -> None:
        try:
            await self._read_seat(run, machine_id)
        except DriverError as exc:  # the full read after a refused meter read
            await self._malfunction(machine_id, f"score unreadable: {_why(exc)}")

    async def _read_seat(self, run: _Collection, machine_id: str) -> None:
        with self._following(machine_id):  # the last games' credits shown as read
            await self._read_seat_following(run, machine_id)

    async def _read_seat_following(self, run: _Collection, machine_id: str) -> None:
        link = self.links[machine_id]
        flag = await self._await_game_end(machine_id)
        if flag:
            run.unfinished[machine_id] = flag
        # The live display learns the last credits now, not with the stored scores: a
        # change in the heat's last moment (the watchers went quiet) is shown at once.
        driver = link.driver
        shown = driver.live_credits() if isinstance(driver, LiveCredits) else None
        if shown is not None:
            self._show_credits(machine_id, shown, again=True)
        try:
            score = await self._read_score(machine_id)
        except DriverError as exc:
            await self._malfunction(machine_id, f"score unreadable: {_why(exc)}")
            return
        if score is None:
            score = await link.call(link.driver.heat_score)
        else:
            run.to_check.append(machine_id)
        self._show_credits(machine_id, score.credits)
        self._results[machine_id] = score
        await run.queue.put(_result_row(machine_id, score))

    async def _commit_all(self, run: _Collection) -> None:
        """Store rows as they arrive, a batch per commit, until the end marker (None)."""
        done = False
        while not done:
            batch = await _next_batch(run.queue)
            done = None in batch
            rows = [r for r in batch if r is not None]
            if rows:
                await self.writer.write(ResultsOp(self.run_id, rows))
                self._note_commit(run)

    def _note_commit(self, run: _Collection) -> None:
        self.out.committed_at = datetime.now(UTC)
        self.out.end_to_committed_ms = (time.perf_counter() - run.t_end) * 1000

    async def _report_scores(self) -> None:
        for machine_id, score in self._results.items():
            seat = self.out.seats[machine_id]
            if seat.state is not MachineState.MALFUNCTION:
                seat.state = MachineState.SCORED
            seat.score, seat.meters = score.credits, score.meters
            self._emit(Progress.SCORE, machine_id=machine_id, value=score.credits)
        await self._drain()  # the bank's scores reach the tournament in one transaction

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
        # T12: the score is the tournament credit meter = start - wagered + won
        score = tournament_credits(self.view.credits, meters.credits_wagered, meters.credits_won)
        if score < 0:
            return None  # meters that cannot be right: let the credit meter decide
        return HeatScore(credits=score, meters=meters)

    async def _meters_if_readable(self, machine_id: str) -> TournamentMeters | None:
        """The machine's tournament meters, if its driver reads them and it answers."""
        link = self.links[machine_id]
        driver = link.driver
        if not isinstance(driver, TournamentMeterReader):
            return None
        try:
            return await link.call(driver.tournament_meters)
        except DriverError:
            return None

    async def _check_credit_meter(self, machine_id: str) -> str:
        """Compare a score computed from the meters with the credit meter (SAS LP 1A);
        the flag for the director, or "" if they agree."""
        link = self.links[machine_id]
        computed = self._results[machine_id].credits
        try:
            meter = await link.call(link.driver.credits)
        except DriverError as exc:
            return f"cross-check unread ({_why(exc)}); score {computed} from meters stands"
        if meter == computed:
            return ""
        return (
            f"cross-check mismatch: credit meter {meter}, score {computed} from the "
            "tournament meters (stored; for the director to review)"
        )

    async def _await_game_end(self, machine_id: str) -> str:
        """After the lock: poll events once, then on while a game is in progress, at most
        ``game_end_wait_s``.  Returns a flag for the director if the game's end was not
        seen (T23: the director decides on the score), else ""."""
        link = self.links[machine_id]
        # A paced driver (SAS: 200 ms) spaces its polls itself; pace the others here.
        pause = 0.0 if min_spacing(link.driver) else self.poll_interval_s
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.game_end_wait_s
        why = f"game still in progress {self.game_end_wait_s:g} s after the lock"
        polled = False
        while not polled or machine_id in self._in_game:
            left = deadline - loop.time()
            if left <= 0:
                break
            try:
                events = await asyncio.wait_for(link.call(link.driver.poll_events), left)
            except TimeoutError:
                if machine_id not in self._in_game:
                    why = f"no reply in {self.game_end_wait_s:g} s"
                break
            except DriverError as exc:
                in_game = machine_id in self._in_game
                why = f"game end not seen ({_why(exc)})" if in_game else _why(exc)
                break
            polled = True
            self._track_games(machine_id, events)
            if pause and machine_id in self._in_game:
                await asyncio.sleep(min(pause, max(0.0, deadline - loop.time())))
        return self._game_end_flag(machine_id, polled, why)

    def _game_end_flag(self, machine_id: str, polled: bool, why: str) -> str:
        if machine_id in self._in_game:
            self._in_game.discard(machine_id)
            return f"{why}; scored from the meters as they stood (for the director, rule 23)"
        if not polled:  # a game pressed just before the end may not be in the meters yet
            return (
                f"events unread after the lock ({why}); a game pressed just before the end "
                "may be missing from the meters (for the director, rule 23)"
            )
        return ""

    async def _reload_results(self) -> None:
        for r in await self.writer.journal.results(self.run_id):
            seat = self.out.seats[r.machine_id]
            meters = TournamentMeters(r.games_played, r.games_won, r.credits_wagered, r.credits_won)
            self._results[r.machine_id] = HeatScore(credits=r.score, meters=meters)
            seat.score, seat.meters = r.score, meters
