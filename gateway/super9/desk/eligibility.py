"""Who may buy a Super 9 ticket (rules 1 to 3), from the tournament's registers.

The slot tournament and Super 9 share one player register and one exclusion register
(``storage.tournament``), so a person barred from one is barred from both.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.tournament.rules.eligibility import age_on, normalise_id
from storage.tournament import Exclusion, Player

MINIMUM_AGE = 18  # rule 1


async def find_player(db: AsyncSession, ref: str) -> Player:
    """A player by national ID / passport number or Rewards card number."""
    wanted = ref.strip()
    if not wanted:
        raise OperatorError("player: give an ID number or card number")
    row = (
        await db.execute(
            select(Player).where(or_(Player.id_number == wanted, Player.card_number == wanted))
        )
    ).scalar_one_or_none()
    if row is None:
        raise OperatorError(f"player {wanted!r} is not in the player register")
    return row


async def check_eligible(db: AsyncSession, player: Player, at: datetime) -> None:
    """Raise OperatorError naming the rule if ``player`` may not take part at ``at``.

    ``at`` is in the venue's zone, so the age is counted on the venue's calendar day.
    """
    on = at.date()
    age = age_on(player.date_of_birth, on)
    if age < MINIMUM_AGE:
        raise OperatorError(f"rule 1: player {player.id_number} is {age}, under {MINIMUM_AGE}")
    ids = {player.id_number, normalise_id(player.id_number)}
    barred = (
        (
            await db.execute(
                select(Exclusion)
                .where(Exclusion.id_number.in_(ids))
                .where(Exclusion.valid_from <= at)
                .where(or_(Exclusion.valid_until.is_(None), Exclusion.valid_until > at))
                .order_by(Exclusion.id)
            )
        )
        .scalars()
        .first()
    )
    if barred is not None:
        rule = 3 if barred.kind.value in ("staff", "connected-person") else 2
        raise OperatorError(
            f"rule {rule}: player {player.id_number} is on the {barred.kind.value} register"
        )
