"""Prizes paid to the winner's machine (house clauses P1–P7, docs/rules.md#p1).

The venue's setting (P1), the journal of transfers written before the machine is told
(P4), and the settlement of each transfer's outcome into the ordinary payout — a T15
place (:func:`gateway.tournament.services.prizes.pay_prize`) or an HS7 draw
(:func:`gateway.tournament.services.hotseat.pay_draw`) with tender ``machine (AFT)`` —
in one transaction with the journal row (P5, P6).  Nothing here talks to a machine: the
application's :mod:`gateway.app.machine_prizes` sends the transfer and hands back what
the machine said.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.machine_prizes import (
    Verdict,
    check_allowed,
    check_setting,
    refuse,
)
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services import prizes
from gateway.tournament.services.common import aware, record, require_actor
from storage.enums import HeatStatus
from storage.floor import FloorMachine
from storage.machine_prizes import (
    DONE,
    JOURNALED,
    MACHINE_TENDER,
    OPEN,
    REFUSED,
    UNKNOWN,
    MachinePrizeSetting,
    MachinePrizeTransfer,
)
from storage.tournament import Heat, Seat

PRIZE, HOTSEAT = "prize", "hotseat"
DEFAULT_EXPIRATION_DAYS = 30
_PLAYING = (HeatStatus.ARMED, HeatStatus.RUNNING, HeatStatus.ENDING, HeatStatus.COLLECTING)


def new_transaction_id() -> str:
    """A fresh SAS AFT transaction ID (20 ASCII characters), kept for every retry (P4)."""
    return "RP" + secrets.token_hex(9)


def prize_ref(tournament_id: int, stage: Stage, place: int) -> str:
    return f"tournament:{tournament_id}|{stage.value}|{place}"


def draw_ref(draw_id: int) -> str:
    return f"hotseat-draw:{draw_id}"


def _parse_prize_ref(ref: str) -> tuple[int, Stage, int]:
    tournament, stage, place = ref.removeprefix("tournament:").split("|")
    return int(tournament), Stage(stage), int(place)


# -- P1: the venue's setting ---------------------------------------------------------------
async def setting(session: AsyncSession) -> MachinePrizeSetting | None:
    return await session.get(MachinePrizeSetting, 1)


async def set_setting(
    session: AsyncSession,
    *,
    allowed: bool,
    reason: str,
    actor: str,
    now: datetime,
    expiration_days: int = DEFAULT_EXPIRATION_DAYS,
) -> MachinePrizeSetting:
    """The director's decision (P1): prizes to the machine allowed or not, the credits'
    life in days, with the reason (the jurisdiction's terms).  Audited."""
    actor = require_actor(actor)
    aware(now, "now")
    check_setting(allowed, expiration_days, reason)
    row = await setting(session)
    before = None if row is None else {"allowed": row.allowed, "days": row.expiration_days}
    if row is None:
        row = MachinePrizeSetting(id=1)
        session.add(row)
    row.allowed, row.expiration_days = allowed, expiration_days
    row.reason, row.set_by, row.set_at = reason.strip(), actor, now
    await session.flush()
    await record(
        session,
        actor,
        "machine-prizes.setting",
        "venue",
        reason.strip(),
        allowed=allowed,
        expiration_days=expiration_days,
        before=before,
        rule="P1",
    )
    return row


# -- P3: what the gateway knows of a machine --------------------------------------------------
@dataclass(frozen=True)
class FloorFacts:
    """P3's facts from the database: the machine is on the floor, excluded by a
    technician (locked), seated in a heat that is not over (in tournament mode)."""

    known: bool
    excluded: str | None
    in_heat: str | None


async def floor_facts(session: AsyncSession, machine_id: str) -> FloorFacts:
    machine = await session.get(FloorMachine, machine_id)
    heat = await session.scalar(
        select(Heat)
        .join(Seat, Seat.heat_id == Heat.id)
        .where(Seat.machine_id == machine_id, Heat.status.in_(_PLAYING))
        .limit(1)
    )
    return FloorFacts(
        machine is not None,
        None if machine is None else machine.excluded_reason,
        None if heat is None else f"heat {heat.id} ({heat.status.value})",
    )


def check_floor(facts: FloorFacts, machine_id: str) -> None:
    """P3 from the database alone, before anything is journaled."""
    if not facts.known:
        raise refuse("P3", f"machine {machine_id} is not on the floor")
    if facts.excluded is not None:
        raise refuse("P3", f"machine {machine_id} is locked (excluded: {facts.excluded})")
    if facts.in_heat is not None:
        raise refuse("P3", f"machine {machine_id} is in tournament mode ({facts.in_heat})")


# -- P2, P4: journal a transfer ----------------------------------------------------------------
async def _open_transfer(session: AsyncSession, kind: str, ref: str) -> MachinePrizeTransfer | None:
    return await session.scalar(
        select(MachinePrizeTransfer).where(
            MachinePrizeTransfer.kind == kind,
            MachinePrizeTransfer.ref == ref,
            MachinePrizeTransfer.status.in_(OPEN),
        )
    )


async def _journal(
    session: AsyncSession,
    *,
    kind: str,
    ref: str,
    machine_id: str,
    amount_cents: int,
    signer: str,
    signature: str,
    witness: str,
    actor: str,
    now: datetime,
    transaction_id: str | None,
) -> MachinePrizeTransfer:
    row = await setting(session)
    check_allowed(None if row is None else row.allowed)
    assert row is not None  # check_allowed refused None
    machine_id = machine_id.strip()
    if not machine_id:
        raise refuse("P2", "machine is required")
    check_floor(await floor_facts(session, machine_id), machine_id)
    if await _open_transfer(session, kind, ref) is not None:
        raise refuse("P4", f"{ref} already has a transfer to a machine journaled or done")
    transfer = MachinePrizeTransfer(
        transaction_id=transaction_id or new_transaction_id(),
        kind=kind,
        ref=ref,
        machine_id=machine_id,
        amount_cents=amount_cents,
        expiration_days=row.expiration_days,
        signer=signer.strip(),
        signature=signature.strip(),
        witness=witness.strip(),
        requested_by=actor,
        journaled_at=now,
        sends=0,
        status=JOURNALED,
    )
    session.add(transfer)
    await session.flush()
    await record(
        session,
        actor,
        "machine-prizes.journal",
        ref,
        None,
        transfer_id=transfer.id,
        transaction_id=transfer.transaction_id,
        machine=machine_id,
        amount_cents=amount_cents,
        witness=transfer.witness,
        rule="P4",
    )
    return transfer


async def journal_prize(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    place: int,
    *,
    machine_id: str,
    signer: str,
    signature: str,
    witness: str,
    actor: str,
    now: datetime,
    transaction_id: str | None = None,
) -> MachinePrizeTransfer:
    """P2, P4: journal a T15 place to be credited to ``machine_id``, after every check the
    desk payout makes (nothing is paid until the machine says it took the credits)."""
    actor = require_actor(actor)
    p = await prizes.check_payable(
        session,
        tournament_ref,
        stage,
        place,
        signer=signer,
        signature=signature,
        witness=witness,
        now=now,
    )
    return await _journal(
        session,
        kind=PRIZE,
        ref=prize_ref(p.tournament.id, stage, place),
        machine_id=machine_id,
        amount_cents=p.amount_cents,
        signer=signer,
        signature=signature,
        witness=witness,
        actor=actor,
        now=now,
        transaction_id=transaction_id,
    )


async def journal_draw(
    session: AsyncSession,
    draw_id: int,
    *,
    machine_id: str,
    signer: str,
    signature: str,
    witness: str,
    actor: str,
    now: datetime,
    transaction_id: str | None = None,
) -> MachinePrizeTransfer:
    """P2, P4: journal an HS7 hot-seat prize to be credited to ``machine_id``."""
    actor = require_actor(actor)
    aware(now, "now")
    draw, _, _ = await hs.check_draw_payable(
        session, draw_id, signer=signer, signature=signature, witness=witness
    )
    return await _journal(
        session,
        kind=HOTSEAT,
        ref=draw_ref(draw.id),
        machine_id=machine_id,
        amount_cents=draw.prize_cents,
        signer=signer,
        signature=signature,
        witness=witness,
        actor=actor,
        now=now,
        transaction_id=transaction_id,
    )


# -- P4, P5: sends and outcomes -----------------------------------------------------------------
async def open_transfers(session: AsyncSession) -> list[MachinePrizeTransfer]:
    """Every transfer whose outcome is not stored yet, oldest first."""
    rows = await session.scalars(
        select(MachinePrizeTransfer)
        .where(MachinePrizeTransfer.status == JOURNALED)
        .order_by(MachinePrizeTransfer.id)
    )
    return list(rows)


async def transfers(session: AsyncSession) -> list[MachinePrizeTransfer]:
    rows = await session.scalars(select(MachinePrizeTransfer).order_by(MachinePrizeTransfer.id))
    return list(rows)


async def _transfer(session: AsyncSession, transfer_id: int) -> MachinePrizeTransfer:
    row = await session.get(MachinePrizeTransfer, transfer_id, with_for_update=True)
    if row is None:
        raise refuse("P4", f"no transfer {transfer_id}")
    return row


async def mark_sent(session: AsyncSession, transfer_id: int) -> MachinePrizeTransfer:
    """P4: count a send in the journal, committed by the caller *before* the send."""
    row = await _transfer(session, transfer_id)
    if row.status != JOURNALED:
        raise refuse("P4", f"transfer {transfer_id} is {row.status}: nothing to send")
    row.sends += 1
    await session.flush()
    return row


async def settle(
    session: AsyncSession,
    transfer_id: int,
    verdict: Verdict,
    *,
    detail: str,
    egm_status: int | None,
    actor: str,
    now: datetime,
) -> MachinePrizeTransfer:
    """P5: store what the machine said.  ``PAID`` records the payout (tender machine
    (AFT), P6) in this transaction; ``REFUSED`` and ``UNKNOWN`` close the transfer with
    the reason (a refused prize may be paid again, at the desk or to a machine);
    ``SEND`` and ``WAIT`` leave it journaled."""
    actor = require_actor(actor)
    aware(now, "now")
    row = await _transfer(session, transfer_id)
    if row.status != JOURNALED:
        return row  # settled already (by another gateway, or an earlier try)
    row.egm_status = egm_status
    if verdict in (Verdict.SEND, Verdict.WAIT):
        row.reason = detail
        await session.flush()
        return row
    payer = row.requested_by
    if verdict is Verdict.PAID:
        row.status = DONE  # first: the payout's own check refuses a prize still journaled
        await session.flush()
        if row.kind == PRIZE:
            tournament_id, stage, place = _parse_prize_ref(row.ref)
            payout = await prizes.pay_prize(
                session,
                tournament_id,
                stage,
                place,
                signer=row.signer,
                signature=row.signature,
                witness=row.witness,
                actor=payer,
                now=now,
                tender=MACHINE_TENDER,
            )
            row.payout_id = payout.id
        else:
            draw = await hs.pay_draw(
                session,
                int(row.ref.removeprefix("hotseat-draw:")),
                signer=row.signer,
                signature=row.signature,
                witness=row.witness,
                actor=payer,
                now=now,
                tender=MACHINE_TENDER,
            )
            row.payout_id = draw.id
    else:
        row.status = REFUSED if verdict is Verdict.REFUSED else UNKNOWN
    row.reason, row.settled_at = detail, now
    await session.flush()
    await record(
        session,
        actor,
        f"machine-prizes.{row.status}",
        row.ref,
        None,
        transfer_id=row.id,
        transaction_id=row.transaction_id,
        machine=row.machine_id,
        amount_cents=row.amount_cents,
        egm_status=egm_status,
        detail=detail,
        rule="P5",
    )
    return row


def transfer_facts(row: MachinePrizeTransfer) -> dict[str, object]:
    """What a transfer answers, the same from the command line and the API."""
    return {
        "id": row.id,
        "kind": row.kind,
        "ref": row.ref,
        "machine": row.machine_id,
        "amount_cents": row.amount_cents,
        "transaction_id": row.transaction_id,
        "status": row.status,
        "sends": row.sends,
        "reason": row.reason,
        "journaled_at": row.journaled_at,
        "settled_at": row.settled_at,
    }
