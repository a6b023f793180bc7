"""The live tournament for signs: one :class:`LiveHeatFeed` per heat the scheduler runs.

:class:`LiveHeatFeed` turns one heat's progress notes into its signage topics (seats,
countdown, and the heat's standings, ranked by ``gateway.tournament.rules.ranking``);
``protocols.mqtt.feed.MqttFeed`` only encodes and publishes them.

:class:`HeatFeeds` is the scheduler's ``progress=`` sink.  The runner's notes carry only
the run and heat ids; the first note of a run finds its heat (the note's heat id, else
``heat_of_run``: the scheduler's live heats; a run resumed after a restart is not one of
those), opens that heat's topics (``heat/<HEAT ID>/...``, ``current`` pointing at it)
and, in the background, looks up what a sign shows beside the numbers: tournament name,
stage (T13–T17) and the player at each machine (T11, T16).  Nothing here waits
on the database or a broker inside the runner's call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.heats.hooks import Progress, ProgressNote
from gateway.tournament.rules.ranking import heat_places
from storage.journal import RunState

if TYPE_CHECKING:
    from gateway.heats.scheduler import Scheduler

log = logging.getLogger(__name__)

# A heat's attempt whose result a sign shows, and one that is void (T20 restart).
_ENDED_STATES = frozenset({RunState.COLLECTING.value, RunState.CLOSED.value})
_VOID_STATES = frozenset({RunState.ABORTED.value, RunState.RESTARTED.value})
_READINGS = (Progress.CREDITS, Progress.SCORE)  # a machine's credit meter

_DONE = frozenset({"closed", "aborted", "restarted"})

STAGE_TITLES = {"qualifying": "Qualifying", "semi-final": "Semi-final", "final": "Final"}


class NowaitPublisher(Protocol):
    """What :class:`LiveHeatFeed` needs: a publish that never waits
    (``protocols.mqtt.feed.MqttFeed``, or the signage page's ``gateway.web.FanoutFeed``
    wrapping one or nothing)."""

    def publish_nowait(
        self, topic: str, payload: dict[str, Any], *, retain: bool = False
    ) -> None: ...


class LiveHeatFeed:
    """Turns a heat's progress notes (:class:`ProgressNote`, passed as ``progress=`` to
    the heat runner) into the signage topics of one heat (``protocols.mqtt.feed``)."""

    def __init__(
        self,
        feed: NowaitPublisher,
        heat_key: str,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        tick: float | None = 1.0,
        name: str | None = None,
        stage: str | None = None,
        players: Mapping[str, str] | None = None,
        machines: Sequence[str] = (),
    ) -> None:
        self.feed = feed
        self.key = heat_key
        self.clock = clock
        self.tick = tick  # countdown interval while running; None: state changes only
        self._ticker: asyncio.Task[None] | None = None
        self.credits: dict[str, int] = {}
        self.final: set[str] = set()
        self.malfunctioned: dict[str, str] = {}
        # What a sign shows beside the numbers (all optional, docs/signage.md).
        self.name = name
        self.stage = stage
        self.players: dict[str, str] = dict(players or {})
        self.machines: list[str] = list(machines) or list(self.players)
        self.bank: str | None = None  # which bank's screens show it (docs/signage.md)
        self.tournament: str | None = None  # whose leaderboard stands beside it
        self._state: tuple[str, float | None] | None = None  # last state, for describe()
        self._publish_current()

    def _publish_current(self) -> None:
        self.feed.publish_nowait("current", {"heat": self.key, **self._labels()}, retain=True)

    def _labels(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.stage:
            out["stage"] = self.stage
        if self.bank:
            out["bank"] = self.bank
        if self.tournament:
            out["tournament"] = self.tournament
        return out

    def describe(
        self,
        *,
        name: str | None = None,
        stage: str | None = None,
        players: Mapping[str, str] | None = None,
        bank: str | None = None,
        tournament: str | None = None,
    ) -> None:
        """Add the heat's name, stage, bank, tournament and seated players (looked up
        after the heat began) and republish what a sign shows with them."""
        self.name = name or self.name
        self.stage = stage or self.stage
        self.bank = bank or self.bank
        self.tournament = tournament or self.tournament
        if players:
            self.players.update(players)
            self.machines += [m for m in players if m not in self.machines]
        self._publish_current()
        if self._state is not None:
            self._publish_state(*self._state)
        for machine_id in set(self.credits) | set(self.malfunctioned):
            self._seat(machine_id)

    def __call__(self, note: ProgressNote) -> None:
        kind = note.kind
        if kind is Progress.STATE:
            left = None if note.seconds_left is None else float(note.seconds_left)
            self._publish_state(note.state, left)
            self._restart_ticker(note.state, left)
            if note.state in _ENDED_STATES or note.state in _VOID_STATES:
                # Scores being collected are provisional; a closed heat's are official.
                self.publish_standings(
                    void=note.state in _VOID_STATES, official=note.state == RunState.CLOSED.value
                )
        elif kind in _READINGS and note.machine_id and note.value is not None:
            self.credits[note.machine_id] = int(note.value)
            if kind is Progress.SCORE:
                self.final.add(note.machine_id)
            self._seat(note.machine_id)
        elif kind is Progress.MALFUNCTION and note.machine_id:
            self.malfunctioned[note.machine_id] = note.detail  # T20
            self._seat(note.machine_id)

    def _publish_state(self, state: str, seconds_left: float | None) -> None:
        self._state = (state, seconds_left)
        payload: dict[str, Any] = {"heat": self.key, "state": state, "at": self.clock()}
        payload["seconds_left"] = None if seconds_left is None else round(seconds_left, 1)
        payload.update(self._labels())
        if self.machines:
            payload["machines"] = list(self.machines)
        self.feed.publish_nowait(f"heat/{self.key}/state", payload, retain=True)

    def _restart_ticker(self, state: str, seconds_left: float | None) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if state == "running" and seconds_left and self.tick:
            ends = asyncio.get_running_loop().time() + float(seconds_left)
            self._ticker = asyncio.create_task(self._count_down(ends, self.tick))

    async def _count_down(self, ends: float, tick: float) -> None:
        loop = asyncio.get_running_loop()
        # Bounded: at most seconds_left / tick iterations, then the runner's next state.
        while ends - loop.time() > tick:
            await asyncio.sleep(tick)
            self.countdown("running", max(0.0, ends - loop.time()))

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()

    def countdown(self, state: str, seconds_left: float) -> None:
        """Publish a countdown tick between state changes (the runner notes only changes)."""
        self._publish_state(state, seconds_left)

    def _seat(self, machine_id: str) -> None:
        payload: dict[str, Any] = {
            "heat": self.key,
            "machine": machine_id,
            "credits": self.credits.get(machine_id),
            "final": machine_id in self.final,
            "malfunction": self.malfunctioned.get(machine_id),
            "at": self.clock(),
        }
        if machine_id in self.players:
            payload["player"] = self.players[machine_id]
        self.feed.publish_nowait(f"heat/{self.key}/seat/{machine_id}", payload, retain=True)

    def standings(self) -> list[dict[str, Any]]:
        """The heat's result as a sign shows it: ranked by credits, highest first, equal
        credits sharing a rank and flagged ``tie`` (T13/T14/T19, ranked by the
        tournament rules); a malfunctioned seat is not ranked (T20)."""
        out: list[dict[str, Any]] = []
        for line in heat_places(self.credits, left_out=self.malfunctioned):
            row: dict[str, Any] = {
                "rank": line.rank,
                "machine": line.machine_id,
                "credits": line.credits,
                "tie": line.tie,
            }
            if line.machine_id in self.players:
                row["player"] = self.players[line.machine_id]
            out.append(row)
        return out

    def publish_standings(self, *, void: bool = False, official: bool = False) -> None:
        self.feed.publish_nowait(
            f"heat/{self.key}/standings",
            {
                "heat": self.key,
                "void": void,
                "official": official and not void,
                "rows": [] if void else self.standings(),
                "at": self.clock(),
            },
            retain=True,
        )


class HeatFeeds:
    """The scheduler's ``progress=`` sink: one :class:`LiveHeatFeed` per run, and what the
    signs show between heats — each bank's next heat (``bank/<BANK>/next``) and the
    tournament's leaderboard (``tournament/<ID>/leaderboard``), republished in the
    background when a heat begins and when it is over."""

    def __init__(
        self,
        feed: NowaitPublisher,
        sessions: async_sessionmaker[AsyncSession] | None,
        heat_of_run: Callable[[int], int | None],
        *,
        tick: float | None = 1.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.feed = feed
        self.sessions = sessions
        self.heat_of_run = heat_of_run
        self.tick = tick
        self.clock = clock
        self.heats: dict[int, LiveHeatFeed] = {}  # run id -> its feed
        self._heat_ids: dict[int, int] = {}  # run id -> tournament heat id
        self._lookups: set[asyncio.Task[None]] = set()

    def __call__(self, note: ProgressNote) -> None:
        live = self.heats.get(note.run_id)
        if live is None:
            # A run resumed after a restart is not one of the scheduler's live heats: its
            # notes name the heat, so it publishes as a fresh run does.
            heat_id = note.heat_id if note.heat_id is not None else self.heat_of_run(note.run_id)
            key = str(heat_id) if heat_id is not None else f"run-{note.run_id}"
            live = LiveHeatFeed(self.feed, key, tick=self.tick)
            self.heats[note.run_id] = live
            if heat_id is not None:
                self._heat_ids[note.run_id] = heat_id
                self._background(self._describe(live, heat_id))
        live(note)
        if note.kind is Progress.STATE and note.state in _DONE:
            live.close()  # the countdown ticker; the retained topics stay for late signs
            heat_id = self._heat_ids.get(note.run_id)
            if heat_id is not None:
                self._background(self._boards(heat_id))

    def _background(self, job: Coroutine[Any, Any, None]) -> None:
        if self.sessions is None:
            job.close()
            return
        task = asyncio.get_running_loop().create_task(job)
        self._lookups.add(task)
        task.add_done_callback(self._lookups.discard)

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
            players={s.machine_id: s.played_by for s in seats},  # T16: who plays
            bank=heat.bank_name,
            tournament=str(heat.tournament_id),
        )
        await self._boards(heat_id)

    async def _boards(self, heat_id: int) -> None:
        """The heat's tournament leaderboard and its bank's next heat."""
        from gateway.tournament.services.signage import leaderboard, next_heats
        from storage.tournament import Heat

        assert self.sessions is not None
        try:
            async with self.sessions() as session:
                heat = await session.get(Heat, heat_id)
                if heat is None:
                    return
                board = await leaderboard(session, heat.tournament_id, heat.stage, now=self.clock())
                upcoming = await next_heats(session, [heat.bank_name])
        except Exception as exc:  # the heat's own topics are out already
            log.warning("heat %s: leaderboard for the signs not found (%s)", heat_id, exc)
            return
        self.feed.publish_nowait(f"tournament/{heat.tournament_id}/leaderboard", board, retain=True)
        self._publish_next(heat.bank_name, upcoming.get(heat.bank_name))

    def _publish_next(self, bank: str, upcoming: dict[str, Any] | None) -> None:
        # No heat left on the bank: a payload without ``starts_at`` (the sign shows its
        # attract screen without a time), not the last one's stale time.
        payload = {"bank": bank, **(upcoming or {"heat": None})}
        self.feed.publish_nowait(f"bank/{bank}/next", payload, retain=True)

    async def publish_schedule(self, banks: Sequence[str]) -> None:
        """Every bank's next heat, for the signs' waiting screens (at start-up)."""
        from gateway.tournament.services.signage import next_heats

        if self.sessions is None:
            return
        try:
            async with self.sessions() as session:
                upcoming = await next_heats(session, banks)
        except Exception as exc:
            log.warning("next heats for the signs not found (%s)", exc)
            return
        for bank in banks:
            self._publish_next(bank, upcoming.get(bank))

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
        for live in scheduler.all_live():
            if live.runner.current_run == run_id:
                return int(live.heat_id)
        return None

    return find
