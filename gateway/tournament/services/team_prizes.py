"""Team prizes over storage (house clauses H11, H12, docs/rules.md): the advertised
prize per team place of a stage, and its payout to the team's captain.

* :func:`set_team_schedule`: the director advertises a prize per team place (H11); a
  change needs a reason and may only raise or add places (as T15's schedule); once a
  place of the stage is paid the schedule is fixed.
* :func:`pay_team_prize`: once the stage is over, the team holding a place outright
  (H7: a shared place is not paid here) is paid through its captain (H3), who signs
  keying their ID or card; the witness is someone else (the API's approver under dual
  control).  A place is paid once.
* :func:`team_prize_lines`: each advertised place with its holder and payout, for the
  boards, the API and the signed export.

Every change is audited in the same transaction (``team.prizes.schedule``,
``team.prizes.paid``: the cash-up reads the latter as its ledger, docs/records.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.player_ref import PlayerNotFound
from gateway.tournament.rules.prizes import Winner, check_change, check_receipt, check_schedule
from gateway.tournament.rules.teams import violation
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    aware,
    find_tournament,
    record,
    require_actor,
    require_reason,
)
from gateway.tournament.services.lookup import player_by_ref
from gateway.tournament.services.standings import stage_over
from gateway.tournament.services.teams import TeamStandings, team_scoring, team_standings
from storage.teams import TeamPrizePayout, TeamPrizePlace
from storage.tournament import Player


@dataclass(frozen=True, slots=True)
class TeamPrizeLine:
    """One advertised team place: who holds it now and whether it is paid."""

    place: int
    cents: int
    team_id: int | None  # None: nobody yet, or a shared place (H7)
    team_name: str | None
    paid_cents: int | None
    paid_at: datetime | None
    paid_by: str | None
    signer: str | None
    witness: str | None


async def _schedule(s: AsyncSession, tournament_id: int, stage: Stage) -> list[TeamPrizePlace]:
    rows = await s.execute(
        select(TeamPrizePlace)
        .where(TeamPrizePlace.tournament_id == tournament_id, TeamPrizePlace.stage == stage)
        .order_by(TeamPrizePlace.place)
    )
    return list(rows.scalars())


async def _payouts(s: AsyncSession, tournament_id: int, stage: Stage) -> list[TeamPrizePayout]:
    rows = await s.execute(
        select(TeamPrizePayout)
        .where(TeamPrizePayout.tournament_id == tournament_id, TeamPrizePayout.stage == stage)
        .order_by(TeamPrizePayout.place)
    )
    return list(rows.scalars())


def _h(clause: str, exc: RuleViolation) -> RuleViolation:
    """T15's arithmetic refusals, said under the house clause (``rule H11: ...``)."""
    text = str(exc)
    return violation(clause, text.split(": ", 1)[1] if text.startswith("rule ") else text)


async def set_team_schedule(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    amounts: Mapping[int, int],
    *,
    actor: str,
    now: datetime,
    reason: str | None = None,
) -> dict[int, int]:
    """H11: the advertised prize (cents) per team place of ``stage``."""
    actor = require_actor(actor)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    if await team_scoring(session, tournament.id) is None:
        raise violation("H1", "teams: the director has not set this tournament up for teams")
    try:
        checked = check_schedule(amounts, prize_places=None)
    except RuleViolation as exc:
        raise _h("H11", exc) from None
    paid = await _payouts(session, tournament.id, stage)
    if paid:
        raise violation(
            "H11", f"{stage.value} team prizes are being paid (place {paid[0].place} is paid):"
            " the schedule is fixed",
        )  # fmt: skip
    rows = {r.place: r for r in await _schedule(session, tournament.id, stage)}
    before = {p: r.cents for p, r in rows.items()}
    if rows:
        try:
            check_change(before, {a.place: a.minimum_cents for a in checked})
        except RuleViolation as exc:
            raise _h("H11", exc) from None
        reason = require_reason(reason)
    for a in checked:
        row = rows.get(a.place)
        if row is None:
            row = TeamPrizePlace(tournament_id=tournament.id, stage=stage, place=a.place)
            session.add(row)
        row.cents, row.set_by, row.set_at = a.minimum_cents, actor, now
    await session.flush()
    out = {a.place: a.minimum_cents for a in checked}
    await record(
        session, actor, "team.prizes.schedule", f"tournament:{tournament.id}", reason,
        stage=stage.value, cents={str(p): c for p, c in out.items()},
        before={str(p): c for p, c in before.items()}, rule="H11",
    )  # fmt: skip
    return out


