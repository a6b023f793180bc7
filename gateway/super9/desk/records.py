"""Reading a session back from storage: the facts a settlement is computed from, and
the session report (``reelgate super9 report``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.super9.rules.settings import Super9Settings
from gateway.super9.rules.settle import ClaimFact, Settlement, SpinFact, settle
from storage.super9 import (
    Super9Claim,
    Super9Prize,
    Super9Session,
    Super9Spin,
    Super9Ticket,
    TicketStatus,
)


def ticket_numbers(ticket: Super9Ticket) -> tuple[int, ...]:
    return tuple(int(n) for n in (ticket.numbers or "").split(",") if n)


@dataclass(frozen=True)
class SessionFacts:
    tickets: dict[int, tuple[int, ...]]  # keyed top copies (S9-11), by ticket id
    disqualified: set[int]
    spins: list[SpinFact]
    claims: list[ClaimFact[int]]
    buy_ins_cents: int  # every ticket the session holds at close (S9-6 roll-on included)
    serials: dict[int, str]


async def session_facts(db: AsyncSession, session_id: int) -> SessionFacts:
    tickets = (
        (await db.execute(select(Super9Ticket).where(Super9Ticket.session_id == session_id)))
        .scalars()
        .all()
    )
    spins = (
        (await db.execute(select(Super9Spin).where(Super9Spin.session_id == session_id)))
        .scalars()
        .all()
    )
    claims = (
        (await db.execute(select(Super9Claim).where(Super9Claim.session_id == session_id)))
        .scalars()
        .all()
    )
    return SessionFacts(
        tickets={
            t.id: ticket_numbers(t)
            for t in tickets
            if t.numbers and t.status in (TicketStatus.ENTERED, TicketStatus.DISQUALIFIED)
        },
        disqualified={t.id for t in tickets if t.status is TicketStatus.DISQUALIFIED},
        spins=[SpinFact(s.seq, s.number, s.voided) for s in spins],
        claims=[ClaimFact(c.ticket_id, c.at_seq, c.valid) for c in claims],
        buy_ins_cents=sum(t.buy_in_cents for t in tickets),
        serials={t.id: t.serial for t in tickets},
    )


def settle_facts(
    facts: SessionFacts, settings: Super9Settings, jackpot_in_cents: int
) -> Settlement[int]:
    return settle(
        facts.tickets,
        facts.spins,
        facts.claims,
        settings=settings,
        jackpot_in_cents=jackpot_in_cents,
        buy_ins_cents=facts.buy_ins_cents,
        disqualified=facts.disqualified,
    )


def result_json(result: Settlement[int], serials: dict[int, str]) -> dict[str, Any]:
    return {
        "buy_ins_cents": result.buy_ins_cents,
        "consolation_pool_cents": result.consolation_pool_cents,
        "contribution_cents": result.contribution_cents,
        "jackpot_in_cents": result.jackpot_in_cents,
        "jackpot_won": result.jackpot_won,
        "jackpot_pot_cents": result.jackpot_pot_cents,
        "seed_added_cents": result.seed_added_cents,
        "remainder_cents": result.remainder_cents,
        "unwon_consolation_cents": result.unwon_consolation_cents,
        "jackpot_out_cents": result.jackpot_out_cents,
        "retained_cents": result.retained_cents,
        "paid_cents": result.paid_cents,
        "valid_spins": result.valid_spins,
        "payouts": [
            {"ticket": serials[p.ticket], "kind": p.kind.value, "amount_cents": p.amount_cents}
            for p in result.payouts
        ],
        "claims": {serials[k]: v.value for k, v in sorted(result.verdicts.items())},
    }


async def session_report(
    db: AsyncSession, session: Super9Session, jackpot_now_cents: int
) -> dict[str, Any]:
    """The report of a session; before close, the result is what closing now would give."""
    facts = await session_facts(db, session.id)
    settings = Super9Settings.from_json(session.settings)
    if session.result is not None:
        result = dict(session.result)
    else:
        result = result_json(settle_facts(facts, settings, jackpot_now_cents), facts.serials)
    rows = (
        (
            await db.execute(
                select(Super9Spin)
                .where(Super9Spin.session_id == session.id)
                .order_by(Super9Spin.seq)
            )
        )
        .scalars()
        .all()
    )
    prizes = (
        (
            await db.execute(
                select(Super9Prize)
                .where(Super9Prize.session_id == session.id)
                .order_by(Super9Prize.id)
            )
        )
        .scalars()
        .all()
    )
    return {
        "session": session.id,
        "starts_at": session.starts_at.astimezone(ZoneInfo(settings.timezone)).isoformat(),
        "status": session.status.value,
        "settings": session.settings,
        "tickets": {
            "in_play": len(facts.tickets) - len(facts.disqualified),
            "disqualified": len(facts.disqualified),
            "total": len(facts.serials),
        },
        "spins": [
            {
                "seq": s.seq,
                "game": s.game_no,
                "number": s.number,
                "source": s.source.value,
                "voided": s.voided,
                "void_reason": s.void_reason,
                "keyed_by": s.keyed_by,
                "confirmed_by": s.confirmed_by,
            }
            for s in rows
        ],
        "result": result,
        "prizes": [
            {
                "ticket": facts.serials.get(p.ticket_id),
                "kind": p.kind,
                "amount_cents": p.amount_cents,
                "signed_by": p.signed_by,
                "signed_at": None if p.signed_at is None else p.signed_at.isoformat(),
                "witnessed_by": p.witnessed_by,
            }
            for p in prizes
        ],
    }
