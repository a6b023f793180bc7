"""Live standings and cuts, straight from the database (rules 2, 12–14, 17, 19).

Theory of operation
-------------------
The ranking is of single entries, not players (rule 14): a player may hold several
places.  An entry is left out when it is disqualified (``entries.status``, or an
unrevoked ``disqualifications`` row for the entry or for its player in the tournament —
rules 1–3, 20), or when the player's id number is on the exclusion register for any
moment between playing the score and ``as_of`` (rule 2: "prior to or during").

One SQL statement does the heavy part on the ``ix_scores_ranking`` index
(tournament, stage, final credits): it walks the index from the top until it has
``limit`` eligible entries, adds every other eligible entry with the credits of the last
of them (an equality lookup, so the tie group at the boundary is always complete), and
numbers them with ``RANK()`` over final credits DESC and ``COUNT(*)`` per credits.  Both
parts are shaped so that the planner's estimates stay small whatever the values (a
``>= threshold`` range would be guessed at a third of the table), which keeps it in the
low milliseconds at 10^6 scores (``bench/ranking.py``).

Ties are broken only by recorded card draws (rule 19).  Draws are fetched for the tied
entries alone and applied round by round: a round counts only when every entry still
tied has its card; higher card ranks higher; equal cards go to the next round among
themselves.  Entries left tied share a place and are reported as a :class:`TieGroup`
with the round to draw next.  A draw is bound to the credits it broke, so a corrected
score drops its old draws.  ``TieGroup`` and ``resolve_tie`` are shared with the pure
ranking in ``gateway.tournament.rules.ranking``; the exclusion test with its services.

A cut (rule 13: top 1 to the final; rule 14: the next 49 to the semi-finals; rule 17:
the semi-final quota) never guesses: a tie straddling a cut keeps its entries out of
the lists and in ``pending`` until it is drawn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    and_,
    func,
    literal,
    literal_column,
    or_,
    select,
    union,
)
from sqlalchemy.ext.asyncio import AsyncSession

from storage.tournament import (
    CardDraw,
    Disqualification,
    Entry,
    EntryStatus,
    Exclusion,
    Player,
    Score,
    Stage,
    Tournament,
)
from storage.types import utcnow

DEFAULT_LIMIT = 100


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
class TieGroup:
    """Entries still tied: ``place`` is their shared place, ``next_round`` the round to draw."""

    place: int
    credits: int
    entry_ids: tuple[int, ...]
    next_round: int

    @property
    def last_place(self) -> int:
        return self.place + len(self.entry_ids) - 1

    def straddles(self, cut: int) -> bool:
        """True when the top ``cut`` places take some but not all of this group."""
        return self.place <= cut < self.last_place


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


def _eligible(tournament_id: int, stage: Stage, as_of: datetime) -> list[ColumnElement[bool]]:
    """WHERE terms of an eligible score (rule 2 / rule 20 disqualifications, exclusions)."""
    player_dq = (
        select(literal(1))
        .where(
            Disqualification.tournament_id == Score.tournament_id,
            Disqualification.player_id == Score.player_id,
            Disqualification.revoked_at.is_(None),
            or_(Disqualification.entry_id.is_(None), Disqualification.entry_id == Score.entry_id),
        )
        .exists()
    )
    return [
        Score.tournament_id == tournament_id,
        Score.stage == stage,
        Entry.status != EntryStatus.DISQUALIFIED,
        ~player_dq,
        ~on_exclusion_register(as_of),
    ]


def on_exclusion_register(as_of: datetime) -> ColumnElement[bool]:
    """The score's player is on an exclusion register that had started by ``as_of`` and
    had not ended before the score was played (rule 2: "prior to or during")."""
    return (
        select(literal(1))
        .select_from(Player)
        .join(Exclusion, Exclusion.id_number == Player.id_number)
        .where(
            Player.id == Score.player_id,
            Exclusion.valid_from <= as_of,
            or_(Exclusion.valid_until.is_(None), Exclusion.valid_until > Score.recorded_at),
        )
        .exists()
    )


async def standings(
    session: AsyncSession,
    tournament_id: int,
    stage: Stage = Stage.QUALIFYING,
    *,
    limit: int = DEFAULT_LIMIT,
    as_of: datetime | None = None,
) -> Standings:
    """The top ``limit`` places of a stage, plus everyone tied with the last of them."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    when = as_of or utcnow()
    eligible = (
        select(
            Score.entry_id,
            Score.player_id,
            Score.final_credits,
            Score.heat_id,
            Score.seat_id,
        )
        .join(Entry, Entry.id == Score.entry_id)
        .where(*_eligible(tournament_id, stage, when))
    )
    # The best ``limit`` entries: an index walk that stops after ``limit`` eligible rows.
    # The limit is inlined so PostgreSQL plans for it even with a generic (cached) plan.
    head = (
        eligible.order_by(Score.final_credits.desc())
        .limit(literal_column(str(int(limit)), Integer))
        .cte("head")
    )
    # ...plus the rest of the tie group at the boundary: an equality lookup on the index.
    boundary = select(func.min(head.c.final_credits)).scalar_subquery()
    top = union(select(head), eligible.where(Score.final_credits == boundary)).subquery("top")
    by_credits = top.c.final_credits.desc()
    query = select(
        top,
        func.rank().over(order_by=by_credits).label("score_place"),
        func.count().over(partition_by=top.c.final_credits).label("tie_size"),
    ).order_by(by_credits, top.c.entry_id)
    rows = (await session.execute(query)).all()

    tied_ids = [r.entry_id for r in rows if r.tie_size > 1]
    cards = await _draws(session, tournament_id, stage, tied_ids) if tied_ids else {}
    return _assemble(tournament_id, stage, rows, cards)


