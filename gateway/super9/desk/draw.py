"""The table side of the Super 9 desk: wheel and manual spins, "No spin" voids,
claims, closing a session and prize receipts (S9-9, S9-12–S9-20, S9-22, S9-26, S9-29).

Clauses: docs/rules.md#s9-9, #s9-12 to #s9-20, #s9-22, #s9-26, #s9-29.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.super9.desk import ledger, records
from gateway.super9.desk.core import ACTOR_SYSTEM, ClaimRegistered, DeskCore, SpinRecorded
from gateway.super9.desk.eligibility import find_player
from gateway.super9.rules.settings import Super9Settings
from gateway.super9.rules.settle import Settlement
from gateway.super9.rules.tickets import duplicate_mismatch
from storage import audit
from storage.super9 import (
    SessionStatus,
    SpinSource,
    Super9Claim,
    Super9Prize,
    Super9Spin,
    Super9Ticket,
    TicketStatus,
)


class DrawDesk(DeskCore):
    """Spins, voids, claims, close and receipts; a session must be drawing."""

    async def _add_spin(
        self,
        db: AsyncSession,
        session_id: int,
        *,
        game_no: int | None,
        number: int | None,
        now: datetime,
        voided: bool = False,
        source: SpinSource = SpinSource.WHEEL,
        keyed_by: str | None = None,
        confirmed_by: str | None = None,
    ) -> Super9Spin:
        """A new spin, next in the session's order; the caller holds the session lock."""
        row = Super9Spin(
            session_id=session_id,
            seq=await self._next_seq(db, session_id),
            game_no=game_no,
            number=number,
            source=source,
            recorded_at=now,
            voided=voided,
            keyed_by=keyed_by,
            confirmed_by=confirmed_by,
        )
        db.add(row)
        return row

    async def record_result(
        self, session_id: int, game_no: int, number: int, *, now: datetime
    ) -> SpinRecorded | None:
        """A debounced wheel result.  None if that game is already recorded.

        An identical repeat is a no-op; a different number for a recorded game keeps the
        first and is written to the audit log for the supervisor.

        A game voided before its result (S9-18.2) keeps its void: the number is
        stored for the record but never called (S9-18.3).
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
                if row.number != number:
                    # The first result stands; a supervisor can void the spin (S9-18).
                    await audit.record(
                        db,
                        actor=ACTOR_SYSTEM,
                        action="super9.spin.conflicting-result",
                        subject=f"super9/session/{session_id}/game/{game_no}",
                        reason=f"game {game_no} already recorded as {row.number}",
                        details={"number": number, "recorded": row.number, "seq": row.seq},
                    )
                return None  # the wheel (or a second writer) repeated a posted game
            if row is None:
                row = await self._add_spin(db, session_id, game_no=game_no, number=number, now=now)
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
        _, completed = await self._publish(session_id, seq)
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
        """A dealer's or supervisor's "No spin" (S9-18), before or after the result."""
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
                row = await self._add_spin(
                    db, session_id, game_no=game_no, number=None, now=now, voided=True
                )
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
        """S9-29 fallback: one person keys the number, a second confirms it."""
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
            row = await self._add_spin(
                db,
                session_id,
                game_no=game_no,
                number=number,
                now=now,
                source=SpinSource.MANUAL,
                keyed_by=keyed_by,
                confirmed_by=confirmed_by,
            )
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
        _, completed = await self._publish(session_id, seq)
        return SpinRecorded(session_id, seq, number, False, completed)

    async def claim(
        self, session_id: int, serial: str, duplicate: str, *, actor: str, now: datetime
    ) -> ClaimRegistered:
        """A "SUPER 9" shout (S9-14, S9-22): the player's duplicate is keyed again.

        A difference from the top copy, a repeated number or more than nine numbers
        voids the claim and disqualifies the player for the day (S9-9); play goes on.
        """
        # The live draw is read below: its lock first, then the transaction (desk_core).
        async with self._live_lock(session_id), self._sm.begin() as db:
            session = await self._drawing(db, session_id)
            ticket = await self._ticket(db, serial)
            if ticket.session_id != session_id:
                raise OperatorError(f"ticket {serial} does not play in session {session_id}")
            if ticket.status is not TicketStatus.ENTERED:
                why = ticket.disqualified_reason or ticket.status.value
                raise OperatorError(f"ticket {serial} cannot claim: {why}")
            await self._check_registers(db, ticket, now)  # S9-2, S9-3
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
                zone = ZoneInfo(Super9Settings.from_json(session.settings).timezone)
                day = session.starts_at.astimezone(zone).date()
                why = mismatch if mismatch.startswith("rule 9:") else f"rule 9: {mismatch}"
                disqualified = await self._disqualify_day(db, ticket, day, zone, why)
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

    async def close_session(self, session_id: int, *, actor: str, now: datetime) -> Settlement[int]:
        """Settle the draw (S9-13–S9-16, S9-19, S9-20) and move the jackpot; final (S9-27)."""
        async with self._sm.begin() as db:
            session = await self._drawing(db, session_id)
            settings = Super9Settings.from_json(session.settings)
            # Tickets never handed in roll to the next session once (S9-6), then expire.
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
            audit.request_checkpoint(db, f"super9 session {session_id} closed")
        async with self._live_lock(session_id):
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
        signer: str,
        actor: str,
        now: datetime,
    ) -> None:
        """S9-26: the winner signs for receipt; a staff witness is recorded too.

        Prizes are not transferable (S9-26): ``signer`` names (typed, or by ID or card
        number) the person signing, who must be the ticket's player, and still eligible
        (S9-2, S9-3).  The witness is named and is not the signer.
        """
        if not signature.strip():
            raise OperatorError("rule 26: record the winner's signature reference")
        if not witness.strip():
            raise OperatorError("rule 26: name the staff member who witnessed the receipt")
        async with self._sm.begin() as db:
            ticket = await self._ticket(db, serial)
            winner = await self._player_of(db, ticket)
            signed = await find_player(db, signer, "signer")
            if signed.id != winner.id:
                raise OperatorError(
                    f"rule 26: prizes are not transferable; ticket {serial} belongs to "
                    f"player {winner.id_number}, not {signed.id_number}"
                )
            if witness.strip() in {signer.strip(), winner.id_number, winner.card_number}:
                raise OperatorError("rule 26: the witness must be someone other than the winner")
            await self._check_registers(db, ticket, now)  # S9-2, S9-3
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
                    "signer": winner.id_number,
                    "witness": witness,
                    "rule": 26,
                },
            )
