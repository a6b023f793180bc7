"""The entries of a tournament as the cash desk lists them (``reelgate entries list``,
``GET /api/v1/tournaments/{ref}/entries``): each with its holder and its purchase."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import EntryStatus, PurchaseKind
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.people import find_player
from storage.tournament import Entry, EntryPurchase, Player


@dataclass(frozen=True, slots=True)
class EntryRow:
    entry: int
    player: int
    player_name: str
    status: EntryStatus
    kind: PurchaseKind
    package: str | None
    purchase: int
    purchased_at: datetime
    valid_until: datetime


async def list_entries(
    session: AsyncSession, tournament_ref: int | str, player_ref: int | str | None = None
) -> tuple[str, list[EntryRow]]:
    """The tournament's venue zone and its entries in sale order (one player's, when
    ``player_ref`` names one: an ID, card or player number, as :func:`find_player`)."""
    t = await find_tournament(session, tournament_ref)
    query = (
        select(Entry, EntryPurchase, Player.name)
        .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
        .join(Player, Player.id == Entry.player_id)
        .where(Entry.tournament_id == t.id)
        .order_by(Entry.id)
    )
    if player_ref is not None:
        player = await find_player(session, player_ref)
        query = query.where(Entry.player_id == player.id)
    rows = [
        EntryRow(
            entry=e.id,
            player=e.player_id,
            player_name=name,
            status=e.status,
            kind=p.kind,
            package=p.package_code,
            purchase=p.id,
            purchased_at=p.purchased_at,
            valid_until=p.valid_until,
        )
        for e, p, name in (await session.execute(query)).all()
    ]
    return t.venue_tz, rows
