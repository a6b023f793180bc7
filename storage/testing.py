"""Builders of valid tournament rows for tests: purchase → entry → heat → seat → score.

Lives in the package (not under ``tests/``) so any test can import it whatever pytest's
import mode, and so other areas' tests can build tournament data the same way.  Every
row it makes satisfies the constraints of :mod:`storage.tournament`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from storage.tournament import (
    Entry,
    EntryPurchase,
    EntryStatus,
    Heat,
    Player,
    PurchaseKind,
    Score,
    ScoreSource,
    Seat,
    SeatStatus,
    Stage,
    Tournament,
)


@dataclass
class EmptyDatabase:
    """A database with no tables (``empty_db`` fixture in this folder's conftest)."""

    engine: AsyncEngine
    url: str
    schema: str | None


T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
_ids = itertools.count(1)


def unique_id_number() -> str:
    return f"{9001010000000 + next(_ids):013d}"


@dataclass
class Builder:
    """Adds rows through one session; every method flushes so ids are known."""

    session: AsyncSession
    tournament: Tournament | None = None
    heats: dict[tuple[Stage, int], Heat] = field(default_factory=dict)
    next_seat: dict[int, int] = field(default_factory=dict)

    async def make_tournament(self, **kw: object) -> Tournament:
        t = Tournament(name=f"Reel tournament {next(_ids)}", **kw)
        self.session.add(t)
        await self.session.flush()
        self.tournament = t
        return t

    @property
    def t(self) -> Tournament:
        assert self.tournament is not None
        return self.tournament

    async def player(self, name: str = "Player") -> Player:
        p = Player(id_number=unique_id_number(), name=name, date_of_birth=date(1980, 5, 17))
        self.session.add(p)
        await self.session.flush()
        return p

    async def entries(self, player: Player, seats: int = 1) -> list[Entry]:
        purchase = EntryPurchase(
            tournament_id=self.t.id,
            player_id=player.id,
            kind=PurchaseKind.CASH,
            seats=seats,
            amount_cents=seats * self.t.entry_price_cents,
            purchased_at=T0,
            valid_until=T0 + timedelta(hours=48),
            cashier="cashier:thandi",
        )
        self.session.add(purchase)
        await self.session.flush()
        made = [
            Entry(purchase_id=purchase.id, tournament_id=self.t.id, player_id=player.id)
            for _ in range(seats)
        ]
        self.session.add_all(made)
        await self.session.flush()
        return made

    async def heat(self, stage: Stage = Stage.QUALIFYING, number: int = 1) -> Heat:
        key = (stage, number)
        if key not in self.heats:
            heat = Heat(
                tournament_id=self.t.id,
                stage=stage,
                number=number,
                scheduled_start=T0 + timedelta(hours=number),
                duration_seconds=600,
                starting_credits=1000,
                bank_name="bank-a",
            )
            self.session.add(heat)
            await self.session.flush()
            self.heats[key] = heat
        return self.heats[key]

    async def seat(
        self,
        entry: Entry,
        heat: Heat,
        *,
        seat_number: int | None = None,
        machine_id: str | None = None,
        played_by: Player | None = None,
    ) -> Seat:
        number = seat_number or self.next_seat.get(heat.id, 1)
        self.next_seat[heat.id] = max(self.next_seat.get(heat.id, 1), number + 1)
        seat = Seat(
            heat_id=heat.id,
            stage=heat.stage,
            seat_number=number,
            machine_id=machine_id or f"EGM-{number:03d}",
            entry_id=entry.id,
            holder_player_id=entry.player_id,
            played_by_player_id=played_by.id if played_by else None,
        )
        self.session.add(seat)
        await self.session.flush()
        return seat

    async def score(self, seat: Seat, credits: int, *, recorded_at: datetime = T0) -> Score:
        entry = await self.session.get(Entry, seat.entry_id)
        assert entry is not None
        score = Score(
            tournament_id=entry.tournament_id,
            stage=seat.stage,
            heat_id=seat.heat_id,
            seat_id=seat.id,
            entry_id=seat.entry_id,
            player_id=seat.holder_player_id,
            games_played=100,
            games_won=20,
            credits_wagered=1000,
            credits_won=credits,
            final_credits=credits,
            source=ScoreSource.MACHINE,
            recorded_at=recorded_at,
        )
        seat.status = SeatStatus.PLAYED
        entry.status = EntryStatus.PLAYED
        self.session.add(score)
        await self.session.flush()
        return score

    async def played(
        self, player: Player, credits: int, *, stage: Stage = Stage.QUALIFYING, heat_no: int = 1
    ) -> Score:
        """One entry of ``player`` played in heat ``heat_no`` and scored ``credits``."""
        (entry,) = await self.entries(player)
        seat = await self.seat(entry, await self.heat(stage, heat_no))
        return await self.score(seat, credits)
