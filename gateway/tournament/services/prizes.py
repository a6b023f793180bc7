"""T15 prizes over storage: the advertised schedule, the surplus decision, the payouts.

The arithmetic and the receipt checks are :mod:`gateway.tournament.rules.prizes`; here
they meet the tables (``storage.prizes``) and the standings.  A place is paid only when
its stage is over and one entry holds it outright (a tie is drawn first, T19), to that
entry's player, for the advertised minimum plus the place's share of the surplus.
Once a stage has a payout its schedule and its surplus are fixed.  Every change is
audited in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.player_ref import PlayerNotFound
from gateway.tournament.rules.prizes import (
    RULE,
    TIE_RULE,
    PrizeAmount,
    Winner,
    check_apportionment,
    check_change,
    check_receipt,
    check_schedule,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    aware,
    find_tournament,
    load_settings,
    record,
    require_actor,
    require_reason,
)
from gateway.tournament.services.lookup import player_by_ref
from gateway.tournament.services.standings import StandingLine, stage_over, stage_standings
from storage.machine_prizes import JOURNALED, MachinePrizeTransfer
from storage.prizes import PrizePayout, PrizePlace, PrizeSurplus
from storage.tournament import Player, Tournament


@dataclass(frozen=True, slots=True)
class PrizeLine:
    """One prize place as the standings show it."""

    place: int
    minimum_cents: int  # advertised (T15: the least that will be paid)
    surplus_cents: int  # apportioned by the director
    total_cents: int
    entry_id: int | None  # who holds the place now (None: nobody, or a tie to draw)
    player_name: str | None
    paid: bool
    paid_cents: int | None
    paid_at: datetime | None
    signer: str | None
    witness: str | None


async def _schedule(session: AsyncSession, tournament_id: int, stage: Stage) -> list[PrizePlace]:
    rows = await session.execute(
        select(PrizePlace)
        .where(PrizePlace.tournament_id == tournament_id, PrizePlace.stage == stage)
        .order_by(PrizePlace.place)
    )
    return list(rows.scalars())


async def _payouts(session: AsyncSession, tournament_id: int, stage: Stage) -> list[PrizePayout]:
    rows = await session.execute(
        select(PrizePayout)
        .where(PrizePayout.tournament_id == tournament_id, PrizePayout.stage == stage)
        .order_by(PrizePayout.place)
    )
    return list(rows.scalars())


async def _refuse_once_paid(session: AsyncSession, tournament: Tournament, stage: Stage) -> None:
    paid = await _payouts(session, tournament.id, stage)
    if paid:
        raise RuleViolation(
            RULE,
            f"{stage.value} prizes of {tournament.name} are being paid (place "
            f"{paid[0].place} is paid): the schedule and the surplus are fixed",
        )


async def set_schedule(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    minimums: Mapping[int, int],
    *,
    actor: str,
    now: datetime,
    reason: str | None = None,
) -> tuple[PrizeAmount, ...]:
    """The advertised minimum per place of a stage (T15).  A change needs a reason and
    may only raise or add places; the final's places are capped by ``prize_places``."""
    actor = require_actor(actor)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    cap = settings.prize_places if stage is Stage.FINAL else None
    amounts = check_schedule(minimums, prize_places=cap)
    await _refuse_once_paid(session, tournament, stage)
    rows = {row.place: row for row in await _schedule(session, tournament.id, stage)}
    before = {place: row.minimum_cents for place, row in rows.items()}
    if rows:
        check_change(before, {a.place: a.minimum_cents for a in amounts})
        reason = require_reason(reason, RULE)
    for amount in amounts:
        row = rows.get(amount.place)
        if row is None:
            row = PrizePlace(tournament_id=tournament.id, stage=stage, place=amount.place)
            session.add(row)
        row.minimum_cents, row.set_by, row.set_at = amount.minimum_cents, actor, now
    await session.flush()
    await record(
        session,
        actor,
        "tournament.prizes.schedule",
        f"tournament:{tournament.id}",
        reason,
        stage=stage.value,
        minimums={str(a.place): a.minimum_cents for a in amounts},
        before={str(p): c for p, c in before.items()},
        rule=RULE,
    )
    return amounts