async def _draws(
    session: AsyncSession, tournament_id: int, stage: Stage, entry_ids: Sequence[int]
) -> dict[tuple[int, int, int], int]:
    """(entry, credits, round) -> card rank, for draws that belong to the current scores."""
    query = (
        select(CardDraw.entry_id, CardDraw.tie_credits, CardDraw.round, CardDraw.card_rank)
        .join(
            Score,
            and_(
                Score.entry_id == CardDraw.entry_id,
                Score.stage == CardDraw.stage,
                Score.final_credits == CardDraw.tie_credits,
            ),
        )
        .where(
            CardDraw.tournament_id == tournament_id,
            CardDraw.stage == stage,
            CardDraw.entry_id.in_(entry_ids),
        )
    )
    return {(e, c, r): v for e, c, r, v in (await session.execute(query)).all()}


def _assemble(
    tournament_id: int,
    stage: Stage,
    rows: Sequence[Row[Any]],
    cards: Mapping[tuple[int, int, int], int],
) -> Standings:
    groups: dict[int, list[Row[Any]]] = defaultdict(list)
    for row in rows:
        groups[row.final_credits].append(row)
    out: list[Standing] = []
    ties: list[TieGroup] = []
    for credits in sorted(groups, reverse=True):
        members = {r.entry_id: r for r in groups[credits]}
        first_place = members[min(members)].score_place
        offset = 0
        for bucket, next_round in resolve_tie(sorted(members), credits, 1, cards):
            place = first_place + offset
            if len(bucket) > 1:
                ties.append(TieGroup(place, credits, tuple(bucket), next_round))
            for entry_id in bucket:
                r = members[entry_id]
                out.append(
                    Standing(
                        position=len(out) + 1,
                        place=place,
                        entry_id=entry_id,
                        player_id=r.player_id,
                        credits=credits,
                        tied=len(bucket) > 1,
                        heat_id=r.heat_id,
                        seat_id=r.seat_id,
                    )
                )
            offset += len(bucket)
    return Standings(tournament_id, stage, tuple(out), tuple(ties))


def resolve_tie(
    members: list[int],
    credits: int,
    round_number: int,
    cards: Mapping[tuple[int, int, int], int],
) -> list[tuple[list[int], int]]:
    """Order tied entries by their cards (rule 19): [(bucket, next round)], best first."""
    if len(members) == 1:
        return [(members, round_number)]
    values = {m: cards.get((m, credits, round_number)) for m in members}
    if any(v is None for v in values.values()):
        return [(members, round_number)]  # round not (fully) drawn: still tied
    buckets: dict[int, list[int]] = defaultdict(list)
    for member in members:
        buckets[values[member] or 0].append(member)
    out: list[tuple[list[int], int]] = []
    for value in sorted(buckets, reverse=True):  # highest card wins, Ace low
        out.extend(resolve_tie(buckets[value], credits, round_number + 1, cards))
    return out


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
    """Rule 13: the top entry to the final; rule 14: the next N (49) to the semi-finals.

    Sizes come from the tournament row; ``groups`` is (direct finalists, semi-finalists).
    """
    tournament = await session.get(Tournament, tournament_id)
    if tournament is None:
        raise LookupError(f"no tournament {tournament_id}")
    sizes = (tournament.direct_final_places, tournament.semi_final_size)
    return await cut(session, tournament_id, Stage.QUALIFYING, sizes, as_of=as_of)
