"""Watching machines during play: one task per playing machine polls events and credits.

A machine that stops answering past the retry budget, tilts or loses power leaves the
heat (T20/T21, :meth:`HeatCore._malfunction`); the heat goes on for the others.
The watchers stop a poll spacing before the end, so the end's lock finds idle links.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from gateway.heats.heat_core import HeatCore, _why
from gateway.heats.hooks import Progress
from gateway.machines.driver import TRANSIENT_ERRORS, DriverError, MachineEventKind
from storage.journal import MachineState

# Events that end a machine's part in a heat (T20: a malfunction of a slot machine),
# whether a SAS exception, an MQTT board event or an SNMP trap (gateway.machines.health) says so.
# A SAS exception arrives here only once confirmed: one general-poll byte has no CRC
# (gateway.machines.suspect_bytes; the policy is in gateway.machines.sas).
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


class Watching(HeatCore):
    """The watchers during play (a phase of the runner)."""

    def _start_watchers(self) -> None:
        self._stop_watch.clear()
        # Taken once per start, not per poll: every watcher asks before each poll, and
        # asking every link of a thousand-machine bank each time is quadratic.
        self._quiet_s = self._spacing() + 0.05
        self._watchers = [
            asyncio.create_task(self._watch(m), name=f"watch-{m}")
            for m in self._seats_in({MachineState.PLAYING})
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
        return left < self._quiet_s

    async def _watch(self, machine_id: str) -> None:
        link = self.links[machine_id]
        tick = 0
        while not self._stop_watch.is_set() and not self._quiet_before_end():
            if self.out.seats[machine_id].state is MachineState.MALFUNCTION:
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
