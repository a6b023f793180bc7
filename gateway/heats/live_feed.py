"""The live tournament for signs: one :class:`LiveHeatFeed` per heat the scheduler runs.

:class:`HeatFeeds` is the scheduler's ``progress=`` sink.  The runner's notes carry only
the run id; the first note of a run finds its heat (``heat_of_run``, the scheduler's
live heats), opens that heat's topics (``heat/<HEAT ID>/...``, ``current`` pointing at
it) and, in the background, looks up what a sign shows beside the numbers: tournament
name, stage (rules 13-17) and the player at each machine (rules 11, 16).  Nothing here
waits on the database or a broker inside the runner's call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.heats.hooks import Progress, ProgressNote
from protocols.mqtt.feed import LiveHeatFeed, NowaitPublisher

if TYPE_CHECKING:
    from gateway.heats.scheduler import Scheduler

log = logging.getLogger(__name__)

_DONE = frozenset({"closed", "aborted", "restarted"})

STAGE_TITLES = {"qualifying": "Qualifying", "semi-final": "Semi-final", "final": "Final"}


class HeatFeeds:
    def __init__(
        self,
        feed: NowaitPublisher,
        sessions: async_sessionmaker[AsyncSession] | None,
        heat_of_run: Callable[[int], int | None],
        *,
        tick: float | None = 1.0,
    ) -> None:
        self.feed = feed
        self.sessions = sessions
        self.heat_of_run = heat_of_run
        self.tick = tick
        self.heats: dict[int, LiveHeatFeed] = {}  # run id -> its feed
        self._lookups: set[asyncio.Task[None]] = set()

    def __call__(self, note: ProgressNote) -> None:
        live = self.heats.get(note.run_id)
        if live is None:
            heat_id = self.heat_of_run(note.run_id)
            key = str(heat_id) if heat_id is not None else f"run-{note.run_id}"
            live = LiveHeatFeed(self.feed, key, tick=self.tick)
            self.heats[note.run_id] = live
            if heat_id is not None and self.sessions is not None:
                task = asyncio.get_running_loop().create_task(self._describe(live, heat_id))
                self._lookups.add(task)
                task.add_done_callback(self._lookups.discard)
        live(note)
        if note.kind is Progress.STATE and note.state in _DONE:
            live.close()  # the countdown ticker; the retained topics stay for late signs

    async def _describe(self, live: LiveHeatFeed, heat_id: int) -> None:
        from gateway.tournament.services.seating import heat_seats
        from storage.tournament import Heat, Tournament

        assert self.sessions is not None
        try:
            async with self.sessions() as session:
                heat = await session.get(Heat, heat_id)
                if heat is None:
                    return
                tournament = await session.get(Tournament, heat.tournament_id)
                seats = await heat_seats(session, heat_id)
        except Exception as exc:  # a sign without names is better than no sign
            log.warning("heat %s: names for the signs not found (%s)", heat_id, exc)
            return
        stage = STAGE_TITLES.get(str(heat.stage), str(heat.stage))
        live.describe(
            name=f"{tournament.name if tournament else 'Tournament'} - heat {heat.number}",
            stage=stage,
            players={s.machine_id: s.played_by for s in seats},  # rule 16: who plays
        )

    async def close(self) -> None:
        for task in list(self._lookups):
            task.cancel()
        await asyncio.gather(*self._lookups, return_exceptions=True)
        for live in self.heats.values():
            live.close()


def scheduler_heat_of_run(scheduler: Scheduler) -> Callable[[int], int | None]:
    """``heat_of_run`` for a :class:`gateway.heats.scheduler.Scheduler`: its live heats' runners
    know their run id once the run is journaled (before their first note)."""

    def find(run_id: int) -> int | None:
        for live in scheduler.live.values():
            if live.runner.current_run == run_id:
                return int(live.heat_id)
        return None

    return find
