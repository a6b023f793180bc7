"""Super 9 desk: every operator action on the promotion, stored and audited.

One method per thing a person does at the cash desk, the Guest Relations desk or the
table (sell, hand in, void a spin, key a manual spin, register a claim, close ...).
Each runs in one transaction together with its audit row (``storage.audit``), validates
before it writes, and raises :class:`OperatorError` naming the rule when it refuses —
leaving nothing changed.  Time is passed in (``now``, time-zone aware) so scripted
sessions and tests drive the clock.

The draw state shown on displays is a :class:`LiveDraw` per session, brought in step
with the stored spins after every change and published on ``super9/<session>/draw``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.feed import FeedPublisher
from gateway.super9 import ledger, records
from gateway.super9.calendar import SessionCalendar, hand_in_cutoff
from gateway.super9.eligibility import check_eligible, find_player
from gateway.super9.engine import SpinOutcome
from gateway.super9.live import LiveDraw, LiveSpin, publish
from gateway.super9.settings import Super9Settings
from gateway.super9.settle import Settlement
from gateway.super9.tickets import (
    TicketNumbersError,
    duplicate_mismatch,
    format_numbers,
    parse_numbers,
    validate_numbers,
)
from storage import audit
from storage.super9 import (
    SessionStatus,
    SpinSource,
    Super9CalendarChange,
    Super9Claim,
    Super9Prize,
    Super9Session,
    Super9Setting,
    Super9Spin,
    Super9Ticket,
    TicketStatus,
)

ACTOR_SYSTEM = "reelgate"


@dataclass(frozen=True, slots=True)
class SpinRecorded:
    session_id: int
    seq: int
    number: int | None
    voided: bool
    completed: tuple[str, ...]  # serials whose ninth number this spin called (rule 13)


@dataclass(frozen=True, slots=True)
class ClaimRegistered:
    ticket: str
    valid: bool  # duplicate matched the top copy (rule 9)
    complete: bool  # all nine called when registered
    reason: str | None


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise OperatorError("time: give a time zone (e.g. 2026-12-02T18:00+02:00)")


class Super9Desk:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        *,
        feed: FeedPublisher | None = None,
    ) -> None:
        self._sm = sessionmaker
        self._feed = feed
        self._live: dict[int, LiveDraw] = {}

    # -- settings and calendar -------------------------------------------------------

    async def settings(self, db: AsyncSession | None = None) -> Super9Settings:
        if db is None:
            async with self._sm() as own:
                return await self.settings(own)
        rows = (await db.execute(select(Super9Setting))).scalars().all()
        return Super9Settings.from_json({r.key: r.value for r in rows})

    async def change_settings(
        self, changes: dict[str, Any], *, actor: str, reason: str, now: datetime
    ) -> Super9Settings:
        async with self._sm.begin() as db:
            current = await self.settings(db)
            try:
                new = current.with_changes(changes)
            except (ValueError, TypeError) as exc:
                raise OperatorError(f"settings: {exc}") from None
            stored = new.to_json()
            for key in changes:
                row = await db.get(Super9Setting, key)
                if row is None:
                    db.add(
                        Super9Setting(key=key, value=stored[key], updated_at=now, updated_by=actor)
                    )
                else:
                    row.value, row.updated_at, row.updated_by = stored[key], now, actor
            await audit.record(
                db,
                actor=actor,
                action="super9.settings",
                subject="super9/settings",
                reason=reason,
                details={
                    "before": {k: current.to_json()[k] for k in changes},
                    "after": {k: stored[k] for k in changes},
                },
            )
        return new

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

    async def change_calendar(
        self, starts_at: datetime, *, cancel: bool, actor: str, reason: str, now: datetime
    ) -> None:
        """A one-off change to the rule 4 calendar (extra or cancelled session)."""
        _require_aware(starts_at)
        async with self._sm.begin() as db:
            cal = await self.calendar(db)
            local = starts_at.astimezone(cal.tz)
            scheduled = local in cal.on_day(local.date())
            if cancel and not scheduled:
                raise OperatorError(f"rule 4: no session at {starts_at.isoformat()} to cancel")
            if not cancel and scheduled:
                raise OperatorError(f"rule 4: a session at {starts_at.isoformat()} already exists")
            existing = await self._session_at(db, starts_at)
            if cancel and existing is not None:
                raise OperatorError(
                    f"session {existing.id} already has tickets or spins; move them first"
                )
            db.add(
                Super9CalendarChange(
                    starts_at=starts_at,
                    cancelled=cancel,
                    changed_by=actor,
                    reason=reason,
                    changed_at=now,
                )
            )
            await audit.record(
                db,
                actor=actor,
                action="super9.calendar." + ("cancel" if cancel else "add"),
                subject=f"super9/calendar/{starts_at.isoformat()}",
                reason=reason,
                details={"starts_at": starts_at},
            )

    # -- sessions ---------------------------------------------------------------------

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

    async def _session(self, db: AsyncSession, session_id: int) -> Super9Session:
        row = await db.get(Super9Session, session_id)
        if row is None:
            raise OperatorError(f"session {session_id} does not exist")
        return row

    async def session_for(self, starts_at: datetime) -> int | None:
        async with self._sm() as db:
            row = await self._session_at(db, starts_at)
            return None if row is None else row.id

    async def open_session(self, starts_at: datetime, *, actor: str, now: datetime) -> int:
        """Start the draw: settings are frozen from here, numbers too (rule 23)."""
        _require_aware(starts_at)
        async with self._sm.begin() as db:
            cal = await self.calendar(db)
            local = starts_at.astimezone(cal.tz)
            if local not in cal.on_day(local.date()):
                raise OperatorError(f"rule 4: no Super 9 session at {local.isoformat()}")
            if now < hand_in_cutoff(starts_at):
                raise OperatorError(
                    f"rule 6: hand-ins run until {hand_in_cutoff(local).time():%H:%M}; "
                    "the draw cannot start before"
                )
            row = await self._ensure_session(db, starts_at, now)
            if row.status is not SessionStatus.SCHEDULED:
                raise OperatorError(f"session {row.id} is already {row.status.value}")
            row.status = SessionStatus.DRAWING
            row.settings = (await self.settings(db)).to_json()
            row.opened_at, row.opened_by = now, actor
            await audit.record(
                db,
                actor=actor,
                action="super9.session.open",
                subject=f"super9/session/{row.id}",
                details={"starts_at": starts_at, "settings": row.settings},
            )
            session_id = row.id
        await self.publish(session_id)
        return session_id

    # -- tickets ----------------------------------------------------------------------

    async def _ticket(self, db: AsyncSession, serial: str) -> Super9Ticket:
        row = (
            await db.execute(select(Super9Ticket).where(Super9Ticket.serial == serial))
        ).scalar_one_or_none()
        if row is None:
            raise OperatorError(f"ticket {serial!r} was not sold")
        return row

    async def sell(self, serial: str, player_ref: str, *, actor: str, now: datetime) -> int:
        """Cash desk sale (rules 5, 6) to an eligible player (rules 1-3); the session id."""
        _require_aware(now)
        serial = serial.strip()
        if not serial:
            raise OperatorError("ticket: give the printed ticket number")
        async with self._sm.begin() as db:
            cal = await self.calendar(db)
            local = now.astimezone(cal.tz)
            starts = cal.sale_session(local)
            if starts is None:
                raise OperatorError(
                    "rule 6: tickets are sold from 08:00 on draw days until 30 minutes "
                    "before a session"
                )
            player = await find_player(db, player_ref)
            await check_eligible(db, player, local)
            if (
                await db.execute(select(Super9Ticket.id).where(Super9Ticket.serial == serial))
            ).first() is not None:
                raise OperatorError(f"ticket {serial!r} was already sold")
            session = await self._ensure_session(db, starts, now)
            if session.status is not SessionStatus.SCHEDULED:
                raise OperatorError(f"rule 6: session {session.id} is {session.status.value}")
            buy_in = Super9Settings.from_json(session.settings).buy_in_cents
            db.add(
                Super9Ticket(
                    serial=serial,
                    session_id=session.id,
                    player_id=player.id,
                    buy_in_cents=buy_in,
                    sold_at=now,
                    sold_by=actor,
                    status=TicketStatus.SOLD,
                )
            )
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.sell",
                subject=f"super9/ticket/{serial}",
                details={"session": session.id, "player": player.id_number, "buy_in_cents": buy_in},
            )
            return session.id

    async def _next_open_session(
        self, db: AsyncSession, cal: SessionCalendar, now: datetime, sold_for: datetime
    ) -> Super9Session:
        """The session a hand-in at ``now`` enters (rule 6), skipping any already drawing."""
        start = cal.hand_in_session(now, sold_for.astimezone(cal.tz))
        for _ in range(64):  # bounded: sessions already drawing early are rare
            row = await self._ensure_session(db, start, now)
            if row.status is SessionStatus.SCHEDULED:
                return row
            start = next(cal.upcoming(start))
        raise OperatorError("rule 6: no scheduled session to enter the ticket into")

    async def hand_in(self, serial: str, numbers: str, *, actor: str, now: datetime) -> int:
        """Key the top copy (rules 7, 8, 11); returns the session the ticket plays in."""
        _require_aware(now)
        try:
            keyed = validate_numbers(parse_numbers(numbers))
        except TicketNumbersError as exc:
            raise OperatorError(f"ticket {serial}: {exc}") from None
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            if ticket.status is not TicketStatus.SOLD:
                raise OperatorError(
                    f"ticket {serial} is {ticket.status.value}, not awaiting hand-in"
                )
            cal = await self.calendar(db)
            sold_for = await self._session(db, ticket.session_id)
            target = await self._next_open_session(db, cal, now, sold_for.starts_at)
            rolled = target.id != ticket.session_id
            if rolled and ticket.rolled_from_id is not None:
                raise OperatorError(
                    f"rule 6: ticket {serial} was valid for the next session only; it is past"
                )
            if rolled:  # rule 6: late tickets are valid for the next session
                ticket.rolled_from_id = ticket.session_id
                ticket.session_id = target.id
            ticket.numbers = format_numbers(keyed)
            ticket.status = TicketStatus.ENTERED
            ticket.handed_in_at, ticket.handed_in_by = now, actor
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.hand-in",
                subject=f"super9/ticket/{serial}",
                reason="rule 6: handed in after the cut-off, entered into the next session"
                if rolled
                else None,
                details={
                    "numbers": list(keyed),
                    "session": target.id,
                    "rolled_from": sold_for.id if rolled else None,
                },
            )
            return target.id

    async def change_numbers(
        self,
        serial: str,
        numbers: str,
        *,
        actor: str,
        approved_by: str,
        reason: str,
        now: datetime,
    ) -> None:
        """Rule 23: a change before the game starts, signed off by the Promotion Director."""
        if not approved_by.strip() or approved_by.strip() == actor.strip():
            raise OperatorError(
                "rule 23: the Promotion Director's sign-off (another person) is needed"
            )
        try:
            keyed = validate_numbers(parse_numbers(numbers))
        except TicketNumbersError as exc:
            raise OperatorError(f"ticket {serial}: {exc}") from None
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            if ticket.status is not TicketStatus.ENTERED:
                raise OperatorError(f"ticket {serial} is {ticket.status.value}; nothing to change")
            session = await self._session(db, ticket.session_id)
            if session.status is not SessionStatus.SCHEDULED:
                raise OperatorError(f"rule 23: session {session.id} has started; numbers are final")
            before = ticket.numbers
            ticket.numbers = format_numbers(keyed)
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.change-numbers",
                subject=f"super9/ticket/{serial}",
                reason=reason,
                details={
                    "before": before,
                    "after": ticket.numbers,
                    "approved_by": approved_by,
                    "rule": 23,
                },
            )

    async def disqualify(
        self, serial: str, *, actor: str, reason: str, rule: int, now: datetime
    ) -> None:
        """Staff flag a marked or scratched ticket (rule 21) or a rule breach (24, 28)."""
        if rule not in (9, 21, 24, 28):
            raise OperatorError("disqualify: rule must be 9, 21, 24 or 28")
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            if ticket.status is TicketStatus.DISQUALIFIED:
                raise OperatorError(f"ticket {serial} is already disqualified")
            session = await self._session(db, ticket.session_id)
            if session.status is SessionStatus.CLOSED:
                raise OperatorError(f"session {session.id} is closed; results are final (rule 27)")
            ticket.status = TicketStatus.DISQUALIFIED
            ticket.disqualified_reason = f"rule {rule}: {reason}"
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.disqualify",
                subject=f"super9/ticket/{serial}",
                reason=reason,
                details={"rule": rule},
            )
            session_id = session.id
        await self.publish(session_id)

    # -- spins ------------------------------------------------------------------------

    async def _drawing(self, db: AsyncSession, session_id: int) -> Super9Session:
        row = await self._session(db, session_id)
        if row.status is not SessionStatus.DRAWING:
            raise OperatorError(f"session {session_id} is {row.status.value}, not drawing")
        return row

    async def _next_seq(self, db: AsyncSession, session_id: int) -> int:
        top = (
            await db.execute(
                select(func.max(Super9Spin.seq)).where(Super9Spin.session_id == session_id)
            )
        ).scalar_one()
        return int(top or 0) + 1

    async def record_result(
        self, session_id: int, game_no: int, number: int, *, now: datetime
    ) -> SpinRecorded | None:
        """A debounced wheel result.  None if that game is already recorded.

        A game voided before its result (rule 18.2) keeps its void: the number is
        stored for the record but never called (rule 18.3).
        """
        if not 0 <= number <= 36:
            raise OperatorError(f"rule 8: wheel number {number} is outside 0-36")
        async with self._sm.begin() as db:
            await self._drawing(db, session_id)
            row = (
                await db.execute(
                    select(Super9Spin).where(
                        Super9Spin.session_id == session_id, Super9Spin.game_no == game_no
                    )
                )
            ).scalar_one_or_none()
            if row is not None and row.number is not None:
                return None  # the wheel repeated a posted game
            if row is None:
                row = Super9Spin(
                    session_id=session_id,
                    seq=await self._next_seq(db, session_id),
                    game_no=game_no,
                    number=number,
                    source=SpinSource.WHEEL,
                    recorded_at=now,
                    voided=False,
                )
                db.add(row)
            else:
                row.number = number  # arrived after a "No spin": stays void
                await audit.record(
                    db,
                    actor=ACTOR_SYSTEM,
                    action="super9.spin.void-result-ignored",
                    subject=f"super9/session/{session_id}/game/{game_no}",
                    reason="rule 18.2: result of a voided spin",
                    details={"number": number},
                )
            await db.flush()
            seq, voided = row.seq, row.voided
        completed = await self.publish(session_id)
        return SpinRecorded(session_id, seq, number, voided, completed)

    async def void_spin(
        self,
        session_id: int,
        *,
        game_no: int | None = None,
        seq: int | None = None,
        actor: str,
        reason: str,
        now: datetime,
    ) -> int:
        """A dealer's or supervisor's "No spin" (rule 18), before or after the result."""
        if (game_no is None) == (seq is None):
            raise OperatorError("void: give the wheel game number or the spin sequence number")
        async with self._sm.begin() as db:
            await self._drawing(db, session_id)
            query = select(Super9Spin).where(Super9Spin.session_id == session_id)
            query = query.where(
                Super9Spin.game_no == game_no if game_no is not None else Super9Spin.seq == seq
            )
            row = (await db.execute(query)).scalar_one_or_none()
            if row is None:
                if game_no is None:
                    raise OperatorError(f"void: no spin {seq} in session {session_id}")
                # Before the result: the game is void whatever the wheel reports later.
                row = Super9Spin(
                    session_id=session_id,
                    seq=await self._next_seq(db, session_id),
                    game_no=game_no,
                    number=None,
                    source=SpinSource.WHEEL,
                    recorded_at=now,
                    voided=True,
                )
                db.add(row)
            elif row.voided:
                raise OperatorError(f"void: spin {row.seq} is already void")
            row.voided, row.voided_by, row.void_reason = True, actor, reason
            await db.flush()
            await audit.record(
                db,
                actor=actor,
                action="super9.spin.void",
                subject=f"super9/session/{session_id}/spin/{row.seq}",
                reason=reason,
                details={"game": row.game_no, "number": row.number, "rule": "18.2"},
            )
            voided_seq = row.seq
        await self.publish(session_id)
        return voided_seq

    async def manual_spin(
        self,
        session_id: int,
        number: int,
        *,
        confirm_number: int,
        keyed_by: str,
        confirmed_by: str,
        reason: str,
        game_no: int | None = None,
        now: datetime,
    ) -> SpinRecorded:
        """Rule 29 fallback: one person keys the number, a second confirms it."""
        if not keyed_by.strip() or not confirmed_by.strip() or keyed_by == confirmed_by:
            raise OperatorError("rule 29: a manual spin needs a second person to confirm it")
        if number != confirm_number:
            raise OperatorError(
                f"rule 29: keyed {number} but confirmed {confirm_number}; key it again"
            )
        if not 0 <= number <= 36:
            raise OperatorError(f"rule 8: {number} is outside 0-36")
        async with self._sm.begin() as db:
            await self._drawing(db, session_id)
            if (
                game_no is not None
                and (
                    await db.execute(
                        select(Super9Spin.id).where(
                            Super9Spin.session_id == session_id, Super9Spin.game_no == game_no
                        )
                    )
                ).first()
                is not None
            ):
                raise OperatorError(f"game {game_no} is already recorded")
            row = Super9Spin(
                session_id=session_id,
                seq=await self._next_seq(db, session_id),
                game_no=game_no,
                number=number,
                source=SpinSource.MANUAL,
                recorded_at=now,
                voided=False,
                keyed_by=keyed_by,
                confirmed_by=confirmed_by,
            )
            db.add(row)
            await db.flush()
            await audit.record(
                db,
                actor=keyed_by,
                action="super9.spin.manual",
                subject=f"super9/session/{session_id}/spin/{row.seq}",
                reason=reason,
                details={
                    "number": number,
                    "confirmed_by": confirmed_by,
                    "game": game_no,
                    "rule": 29,
                },
            )
            seq = row.seq
        completed = await self.publish(session_id)
        return SpinRecorded(session_id, seq, number, False, completed)

    # -- claims -----------------------------------------------------------------------

    async def claim(
        self, session_id: int, serial: str, duplicate: str, *, actor: str, now: datetime
    ) -> ClaimRegistered:
        """A "SUPER 9" shout (rules 14, 22): the player's duplicate is keyed again.

        A difference from the top copy, a repeated number or more than nine numbers
        voids the claim and disqualifies the player for the day (rule 9); play goes on.
        """
        async with self._sm.begin() as db:
            session = await self._drawing(db, session_id)
            ticket = await self._ticket(db, serial)
            if ticket.session_id != session_id:
                raise OperatorError(f"ticket {serial} does not play in session {session_id}")
            if ticket.status is not TicketStatus.ENTERED:
                why = ticket.disqualified_reason or ticket.status.value
                raise OperatorError(f"ticket {serial} cannot claim: {why}")
            mismatch = duplicate_mismatch(records.ticket_numbers(ticket), duplicate)
            at_seq = await self._next_seq(db, session_id) - 1
            live, _ = await self._sync(db, session_id)
            complete = ticket.id in live.engine.completed
            reason = mismatch or (None if complete else "not all nine numbers called")
            db.add(
                Super9Claim(
                    session_id=session_id,
                    ticket_id=ticket.id,
                    duplicate=duplicate,
                    at_seq=at_seq,
                    valid=mismatch is None,
                    reason=reason,
                    registered_by=actor,
                    registered_at=now,
                )
            )
            disqualified: list[str] = []
            if mismatch is not None:
                disqualified = await self._disqualify_day(db, ticket, session, mismatch)
            await audit.record(
                db,
                actor=actor,
                action="super9.claim",
                subject=f"super9/ticket/{serial}",
                reason=reason,
                details={
                    "session": session_id,
                    "duplicate": duplicate,
                    "at_seq": at_seq,
                    "valid": mismatch is None,
                    "complete": complete,
                    "disqualified": disqualified,
                },
            )
        await self.publish(session_id)
        return ClaimRegistered(serial, mismatch is None, complete, reason)

    async def _disqualify_day(
        self, db: AsyncSession, ticket: Super9Ticket, session: Super9Session, why: str
    ) -> list[str]:
        """Rule 9: the participant is out of that day's promotion, every ticket."""
        zone = ZoneInfo(Super9Settings.from_json(session.settings).timezone)
        day = session.starts_at.astimezone(zone).date()
        start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
        day_sessions = select(Super9Session.id).where(
            Super9Session.starts_at >= start,
            Super9Session.starts_at < start + timedelta(days=1),
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
        for row in rows:
            row.status = TicketStatus.DISQUALIFIED
            row.disqualified_reason = (
                why if row.id == ticket.id else f"rule 9: claim on ticket {ticket.serial} void"
            )
        return sorted(r.serial for r in rows)

    # -- close, prizes, jackpot ----------------------------------------------------------

    async def jackpot(self) -> int:
        """The progressive jackpot now (rule 15): the ledger's balance, or the seed."""
        async with self._sm() as db:
            return await self._jackpot(db)

    async def _jackpot(self, db: AsyncSession) -> int:
        return await ledger.balance(db, (await self.settings(db)).jackpot_seed_cents)

    async def jackpot_history(self) -> list[dict[str, Any]]:
        async with self._sm() as db:
            return await ledger.history(db)

    async def close_session(self, session_id: int, *, actor: str, now: datetime) -> Settlement[int]:
        """Settle the draw (rules 13-16, 19, 20) and move the jackpot; final (rule 27)."""
        async with self._sm.begin() as db:
            session = await self._drawing(db, session_id)
            settings = Super9Settings.from_json(session.settings)
            # Tickets never handed in roll to the next session once (rule 6), then expire.
            unplayed = (
                (
                    await db.execute(
                        select(Super9Ticket).where(
                            Super9Ticket.session_id == session_id,
                            Super9Ticket.status == TicketStatus.SOLD,
                        )
                    )
                )
                .scalars()
                .all()
            )
            if any(t.rolled_from_id is None for t in unplayed):
                cal = await self.calendar(db)
                nxt = await self._ensure_session(db, next(cal.upcoming(session.starts_at)), now)
                for t in unplayed:
                    if t.rolled_from_id is None:
                        t.rolled_from_id, t.session_id = session_id, nxt.id
            for t in unplayed:
                if t.rolled_from_id is not None and t.session_id == session_id:
                    t.status = TicketStatus.EXPIRED
            await db.flush()
            await ledger.ensure_seeded(db, settings.jackpot_seed_cents, now)
            facts = await records.session_facts(db, session_id)
            result = records.settle_facts(facts, settings, await self._jackpot(db))
            await ledger.write_settlement(db, session_id, result, settings, now)
            for p in result.payouts:
                db.add(
                    Super9Prize(
                        session_id=session_id,
                        ticket_id=p.ticket,
                        kind=p.kind.value,
                        amount_cents=p.amount_cents,
                    )
                )
            session.status = SessionStatus.CLOSED
            session.closed_at, session.closed_by = now, actor
            session.result = records.result_json(result, facts.serials)
            await audit.record(
                db,
                actor=actor,
                action="super9.session.close",
                subject=f"super9/session/{session_id}",
                details=session.result,
            )
        self._live.pop(session_id, None)
        await self.publish(session_id)
        return result

    async def sign_prize(
        self,
        session_id: int,
        serial: str,
        kind: str,
        *,
        signature: str,
        witness: str,
        actor: str,
        now: datetime,
    ) -> None:
        """Rule 26: the winner signs for receipt; a staff witness is recorded too."""
        if not signature.strip():
            raise OperatorError("rule 26: record the winner's signature reference")
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            prize = (
                await db.execute(
                    select(Super9Prize).where(
                        Super9Prize.session_id == session_id,
                        Super9Prize.ticket_id == ticket.id,
                        Super9Prize.kind == kind,
                    )
                )
            ).scalar_one_or_none()
            if prize is None:
                raise OperatorError(f"ticket {serial} won no {kind} prize in session {session_id}")
            if prize.signed_at is not None:
                raise OperatorError(f"prize already signed for by {prize.signed_by}")
            prize.signed_by, prize.signed_at, prize.witnessed_by = signature, now, witness
            await audit.record(
                db,
                actor=actor,
                action="super9.prize.receipt",
                subject=f"super9/ticket/{serial}",
                details={
                    "session": session_id,
                    "kind": kind,
                    "amount_cents": prize.amount_cents,
                    "signature": signature,
                    "witness": witness,
                    "rule": 26,
                },
            )

    # -- live draw and report ------------------------------------------------------------

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
        async with self._sm() as db:
            session = await self._session(db, session_id)
            live, outcomes = await self._sync(db, session_id)
            completed = tuple(live.serial(k) for o in outcomes for k in o.completed)
            voided = (
                (
                    await db.execute(
                        select(Super9Spin.game_no)
                        .where(Super9Spin.session_id == session_id, Super9Spin.voided.is_(True))
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
        await publish(self._feed, session_id, payload)
        return completed

    async def report(self, session_id: int) -> dict[str, Any]:
        async with self._sm() as db:
            session = await self._session(db, session_id)
            return await records.session_report(db, session, await self._jackpot(db))
