"""Finding a player at a desk by what the player shows: a name (part of it), a Rewards
card number, or an identity document number — never by a database id."""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.eligibility import normalise_id
from gateway.tournament.rules.violations import RuleViolation
from storage.tournament import Player

SEARCH_LIMIT = 25


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped.lower()}%"


async def search_players(
    session: AsyncSession, text: str, *, limit: int = SEARCH_LIMIT
) -> list[Player]:
    """Players whose name contains ``text`` (any case), or whose card or ID number is it."""
    text = " ".join(text.split())
    if len(text) < 2:
        raise RuleViolation(
            None, "search: type at least two letters of the name, or the card number"
        )
    if len(text) > 100:
        raise RuleViolation(None, "search: at most 100 characters")
    query = (
        select(Player)
        .where(
            or_(
                func.lower(Player.name).like(_like(text), escape="\\"),
                Player.card_number == text,
                Player.id_number == normalise_id(text),
            )
        )
        .order_by(Player.name, Player.id)
        .limit(limit)
    )
    return list((await session.scalars(query)).all())