async def apportion_surplus(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    surplus_cents: int,
    shares: Mapping[int, int],
    *,
    reason: str,
    actor: str,
    now: datetime,
) -> dict[int, int]:
    """The director's decision on the surplus beyond the minimums (T15): an amount per
    place adding up to ``surplus_cents`` exactly.  A new decision replaces the last one
    until the stage's first payout."""
    actor = require_actor(actor)
    reason = require_reason(reason, RULE)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    rows = await _schedule(session, tournament.id, stage)
    if not rows:
        raise RuleViolation(RULE, f"the {stage.value} has no advertised prizes to add to")
    await _refuse_once_paid(session, tournament, stage)
    split = check_apportionment(surplus_cents, shares, [row.place for row in rows])
    before = {str(row.place): row.surplus_cents for row in rows}
    for row in rows:
        row.surplus_cents = split[row.place]
    decision = await session.get(PrizeSurplus, (tournament.id, stage))
    if decision is None:
        decision = PrizeSurplus(tournament_id=tournament.id, stage=stage)
        session.add(decision)
    decision.surplus_cents, decision.reason = surplus_cents, reason
    decision.decided_by, decision.decided_at = actor, now
    await session.flush()
    await record(
        session,
        actor,
        "tournament.prizes.surplus",
        f"tournament:{tournament.id}",
        reason,
        stage=stage.value,
        surplus_cents=surplus_cents,
        shares={str(p): c for p, c in split.items()},
        before=before,
        rule=RULE,
    )
    return split


async def _holder(
    session: AsyncSession, tournament: Tournament, stage: Stage, place: int, now: datetime
) -> StandingLine:
    """The one entry holding ``place`` once the stage is over (ties drawn first, T19)."""
    if not await stage_over(session, tournament.id, stage):
        raise RuleViolation(RULE, f"the {stage.value} is not over: place {place} is not settled")
    table = await stage_standings(session, tournament.id, stage, as_of=now)
    holders = [line for line in table.lines if line.place == place]
    if not holders:
        raise RuleViolation(RULE, f"nobody holds place {place} of the {stage.value}")
    if len(holders) > 1 or holders[0].tied:
        entries = [line.entry_id for line in holders]
        raise RuleViolation(
            TIE_RULE, f"place {place} is tied between entries {entries}: draw cards first"
        )
    return holders[0]


async def refuse_while_journaled(session: AsyncSession, ref: str) -> None:
    """P4: a prize whose transfer to a machine is journaled, its outcome not yet stored,
    is paid by that transfer or not at all until the outcome is known."""
    machine = await session.scalar(
        select(MachinePrizeTransfer.machine_id).where(
            MachinePrizeTransfer.ref == ref, MachinePrizeTransfer.status == JOURNALED
        )
    )
    if machine is not None:
        raise RuleViolation(
            None, f"rule P4: {ref} is being paid to machine {machine}: its outcome is awaited"
        )


@dataclass(frozen=True)
class Payable:
    """A place that may be paid now (T15): its tournament, the advertised row, the one
    entry holding it and that entry's player, the receipt as checked, and the amount."""

    tournament: Tournament
    prize: PrizePlace
    holder: StandingLine
    player: Player
    amount_cents: int


async def check_payable(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    place: int,
    *,
    signer: str,
    signature: str,
    witness: str,
    now: datetime,
) -> Payable:
    """Everything :func:`pay_prize` checks (T15), writing nothing: the place is advertised,
    not paid, held outright once its stage is over, and the signer is its player."""
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    prize = next(
        (r for r in await _schedule(session, tournament.id, stage) if r.place == place), None
    )
    if prize is None:
        raise RuleViolation(RULE, f"place {place} of the {stage.value} has no advertised prize")
    paid = next(
        (p for p in await _payouts(session, tournament.id, stage) if p.place == place), None
    )
    if paid is not None:
        raise RuleViolation(RULE, f"place {place} was paid at {paid.paid_at:%Y-%m-%d %H:%M} UTC")
    await refuse_while_journaled(session, f"tournament:{tournament.id}|{stage.value}|{place}")
    holder = await _holder(session, tournament, stage, place, now)
    player = await session.get(Player, holder.player_id)
    assert player is not None  # the score's foreign key
    # The signer is named like any player (typed, never guessed across kinds): a card
    # number equal to another player's ID number is refused, not taken as the winner's.
    try:
        signed: Player | None = await player_by_ref(session, signer, "signer")
    except PlayerNotFound:
        signed = None  # nobody in the register: the rule's own words below
    check_receipt(
        Winner(player.name, player.id_number, player.card_number),
        signer=player.id_number if signed is not None and signed.id == player.id else signer,
        signature=signature,
        witness=witness,
    )
    return Payable(tournament, prize, holder, player, prize.minimum_cents + prize.surplus_cents)


