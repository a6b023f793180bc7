"""The heat run journal: every step of a heat, written before the floor is touched.

One ``heat_run`` row per attempt at a heat on a bank, its state and clock; one
``heat_run_step`` row per state change (the history a director or auditor reads); one
``heat_run_machine`` row per seat machine with what the gateway last did to it; one
``heat_result`` row per (run, machine) holding the raw tournament meters and the score.
The unique key on ``heat_result`` is what makes "never store a score twice" a database
fact rather than a hope: :meth:`Journal.store_results` is idempotent on it.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from storage import effects as heat_effects
from storage import lease, seal_notes
from storage.db import Base
from storage.effects import EffectIn, EffectKind
from storage.heat_run import TERMINAL_STATES as TERMINAL_STATES  # re-exported
from storage.heat_run import HeatRun as HeatRun  # re-exported
from storage.heat_run import RunState as RunState  # re-exported
from storage.types import UTCDateTime, enum_type


class MachineState(enum.Enum):
    """What the gateway last did to one machine of a run (the DB type keeps its old name,
    ``seat_state``: renaming a CHECK-constrained type is a migration for nothing)."""

    PENDING = "pending"  # named in the run, floor not touched yet
    ARMED = "armed"  # locked, in tournament mode with the heat's credits and time
    PLAYING = "playing"  # unlocked for the heat
    LOCKED = "locked"  # locked at the heat's end
    SCORED = "scored"  # result stored
    MALFUNCTION = "malfunction"  # stopped answering or refused mid-heat (T20/T21)
    RELEASED = "released"  # tournament mode exited, back to normal play


class HeatRunStep(Base):
    __tablename__ = "heat_run_step"
    __table_args__ = (UniqueConstraint("run_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("heat_run.id"), nullable=False)
    seq: Mapped[int] = mapped_column(Integer, nullable=False)
    state: Mapped[RunState] = mapped_column(enum_type(RunState, "run_step_state"), nullable=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    note: Mapped[str] = mapped_column(Text, nullable=False, default="")


class HeatRunMachine(Base):
    __tablename__ = "heat_run_machine"

    run_id: Mapped[int] = mapped_column(ForeignKey("heat_run.id"), primary_key=True)
    machine_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    state: Mapped[MachineState] = mapped_column(
        enum_type(MachineState, "seat_state"), nullable=False
    )
    support: Mapped[str | None] = mapped_column(String(16), nullable=True)  # native/host-timed
    # When its unlock for the heat was acknowledged: the machine's own proof that it
    # started playing the heat (T20: a heat resumed past its end stands only on proof).
    unlocked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # What the machine's meters read at tournament entry (JSON of integers), for a driver
    # that scores from differences (host-timed SAS): restored after a restart, so the
    # heat's games and wagers are never read as 0 by a driver that did not see the entry.
    baseline: Mapped[str | None] = mapped_column(Text, nullable=True)
    note: Mapped[str] = mapped_column(Text, nullable=False, default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class HeatResult(Base):
    __tablename__ = "heat_result"
    __table_args__ = (UniqueConstraint("run_id", "machine_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("heat_run.id"), nullable=False)
    machine_id: Mapped[str] = mapped_column(String(32), nullable=False)
    score: Mapped[int] = mapped_column(Integer, nullable=False)  # T12: end credits
    games_played: Mapped[int] = mapped_column(Integer, nullable=False)
    games_won: Mapped[int] = mapped_column(Integer, nullable=False)
    credits_wagered: Mapped[int] = mapped_column(Integer, nullable=False)
    credits_won: Mapped[int] = mapped_column(Integer, nullable=False)
    collected_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


@dataclass(frozen=True, slots=True)
class RunView:
    id: int
    bank_name: str
    heat_id: int | None
    attempt: int
    credits: int
    seconds: int
    state: RunState
    started_at: datetime | None
    ends_at: datetime | None
    paused_left_ms: int | None
    settled: bool
    machines: dict[str, MachineState]
    supports: dict[str, str | None]
    unlocked: frozenset[str] = frozenset()  # machines whose unlock was acknowledged
    baselines: dict[str, dict[str, int]] = field(default_factory=dict)  # meters at entry
    format: str | None = None  # F5: the heat format's spec as journaled (None = timed)


@dataclass(frozen=True, slots=True)
class ResultRow:
    machine_id: str
    score: int
    games_played: int
    games_won: int
    credits_wagered: int
    credits_won: int
    collected_at: datetime


@dataclass(frozen=True, slots=True)
class ResultIn:
    """A result to store: the score (T12: the end credit meter) and the raw meters."""

    machine_id: str
    score: int
    games_played: int
    games_won: int
    credits_wagered: int
    credits_won: int
    collected_at: datetime

    def values(self) -> tuple[int, int, int, int, int]:
        return (
            self.score,
            self.games_played,
            self.games_won,
            self.credits_wagered,
            self.credits_won,
        )


class JournalConflict(Exception):
    """A second, different score for the same (run, machine): refused, the first stands."""


class NotSettled(Exception):
    """A run cannot be settled yet: a machine is not back in normal play, or a
    tournament effect is still pending."""


SETTLED_SEATS = frozenset({MachineState.PENDING, MachineState.RELEASED})  # never touched, or back


def _now() -> datetime:
    return datetime.now(UTC)


async def _insert_results(session: AsyncSession, run_id: int, fresh: Sequence[ResultIn]) -> None:
    """A batch of results in one INSERT (executemany), then their ids for the seals.

    Not one ORM object each: the unit of work needs every new row's id back, and without
    ordered RETURNING (SQLite) it inserts them one statement at a time -- a thousand
    round trips to the database's thread at a thousand-machine heat's end.  The rows are
    noted for the commit's seal as an ORM flush would note them (:mod:`storage.seals`).
    """
    if not fresh:
        return
    await session.execute(insert(HeatResult), [{"run_id": run_id, **asdict(r)} for r in fresh])
    ids = await session.scalars(
        select(HeatResult.id).where(
            HeatResult.run_id == run_id,
            HeatResult.machine_id.in_([r.machine_id for r in fresh]),
        )
    )
    sync = session.sync_session
    for row_id in ids:
        seal_notes.note(sync, HeatResult.__tablename__, row_id)


async def _update_seats(
    session: AsyncSession,
    run_id: int,
    seats: Mapping[str, MachineState],
    supports: Mapping[str, str],
    note: str,
) -> None:
    if not seats and not supports:
        return
    names = set(seats) | set(supports)
    # Their states only, and one UPDATE by primary key for all (an executemany): a
    # bank's thousand seats scored in one commit cost a thousand ORM rows and flushes.
    # (Seat rows are not sealed; no ORM event needs them.)
    found = await session.execute(
        select(HeatRunMachine.machine_id, HeatRunMachine.state).where(
            HeatRunMachine.run_id == run_id, HeatRunMachine.machine_id.in_(names)
        )
    )
    states: dict[str, MachineState] = {machine_id: state for machine_id, state in found}
    missing = sorted(names - set(states))
    if missing:
        raise KeyError(f"machine {missing[0]} is not in heat run {run_id}")
    now = _now()
    changes: list[dict[str, Any]] = []
    for machine_id, current in states.items():
        change: dict[str, Any] = {"run_id": run_id, "machine_id": machine_id, "updated_at": now}
        state = seats.get(machine_id)
        # A malfunction is final for the run (T20): later steps never undo it,
        # except the release that returns the machine to normal play.
        if state is not None and not (
            current is MachineState.MALFUNCTION and state is not MachineState.RELEASED
        ):
            change["state"] = state
        if machine_id in supports:
            change["support"] = supports[machine_id]
        if note and state is not None:
            change["note"] = note
        changes.append(change)
    await session.execute(update(HeatRunMachine), changes)


def _baseline(text: str) -> dict[str, int]:
    loaded = json.loads(text)
    return {str(k): int(v) for k, v in loaded.items()}


async def _store_baselines(
    session: AsyncSession, run_id: int, baselines: Mapping[str, Mapping[str, int]]
) -> None:
    rows = await session.scalars(
        select(HeatRunMachine).where(
            HeatRunMachine.run_id == run_id, HeatRunMachine.machine_id.in_(list(baselines))
        )
    )
    for row in rows:
        # the first entry of the run is the baseline (a re-entry on resume changes nothing)
        if row.baseline is None:
            row.baseline = json.dumps(dict(baselines[row.machine_id]), sort_keys=True)


async def _mark_unlocked(
    session: AsyncSession, run_id: int, unlocked_at: Mapping[str, datetime]
) -> None:
    rows = await session.scalars(
        select(HeatRunMachine).where(
            HeatRunMachine.run_id == run_id, HeatRunMachine.machine_id.in_(list(unlocked_at))
        )
    )
    for row in rows:
        if row.unlocked_at is None:  # the first acknowledgement is the proof
            row.unlocked_at = unlocked_at[row.machine_id]


class Journal:
    """Writes and reads the heat run journal.  Every write is its own committed transaction.

    Every write is fenced (:mod:`storage.lease`): it carries the lease token this process
    holds for the run's bank (:meth:`hold`), and is refused with
    :class:`~storage.lease.StaleOwner` if another owner has the bank now.
    """

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._tokens: dict[str, int] = {}

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self._sessions

    def hold(self, bank_name: str, token: int) -> None:
        """Write for ``bank_name`` under this lease token from now on."""
        self._tokens[bank_name] = token

    def drop(self, bank_name: str) -> None:
        self._tokens.pop(bank_name, None)

    def token(self, bank_name: str) -> int | None:
        return self._tokens.get(bank_name)

    async def _fenced_run(self, session: AsyncSession, run_id: int) -> HeatRun:
        run = await session.get(HeatRun, run_id, with_for_update=True)
        if run is None:
            raise KeyError(f"heat run {run_id} not found")
        await lease.check_token(session, run.bank_name, self._tokens.get(run.bank_name), now=_now())
        return run

    async def create_run(
        self,
        bank_name: str,
        machines: Sequence[str],
        *,
        credits: int,
        seconds: int,
        heat_id: int | None = None,
        attempt: int = 1,
        format: str | None = None,
    ) -> int:
        """Journal a new run; ``format`` is its heat format's spec (F5, None = timed)."""
        if credits <= 0 or seconds <= 0:
            raise ValueError("a heat needs positive credits and seconds")
        if not machines:
            raise ValueError("a heat needs at least one machine")
        now = _now()
        async with self._sessions.begin() as session:
            await lease.check_token(session, bank_name, self._tokens.get(bank_name), now=now)
            run = HeatRun(
                bank_name=bank_name,
                heat_id=heat_id,
                attempt=attempt,
                credits=credits,
                seconds=seconds,
                format=format,
                state=RunState.SCHEDULED,
                created_at=now,
                updated_at=now,
                settled=False,
            )
            session.add(run)
            await session.flush()
            session.add(
                HeatRunStep(run_id=run.id, seq=1, state=RunState.SCHEDULED, at=now, note="")
            )
            for position, machine_id in enumerate(machines, start=1):
                session.add(
                    HeatRunMachine(
                        run_id=run.id,
                        machine_id=machine_id,
                        position=position,
                        state=MachineState.PENDING,
                        note="",
                        updated_at=now,
                    )
                )
            return run.id

    async def step(
        self,
        run_id: int,
        state: RunState,
        *,
        note: str = "",
        started_at: datetime | None = None,
        ends_at: datetime | None = None,
        paused_left_ms: int | None = None,
        clear_pause: bool = False,
        seats: Mapping[str, MachineState] | None = None,
        effects: Sequence[EffectIn] = (),
    ) -> None:
        """Persist a state change (call it *before* acting on the floor).

        ``seats`` updates machine rows in the same transaction, so one commit covers a
        whole bank (200 separate commits would cost more than the heat's end budget);
        ``effects`` are the step's tournament effects (:mod:`storage.effects`), committed
        with it.
        """
        now = _now()
        async with self._sessions.begin() as session:
            run = await self._fenced_run(session, run_id)
            seq = await session.scalar(
                select(func.coalesce(func.max(HeatRunStep.seq), 0)).where(
                    HeatRunStep.run_id == run_id
                )
            )
            session.add(
                HeatRunStep(run_id=run_id, seq=int(seq or 0) + 1, state=state, at=now, note=note)
            )
            run.state = state
            run.updated_at = now
            if started_at is not None:
                run.started_at = started_at
            if ends_at is not None:
                run.ends_at = ends_at
            if paused_left_ms is not None:
                run.paused_left_ms = paused_left_ms
            if clear_pause:
                run.paused_left_ms = None
            if seats:
                await _update_seats(session, run_id, seats, {}, "")
            await heat_effects.add(session, run_id, run.heat_id, list(effects), now=now)

    async def set_seats(
        self,
        run_id: int,
        seats: Mapping[str, MachineState],
        *,
        supports: Mapping[str, str] | None = None,
        note: str = "",
        effects: Sequence[EffectIn] = (),
        unlocked_at: Mapping[str, datetime] | None = None,
        baselines: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        """Update machine rows; ``unlocked_at`` records when each machine acknowledged
        its unlock (the proof that it played, T20); ``baselines`` its meters at entry."""
        now = _now()
        async with self._sessions.begin() as session:
            run = await self._fenced_run(session, run_id)
            await _update_seats(session, run_id, seats, supports or {}, note)
            if unlocked_at:
                await _mark_unlocked(session, run_id, unlocked_at)
            if baselines:
                await _store_baselines(session, run_id, baselines)
            await heat_effects.add(session, run_id, run.heat_id, list(effects), now=now)

    async def settle(self, run_id: int) -> None:
        """Mark the run done with.  Refused (:class:`NotSettled`) while any machine is
        still in tournament mode or locked, or a tournament effect is pending."""
        async with self._sessions.begin() as session:
            run = await self._fenced_run(session, run_id)
            stuck = (
                await session.scalars(
                    select(HeatRunMachine.machine_id).where(
                        HeatRunMachine.run_id == run_id,
                        HeatRunMachine.state.not_in(list(SETTLED_SEATS)),
                    )
                )
            ).all()
            if stuck:
                raise NotSettled(
                    f"heat run {run_id}: machine {', '.join(sorted(stuck))} not back in normal play"
                )
            waiting = await heat_effects.pending_count(session, run_id)
            if waiting:
                raise NotSettled(f"heat run {run_id}: {waiting} tournament effect(s) pending")
            run.settled = True
            run.updated_at = _now()

    async def store_results(self, run_id: int, results: Sequence[ResultIn]) -> int:
        """Store machine results once, in one transaction.  Returns how many were new.

        A repeat with the same values (a retry, a spool replay, a recovery re-read) is a
        no-op; a repeat with different values raises :class:`JournalConflict` and stores
        nothing from the batch: the first stored score stands.
        """
        if not results:
            return 0
        ids = [r.machine_id for r in results]
        if len(set(ids)) != len(ids):
            raise ValueError("a machine appears twice in one batch of results")
        async with self._sessions.begin() as session:
            run = await self._fenced_run(session, run_id)
            existing = {
                row.machine_id: row
                for row in await session.scalars(
                    select(HeatResult).where(
                        HeatResult.run_id == run_id, HeatResult.machine_id.in_(ids)
                    )
                )
            }
            fresh: list[ResultIn] = []
            for r in results:
                old = existing.get(r.machine_id)
                if old is None:
                    fresh.append(r)
                    continue
                stored = (
                    old.score,
                    old.games_played,
                    old.games_won,
                    old.credits_wagered,
                    old.credits_won,
                )
                if stored != r.values():
                    raise JournalConflict(
                        f"heat run {run_id} machine {r.machine_id}: score already stored as "
                        f"{stored}, refusing {r.values()}"
                    )
            await _insert_results(session, run_id, fresh)
            await _update_seats(
                session, run_id, {r.machine_id: MachineState.SCORED for r in fresh}, {}, ""
            )
            if fresh:  # the bank's scores reach the tournament in one effect (T12)
                at = max(r.collected_at for r in fresh)
                scored = {"machines": sorted(r.machine_id for r in fresh)}
                await heat_effects.add(
                    session,
                    run_id,
                    run.heat_id,
                    [EffectIn(EffectKind.SCORES, at, None, scored)],
                    now=_now(),
                )
            return len(fresh)

    async def results(self, run_id: int) -> list[ResultRow]:
        async with self._sessions() as session:
            rows = await session.scalars(
                select(HeatResult).where(HeatResult.run_id == run_id).order_by(HeatResult.id)
            )
            return [
                ResultRow(
                    r.machine_id,
                    r.score,
                    r.games_played,
                    r.games_won,
                    r.credits_wagered,
                    r.credits_won,
                    r.collected_at,
                )
                for r in rows
            ]

    async def run(self, run_id: int) -> RunView:
        async with self._sessions() as session:
            run = await session.get(HeatRun, run_id)
            if run is None:
                raise KeyError(f"heat run {run_id} not found")
            seats = (
                await session.scalars(
                    select(HeatRunMachine)
                    .where(HeatRunMachine.run_id == run_id)
                    .order_by(HeatRunMachine.position)
                )
            ).all()
            return RunView(
                id=run.id,
                bank_name=run.bank_name,
                heat_id=run.heat_id,
                attempt=run.attempt,
                credits=run.credits,
                seconds=run.seconds,
                state=run.state,
                started_at=run.started_at,
                ends_at=run.ends_at,
                paused_left_ms=run.paused_left_ms,
                settled=run.settled,
                machines={s.machine_id: s.state for s in seats},
                supports={s.machine_id: s.support for s in seats},
                unlocked=frozenset(s.machine_id for s in seats if s.unlocked_at is not None),
                baselines={s.machine_id: _baseline(s.baseline) for s in seats if s.baseline},
                format=run.format,
            )

    async def unsettled_runs(self, bank_name: str | None = None) -> list[RunView]:
        """Runs a restarted gateway must look at: anything not yet settled, oldest first."""
        async with self._sessions() as session:
            query = select(HeatRun.id).where(HeatRun.settled.is_(False)).order_by(HeatRun.id)
            if bank_name is not None:
                query = query.where(HeatRun.bank_name == bank_name)
            ids = list((await session.scalars(query)).all())
        return [await self.run(i) for i in ids]

    async def steps(self, run_id: int) -> list[tuple[RunState, datetime, str]]:
        async with self._sessions() as session:
            rows = await session.scalars(
                select(HeatRunStep).where(HeatRunStep.run_id == run_id).order_by(HeatRunStep.seq)
            )
            return [(r.state, r.at, r.note) for r in rows]

    async def latest_run(self, bank_name: str) -> RunView | None:
        async with self._sessions() as session:
            run_id = await session.scalar(
                select(func.max(HeatRun.id)).where(HeatRun.bank_name == bank_name)
            )
        return None if run_id is None else await self.run(int(run_id))


class DirectorCommand(Base):
    """A director's order to the running gateway (start, pause, resume, abort, restart).

    Written by ``reelgate heat direct`` (with an audit row), carried out by the scheduler
    of ``reelgate serve`` on its next tick, which stamps ``done_at`` and the outcome.
    """

    __tablename__ = "heat_director_command"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bank_name: Mapped[str] = mapped_column(String(32), nullable=False)
    heat_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    command: Mapped[str] = mapped_column(String(16), nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False, default="")
    actor: Mapped[str] = mapped_column(String(100), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)
