"""Floor commands of a heat: arm, the start's unlock, the end's lock and the release.

Each is safe to do again after a crash (the runner's theory of operation).  The start
and the end fire prepared commands (:mod:`gateway.machines.capabilities`) at the whole
bank in one tight loop where drivers offer them; other machines go in one gather.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from gateway.heats.heat_core import HeatCore, _why
from gateway.heats.sync_start import spin_until
from gateway.machines.capabilities import HeatBaseline, PreparedLock, PreparedUnlock, Trigger
from gateway.machines.driver import TRANSIENT_ERRORS, DriverError
from storage.journal import MachineState
from storage.journal_ops import SeatsOp

log = logging.getLogger(__name__)

# A release that fails is tried again this many times, with a doubling pause, before the
# run is left "release pending" for the scheduler's periodic settling (no restart).
RELEASE_ROUNDS = 3
RELEASE_PAUSE_S = 0.5


class FloorActions(HeatCore):
    """The floor commands (a phase of :class:`gateway.heats.runner.HeatRunner`)."""

    async def _arm(self) -> list[str]:
        """Lock each machine and enter tournament mode (idempotent on a resume).  Returns
        the machines that were silent (link errors, not refusals): the runner judges
        whether that is a system failure (:mod:`gateway.heats.decisions`)."""
        credits, seconds = self.view.credits, self.view.seconds
        targets = self._seats_in({MachineState.PENDING, MachineState.ARMED})

        async def arm(machine_id: str) -> tuple[str, str, dict[str, int] | None]:
            link = self.links[machine_id]
            ident = await link.call(link.driver.identity)
            await link.call(link.driver.lock)
            await link.call(lambda: link.driver.enter_tournament(credits, seconds))
            driver = link.driver
            baseline = driver.heat_baseline() if isinstance(driver, HeatBaseline) else None
            return machine_id, ident.tournament.value, baseline

        results = await asyncio.gather(*(arm(m) for m in targets), return_exceptions=True)
        supports: dict[str, str] = {}
        baselines: dict[str, dict[str, int]] = {}
        silent: list[str] = []
        for machine_id, result in zip(targets, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                if isinstance(result, TRANSIENT_ERRORS):
                    silent.append(machine_id)
                await self._malfunction(machine_id, f"arming failed: {_why(result)}")
            else:
                supports[machine_id] = result[1]
                if result[2] is not None:
                    baselines[machine_id] = result[2]
                self.out.seats[machine_id].support = result[1]
                self.out.seats[machine_id].state = MachineState.ARMED
        await self.writer.write(
            SeatsOp(
                self.run_id,
                dict.fromkeys(supports, MachineState.ARMED),
                supports=supports,
                baselines=baselines,
            )
        )
        return silent

    async def _fire(self, *, at: float | None = None) -> None:
        """Unlock every armed machine together: one gather, no retries on the first try.

        A driver may offer ``prepare_unlock()``: everything done ahead (frame built, link
        idle), returning a zero-argument callable that sends at once and returns an
        awaitable for the acknowledgement.  Then all sends go out in one tight loop
        before any acknowledgement is awaited (least skew); other machines unlock in one
        gather, each its own coroutine, which also leaves in one pass of the event loop.
        """
        targets = self._seats_in({MachineState.ARMED, MachineState.PLAYING})
        fired = self._trigger_all(targets, _prepared_unlock, at=at)
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
                    seat.unlocked_at = datetime.now(UTC)
                    seat.error = f"late start after {_why(result)}"
                    seat.acknowledged = "unlocked"
                except DriverError as exc:
                    await self._malfunction(machine_id, f"unlock failed: {_why(exc)}")
                    continue
            else:
                seat.unlock_ack_ms = result
                seat.unlocked_at = datetime.now(UTC)
                seat.acknowledged = "unlocked"
            seat.state = MachineState.PLAYING

    def _trigger_all(
        self,
        targets: list[str],
        prepare: Callable[[object], Trigger | None],
        *,
        at: float | None = None,
    ) -> dict[str, Awaitable[None]]:
        """Fire a prepared command (:mod:`gateway.machines.capabilities`) at every target
        whose driver offers it, in one tight loop; returns the acknowledgements to await.
        A machine whose link is not ready (nothing sent) is left to the plain path.
        ``at``: a synchronised start's instant (perf counter), spun to once the frames
        are built."""
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
            if at is not None:
                spin_until(at)
            for machine_id, trigger in triggers:
                with contextlib.suppress(DriverError):
                    fired[machine_id] = trigger()  # sends now; an awaitable for the ACK
        finally:
            if collecting:
                gc.enable()
        return fired

    async def _lock_all(self, new_state: MachineState | None) -> None:
        """Lock every machine in play together (the heat's end, a pause): prepared locks
        in one tight loop where the driver offers them, then the ordinary retried lock
        for any machine whose fired lock was not acknowledged."""
        targets = self._seats_in({MachineState.ARMED, MachineState.PLAYING, MachineState.LOCKED})
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
                continue
            self.out.seats[machine_id].acknowledged = "locked"
            if new_state is not None:
                self.out.seats[machine_id].state = new_state

    async def _release(self) -> None:
        """Return every machine to normal play: exit tournament mode, enable play.  A
        machine that fails is tried again (a few rounds, doubling pauses); one still out
        is reported (seat error, feed) and left to the scheduler's periodic settling —
        the run is never settled while a machine is in tournament mode."""
        pause = RELEASE_PAUSE_S
        for round_number in range(1, RELEASE_ROUNDS + 1):
            failed = await self._release_once()
            if not failed:
                return
            if round_number < RELEASE_ROUNDS:
                await asyncio.sleep(pause)
                pause *= 2
        for machine_id, why in failed.items():
            seat = self.out.seats[machine_id]
            pending = f"release pending: {why}"
            seat.error = f"{seat.error}; {pending}" if seat.error else pending
            self.out.notes.append(f"{machine_id}: not yet back in normal play")
        log.warning("heat run %s: release pending for %s", self.run_id, ", ".join(failed))
        if self.feed is not None:
            await self.feed.publish(
                f"heat/{self._feed_key()}/release",
                {"pending": sorted(failed), "state": "release-pending"},
                retain=True,
            )

    async def _release_once(self) -> dict[str, str]:
        """One release round over every machine not yet back; the failures and why."""
        targets = [m for m, s in self.out.seats.items() if s.state is not MachineState.RELEASED]

        async def release(machine_id: str) -> None:
            link = self.links[machine_id]
            await link.call(link.driver.exit_tournament)
            await link.call(link.driver.unlock)

        results = await asyncio.gather(*(release(m) for m in targets), return_exceptions=True)
        released: list[str] = []
        failed: dict[str, str] = {}
        for machine_id, result in zip(targets, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, DriverError):
                    raise result
                failed[machine_id] = _why(result)
            else:
                released.append(machine_id)
                self.out.seats[machine_id].state = MachineState.RELEASED
        if released:
            await self.writer.write(
                SeatsOp(self.run_id, dict.fromkeys(released, MachineState.RELEASED))
            )
        return failed

    async def _settle(self) -> None:
        """Settle the run once every machine is back and every effect applied."""
        if all(s.state is MachineState.RELEASED for s in self.out.seats.values()):
            await self.writer.settle(self.run_id)

    def _feed_key(self) -> str:
        return str(self.view.heat_id) if self.view.heat_id is not None else f"run-{self.run_id}"


def _prepared_unlock(driver: object) -> Trigger | None:
    return driver.prepare_unlock() if isinstance(driver, PreparedUnlock) else None


def _prepared_lock(driver: object) -> Trigger | None:
    return driver.prepare_lock() if isinstance(driver, PreparedLock) else None
