"""Watching machines during play: one task per playing machine polls events and credits.

A machine that stops answering past the retry budget, tilts or loses power leaves the
heat (T20/T21, :meth:`HeatCore._malfunction`); the heat goes on for the others.
The watchers stop a poll spacing before the end, so the end's lock finds idle links.

Live credits: a driver with :class:`~gateway.machines.capabilities.LiveCredits` (SAS
real-time event reporting) learns every game's bet and win from the event polls it
makes anyway, so the credits shown move within one poll of the change; the credit
meter is read about once a second only, as the base those events move and to know the
machine still answers long polls.  Any other driver's meter is read every other turn,
as before.  A seat's credits are noted only when they change.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from gateway.heats.heat_core import HeatCore, _why
from gateway.machines.capabilities import LiveCredits
from gateway.machines.driver import TRANSIENT_ERRORS, DriverError, MachineEventKind
from gateway.machines.links import MachineLink
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

# A poll's reply time and the scheduler's slack, beyond the spacing, before the end.
QUIET_MARGIN_S = 0.05
# Polls a last turn may make at the real-time spacing (a game's bet and win, then "no
# activity"): its lead before the end is the quiet plus that many spacings.
LAST_TURN_POLLS = 2

# With live credits, the meter is read every this many turns (about a second): the base
# of the events, and the sign that the machine still answers (a real-time EGM with
# nothing to report may stay silent to a general poll).
BASE_READ_TURNS = 5


def last_turn_at(now: float, left: float, next_turn: float, lead: float) -> float | None:
    """When to take a watcher's last turn, or None while the next turn comes first.

    ``now`` and ``next_turn`` on the loop's clock, ``left`` the seconds to the end,
    ``lead`` the last turn's lead before it.  When the next turn would fall inside the
    lead, the last is taken just as the lead begins: a change is then unseen until the
    scores only over the lead, not over up to one more turn before it."""
    at = now + left - lead
    return at if now < at < next_turn else None


class Watching(HeatCore):
    """The watchers during play (a phase of the runner)."""

    def _start_watchers(self) -> None:
        self._stop_watch.clear()
        # Taken once per start, not per poll: every watcher asks before each poll, and
        # asking every link of a thousand-machine bank each time is quadratic.
        self._take_quiet()
        self._watchers = [
            asyncio.create_task(self._watch(m), name=f"watch-{m}")
            for m in self._seats_in({MachineState.PLAYING})
        ]

    def _wind_down_watchers(self) -> None:
        """Tell the watchers to stop after their turn in progress (no new turn starts);
        :meth:`_stop_watchers` then waits for them."""
        self._stop_watch.set()

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

    def _take_quiet(self) -> None:
        """How long before the end the watchers stop (:attr:`_quiet_s`: a poll later
        could hold up the lock) and take their last turn (:attr:`_last_turn_s`), from the
        links' spacing now.  Where every link reports in real time (40 ms), a last turn
        has room for a game's bet and win before the stop, so it is taken that late."""
        spacing = self._spacing()
        self._quiet_s = spacing + QUIET_MARGIN_S
        fast = spacing < self.poll_interval_s
        self._last_turn_s = self._quiet_s + (LAST_TURN_POLLS * spacing if fast else 0.0)

    def _seconds_left(self) -> float | None:
        if self.ends_at is None:
            return None
        return (self.ends_at - datetime.now(UTC)).total_seconds()

    def _quiet_before_end(self) -> bool:
        """True once no turn may start any more (the last turn's lead before the end)."""
        left = self._seconds_left()
        return left is not None and left < self._last_turn_s

    async def _watch(self, machine_id: str) -> None:
        with self._following(machine_id):
            await self._watch_following(machine_id)

    async def _watch_following(self, machine_id: str) -> None:
        link = self.links[machine_id]
        try:
            live = await self._start_live(link) if self.live_events else False
        except TRANSIENT_ERRORS as exc:
            self._spawn_malfunction(machine_id, f"stopped answering: {_why(exc)}")
            return
        tick = 0
        loop = asyncio.get_running_loop()
        last = False  # this turn is the last, taken just as the quiet begins
        while not self._stop_watch.is_set() and (last or not self._quiet_before_end()):
            last = False
            if self.out.seats[machine_id].state is MachineState.MALFUNCTION:
                return  # marked from outside (an SNMP trap): out of the heat
            # The cadence runs from turn start to turn start: a turn's own polls (a drain
            # of several events) do not push the next one back.  The driver keeps each
            # machine's minimum poll spacing itself.
            turn_ends = loop.time() + self.poll_interval_s
            try:
                events = await link.call(link.driver.poll_events)
                self._track_games(machine_id, events)
                bad = [e for e in events if e.kind in MALFUNCTION_EVENTS]
                if bad:
                    self._spawn_malfunction(machine_id, f"machine reported {bad[0].kind.value}")
                    return
                credits = await self._credits(link, live, tick)
                if credits is not None:
                    self._show_credits(machine_id, credits)
                done = await self._format_done(machine_id, link, credits)
                if done is not None:
                    await self._seat_done(machine_id, done)
                    return
            except TRANSIENT_ERRORS as exc:
                self._spawn_malfunction(machine_id, f"stopped answering: {_why(exc)}")
                return
            except DriverError:
                pass  # a refused read is not a malfunction; keep watching
            tick += 1
            wake = turn_ends
            left = self._seconds_left()
            if live and left is not None:  # a paced link could not poll that soon again
                last_at = last_turn_at(loop.time(), left, turn_ends, self._last_turn_s)
                if last_at is not None:
                    wake, last = last_at, True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_watch.wait(), max(0.0, wake - loop.time()))

    async def _format_done(
        self,
        machine_id: str,
        link: MachineLink,
        credits: int | None,
    ) -> str | None:
        """F2/F3: why this machine is done under the heat's format, or None.  Decided only
        between games (no game started and not yet ended): a bet's credits may come back
        with its win.  Games are counted on the tournament games-played meter (LP 95 or
        the board's), read every turn (a game takes seconds, a turn 200 ms on SAS), so a
        machine is locked within a turn of its last game; credits are the turn's own
        reading (live from real-time events where the driver has them)."""
        fmt = self.format
        if fmt.timed or machine_id in self._in_game:
            return None
        if not fmt.counts_games:
            return fmt.seat_done(credits=credits)
        if self._quiet_before_end():
            return None  # the end's lock and collection come first
        score = await link.call(link.driver.heat_score)
        return fmt.seat_done(games_played=score.meters.games_played)

    # Live credits from real-time events when the driver can.  A machine that stops
    # answering is still found within the heat (T20/T21): the SAS client trusts a silent
    # general poll only while the EGM is known to answer (RealTimeLiveness).
    live_events = True

    @staticmethod
    async def _start_live(link: MachineLink) -> bool:
        """Live credits from the machine's own reports, if its driver can (once a heat)."""
        driver = link.driver
        if not isinstance(driver, LiveCredits):
            return False
        try:
            return await link.call(driver.start_live_credits)
        except TRANSIENT_ERRORS:
            raise
        except DriverError:
            return False  # refused: read the meter as any driver's

    async def _credits(self, link: MachineLink, live: bool, tick: int) -> int | None:
        """This turn's credits: the live value, or a read of the meter when it is due."""
        driver = link.driver
        value = driver.live_credits() if live and isinstance(driver, LiveCredits) else None
        due = tick % BASE_READ_TURNS == 0 if live else tick % 2 == 0
        if (value is None or due) and not (self._stop_watch.is_set() or self._quiet_before_end()):
            if value is None and live and tick % 2:
                return None  # base lost: read it on the next even turn, as without
            value = await link.call(driver.credits)
        return value
