"""The live top of a stage and its cuts, from the SQL ranking rows (T12–T14, T17, T19).

:func:`storage.ranking.top_scores` returns the eligible scores of the top ``limit``
places with the boundary tie whole; here they are placed: equal credits are ordered
only by recorded card draws (T19, :func:`~gateway.tournament.rules.ranking.placed_buckets`,
the same core as the pure ranking), entries left tied share a place and are reported
as a :class:`TieGroup` with the round to draw next.

A cut (T13: top 1 to the final; T14: the next 49 to the semi-finals; T17:
the semi-final quota) never guesses: a tie straddling a cut keeps its entries out of
the lists and in ``pending`` until it is drawn.

Clauses: docs/rules.md#t12 to #t14, #t17, #t19.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.ranking import Cards, TieGroup, placed_buckets
from gateway.tournament.services.common import utc_now
from storage import ranking
from storage.enums import Stage
from storage.ranking import DEFAULT_LIMIT
from storage.tournament import Tournament

__all__ = ["Cut", "Standing", "Standings", "TieGroup", "cut", "qualifier_cut", "standings"]


@dataclass(frozen=True, slots=True)
class Standing:
    position: int  # 1-based row; order inside a still-unresolved tie is by entry id only
    place: int  # competition place after draws: equal for entries still tied
    entry_id: int
    player_id: int
    credits: int
    tied: bool  # shares its place with an unresolved tie
    heat_id: int
    seat_id: int


@dataclass(frozen=True, slots=True)
class Standings:
    tournament_id: int
    stage: Stage
    rows: tuple[Standing, ...]
    ties: tuple[TieGroup, ...]

    def tie_straddling(self, cut: int) -> TieGroup | None:
        return next((t for t in self.ties if t.straddles(cut)), None)

    def top(self, cut: int) -> tuple[tuple[Standing, ...], TieGroup | None]:
        """Rows certainly within the top ``cut`` places, and the tie blocking the rest."""
        blocking = self.tie_straddling(cut)
        held = set(blocking.entry_ids) if blocking else set()
        inside = tuple(r for r in self.rows if r.place <= cut and r.entry_id not in held)
        return inside, blocking


@dataclass(frozen=True, slots=True)
class Cut:
    """Entries per cut group (e.g. direct final, semi-finals) and ties still to draw."""

    groups: tuple[tuple[Standing, ...], ...]
    pending: tuple[TieGroup, ...]

    @property
    def complete(self) -> bool:
        return not self.pending


async def standings(
    session: AsyncSession,
    tournament_id: int,
    stage: Stage = Stage.QUALIFYING,
    *,
    limit: int = DEFAULT_LIMIT,
    as_of: datetime | None = None,
) -> Standings:
    """The top ``limit`` places of a stage, plus everyone tied with the last of them."""
    rows = await ranking.top_scores(
        session, tournament_id, stage, limit=limit, as_of=as_of or utc_now()
    )
    tied_ids = [r.entry_id for r in rows if r.tie_size > 1]
    cards = await ranking.tie_draws(session, tournament_id, stage, tied_ids) if tied_ids else {}
    return assemble(tournament_id, stage, rows, cards)


def assemble(
    tournament_id: int, stage: Stage, rows: Sequence[Row[Any]], cards: Cards
) -> Standings:
    """Place the SQL rows (:func:`storage.ranking.top_scores`): each group of equal credits
    starts at its ``score_place`` and is ordered by its draws (T19)."""
    groups: dict[int, dict[int, Row[Any]]] = defaultdict(dict)
    for row in rows:
        groups[row.final_credits][row.entry_id] = row
    out: list[Standing] = []
    ties: list[TieGroup] = []
    for credits in sorted(groups, reverse=True):
        members = groups[credits]
        first_place = members[min(members)].score_place
        for place, bucket, tie in placed_buckets(members, credits, first_place, cards):
            if tie is not None:
                ties.append(tie)
            for entry_id in bucket:
                row = members[entry_id]
                out.append(
                    Standing(
                        position=len(out) + 1,
                        place=place,
                        entry_id=entry_id,
                        player_id=row.player_id,
                        credits=credits,
                        tied=tie is not None,
                        heat_id=row.heat_id,
                        seat_id=row.seat_id,
                    )
                )
    return Standings(tournament_id, stage, tuple(out), tuple(ties))


async def cut(
    session: AsyncSession,
    tournament_id: int,
    stage: Stage,
    sizes: Sequence[int],
    *,
    as_of: datetime | None = None,
) -> Cut:
    """Split the top of a stage into consecutive groups of ``sizes`` places.

    A tie straddling any group boundary is pending and its entries are in no group.
    """
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError("cut sizes must be positive")
    table = await standings(session, tournament_id, stage, limit=sum(sizes), as_of=as_of)
    boundaries = [sum(sizes[: i + 1]) for i in range(len(sizes))]
    pending = tuple(dict.fromkeys(t for b in boundaries if (t := table.tie_straddling(b))))
    held = {e for t in pending for e in t.entry_ids}
    groups: list[tuple[Standing, ...]] = []
    lower = 0
    for upper in boundaries:
        groups.append(
            tuple(r for r in table.rows if lower < r.place <= upper and r.entry_id not in held)
        )
        lower = upper
    return Cut(tuple(groups), pending)


async def qualifier_cut(
    session: AsyncSession, tournament_id: int, *, as_of: datetime | None = None
) -> Cut:
    """T13: the top entry to the final; T14: the next N (49) to the semi-finals.

    Sizes come from the tournament row; ``groups`` is (direct finalists, semi-finalists).
    """
    tournament = await session.get(Tournament, tournament_id)
    if tournament is None:
        raise LookupError(f"no tournament {tournament_id}")
    sizes = (tournament.direct_final_places, tournament.semi_final_size)
    return await cut(session, tournament_id, Stage.QUALIFYING, sizes, as_of=as_of)
