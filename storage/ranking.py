"""Ranking queries: the rows of the live standings, straight from the database (T2,
T12–T14, T17, T19).  Only SQL here; the ranking itself (places after card draws, tie groups,
cuts) is the tournament's: ``gateway.tournament.rules.ranking`` and
``gateway.tournament.services.live_standings``.

Theory of operation
-------------------
The ranking is of single entries, not players (T14): a player may hold several
places.  An entry is left out when it is disqualified (``entries.status``, or an
unrevoked ``disqualifications`` row for the entry or for its player in the tournament —
T1–T3, T20), or when the player's id number is on the exclusion register for any
moment between playing the score and ``as_of`` (T2: "prior to or during").

One SQL statement (:func:`top_scores`) does the heavy part on the ``ix_scores_ranking``
index (tournament, stage, final credits): it walks the index from the top until it has
``limit`` eligible entries, adds every other eligible entry with the credits of the last
of them (an equality lookup, so the tie group at the boundary is always complete), and
numbers them with ``RANK()`` over final credits DESC and ``COUNT(*)`` per credits.  Both
parts are shaped so that the planner's estimates stay small whatever the values (a
``>= threshold`` range would be guessed at a third of the table), which keeps it in the
low milliseconds at 10^6 scores (``bench/ranking.py``).

Ties are broken only by recorded card draws (T19): :func:`tie_draws` fetches the
draws of the tied entries alone, and only those bound to the credits they broke, so a
corrected score drops its old draws.  :func:`on_exclusion_register` is the T2 test,
shared with the services.

Clauses: docs/rules.md#t2, #t12 to #t14, #t17, #t19.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    Select,
    and_,
    bindparam,
    func,
    literal,
    literal_column,
    or_,
    select,
    union,
)
from sqlalchemy.ext.asyncio import AsyncSession

from storage.enums import EntryStatus, Stage
from storage.tournament import CardDraw, Disqualification, Entry, Exclusion, Player, Score

DEFAULT_LIMIT = 100


def _eligible(
    tournament_id: ColumnElement[int], stage: ColumnElement[Stage], as_of: ColumnElement[datetime]
) -> list[ColumnElement[bool]]:
    """WHERE terms of an eligible score (T2 / T20 disqualifications, exclusions)."""
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


def on_exclusion_register(as_of: datetime | ColumnElement[datetime]) -> ColumnElement[bool]:
    """The score's player is on an exclusion register that had started by ``as_of`` and
    had not ended before the score was played (T2: "prior to or during")."""
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


async def top_scores(
    session: AsyncSession,
    tournament_id: int,
    stage: Stage,
    *,
    limit: int = DEFAULT_LIMIT,
    as_of: datetime,
) -> Sequence[Row[Any]]:
    """The eligible scores of the top ``limit`` places of a stage, plus every other score
    tied with the last of them, best first (entry id inside equal credits).

    Each row: ``entry_id``, ``player_id``, ``final_credits``, ``heat_id``, ``seat_id``,
    ``score_place`` (``RANK()`` by credits, before any card draw) and ``tie_size`` (rows
    on the same credits)."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    values = {"tournament_id": tournament_id, "stage": stage, "as_of": as_of}
    query = _top_scores_query(int(limit))
    rows: Sequence[Row[Any]] = (await session.execute(query, values)).all()
    return rows


@lru_cache(maxsize=16)
def _top_scores_query(limit: int) -> Select[Any]:
    """The statement of :func:`top_scores` for one ``limit``, built once: putting a CTE,
    a union and their column proxies together costs milliseconds of CPU, more than
    running it.  Tournament, stage and instant are bound parameters."""
    eligible = (
        select(
            Score.entry_id,
            Score.player_id,
            Score.final_credits,
            Score.heat_id,
            Score.seat_id,
        )
        .join(Entry, Entry.id == Score.entry_id)
        .where(
            *_eligible(
                bindparam("tournament_id", type_=Score.tournament_id.type),
                bindparam("stage", type_=Score.stage.type),
                bindparam("as_of", type_=Exclusion.valid_from.type),
            )
        )
    )
    # The best ``limit`` entries: an index walk that stops after ``limit`` eligible rows.
    # The limit is inlined so PostgreSQL plans for it even with a generic (cached) plan.
    head = (
        eligible.order_by(Score.final_credits.desc())
        .limit(literal_column(str(limit), Integer))
        .cte("head")
    )
    # ...plus the rest of the tie group at the boundary: an equality lookup on the index.
    boundary = select(func.min(head.c.final_credits)).scalar_subquery()
    top = union(select(head), eligible.where(Score.final_credits == boundary)).subquery("top")
    by_credits = top.c.final_credits.desc()
    return select(
        top,
        func.rank().over(order_by=by_credits).label("score_place"),
        func.count().over(partition_by=top.c.final_credits).label("tie_size"),
    ).order_by(by_credits, top.c.entry_id)


async def tie_draws(
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
