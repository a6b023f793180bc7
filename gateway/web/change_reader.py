"""The screens' change reader: what the database says changed, recomputed and pushed.

Theory of operation
-------------------
Every stored change a screen shows writes a ``change_feed`` row in its own transaction
(:mod:`storage.change_feed`), whoever made it: the gateway, the CLI on the host, the
API, the console.  :class:`ChangeReader` runs in the process that serves the console and
the signs; it follows that table by id and, for each batch of changes, recomputes what
the screens show of the subjects named and publishes it through the process's
:class:`~gateway.web.fanout.FanoutFeed` (and so to the SSE streams and the snapshot):

* a tournament: its leaderboard (``tournament/<ID>/leaderboard``) for the stage of the
  heat that changed, else the tournament's current stage, and — when it runs teams —
  the same stage's team standings (``tournament/<ID>/teams``, H5–H12);
* a heat: its bank's next heat (``bank/<BANK>/next``) and, once the heat is closed, its
  standings from the stored scores (``heat/<ID>/standings``), each row marked
  ``manual`` when a director keyed the score in or corrected it (T23);
* a Super 9 session: its live draw (``super9/<ID>/draw``) and the jackpot.

Rows are hints, not deltas, so the reader is correct however many it sees twice.  It is
woken by PostgreSQL's ``NOTIFY`` (a dedicated connection with an asyncpg listener) and
polls as well, every ``poll_s`` (200 ms on SQLite, where nothing wakes it; a safety net
on PostgreSQL should the listening connection drop).

*Gaps.*  Ids are taken at insert, not at commit, so on PostgreSQL a slow writer's id 11
may commit after id 12 was read.  Ids skipped over are kept and asked for again on every
step for ``gap_grace_s`` (a rolled-back insert leaves a gap that never fills; a commit
is never that slow).

*Restart.*  :meth:`ChangeReader.start` with ``after=`` replays every change since that
id; without it (a fresh process) the reader first publishes every open tournament, every
bank's next heat and every open Super 9 session as stored (a re-snapshot), then follows
from the newest id.  Either way nothing a screen shows is missed.

Pruning: rows older than ``keep`` are deleted at most every ``prune_every_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.tournament.rules.enums import HeatStatus, SeatStatus, Stage
from gateway.tournament.rules.ranking import heat_places
from storage import change_feed
from storage.change_feed import ChangeRow
from storage.enums import ScoreSource

if TYPE_CHECKING:
    from gateway.tournament.services.hotseat import Announcement

log = logging.getLogger(__name__)

_STAGE_ORDER = (Stage.QUALIFYING, Stage.SEMI_FINAL, Stage.FINAL)
_NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.CANCELLED, HeatStatus.POSTPONED)
_OPEN_SESSIONS_LIMIT = 50
_OPEN_TOURNAMENTS_LIMIT = 50
RELISTEN_S = 10.0  # a lost listening connection is replaced at most this often
MIN_STEP_S = 0.02  # the least time between two steps


class Publisher(Protocol):
    async def publish(
        self, topic: str, payload: dict[str, Any], *, retain: bool = False
    ) -> None: ...


@dataclass(slots=True)
class ReaderStats:
    changes: int = 0  # change rows handled
    batches: int = 0
    published: int = 0  # topics published
    errors: int = 0
    pruned: int = 0
    notified: int = 0  # NOTIFY wake-ups (PostgreSQL)


@dataclass(slots=True)
class _Batch:
    tournaments: set[int] = field(default_factory=set)
    heats: set[int] = field(default_factory=set)
    sessions: set[int] = field(default_factory=set)
    heat_standings: bool = True  # a re-snapshot leaves closed heats' standings as they are

    def add(self, rows: Iterable[ChangeRow]) -> None:
        for row in rows:
            s = row.subject
            if s.tournament_id is not None:
                self.tournaments.add(s.tournament_id)
            if s.heat_id is not None:
                self.heats.add(s.heat_id)
            if s.session_id is not None:
                self.sessions.add(s.session_id)


class ChangeReader:
    """Follows ``change_feed`` and republishes what changed (see the module's docstring)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        feed: Publisher,
        *,
        engine: AsyncEngine | None = None,
        poll_s: float | None = None,
        gap_grace_s: float = 10.0,
        keep: timedelta = timedelta(days=1),
        prune_every_s: float = 600.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sessions = sessions
        self.feed = feed
        self.engine = engine
        self.postgres = engine is not None and engine.dialect.name == "postgresql"
        self.poll_s = poll_s if poll_s is not None else (2.0 if self.postgres else 0.2)
        self.gap_grace_s = gap_grace_s
        self.keep = keep
        self.prune_every_s = prune_every_s
        self.clock = clock
        self.monotonic = monotonic
        self.last = 0  # the highest change id handled
        self.gaps: dict[int, float] = {}  # id skipped over -> when first missed
        self.stats = ReaderStats()
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listening: AsyncConnection | None = None
        self._pruned_at: float | None = None
        self._desk: Any = None  # the Super 9 desk that publishes a session's draw
        self._driver: Any = None  # the asyncpg connection listening, on PostgreSQL
        self._listened_at = 0.0

    # -- life ---------------------------------------------------------------------------
    async def start(self, *, after: int | None = None) -> None:
        """Follow the table: from ``after`` (replaying every change since), or — a fresh
        reader — from the newest id, after publishing everything open as stored."""
        if after is None:
            async with self.sessions() as session:
                self.last = await change_feed.last_id(session)
            await self.resnapshot()
        else:
            self.last = after
        if self.postgres:
            await self._listen()
        self._task = asyncio.create_task(self._run(), name="change-reader")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._unlisten()

    async def _listen(self) -> None:
        assert self.engine is not None
        self._listened_at = self.monotonic()
        conn = None
        try:
            conn = await self.engine.connect()
            raw = await conn.get_raw_connection()
            self._driver = raw.driver_connection
            await self._driver.add_listener(change_feed.CHANNEL, self._notified)
        except Exception as exc:  # the poll still carries every change, only slower
            log.warning("change feed: not listening for notifications (%s); polling", exc)
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            self._driver = None
            return
        self._listening = conn

    async def _unlisten(self) -> None:
        conn, self._listening, self._driver = self._listening, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()  # a connection that listened goes back to no pool

    async def _keep_listening(self) -> None:
        """A listening connection lost (the database restarted) is replaced, at most every
        ``RELISTEN_S``; meanwhile the poll carries the changes."""
        driver = self._driver
        if driver is not None and not driver.is_closed():
            return
        if self.monotonic() - self._listened_at < RELISTEN_S:
            return
        await self._unlisten()
        await self._listen()

    def _notified(self, *_: Any) -> None:
        self.stats.notified += 1
        self.wake.set()

    async def _run(self) -> None:
        while True:
            try:
                if self.postgres:
                    await self._keep_listening()
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database away: try again at the next poll
                self.stats.errors += 1
                log.warning("change feed: %s", exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_s):
                    await self.wake.wait()
            self.wake.clear()
            # Bounded work under a flood of notifications (anyone on the database may
            # NOTIFY): changes that arrive meanwhile are read together at the next step.
            await asyncio.sleep(MIN_STEP_S)

    # -- one step -----------------------------------------------------------------------
    async def step(self) -> int:
        """Read what changed since the last step, publish it; returns the rows handled."""
        now = self.monotonic()
        self.gaps = {i: t for i, t in self.gaps.items() if now - t < self.gap_grace_s}
        async with self.sessions() as session:
            rows = await change_feed.read_ids(session, sorted(self.gaps))
            fresh = await change_feed.read_after(session, self.last)
        for row in rows:
            self.gaps.pop(row.id, None)
        expected = self.last + 1
        for row in fresh:
            for missing in range(expected, row.id):
                self.gaps.setdefault(missing, now)
            expected = row.id + 1
        if fresh:
            self.last = fresh[-1].id
        rows += fresh
        if rows:
            batch = _Batch()
            batch.add(rows)
            await self.publish(batch)
            self.stats.changes += len(rows)
            self.stats.batches += 1
        await self._maybe_prune(now)
        return len(rows)

    async def _maybe_prune(self, now: float) -> None:
        if self._pruned_at is not None and now - self._pruned_at < self.prune_every_s:
            return
        self._pruned_at = now
        async with self.sessions.begin() as session:
            self.stats.pruned += await change_feed.prune(session, now=self.clock(), keep=self.keep)

    # -- what the screens show ----------------------------------------------------------
    async def resnapshot(self) -> None:
        """Publish every open tournament, every bank's next heat and every open Super 9
        session as stored (a reader starting with no position)."""
        from storage.super9 import Super9Session
        from storage.tournament import Heat

        async with self.sessions() as session:
            heats = (
                await session.scalars(
                    select(Heat.id)
                    .where(Heat.status.not_in([HeatStatus.CANCELLED]))
                    .order_by(Heat.scheduled_start.desc())
                    .limit(500)
                )
            ).all()
            sessions = (
                await session.scalars(
                    select(Super9Session.id)
                    .order_by(Super9Session.id.desc())
                    .limit(_OPEN_SESSIONS_LIMIT)
                )
            ).all()
        batch = _Batch(heats=set(heats), sessions=set(sessions), heat_standings=False)
        await self.publish(batch)

    async def publish(self, batch: _Batch) -> None:
        from gateway.tournament.services.signage import next_heats
        from storage.tournament import Heat

        now = self.clock()
        boards: dict[int, Stage | None] = dict.fromkeys(batch.tournaments)
        banks: set[str] = set()
        closed: list[int] = []
        async with self.sessions() as session:
            if batch.heats:
                found = (
                    await session.execute(
                        select(
                            Heat.id, Heat.tournament_id, Heat.stage, Heat.bank_name, Heat.status
                        ).where(Heat.id.in_(sorted(batch.heats)))
                    )
                ).all()
                for heat_id, tid, stage, bank, status in found:
                    banks.add(bank)
                    if status not in _NOT_STARTED:
                        boards[tid] = max(
                            Stage(stage),
                            boards.get(tid) or Stage.QUALIFYING,
                            key=_STAGE_ORDER.index,
                        )
                    else:
                        boards.setdefault(tid, None)
                    if status is HeatStatus.CLOSED and batch.heat_standings:
                        closed.append(heat_id)
            for tid in list(boards)[:_OPEN_TOURNAMENTS_LIMIT]:
                stage = boards[tid] or await current_stage(session, tid)
                await self._tournament(session, tid, stage, now)
            if banks:
                upcoming = await next_heats(session, sorted(banks))
                for bank in sorted(banks):
                    payload = {"bank": bank, **(upcoming.get(bank) or {"heat": None})}
                    await self._out(f"bank/{bank}/next", payload)
            for heat_id in closed:
                await self._out(
                    f"heat/{heat_id}/standings", await heat_standings(session, heat_id, now)
                )
            for topic, payload in await hotseat_boards(session, batch.heats, batch.tournaments):
                await self._out(topic, payload)
        for session_id in sorted(batch.sessions):
            await self._super9(session_id)

    async def _tournament(
        self, session: AsyncSession, tid: int, stage: Stage, now: datetime
    ) -> None:
        """A tournament's leaderboard and, when it runs teams, its team board (H5–H12)."""
        from gateway.tournament.services.signage import leaderboard, team_board

        try:
            board = await leaderboard(session, tid, stage, now=now)
        except LookupError:
            return  # deleted meanwhile
        await self._out(f"tournament/{tid}/leaderboard", board)
        teams = await team_board(session, tid, stage, now=now)
        if teams is not None:
            await self._out(f"tournament/{tid}/teams", teams)

    async def _out(self, topic: str, payload: dict[str, Any]) -> None:
        await self.feed.publish(topic, payload, retain=True)
        self.stats.published += 1

    async def _super9(self, session_id: int) -> None:
        from gateway.super9.desk import Super9Desk

        if self._desk is None:
            self._desk = Super9Desk(self.sessions, feed=self.feed)
        try:
            await self._desk.publish(session_id)
            self.stats.published += 1
        except OperatorError:
            return  # no such session (deleted meanwhile)


async def current_stage(session: AsyncSession, tournament_id: int) -> Stage:
    """The latest stage with a heat begun (T13–T17), else qualifying."""
    from storage.tournament import Heat

    stages = set(
        (
            await session.scalars(
                select(Heat.stage)
                .where(Heat.tournament_id == tournament_id, Heat.status.not_in(_NOT_STARTED))
                .distinct()
            )
        ).all()
    )
    begun = [s for s in _STAGE_ORDER if s in stages]
    return begun[-1] if begun else Stage.QUALIFYING


async def hotseat_boards(
    session: AsyncSession, heats: Iterable[int], tournaments: Iterable[int]
) -> list[tuple[str, dict[str, Any]]]:
    """The hot-seat announcements of the heats and tournaments changed (HS4, HS5):
    ``heat/<ID>/hotseat`` and ``tournament/<ID>/wildcard/<STAGE>``, the commitment before
    the draw and the seed and winners after it.  One query finds which have any."""
    from gateway.tournament.rules.hotseat import heat_subject, wildcard_subject
    from gateway.tournament.services.hotseat import announcement
    from storage.hotseat import HotseatCommitment

    topics = {heat_subject(h): f"heat/{h}/hotseat" for h in heats}
    for t in tournaments:
        for stage in (Stage.QUALIFYING, Stage.SEMI_FINAL):
            topics[wildcard_subject(t, stage.value)] = f"tournament/{t}/wildcard/{stage.value}"
    if not topics:
        return []
    found = await session.execute(
        select(HotseatCommitment.subject).where(HotseatCommitment.subject.in_(sorted(topics)))
    )
    out = []
    for subject in sorted(found.scalars()):
        shown = await announcement(session, subject)
        if shown is not None:
            seats = await _seats_of(session, subject, heats) if shown.winners else {}
            out.append((topics[subject], hotseat_payload(shown, seats)))
    return out


async def _seats_of(
    session: AsyncSession, subject: str, heats: Iterable[int]
) -> dict[str, tuple[str, str]]:
    """A heat subject's seats by the draw's label: (machine, who plays it), so a board
    names the winning machine and player, not only the seat number (HS5)."""
    from gateway.tournament.rules.hotseat import heat_subject
    from gateway.tournament.services.hotseat import seat_label
    from gateway.tournament.services.seating import heat_seats

    for heat_id in heats:
        if heat_subject(heat_id) == subject:
            return {
                seat_label(s.seat_number): (s.machine_id, s.played_by)
                for s in await heat_seats(session, heat_id, include_inactive=True)
            }
    return {}


def hotseat_payload(
    shown: Announcement, seats: dict[str, tuple[str, str]] | None = None
) -> dict[str, Any]:
    """What a board shows of a hot-seat subject: never the seed before it is revealed;
    after the draw each winning seat with its machine and player where it has them."""
    seats = seats or {}
    return {
        "subject": shown.subject,
        "commitment": shown.commitment,
        "draws": shown.draws,
        "prize_cents": shown.prize_cents,
        "seed": shown.seed,
        "winners": [
            {
                "index": i,
                "winner": w,
                "prize_cents": c,
                **({"machine": seats[w][0], "player": seats[w][1]} if w in seats else {}),
            }
            for i, w, c in shown.winners
        ],
        # HS4: committed; HS3: drawn live, the seed still secret; HS5: revealed.
        "rule": "HS5" if shown.seed is not None else "HS3" if shown.winners else "HS4",
    }


async def heat_standings(session: AsyncSession, heat_id: int, now: datetime) -> dict[str, Any]:
    """A closed heat's standings as a sign shows them (``heat/<ID>/standings``), from the
    stored scores: what the machines read, or what a director keyed in (T23, ``manual``)."""
    from gateway.tournament.services.seating import heat_seats

    # A disqualified seat's score does not count; a malfunctioned one was moved (T20/T21)
    # and is not listed.
    seats = [
        s
        for s in await heat_seats(session, heat_id)
        if s.credits is not None and s.status is not SeatStatus.DISQUALIFIED
    ]
    by_machine = {s.machine_id: s for s in seats}
    rows: list[dict[str, Any]] = []
    for line in heat_places({s.machine_id: int(s.credits or 0) for s in seats}):
        seat = by_machine[line.machine_id]
        rows.append(
            {
                "rank": line.rank,
                "machine": line.machine_id,
                "credits": line.credits,
                "tie": line.tie,
                "player": seat.played_by,
                "manual": seat.source is ScoreSource.MANUAL,
            }
        )
    return {"heat": str(heat_id), "void": False, "official": True, "rows": rows, "at": now}
