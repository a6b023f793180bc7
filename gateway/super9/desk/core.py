"""Shared state and reads of the Super 9 desk: settings, calendar, session and ticket
look-ups, the jackpot, and the live draw published for displays.

The draw state shown on displays is a :class:`LiveDraw` per session, brought in step
with the stored spins after every change and published on ``super9/<session>/draw``
(and the jackpot on ``super9/jackpot``), retained.

Concurrency: every write to a drawing session first locks its session row
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite write transactions are already
``BEGIN IMMEDIATE``), so two writers — the wheel follower and a desk terminal, in one
process or two — take turns: spin sequence numbers never collide and a repeated wheel
line finds the first one stored.  Publishing the live draw takes the same row lock, so
the retained draw is never overwritten by an older one.  Within a process, a per-session
:class:`asyncio.Lock` guards the live draw, always taken *before* any database
transaction so the two locks can never wait on each other.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.feed import FeedPublisher
from gateway.super9.desk import ledger, records
from gateway.super9.desk.eligibility import check_eligible, day_bounds
from gateway.super9.desk.live import LiveDraw, LiveSpin, publish
from gateway.super9.rules.calendar import SessionCalendar
from gateway.super9.rules.engine import SpinOutcome
from gateway.super9.rules.settings import Super9Settings
from storage.super9 import (
    SessionStatus,
    Super9CalendarChange,
    Super9Session,
    Super9Setting,
    Super9Spin,
    Super9Ticket,
    TicketStatus,
)
from storage.tournament import Player

ACTOR_SYSTEM = "reelgate"


NEXT_SESSION_DAYS = 35  # how far ahead a sign looks for the next session (a month's gap)


class Disqualified(Exception):
    """A hand-in whose top copy breaks S9-9 (a number twice, more than nine): the ticket
    and the player's day are disqualified and that is *committed*, then reported.

    Not an :class:`~gateway.errors.OperatorError`, which promises that nothing changed:
    the CLI exits 1 with the decision (not 2, a refused input), the API answers 422
    naming rule 9 with the request committed, the console shows it as done."""

    def __init__(self, message: str, serials: list[str]) -> None:
        super().__init__(message)
        self.serials = serials


@dataclass(frozen=True, slots=True)
class SpinRecorded:
    session_id: int
    seq: int
    number: int | None
    voided: bool
    completed: tuple[str, ...]  # serials whose ninth number this spin called (S9-13)


@dataclass(frozen=True, slots=True)
class ClaimRegistered:
    ticket: str
    valid: bool  # duplicate matched the top copy (S9-9)
    complete: bool  # all nine called when registered
    reason: str | None


def require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise OperatorError("time: give a time zone (e.g. 2026-12-02T18:00+02:00)")


class DeskCore:
    """Look-ups and reads shared by the sales and draw sides of the desk."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        *,
        feed: FeedPublisher | None = None,
    ) -> None:
        self._sm = sessionmaker
        self._feed = feed
        self._live: dict[int, LiveDraw] = {}
        self._live_locks: dict[int, asyncio.Lock] = {}

    def _live_lock(self, session_id: int) -> asyncio.Lock:
        """Guards one session's live draw; take it before opening a transaction."""
        return self._live_locks.setdefault(session_id, asyncio.Lock())

    async def settings(self, db: AsyncSession | None = None) -> Super9Settings:
        if db is None:
            async with self._sm() as own:
                return await self.settings(own)
        rows = (await db.execute(select(Super9Setting))).scalars().all()
        return Super9Settings.from_json({r.key: r.value for r in rows})

    async def calendar(self, db: AsyncSession | None = None) -> SessionCalendar:
        if db is None:
            async with self._sm() as own:
                return await self.calendar(own)
        zone = ZoneInfo((await self.settings(db)).timezone)
        changes = (await db.execute(select(Super9CalendarChange))).scalars().all()
        return SessionCalendar(zone).with_changes(
            added=[c.starts_at for c in changes if not c.cancelled],
            cancelled=[c.starts_at for c in changes if c.cancelled],
        )

    async def _session_at(self, db: AsyncSession, starts_at: datetime) -> Super9Session | None:
        return (
            await db.execute(select(Super9Session).where(Super9Session.starts_at == starts_at))
        ).scalar_one_or_none()

    async def _ensure_session(
        self, db: AsyncSession, starts_at: datetime, now: datetime
    ) -> Super9Session:
        row = await self._session_at(db, starts_at)
        if row is None:
            row = Super9Session(
                starts_at=starts_at,
                status=SessionStatus.SCHEDULED,
                settings=(await self.settings(db)).to_json(),
                created_at=now,
            )
            db.add(row)
            await db.flush()
        return row

    async def _session(
        self, db: AsyncSession, session_id: int, *, lock: bool = False
    ) -> Super9Session:
        row = await db.get(Super9Session, session_id, with_for_update=lock)
        if row is None:
            raise OperatorError(f"session {session_id} does not exist")
        return row

    async def session_for(self, starts_at: datetime) -> int | None:
        async with self._sm() as db:
            row = await self._session_at(db, starts_at)
            return None if row is None else row.id

    async def sold_for(self, serial: str) -> datetime | None:
        """The start of the session a ticket was sold for (None: not sold)."""
        async with self._sm() as db:
            query = (
                select(Super9Session.starts_at)
                .join(Super9Ticket, Super9Ticket.session_id == Super9Session.id)
                .where(Super9Ticket.serial == serial.strip())
            )
            found: datetime | None = (await db.execute(query)).scalar_one_or_none()
            return found

    async def _ticket(self, db: AsyncSession, serial: str) -> Super9Ticket:
        row = (
            await db.execute(select(Super9Ticket).where(Super9Ticket.serial == serial))
        ).scalar_one_or_none()
        if row is None:
            raise OperatorError(f"ticket {serial!r} was not sold")
        return row

    async def _drawing(self, db: AsyncSession, session_id: int) -> Super9Session:
        """The session, locked for this transaction, if it is drawing.

        The row lock serialises writers of one session (see the module docstring):
        without it two spins read the same ``max(seq)`` and one fails on the unique
        constraint.
        """
        row = await self._session(db, session_id, lock=True)
        if row.status is not SessionStatus.DRAWING:
            raise OperatorError(f"session {session_id} is {row.status.value}, not drawing")
        return row

    async def require_drawing(self, session_id: int) -> None:
        """Raise :class:`OperatorError` unless the session exists and is drawing."""
        async with self._sm() as db:
            row = await self._session(db, session_id)
            if row.status is not SessionStatus.DRAWING:
                raise OperatorError(f"session {session_id} is {row.status.value}, not drawing")

    async def _next_seq(self, db: AsyncSession, session_id: int) -> int:
        top = (
            await db.execute(
                select(func.max(Super9Spin.seq)).where(Super9Spin.session_id == session_id)
            )
        ).scalar_one()
        return int(top or 0) + 1

    async def jackpot(self) -> int:
        """The progressive jackpot now (S9-15): the ledger's balance, or the seed."""
        async with self._sm() as db:
            return await self._jackpot(db)

    async def _jackpot(self, db: AsyncSession) -> int:
        return await ledger.balance(db, (await self.settings(db)).jackpot_seed_cents)

    async def jackpot_history(self) -> list[dict[str, Any]]:
        async with self._sm() as db:
            return await ledger.history(db)

    async def _sync(
        self, db: AsyncSession, session_id: int
    ) -> tuple[LiveDraw, list[SpinOutcome[int]]]:
        session = await self._session(db, session_id)
        live = self._live.get(session_id)
        if live is None:
            facts = await records.session_facts(db, session_id)
            out = facts.disqualified
            live = LiveDraw(
                facts.tickets, facts.serials, Super9Settings.from_json(session.settings)
            )
            self._live[session_id] = live
        else:
            out = set(
                (
                    await db.execute(
                        select(Super9Ticket.id).where(
                            Super9Ticket.session_id == session_id,
                            Super9Ticket.status == TicketStatus.DISQUALIFIED,
                        )
                    )
                )
                .scalars()
                .all()
            )
        for key in out:
            live.remove(key)
        spins = (
            await db.execute(
                select(Super9Spin.seq, Super9Spin.number, Super9Spin.game_no)
                .where(
                    Super9Spin.session_id == session_id,
                    Super9Spin.voided.is_(False),
                    Super9Spin.number.is_not(None),
                )
                .order_by(Super9Spin.seq)
            )
        ).all()
        return live, live.sync([LiveSpin(s, n, g) for s, n, g in spins if n is not None])

    async def publish(self, session_id: int) -> tuple[str, ...]:
        """Sync the live draw and publish it; returns serials completed by new spins."""
        fresh, _ = await self._publish(session_id)
        return fresh

    async def _publish(
        self, session_id: int, seq: int | None = None
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Publish; returns (serials completed by new spins, serials spin ``seq`` completed).

        The second is what a recorded spin reports (S9-13): looked up by sequence
        number, so it stays right when another writer's spin was synced first.
        """
        async with self._live_lock(session_id):  # noqa: SIM117
            # The session row lock orders publishers across processes too: whoever
            # publishes last has read every spin committed before it.
            async with self._sm.begin() as db:
                session = await self._session(db, session_id, lock=True)
                live, outcomes = await self._sync(db, session_id)
                fresh = tuple(live.serial(k) for o in outcomes for k in o.completed)
                at_seq = () if seq is None else tuple(map(live.serial, live.completed_at(seq)))
                voided = (
                    (
                        await db.execute(
                            select(Super9Spin.game_no)
                            .where(
                                Super9Spin.session_id == session_id,
                                Super9Spin.voided.is_(True),
                            )
                            .order_by(Super9Spin.seq)
                        )
                    )
                    .scalars()
                    .all()
                )
                payload = live.payload(
                    session_id=session_id,
                    status=session.status.value,
                    jackpot_cents=await self._jackpot(db),
                    voided_games=voided,
                )
                nxt = await self._next_session(db, session.starts_at)
                # Under both locks: displays never get an older draw after a newer one.
                await publish(self._feed, session_id, payload, next_session=nxt)
        return fresh, at_seq

    async def _next_session(self, db: AsyncSession, after: datetime) -> datetime | None:
        """The calendar's first session after ``after``: what a sign shows between draws
        (it showed "No draw in progress" and nothing to come)."""
        cal = await self.calendar(db)
        day = after.astimezone(cal.tz).date()
        ahead = cal.between(day, day + timedelta(days=NEXT_SESSION_DAYS))
        later = [at for at in ahead if at > after]
        return later[0] if later else None

    async def _player_of(self, db: AsyncSession, ticket: Super9Ticket) -> Player:
        player = await db.get(Player, ticket.player_id)
        if player is None:  # the foreign key forbids it
            raise OperatorError(f"ticket {ticket.serial}: its player is not in the register")
        return player

    async def _check_registers(self, db: AsyncSession, ticket: Super9Ticket, now: datetime) -> None:
        """S9-2 and S9-3 again, at hand-in, claim and payout: a register line that took
        effect after the sale still bars the player (S9-1 cannot change)."""
        zone = ZoneInfo((await self.settings(db)).timezone)
        await check_eligible(db, await self._player_of(db, ticket), now.astimezone(zone))

    async def _disqualify_day(
        self, db: AsyncSession, ticket: Super9Ticket, day: date, zone: ZoneInfo, why: str
    ) -> list[str]:
        """S9-9: the participant is out of that day's promotion, every ticket.

        Tickets in sessions already closed keep their result (S9-27); the reasons all
        start ``rule 9:``, which is how later sales and hand-ins that day are refused
        (:func:`gateway.super9.desk.eligibility.out_for_the_day`).
        """
        start, end = day_bounds(zone, day)
        day_sessions = select(Super9Session.id).where(
            Super9Session.starts_at >= start,
            Super9Session.starts_at < end,
            Super9Session.status != SessionStatus.CLOSED,  # settled results are final (27)
        )
        rows = (
            (
                await db.execute(
                    select(Super9Ticket).where(
                        Super9Ticket.player_id == ticket.player_id,
                        Super9Ticket.session_id.in_(day_sessions),
                        Super9Ticket.status.in_([TicketStatus.SOLD, TicketStatus.ENTERED]),
                    )
                )
            )
            .scalars()
            .all()
        )
        ticket.status, ticket.disqualified_reason = TicketStatus.DISQUALIFIED, why
        for row in rows:
            if row.id != ticket.id:
                row.status = TicketStatus.DISQUALIFIED
                row.disqualified_reason = f"rule 9: out for the day (ticket {ticket.serial})"
        return sorted({ticket.serial, *(r.serial for r in rows)})

    async def _disqualify_person(
        self, db: AsyncSession, ticket: Super9Ticket, rule: int, why: str
    ) -> tuple[list[str], set[int]]:
        """S9-24, S9-28: "any person ... will be disqualified": the person, not a ticket.

        Every ticket of theirs not yet in a closed session (any day: results already
        settled stay final, S9-27) is disqualified with a reason starting ``rule N:``,
        which is how later sales and hand-ins are refused
        (:func:`gateway.super9.desk.eligibility.out_of_promotion`).  Returns the serials
        and the sessions whose draws must be republished.
        """
        open_sessions = select(Super9Session.id).where(Super9Session.status != SessionStatus.CLOSED)
        rows = (
            await db.scalars(
                select(Super9Ticket).where(
                    Super9Ticket.player_id == ticket.player_id,
                    Super9Ticket.session_id.in_(open_sessions),
                    Super9Ticket.status.in_([TicketStatus.SOLD, TicketStatus.ENTERED]),
                )
            )
        ).all()
        ticket.status, ticket.disqualified_reason = TicketStatus.DISQUALIFIED, why
        for row in rows:
            if row.id != ticket.id:
                row.status = TicketStatus.DISQUALIFIED
                row.disqualified_reason = (
                    f"rule {rule}: person disqualified (ticket {ticket.serial})"
                )
        serials = sorted({ticket.serial, *(r.serial for r in rows)})
        return serials, {ticket.session_id, *(r.session_id for r in rows)}

    async def report(self, session_id: int) -> dict[str, Any]:
        async with self._sm() as db:
            session = await self._session(db, session_id)
            return await records.session_report(db, session, await self._jackpot(db))
