"""Hot-seat draws taken live by the running gateway (house clause HS3, docs/rules.md).

While a heat with committed draws plays (the tournament's heat ``running`` or
``ending``), :class:`LiveDraws` looks every ``interval_s`` for draws whose moment (from
the committed seed and the heat's recorded start, HS2) has come and takes each from the
seats as they stand at that moment (:func:`gateway.tournament.services.hotseat.take_live_draw`):
the winner is announced on the boards and in the audit log, the seed stays secret until
the close (HS5).  A moment that passes with no gateway running (or while this one is
down) is taken at the close from the recorded seats, as before.

Gateways on one central database may each run it: a draw is stored once (UNIQUE on the
commitment and the draw's index), and the loser of a race is refused in one line and
moves on.  Each draw is its own transaction, audited under ``actor``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.tournament.services import hotseat as hs

log = logging.getLogger("reelgate.hotseat")


class LiveDraws:
    """Takes the hot-seat draws of the heats playing now as their moments fall (HS3)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        actor: str = "gateway",
        interval_s: float = 0.5,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.actor = actor
        self.interval_s = interval_s
        self.clock = clock
        self.taken = 0

    async def step(self) -> int:
        """Take every draw due now; how many were taken."""
        now = self.clock()
        async with self.sessions() as session:
            due = await hs.due_live_draws(session, now)
        done = 0
        for heat_id, index in due:
            try:
                async with self.sessions.begin() as session:
                    draw = await hs.take_live_draw(
                        session, heat_id, index, actor=self.actor, now=now
                    )
                    winner = draw.winner
            except (OperatorError, IntegrityError) as exc:  # taken elsewhere, or closed now
                log.info("hot-seat draw %s of heat %s not taken: %s", index, heat_id, exc)
                continue
            done += 1
            log.info("hot-seat draw %s of heat %s: seat %s", index, heat_id, winner or "void")
        self.taken += done
        return done

    async def run(self, stop: asyncio.Event) -> None:
        """Step every ``interval_s`` until ``stop`` is set; a failed step (the database
        away) is tried again at the next."""
        while not stop.is_set():
            try:
                await self.step()
            except Exception as exc:  # the database away: the next step tries again
                log.warning("hot-seat draws: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval_s)