async def pay_prize(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    place: int,
    *,
    signer: str,
    signature: str,
    witness: str,
    actor: str,
    now: datetime,
    tender: str | None = None,
) -> PrizePayout:
    """Pay a place (T15) to the winning entry's player, who signs for it: ``signer`` is
    the player they name (``idnum:``, ``card:``, ``id:`` or a bare ID or card number;
    prizes are not transferable), ``witness`` someone
    other than the winner.  Pays the advertised minimum plus the surplus share.
    ``tender`` (on the audit row): None is cash; ``machine (AFT)`` a prize credited to
    the machine (P6), whose transfer row names this payout."""
    actor = require_actor(actor)
    p = await check_payable(
        session,
        tournament_ref,
        stage,
        place,
        signer=signer,
        signature=signature,
        witness=witness,
        now=now,
    )
    tournament, prize, holder, player = p.tournament, p.prize, p.holder, p.player
    payout = PrizePayout(
        tournament_id=tournament.id,
        stage=stage,
        place=place,
        entry_id=holder.entry_id,
        player_id=player.id,
        amount_cents=p.amount_cents,
        signer=signer.strip(),
        signature=signature.strip(),
        witness=witness.strip(),
        paid_by=actor,
        paid_at=now,
    )
    session.add(payout)
    await session.flush()
    extra = {"tender": tender} if tender is not None else {}
    await record(
        session,
        actor,
        "tournament.prizes.paid",
        f"entry:{holder.entry_id}",
        None,
        tournament_id=tournament.id,
        stage=stage.value,
        place=place,
        player=player.id_number,
        minimum_cents=prize.minimum_cents,
        surplus_cents=prize.surplus_cents,
        amount_cents=payout.amount_cents,
        signer=payout.signer,
        signature=payout.signature,
        witness=payout.witness,
        rule=RULE,
        **extra,
    )
    return payout


def payout_facts(payout: PrizePayout) -> dict[str, Any]:
    """What a payout answers, the same from the command line and the API."""
    return {
        "place": payout.place,
        "entry_id": payout.entry_id,
        "amount_cents": payout.amount_cents,
        "signer": payout.signer,
        "witness": payout.witness,
        "paid_at": payout.paid_at,
    }


async def prize_lines(
    session: AsyncSession,
    tournament_id: int,
    stage: Stage,
    lines: Sequence[StandingLine] = (),
) -> tuple[PrizeLine, ...]:
    """Each scheduled place: advertised, apportioned, who holds it in ``lines`` (the
    stage's standings) and whether it is paid."""
    paid = {p.place: p for p in await _payouts(session, tournament_id, stage)}
    return tuple(
        _line(row, paid.get(row.place), [x for x in lines if x.place == row.place], lines)
        for row in await _schedule(session, tournament_id, stage)
    )


def _line(
    row: PrizePlace,
    payout: PrizePayout | None,
    holders: Sequence[StandingLine],
    lines: Sequence[StandingLine],
) -> PrizeLine:
    total = row.minimum_cents + row.surplus_cents
    if payout is None:
        sole = holders[0] if len(holders) == 1 and not holders[0].tied else None
        return PrizeLine(
            row.place, row.minimum_cents, row.surplus_cents, total,
            sole.entry_id if sole else None, sole.player_name if sole else None,
            False, None, None, None, None,
        )  # fmt: skip
    shown = next((x for x in lines if x.entry_id == payout.entry_id), None)
    return PrizeLine(
        row.place, row.minimum_cents, row.surplus_cents, total,
        payout.entry_id, shown.player_name if shown else None,
        True, payout.amount_cents, payout.paid_at, payout.signer, payout.witness,
    )  # fmt: skip


async def surplus_decision(
    session: AsyncSession, tournament_id: int, stage: Stage
) -> PrizeSurplus | None:
    return await session.get(PrizeSurplus, (tournament_id, stage))
