"""Simulated players: they press spin whenever their machine lets them.

One :class:`Players` object drives a whole bank from a single task (a thousand
machines are a thousand timers otherwise).  Each seat has its own seeded pace, so runs
repeat; :meth:`Players.step` does one round and is what tests call directly.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass

from emulators.machine import EmulatedMachine, MachineRefusal


@dataclass(slots=True)
class Seat:
    machine: EmulatedMachine
    bet: int
    next_spin_at: float
    spins: int = 0
    refused: int = 0


class Players:
    """A player at each machine, spinning every ``pace`` seconds (± 50 %) at ``bet``."""

    def __init__(
        self,
        machines: Sequence[EmulatedMachine],
        *,
        seed: int = 0,
        pace: float = 2.5,
        bet: int = 1,
    ) -> None:
        if pace <= 0:
            raise ValueError("pace must be positive")
        self._rng = random.Random(seed)
        self.pace = pace
        self.seats = [
            Seat(m, min(bet, m.identity.max_bet), self._rng.uniform(0, pace)) for m in machines
        ]

    def _next_gap(self) -> float:
        return self.pace * self._rng.uniform(0.5, 1.5)

    def step(self, now: float) -> int:
        """Spin every seat whose turn has come and whose machine allows play; returns the
        number of games played in this round."""
        played = 0
        for seat in self.seats:
            if now < seat.next_spin_at:
                continue
            m = seat.machine
            m.tick()  # a game whose time is out ends first
            if m.game_in_progress:
                continue  # still spinning (a game that takes time): try on the next round
            seat.next_spin_at = now + self._next_gap()
            if m.powered and m.credits >= seat.bet and m.play_enabled():
                try:
                    m.spin(seat.bet)
                except MachineRefusal:
                    seat.refused += 1
                    continue
                seat.spins += 1
                played += 1
        return played

    async def run(self, *, tick: float = 0.1, rounds: int | None = None) -> None:
        """Play until cancelled (or for ``rounds`` ticks)."""
        loop = asyncio.get_running_loop()
        done = 0
        while rounds is None or done < rounds:
            self.step(loop.time())
            done += 1
            await asyncio.sleep(tick)
