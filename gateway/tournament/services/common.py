"""Helpers every service shares: loading rows or failing with one line, the tournament's
settings, a heat's seats on the floor, and the audit record.

Where the settings live: the ``tournaments`` row has columns for the venue zone, seat
price, validity mode, semi-final size, direct final places, final quota and minimum age,
and those columns are authoritative.  The rest (package list, prize places, the rule 20
"reasonable period", the rule 10 notice) is read from the newest ``tournament.create`` /
``tournament.settings`` audit row for the tournament: settings changes are changes a
person makes, so the tamper-evident audit chain is their record and keeps their history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.tournament.rules.enums import LIVE_SEAT_STATUSES
from gateway.tournament.rules.seating import HeatFacts
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings
from storage import audit
from storage.db import Base
from storage.floor import FloorMachine
from storage.tournament import Heat, Seat, Tournament

T = TypeVar("T", bound=Base)

# Settings held on the tournaments row itself (column name -> settings field).
ROW_SETTINGS = {
    "venue_tz": "venue_zone",
    "entry_price_cents": "seat_price_cents",
    "entry_validity": "validity",
    "semi_final_size": "semi_final_qualifiers",
    "direct_final_places": "direct_final_places",
    "final_quota": "finalists_from_semis",
    "minimum_age": "minimum_age",
}


@asynccontextmanager
async def unit_of_work(maker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """One transaction: committed when the block ends, rolled back on any error, so a
    refused action (``RuleViolation``) changes nothing."""
    async with maker() as session, session.begin():
        yield session


def aware(moment: datetime, field: str = "time") -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise RuleViolation(None, f"{field} must carry a time zone")
    return moment


def utc_now() -> datetime:
    return datetime.now(UTC)


async def get(session: AsyncSession, model: type[T], key: int, what: str) -> T:
    row = await session.get(model, key)
    if row is None:
        raise RuleViolation(None, f"{what} {key} does not exist")
    return row


async def find_tournament(session: AsyncSession, ref: str | int) -> Tournament:
    """A tournament by id or by name."""
    if isinstance(ref, int) or str(ref).isdigit():
        row = await session.get(Tournament, int(ref))
    else:
        row = (
            await session.execute(select(Tournament).where(Tournament.name == ref))
        ).scalar_one_or_none()
    if row is None:
        raise RuleViolation(None, f"tournament {ref!r} does not exist")
    return row


SETTINGS_ACTIONS = ("tournament.create", "tournament.settings")


async def load_settings(session: AsyncSession, tournament: Tournament) -> TournamentSettings:
    newest = (
        await session.execute(
            select(audit.AuditEntry)
            .where(
                audit.AuditEntry.subject == f"tournament:{tournament.id}",
                audit.AuditEntry.action.in_(SETTINGS_ACTIONS),
            )
            .order_by(audit.AuditEntry.id.desc())
            .limit(1)
        )
    ).scalar_one_or_none()
    data: dict[str, Any] = newest.details_dict().get("settings", {}) if newest else {}
    row_fields = set(ROW_SETTINGS.values()) | {"validity"}
    base = TournamentSettings.from_json({k: v for k, v in data.items() if k not in row_fields})
    changes: dict[str, Any] = {}
    for column, name in ROW_SETTINGS.items():
        value = getattr(tournament, column)
        if value is not None:
            changes[name] = value
    return base.with_changes(**changes)


async def seat_numbers(session: AsyncSession, bank_name: str) -> dict[int, str]:
    """Seat number -> machine id for a bank: its machines in floor order (rule 11), skipping
    machines a technician took out of service."""
    machines = (
        await session.execute(
            select(FloorMachine)
            .where(FloorMachine.bank_name == bank_name)
            .order_by(FloorMachine.position, FloorMachine.machine_id)
        )
    ).scalars()
    return {
        number: machine.machine_id
        for number, machine in enumerate(machines, start=1)
        if machine.excluded_reason is None
    }


def heat_label(heat: Heat) -> str:
    return f"{heat.stage.value} heat {heat.number}"


async def heat_facts(session: AsyncSession, heat: Heat) -> HeatFacts:
    numbers = await seat_numbers(session, heat.bank_name)
    return HeatFacts(
        heat_id=heat.id,
        label=heat_label(heat),
        stage=heat.stage,
        status=heat.status,
        starts_at=heat.scheduled_start,
        seat_numbers=tuple(sorted(numbers)),
    )


async def live_seats(session: AsyncSession, heat_id: int) -> list[Seat]:
    rows = await session.execute(
        select(Seat)
        .where(Seat.heat_id == heat_id, Seat.status.in_(LIVE_SEAT_STATUSES))
        .order_by(Seat.seat_number)
    )
    return list(rows.scalars())


async def occupied_numbers(session: AsyncSession, heat_id: int) -> set[int]:
    """Seat numbers not free.  Every seat row counts, moved or cancelled ones too: storage
    keeps UNIQUE(heat, seat number) over all rows so a seat's history is never overwritten."""
    rows = await session.execute(select(Seat.seat_number).where(Seat.heat_id == heat_id))
    return set(rows.scalars())


async def record(
    session: AsyncSession,
    actor: str,
    action: str,
    subject: str,
    reason: str | None = None,
    **details: Any,
) -> None:
    """Audit every change a person makes, in the same transaction as the change."""
    try:
        await audit.record(
            session, actor=actor, action=action, subject=subject, reason=reason, details=details
        )
    except ValueError as exc:  # empty actor etc.: the operator's mistake, change nothing
        raise RuleViolation(None, str(exc)) from exc


def require_actor(actor: str) -> str:
    if not actor or not actor.strip():
        raise RuleViolation(None, "actor: say who is making the change")
    return actor.strip()


def require_reason(reason: str | None, rule: int = 23) -> str:
    if reason is None or not reason.strip():
        raise RuleViolation(rule, "a reason is required for this decision")
    return reason.strip()
