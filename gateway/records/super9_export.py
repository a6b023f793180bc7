"""The body of a Super 9 session export: the session and the settings it ran with,
every ticket (sale, hand-in, status; S9-5–S9-11), every spin including voided ones and
who keyed or confirmed a manual one (S9-18, S9-29), every claim with its verdict
(S9-9, S9-14, S9-22), the prizes with their receipts (S9-26), the jackpot ledger rows
the session wrote (S9-15) and its settlement.  ``official`` once the session is closed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.records.heat_export import result_status
from storage.super9 import (
    SessionStatus,
    Super9Claim,
    Super9JackpotEntry,
    Super9Prize,
    Super9Session,
    Super9Spin,
    Super9Ticket,
)
from storage.tournament import Player


def _ticket(t: Super9Ticket, player: Player) -> dict[str, Any]:
    return {
        "serial": t.serial,
        "player": {"id": player.id, "name": player.name, "id_number": player.id_number},
        "buy_in_cents": t.buy_in_cents,
        "sold_at": t.sold_at,
        "sold_by": t.sold_by,
        "rolled_from_session": t.rolled_from_id,
        "status": t.status,
        "numbers": [int(n) for n in (t.numbers or "").split(",") if n],
        "handed_in_at": t.handed_in_at,
        "handed_in_by": t.handed_in_by,
        "verification": t.verification,
        "disqualified_reason": t.disqualified_reason,
    }


def _spin(s: Super9Spin) -> dict[str, Any]:
    return {
        "seq": s.seq,
        "game_no": s.game_no,
        "number": s.number,
        "source": s.source,
        "recorded_at": s.recorded_at,
        "keyed_by": s.keyed_by,
        "confirmed_by": s.confirmed_by,
        "voided": s.voided,
        "voided_by": s.voided_by,
        "void_reason": s.void_reason,
    }


def _ledger(e: Super9JackpotEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "prev_id": e.prev_id,
        "kind": e.kind,
        "amount_cents": e.amount_cents,
        "balance_cents": e.balance_cents,
        "at": e.at,
    }


async def _rows(session: AsyncSession, model: Any, session_id: int, order: Any) -> list[Any]:
    found = await session.execute(
        select(model).where(model.session_id == session_id).order_by(order)
    )
    return list(found.scalars())


async def super9_body(session: AsyncSession, session_id: int) -> dict[str, Any]:
    row = await session.get(Super9Session, session_id)
    if row is None:
        raise OperatorError(f"super9 session {session_id} does not exist")
    tickets = await session.execute(
        select(Super9Ticket, Player)
        .join(Player, Player.id == Super9Ticket.player_id)
        .where(Super9Ticket.session_id == session_id)
        .order_by(Super9Ticket.serial)
    )
    ticket_rows = [_ticket(t, p) for t, p in tickets.all()]
    serials = {
        t.id: t.serial
        for t in (
            await session.execute(select(Super9Ticket).where(Super9Ticket.session_id == session_id))
        ).scalars()
    }
    claims = await _rows(session, Super9Claim, session_id, Super9Claim.id)
    prizes = await _rows(session, Super9Prize, session_id, Super9Prize.id)
    ledger = await _rows(session, Super9JackpotEntry, session_id, Super9JackpotEntry.id)
    before = None
    if ledger and ledger[0].prev_id is not None:
        prev = await session.get(Super9JackpotEntry, ledger[0].prev_id)
        before = None if prev is None else prev.balance_cents
    return {
        "session": {
            "id": row.id,
            "starts_at": row.starts_at,
            "status": row.status,
            "result": result_status(row.status is SessionStatus.CLOSED),
            "settings": row.settings,
            "opened_at": row.opened_at,
            "opened_by": row.opened_by,
            "closed_at": row.closed_at,
            "closed_by": row.closed_by,
        },
        "tickets": ticket_rows,
        "buy_ins_cents": sum(t["buy_in_cents"] for t in ticket_rows),
        "spins": [_spin(s) for s in await _rows(session, Super9Spin, session_id, Super9Spin.seq)],
        "claims": [
            {
                "ticket": serials.get(c.ticket_id),
                "duplicate": c.duplicate,
                "at_seq": c.at_seq,
                "valid": c.valid,
                "reason": c.reason,
                "registered_by": c.registered_by,
                "registered_at": c.registered_at,
            }
            for c in claims
        ],
        "prizes": [
            {
                "ticket": serials.get(p.ticket_id),
                "kind": p.kind,
                "amount_cents": p.amount_cents,
                "signed_by": p.signed_by,
                "signed_at": p.signed_at,
                "witnessed_by": p.witnessed_by,
                "paid": p.signed_at is not None,
            }
            for p in prizes
        ],
        "jackpot": {
            "balance_before_cents": before,
            "movements": [_ledger(e) for e in ledger],
            "balance_after_cents": ledger[-1].balance_cents if ledger else None,
        },
        "settlement": row.result,
    }
