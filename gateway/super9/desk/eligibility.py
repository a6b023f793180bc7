"""Who may buy a Super 9 ticket (S9-1 to S9-3), from the tournament's registers.

The slot tournament and Super 9 share one player register and one exclusion register
(``storage.tournament``), so a person barred from one is barred from both.

Clauses: docs/rules.md#s9-1 to #s9-3.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.tournament.rules.eligibility import age_on, normalise_id
from gateway.tournament.services.lookup import player_by_ref
from storage.super9 import Super9Session, Super9Ticket, TicketStatus
from storage.tournament import Exclusion, Player

MINIMUM_AGE = 18  # S9-1


async def find_player(db: AsyncSession, ref: str, field: str = "player") -> Player:
    """A player by a typed reference (``id:N``, ``card:N``, ``idnum:N``) or a bare card or
    ID number — one query over both kinds, refused when they name two players (a card
    number equal to another player's ID number made this a 500)."""
    return await player_by_ref(db, ref, field)


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


def day_bounds(zone: ZoneInfo, day: date) -> tuple[datetime, datetime]:
    """The venue-local day ``day`` as [start, end) instants."""
    start = datetime.combine(day, time.min, tzinfo=zone)
    return start, datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)


async def out_for_the_day(
    db: AsyncSession, player_id: int, day: date, zone: ZoneInfo
) -> str | None:
    """Why the player is out of ``day``'s promotion (S9-9), or None.

    An S9-9 disqualification (an invalid claim, a top copy with a repeated number or
    more than nine, or staff's ``disqualify --rule 9``) marks every ticket of the
    player that day with a reason starting ``rule 9:``; one such ticket is the record.
    """
    start, end = day_bounds(zone, day)
    row = (
        await db.execute(
            select(Super9Ticket.serial)
            .join(Super9Session, Super9Session.id == Super9Ticket.session_id)
            .where(
                Super9Ticket.player_id == player_id,
                Super9Ticket.status == TicketStatus.DISQUALIFIED,
                Super9Ticket.disqualified_reason.like("rule 9:%"),
                Super9Session.starts_at >= start,
                Super9Session.starts_at < end,
            )
            .order_by(Super9Ticket.id)
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    return f"rule 9: the player is disqualified from the promotion on {day} (ticket {row[0]})"


PERSON_RULES = (24, 28)  # "any person ... will be disqualified"


async def out_of_promotion(db: AsyncSession, player_id: int) -> str | None:
    """Why the person is out of the promotion (S9-24, S9-28), or None.

    Staff's ``disqualify --rule 24`` (or 28) marks every open ticket of the person with a
    reason starting ``rule 24:`` (``rule 28:``); one such ticket is the record.
    """
    row = (
        await db.execute(
            select(Super9Ticket.serial, Super9Ticket.disqualified_reason)
            .where(
                Super9Ticket.player_id == player_id,
                Super9Ticket.status == TicketStatus.DISQUALIFIED,
                or_(*(Super9Ticket.disqualified_reason.like(f"rule {r}:%") for r in PERSON_RULES)),
            )
            .order_by(Super9Ticket.id)
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    rule = str(row[1]).split(":", 1)[0]
    return f"{rule}: the player is disqualified from the promotion (ticket {row[0]})"


async def check_may_take_part(
    db: AsyncSession, player: Player, at: datetime, zone: ZoneInfo
) -> None:
    """S9-1–S9-3 at ``at``, not disqualified as a person (S9-24, S9-28), and not out for
    that venue-local day under S9-9."""
    local = at.astimezone(zone)
    await check_eligible(db, player, local)
    why = await out_of_promotion(db, player.id) or await out_for_the_day(
        db, player.id, local.date(), zone
    )
    if why is not None:
        raise OperatorError(why)
