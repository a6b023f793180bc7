"""The sales side of the Super 9 desk: settings, calendar changes, ticket sales and
hand-ins (S9-1–S9-11, S9-21, S9-23), and opening a session's draw.

Clauses: docs/rules.md#s9-1 to #s9-11, #s9-21, #s9-23.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.super9.desk.core import DeskCore, Disqualified, require_aware
from gateway.super9.desk.eligibility import check_may_take_part, find_player
from gateway.super9.rules.calendar import SessionCalendar, hand_in_cutoff
from gateway.super9.rules.settings import Super9Settings
from gateway.super9.rules.tickets import (
    TicketNumbersError,
    format_numbers,
    parse_numbers,
    validate_numbers,
)
from gateway.super9.rules.verification import (
    Verification,
    VerificationError,
    check_verification,
)
from storage import audit
from storage.enums import Tender
from storage.super9 import (
    SessionStatus,
    Super9CalendarChange,
    Super9Session,
    Super9Setting,
    Super9Ticket,
    TicketStatus,
)
from storage.tournament import Player


def _top_copy(serial: str, numbers: str) -> tuple[tuple[int, ...], TicketNumbersError | None]:
    """The top copy's numbers, or the S9-9 breach it shows (S9-8, S9-9).

    An S9-8 error is a keying error and is refused (key it again); an S9-9 breach is
    returned, because it is what the player wrote and disqualifies them for the day.
    """
    try:
        return validate_numbers(parse_numbers(numbers)), None
    except TicketNumbersError as exc:
        if exc.rule != 9:
            raise OperatorError(f"ticket {serial}: {exc}") from None
        return (), exc


def _check_section(section: Verification, settings: Super9Settings, player: Player) -> None:
    try:
        check_verification(
            section,
            settings.verification_fields,
            id_number=player.id_number,
            card_number=player.card_number,
        )
    except VerificationError as exc:
        raise OperatorError(str(exc)) from None


def _keyed_numbers(serial: str, numbers: str) -> tuple[int, ...]:
    """Numbers as keyed from a ticket (S9-8, S9-11), or a one-line operator error."""
    try:
        return validate_numbers(parse_numbers(numbers))
    except TicketNumbersError as exc:
        raise OperatorError(f"ticket {serial}: {exc}") from None


class SalesDesk(DeskCore):
    """Settings, calendar, sales, hand-ins and number changes, and opening a draw."""

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

    async def change_calendar(
        self, starts_at: datetime, *, cancel: bool, actor: str, reason: str, now: datetime
    ) -> None:
        """A one-off change to the S9-4 calendar (extra or cancelled session)."""
        require_aware(starts_at)
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

    async def open_session(self, starts_at: datetime, *, actor: str, now: datetime) -> int:
        """Start the draw: settings are frozen from here, numbers too (S9-23)."""
        require_aware(starts_at)
        async with self._sm.begin() as db:
            cal = await self.calendar(db)
            local = starts_at.astimezone(cal.tz)
            if local not in cal.on_day(local.date()):
                raise OperatorError(f"rule 4: no Super 9 session at {local.isoformat()}")
            if now <= hand_in_cutoff(starts_at):  # the cut-off instant is still hand-in time
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

    async def sell(
        self,
        serial: str,
        player_ref: str,
        *,
        actor: str,
        now: datetime,
        tender: Tender = Tender.CASH,
    ) -> int:
        """Cash desk sale (S9-5, S9-6) to an eligible player (S9-1–S9-3), paid in cash or
        by card; the session id.  The printed serial is the sale's own key: a second
        sale of one ticket is refused."""
        require_aware(now)
        if tender is Tender.COMP:
            raise OperatorError("tender: a Super 9 ticket is paid in cash or by card")
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
            await check_may_take_part(db, player, now, cal.tz)  # S9-1–S9-3, S9-9
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
                    tender=tender.value,
                )
            )
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.sell",
                subject=f"super9/ticket/{serial}",
                details={
                    "session": session.id,
                    "player": player.id_number,
                    "buy_in_cents": buy_in,
                    "tender": tender.value,
                },
            )
            return session.id

    async def _hand_in_target(
        self, db: AsyncSession, cal: SessionCalendar, ticket: Super9Ticket, now: datetime
    ) -> Super9Session:
        """The session a hand-in at ``now`` enters (S9-6): the one sold for, or after
        its cut-off the next one only — never a later one, whatever is still open."""
        sold_for = await self._session(db, ticket.session_id)
        start = cal.hand_in_session(now, sold_for.starts_at.astimezone(cal.tz))
        if start is None or (start != sold_for.starts_at and ticket.rolled_from_id is not None):
            raise OperatorError(
                f"rule 6: ticket {ticket.serial} was valid for the next session only; it is past"
            )
        row = await self._ensure_session(db, start, now)
        if row.status is not SessionStatus.SCHEDULED:
            raise OperatorError(f"rule 6: session {row.id} is {row.status.value}; too late")
        return row

    async def hand_in(
        self,
        serial: str,
        numbers: str,
        *,
        actor: str,
        now: datetime,
        verification: Verification | None = None,
    ) -> int:
        """Key the top copy and its verification section (S9-6–S9-9, S9-11); returns the
        session the ticket plays in.

        A keying error (S9-8: a number outside 0-36, fewer than nine) is refused and
        can be keyed again.  A top copy with a number written twice or more than nine
        numbers breaks S9-9: the ticket is disqualified and the player is out of that
        day's promotion.  That is committed, then reported as :class:`Disqualified`
        so the desk sees it was not entered.
        """
        require_aware(now)
        keyed, breach = _top_copy(serial, numbers)
        section = verification or Verification()
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            if ticket.status is not TicketStatus.SOLD:
                raise OperatorError(
                    f"ticket {serial} is {ticket.status.value}, not awaiting hand-in"
                )
            cal = await self.calendar(db)
            player = await self._player_of(db, ticket)
            await check_may_take_part(db, player, now, cal.tz)  # S9-1–S9-3, S9-9
            target = await self._hand_in_target(db, cal, ticket, now)
            if breach is None:
                _check_section(section, await self.settings(db), player)  # S9-7
                rolled = target.id != ticket.session_id
                if rolled:  # S9-6: late tickets are valid for the next session
                    ticket.rolled_from_id = ticket.session_id
                    ticket.session_id = target.id
                ticket.numbers = format_numbers(keyed)
                ticket.verification = section.to_json()
                ticket.status = TicketStatus.ENTERED
                ticket.handed_in_at, ticket.handed_in_by = now, actor
                await self._audit_hand_in(db, ticket, actor, numbers, section, rolled=rolled)
                return target.id
            day = now.astimezone(cal.tz).date()
            out = await self._disqualify_day(db, ticket, day, cal.tz, str(breach))
            await self._audit_hand_in(db, ticket, actor, numbers, section, out=out)
        raise Disqualified(
            f"ticket {serial}: {breach}; disqualified, and the player is out of "
            f"today's promotion (tickets {', '.join(out)})",
            out,
        )

    async def _audit_hand_in(
        self,
        db: AsyncSession,
        ticket: Super9Ticket,
        actor: str,
        numbers: str,
        section: Verification,
        *,
        rolled: bool = False,
        out: list[str] | None = None,
    ) -> None:
        if out is not None:
            reason: str | None = ticket.disqualified_reason
        elif rolled:
            reason = "rule 6: handed in after the cut-off, entered into the next session"
        else:
            reason = None
        await audit.record(
            db,
            actor=actor,
            action="super9.ticket.hand-in" if out is None else "super9.ticket.disqualify",
            subject=f"super9/ticket/{ticket.serial}",
            reason=reason,
            details={
                "keyed": numbers,
                "session": ticket.session_id,
                "rolled_from": ticket.rolled_from_id if rolled else None,
                "verification": section.to_json(),
                "disqualified": out,
                "rule": 9 if out is not None else None,
            },
        )

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
        """S9-23: a change before the game starts, signed off by the Promotion Director."""
        if not approved_by.strip() or approved_by.strip() == actor.strip():
            raise OperatorError(
                "rule 23: the Promotion Director's sign-off (another person) is needed"
            )
        keyed = _keyed_numbers(serial, numbers)
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
    ) -> list[str]:
        """Staff flag a marked or scratched ticket (S9-21) or a breach of S9-9, S9-24 or
        S9-28; returns the serials disqualified.

        S9-21 takes out the ticket.  Under S9-9 the player is out of that day's
        promotion (the day of the ticket's session): every ticket of theirs that day, and
        later sales and hand-ins.  S9-24 and S9-28 disqualify the *person*: every open
        ticket of theirs, any day, and every later sale and hand-in.
        """
        if rule not in (9, 21, 24, 28):
            raise OperatorError("disqualify: rule must be 9, 21, 24 or 28")
        if not reason.strip():
            raise OperatorError("--reason: say what the breach was")
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            if ticket.status is TicketStatus.DISQUALIFIED:
                raise OperatorError(f"ticket {serial} is already disqualified")
            session = await self._session(db, ticket.session_id)
            if session.status is SessionStatus.CLOSED:
                raise OperatorError(f"session {session.id} is closed; results are final (rule 27)")
            ticket.status = TicketStatus.DISQUALIFIED
            ticket.disqualified_reason = f"rule {rule}: {reason}"
            out, sessions = [serial], {session.id}
            if rule == 9:
                zone = ZoneInfo((await self.settings(db)).timezone)
                day = session.starts_at.astimezone(zone).date()
                out = await self._disqualify_day(db, ticket, day, zone, f"rule 9: {reason}")
            elif rule in (24, 28):
                out, sessions = await self._disqualify_person(
                    db, ticket, rule, f"rule {rule}: {reason}"
                )
            await audit.record(
                db,
                actor=actor,
                action="super9.ticket.disqualify",
                subject=f"super9/ticket/{serial}",
                reason=reason,
                details={"rule": rule, "disqualified": out},
            )
        for session_id in sorted(sessions):
            await self.publish(session_id)
        return out
