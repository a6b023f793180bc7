"""The body of a heat export: the heat, every seat with its player, machine, score and
raw tournament meters, status, manual scores with their reasons and accounts, the
disqualifications that touch it, its notices and every audited decision about it.

A heat's result is ``official`` once the heat is closed, ``provisional`` before.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import HeatStatus
from gateway.tournament.rules.hotseat import heat_subject
from gateway.tournament.services.common import get
from gateway.tournament.services.hotseat import export_items
from storage.audit import AuditEntry
from storage.tournament import (
    Disqualification,
    Heat,
    HeatNotice,
    Player,
    Proxy,
    Score,
    Seat,
    Tournament,
)


def result_status(closed: bool) -> str:
    return "official" if closed else "provisional"


def audit_row(row: AuditEntry) -> dict[str, Any]:
    """An audit row as exports show it (its chain position lets anyone find it)."""
    return {
        "audit_id": row.id,
        "at": row.at,
        "actor": row.actor,
        "action": row.action,
        "subject": row.subject,
        "reason": row.reason,
        "details": row.details_dict(),
    }


def heat_head(heat: Heat, tournament: Tournament) -> dict[str, Any]:
    return {
        "id": heat.id,
        "tournament": {"id": tournament.id, "name": tournament.name},
        "stage": heat.stage,
        "number": heat.number,
        "bank": heat.bank_name,
        "scheduled_start": heat.scheduled_start,
        "duration_seconds": heat.duration_seconds,
        "starting_credits": heat.starting_credits,
        "started_at": heat.started_at,
        "ended_at": heat.ended_at,
        "status": heat.status,
        "restarts": heat.restarts,
        "result": result_status(heat.status is HeatStatus.CLOSED),
    }


def _score(score: Score | None) -> dict[str, Any] | None:
    if score is None:
        return None
    return {
        "final_credits": score.final_credits,
        "meters": {
            "games_played": score.games_played,
            "games_won": score.games_won,
            "credits_wagered": score.credits_wagered,
            "credits_won": score.credits_won,
        },
        "source": score.source,
        "recorded_at": score.recorded_at,
        "recorded_by": score.recorded_by,
    }


def _disqualification(dq: Disqualification) -> dict[str, Any]:
    return {
        "id": dq.id,
        "player_id": dq.player_id,
        "entry_id": dq.entry_id,
        "whole_player": dq.entry_id is None,
        "rule": dq.rule,
        "reason": dq.reason,
        "decided_by": dq.decided_by,
        "decided_at": dq.decided_at,
        "revoked_at": dq.revoked_at,
        "revoked_by": dq.revoked_by,
    }


async def _seats(
    session: AsyncSession, heat: Heat
) -> list[tuple[Seat, Player, Score | None, str | None]]:
    rows = await session.execute(
        select(Seat, Player, Score, Proxy.nominee_name)
        .join(Player, Player.id == Seat.holder_player_id)
        .outerjoin(Score, Score.seat_id == Seat.id)
        .outerjoin(Proxy, Proxy.seat_id == Seat.id)
        .where(Seat.heat_id == heat.id)
        .order_by(Seat.seat_number, Seat.id)
    )
    return [(s, p, sc, n) for s, p, sc, n in rows.all()]


async def _seat_audit(session: AsyncSession, seat_ids: list[int]) -> dict[int, list[AuditEntry]]:
    subjects = [f"seat:{i}" for i in seat_ids]
    rows = await session.execute(
        select(AuditEntry).where(AuditEntry.subject.in_(subjects)).order_by(AuditEntry.id)
    )
    out: dict[int, list[AuditEntry]] = {i: [] for i in seat_ids}
    for row in rows.scalars():
        out[int(row.subject.split(":", 1)[1])].append(row)
    return out


def _manual(rows: list[AuditEntry]) -> list[dict[str, Any]]:
    """Every manual score keyed for a seat (T23): who, when, why, what it replaced."""
    return [
        {
            "audit_id": r.id,
            "at": r.at,
            "by": r.actor,
            "reason": r.reason,
            "credits": r.details_dict().get("credits"),
            "meters": r.details_dict().get("meters"),
            "replaced": r.details_dict().get("replaced"),
        }
        for r in rows
        if r.action == "score.manual"
    ]


async def _disqualifications(
    session: AsyncSession, tournament_id: int, seats: list[Seat]
) -> list[Disqualification]:
    players = {s.holder_player_id for s in seats}
    entries = {s.entry_id for s in seats}
    rows = await session.execute(
        select(Disqualification)
        .where(
            Disqualification.tournament_id == tournament_id,
            Disqualification.player_id.in_(players),
            or_(Disqualification.entry_id.is_(None), Disqualification.entry_id.in_(entries)),
        )
        .order_by(Disqualification.id)
    )
    return list(rows.scalars())


async def heat_body(session: AsyncSession, heat_id: int) -> dict[str, Any]:
    heat = await get(session, Heat, heat_id, "heat")
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    seats = await _seats(session, heat)
    audited = await _seat_audit(session, [s.id for s, _, _, _ in seats])
    dqs = await _disqualifications(session, tournament.id, [s for s, _, _, _ in seats])
    seat_rows = []
    for seat, player, score, nominee in seats:
        seat_rows.append(
            {
                "seat_id": seat.id,
                "seat_number": seat.seat_number,
                "machine": seat.machine_id,
                "entry_id": seat.entry_id,
                "player": {"id": player.id, "name": player.name, "id_number": player.id_number},
                "played_by": nominee or player.name,
                "status": seat.status,
                "moved_to_seat_id": seat.moved_to_seat_id,
                "score": _score(score),
                "manual_scores": _manual(audited[seat.id]),
                "disqualifications": [
                    _disqualification(d)
                    for d in dqs
                    if d.player_id == player.id and d.entry_id in (None, seat.entry_id)
                ],
            }
        )
    notices = await session.execute(
        select(HeatNotice).where(HeatNotice.heat_id == heat.id).order_by(HeatNotice.id)
    )
    decisions = await session.execute(
        select(AuditEntry).where(AuditEntry.subject == f"heat:{heat.id}").order_by(AuditEntry.id)
    )
    seat_decisions = [audit_row(r) for rows in audited.values() for r in rows]
    hotseat = await export_items(session, heat_subject(heat.id))  # HS5: docs/records.md
    return {
        **({"hotseat": hotseat} if hotseat else {}),
        "heat": heat_head(heat, tournament),
        "seats": seat_rows,
        "notices": [
            {
                "kind": n.kind,
                "old_start": n.old_start,
                "new_start": n.new_start,
                "announced_via": n.announced_via,
                "announced_at": n.announced_at,
                "changed_by": n.changed_by,
                "note": n.note,
            }
            for n in notices.scalars()
        ],
        "decisions": sorted(
            [audit_row(r) for r in decisions.scalars()] + seat_decisions,
            key=lambda r: int(r["audit_id"]),
        ),
    }