def _holder(table: TeamStandings, place: int) -> int | None:
    """The one team holding ``place`` outright, or None (nobody, or shared: H7)."""
    holders = [x for x in table.lines if x.place == place]
    return holders[0].team_id if len(holders) == 1 and not holders[0].tied else None


async def pay_team_prize(
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
) -> TeamPrizePayout:
    """H12: pay a team place, once the stage is over, through the team's captain."""
    actor = require_actor(actor)
    aware(now, "now")
    tournament = await find_tournament(session, tournament_ref)
    prize = next((r for r in await _schedule(session, tournament.id, stage) if r.place == place),
                 None)  # fmt: skip
    if prize is None:
        raise violation("H11", f"team place {place} of the {stage.value} has no advertised prize")
    done = next((p for p in await _payouts(session, tournament.id, stage) if p.place == place),
                None)  # fmt: skip
    if done is not None:
        raise violation("H12", f"team place {place} was paid at {done.paid_at:%Y-%m-%d %H:%M} UTC")
    if not await stage_over(session, tournament.id, stage):
        raise violation("H12", f"the {stage.value} is not over: team place {place} is not settled")
    table = await team_standings(session, tournament.id, stage, as_of=now)
    holders = [x for x in table.lines if x.place == place]
    if not holders:
        raise violation("H12", f"no team holds place {place} of the {stage.value}")
    team_id = _holder(table, place)
    if team_id is None:
        names = [x.name for x in holders]
        raise violation(
            "H7", f"team place {place} is shared by {names}: the director decides (T23)"
        )
    captain_id = table.teams[team_id].captain.player_id
    captain = await session.get(Player, captain_id)
    assert captain is not None  # the member's foreign key
    try:
        signed: Player | None = await player_by_ref(session, signer, "signer")
    except PlayerNotFound:
        signed = None
    try:
        check_receipt(
            Winner(captain.name, captain.id_number, captain.card_number),
            signer=captain.id_number if signed is not None and signed.id == captain.id else signer,
            signature=signature,
            witness=witness,
        )
    except RuleViolation as exc:
        raise _h("H12", exc) from None
    payout = TeamPrizePayout(
        tournament_id=tournament.id, stage=stage, place=place, team_id=team_id,
        player_id=captain.id, amount_cents=prize.cents, signer=signer.strip(),
        signature=signature.strip(), witness=witness.strip(), paid_by=actor, paid_at=now,
    )  # fmt: skip
    session.add(payout)
    await session.flush()
    await record(
        session, actor, "team.prizes.paid", f"team:{team_id}", None,
        tournament_id=tournament.id, stage=stage.value, place=place,
        team=table.teams[team_id].name, captain=captain.id_number,
        amount_cents=payout.amount_cents, signer=payout.signer, signature=payout.signature,
        witness=payout.witness, rule="H12",
    )  # fmt: skip
    return payout


async def team_prize_lines(
    session: AsyncSession, tournament_id: int, stage: Stage, table: TeamStandings | None = None
) -> list[TeamPrizeLine]:
    """Each advertised team place of ``stage``: its holder now (``table``, the stage's
    team standings, if the caller has them) and its payout."""
    schedule = await _schedule(session, tournament_id, stage)
    if not schedule:
        return []
    if table is None:
        table = await team_standings(session, tournament_id, stage)
    paid = {p.place: p for p in await _payouts(session, tournament_id, stage)}
    out = []
    for row in schedule:
        p = paid.get(row.place)
        team_id = p.team_id if p is not None else _holder(table, row.place)
        name = table.teams[team_id].name if team_id in table.teams else None
        out.append(
            TeamPrizeLine(
                row.place, row.cents, team_id, name,
                None if p is None else p.amount_cents, None if p is None else p.paid_at,
                None if p is None else p.paid_by, None if p is None else p.signer,
                None if p is None else p.witness,
            )
        )  # fmt: skip
    return out


def team_prize_facts(lines: list[TeamPrizeLine]) -> list[dict[str, Any]]:
    """The team prize lines as plain data (the API, the signed export)."""
    return [
        {
            "place": x.place, "cents": x.cents, "team_id": x.team_id, "team": x.team_name,
            "paid_cents": x.paid_cents, "paid_at": x.paid_at, "paid_by": x.paid_by,
            "signer": x.signer, "witness": x.witness,
        }
        for x in lines
    ]  # fmt: skip
