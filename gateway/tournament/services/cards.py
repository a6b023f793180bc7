"""A player's card at the machine: who it is, and whether they may play (T1-T3).

A board publishes ``card-in`` / ``card-out`` (``docs/mqtt.md``, "Player cards"); the card
desk (:mod:`gateway.cards`) hands each to :func:`card_at_machine`, which

* finds the player by card number as the desks do (``card:N``,
  :func:`~gateway.tournament.services.people.find_player`); an unknown card is "not
  registered";
* at card-in applies T1 (under the age, on the venue's date), T2-T3 (the exclusion
  registers in force at that instant) and an active disqualification (T23, T20 ...)
  in a tournament still running (no final date, or one not past);
* records the outcome in the audit chain, in the same transaction: actor
  ``system:board/<MACHINE>`` (no person acted; the board did), action ``card.in`` or
  ``card.out``, subject ``machine:<MACHINE>``, details card, outcome, player, rule and
  reason.  A regulator reads refusals where every other decision is, tamper-evident,
  and the "cards at the machines" list is read back from there
  (:func:`cards_at_machines`), so it survives a restart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.player_ref import PlayerNotFound, PlayerRef, RefKind
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import record
from gateway.tournament.services.people import check_person, find_player, person_of
from storage.audit import AuditEntry
from storage.tournament import Disqualification, Player, Tournament

ACCEPTED = "accepted"
REFUSED = "refused"
NOT_REGISTERED = "not-registered"
OUT = "out"

CARD_IN = "card-in"
CARD_OUT = "card-out"


@dataclass(frozen=True, slots=True)
class CardDecision:
    machine: str
    card: str
    action: str  # card-in | card-out
    at: datetime
    outcome: str  # accepted | refused | not-registered | out
    player_id: int | None = None
    player_name: str = ""
    rule: str = ""  # "1", "2", "3", "23" ... for a refusal
    reason: str = ""

    @property
    def line(self) -> str:
        """One line for the console and the log."""
        who = f"{self.player_name} (player {self.player_id})" if self.player_id else "card"
        if self.outcome == NOT_REGISTERED:
            return f"{self.machine}: card {self.card} is not registered"
        if self.outcome == REFUSED:
            return f"{self.machine}: {who} refused, rule T{self.rule}: {self.reason}"
        if self.outcome == OUT:
            return f"{self.machine}: {who} card out"
        return f"{self.machine}: {who} card in"

    @property
    def display(self) -> str:
        """What the machine's display shows for a refusal (no reason: it is public)."""
        if self.outcome == NOT_REGISTERED:
            return "Card not registered: please see the tournament desk"
        return "Card refused: please see the tournament desk"


async def _disqualified(
    session: AsyncSession, player_id: int, at: datetime, zone: str
) -> Disqualification | None:
    today = at.astimezone(ZoneInfo(zone)).date()
    query = (
        select(Disqualification)
        .join(Tournament, Tournament.id == Disqualification.tournament_id)
        .where(
            Disqualification.player_id == player_id,
            Disqualification.entry_id.is_(None),
            Disqualification.revoked_at.is_(None),
            or_(Tournament.final_date.is_(None), Tournament.final_date >= today),
        )
        .order_by(Disqualification.id)
        .limit(1)
    )
    return (await session.execute(query)).scalar_one_or_none()


async def card_at_machine(
    session: AsyncSession,
    *,
    machine: str,
    card: str,
    action: str,
    at: datetime,
    venue_zone: str,
    minimum_age: int = 18,
) -> CardDecision:
    """Decide one card-in or card-out and audit it (the caller commits)."""
    if action not in (CARD_IN, CARD_OUT):
        raise ValueError(f"action: {action!r} is not card-in or card-out")
    try:
        player = await find_player(session, PlayerRef(RefKind.CARD, card))
    except PlayerNotFound:
        decision = CardDecision(machine, card, action, at, NOT_REGISTERED)
    else:
        decision = CardDecision(
            machine, card, action, at, OUT, player_id=player.id, player_name=player.name
        )
        if action == CARD_IN:
            decision = await _eligibility(session, decision, player, at, venue_zone, minimum_age)
    await record(
        session,
        f"system:board/{machine}",
        "card.in" if action == CARD_IN else "card.out",
        f"machine:{machine}",
        decision.reason or None,
        card=card,
        outcome=decision.outcome,
        player=decision.player_id,
        rule=decision.rule or None,
        at=at.isoformat(),
    )
    return decision


async def _eligibility(
    session: AsyncSession,
    decision: CardDecision,
    player: Player,
    at: datetime,
    zone: str,
    minimum_age: int,
) -> CardDecision:
    try:
        await check_person(session, person_of(player), at, zone, minimum_age)  # T1-T3
    except RuleViolation as exc:
        rule = str(exc.rule) if exc.rule is not None else ""
        return replace(decision, outcome=REFUSED, rule=rule, reason=str(exc))
    dq = await _disqualified(session, player.id, at, zone)
    if dq is not None:
        reason = f"disqualified in tournament {dq.tournament_id}: {dq.reason}"
        return replace(decision, outcome=REFUSED, rule=dq.rule, reason=reason)
    return replace(decision, outcome=ACCEPTED)


@dataclass(frozen=True, slots=True)
class CardRow:
    """The last card news of one machine."""

    machine: str
    card: str
    action: str
    outcome: str
    player_id: int | None
    rule: str
    reason: str
    at: datetime
    player_name: str = ""

    @property
    def in_machine(self) -> bool:
        return self.action == CARD_IN and self.outcome == ACCEPTED


async def cards_at_machines(session: AsyncSession, *, scan: int = 2000) -> list[CardRow]:
    """Each machine's last card-in or card-out (from the audit chain), newest first."""
    query = (
        select(AuditEntry)
        .where(AuditEntry.action.in_(("card.in", "card.out")))
        .order_by(AuditEntry.id.desc())
        .limit(scan)
    )
    rows: dict[str, CardRow] = {}
    for entry in (await session.execute(query)).scalars():
        machine = entry.subject.removeprefix("machine:")
        if machine in rows:
            continue
        details = json.loads(entry.details)
        rows[machine] = CardRow(
            machine=machine,
            card=str(details.get("card", "")),
            action=CARD_IN if entry.action == "card.in" else CARD_OUT,
            outcome=str(details.get("outcome", "")),
            player_id=details.get("player"),
            rule=str(details.get("rule") or ""),
            reason=entry.reason or "",
            at=entry.at,
        )
    ids = {r.player_id for r in rows.values() if isinstance(r.player_id, int)}
    names: dict[int, str] = {}
    if ids:
        found = await session.execute(select(Player.id, Player.name).where(Player.id.in_(ids)))
        names = {pid: name for pid, name in found}
    return [
        replace(r, player_name=names.get(r.player_id, "")) if r.player_id else r
        for r in rows.values()
    ]
