"""Finding a player at a desk by what the player shows: a name (part of it), a Rewards
card number, or an identity document number; and by a typed reference (``id:N``,
``card:N``, ``idnum:N``), where a bare value is never read as a database id."""

from __future__ import annotations

from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.eligibility import normalise_id
from gateway.tournament.rules.player_ref import (
    ID_MAX,
    PlayerNotFound,
    PlayerRef,
    RefKind,
    parse_player_ref,
)
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


# One round trip for a bare reference: its card and its ID number, both kinds at once so
# a value that is one player's card and another's ID number is seen, never guessed.
_BY_CARD_OR_IDNUM = (
    select(Player)
    .where((Player.card_number == bindparam("card")) | (Player.id_number == bindparam("idnum")))
    .order_by(Player.id)
)
_BY_CARD = select(Player).where(Player.card_number == bindparam("card"))
_BY_IDNUM = select(Player).where(Player.id_number == bindparam("idnum"))


async def player_by_ref(
    session: AsyncSession, ref: int | str | PlayerRef, field: str = "player"
) -> Player:
    """The player a desk names (:mod:`gateway.tournament.rules.player_ref`); an ``int`` is
    the player number, passed by code that already holds the row's id."""
    if isinstance(ref, int):
        ref = PlayerRef(RefKind.ID, str(ref))
    elif isinstance(ref, str):
        ref = parse_player_ref(ref, field)
    player: Player | None
    if ref.kind is RefKind.ID:
        player = await session.get(Player, ref.number) if ref.number <= ID_MAX else None
    elif ref.kind is RefKind.CARD:
        player = (await session.execute(_BY_CARD, {"card": ref.value})).scalar_one_or_none()
    elif ref.kind is RefKind.IDNUM:
        wanted = {"idnum": normalise_id(ref.value)}
        player = (await session.execute(_BY_IDNUM, wanted)).scalar_one_or_none()
    else:
        wanted = {"card": ref.value, "idnum": normalise_id(ref.value)}
        found = (await session.execute(_BY_CARD_OR_IDNUM, wanted)).scalars().all()
        if len(found) > 1:
            card = next(p for p in found if p.card_number == ref.value)
            other = next(p for p in found if p is not card)
            raise RuleViolation(
                None,
                f"{field}: {ref.value!r} is the card of player {card.id} and the ID number "
                f"of player {other.id}; say card:{ref.value} or idnum:{ref.value}",
            )
        player = found[0] if found else None
    if player is None:
        raise PlayerNotFound(None, f"player {str(ref)!r} does not exist")
    return player
