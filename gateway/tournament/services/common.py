"""Helpers every service shares: loading rows or failing with one line, the tournament's
settings, a heat's seats on the floor, and the audit record.

Where the settings live: the ``tournaments`` row holds the ones ranking SQL reads (venue
zone, seat price, validity mode, semi-final size, direct final places, final quota,
minimum age); ``tournament_settings`` holds prize places, the T20 "reasonable period"
and the T10 notice; ``tournament_packages`` the packages on sale;
``tournament_attendance`` the T22 roll-call setting (``storage.attendance``).  The audit log
records every change to them (``tournament.create`` / ``tournament.settings``) but is
never read back as their source.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.heat_formats import HeatFormat
from gateway.tournament.rules.enums import LIVE_SEAT_STATUSES
from gateway.tournament.rules.seating import HeatFacts
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import Package, TournamentSettings
from storage import audit
from storage.attendance import TournamentAttendance
from storage.db import Base
from storage.floor import FloorMachine
from storage.tournament import (
    Heat,
    Seat,
    Tournament,
    TournamentFormat,
    TournamentPackage,
    TournamentSetting,
)

T = TypeVar("T", bound=Base)


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


def row_id(text: str) -> int | None:
    """``text`` as a row id: ASCII digits only ("²" is a digit to ``str.isdigit`` but not
    to ``int``) and short enough for a BIGINT."""
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


# Built once, with bound parameters: nearly every desk request runs them, and building a
# SELECT costs more CPU than its compiled-cache lookup.
_TOURNAMENT_BY_NAME = select(Tournament).where(Tournament.name == bindparam("name"))
_SETTINGS = (
    select(TournamentSetting, TournamentAttendance, TournamentPackage, TournamentFormat.format)
    .select_from(Tournament)
    .outerjoin(TournamentSetting, TournamentSetting.tournament_id == Tournament.id)
    .outerjoin(TournamentAttendance, TournamentAttendance.tournament_id == Tournament.id)
    .outerjoin(TournamentPackage, TournamentPackage.tournament_id == Tournament.id)
    .outerjoin(TournamentFormat, TournamentFormat.tournament_id == Tournament.id)
    .where(Tournament.id == bindparam("tournament"))
    .order_by(TournamentPackage.position)
)


async def find_tournament(session: AsyncSession, ref: str | int) -> Tournament:
    """A tournament by id or by name."""
    number = ref if isinstance(ref, int) else row_id(ref)
    if number is not None:
        row = await session.get(Tournament, number)
    else:
        row = (await session.execute(_TOURNAMENT_BY_NAME, {"name": ref})).scalar_one_or_none()
    if row is None:
        raise RuleViolation(None, f"tournament {ref!r} does not exist")
    return row


async def load_settings(session: AsyncSession, tournament: Tournament) -> TournamentSettings:
    """The tournament's settings, from its row, its settings row and its packages."""
    # One round trip for the three (every sale, registration and standings read asks).
    rows = (await session.execute(_SETTINGS, {"tournament": tournament.id})).all()
    extra, roll_call = (rows[0][0], rows[0][1]) if rows else (None, None)
    packages = tuple(
        Package(p.code, p.price_cents, p.seats, p.casino_credit_cents)
        for _, _, p, _ in rows
        if p is not None
    )
    changes: dict[str, Any] = {
        "venue_zone": tournament.venue_tz,
        "seat_price_cents": tournament.entry_price_cents,
        "validity": tournament.entry_validity,
        "semi_final_qualifiers": tournament.semi_final_size,
        "direct_final_places": tournament.direct_final_places,
        "minimum_age": tournament.minimum_age,
        # A tournament made without packages (e.g. by SQL) sells single seats (T5).
        "packages": packages or (Package("single", tournament.entry_price_cents, 1),),
    }
    if tournament.final_quota is not None:
        changes["finalists_from_semis"] = tournament.final_quota
    if extra is not None:
        changes["prize_places"] = extra.prize_places
        changes["postpone_after"] = timedelta(seconds=extra.postpone_after_seconds)
        changes["reschedule_notice"] = timedelta(seconds=extra.reschedule_notice_seconds)
        changes["top_player_excluded"] = extra.top_player_excluded
    if rows and rows[0][3] is not None:  # no row: timed (F1)
        changes["heat_format"] = HeatFormat.parse(rows[0][3])
    if roll_call is not None:  # no row: the default (T22, auto)
        changes["unmarked_at_start"] = roll_call.unmarked_at_start
    return TournamentSettings(**changes)


async def store_settings(
    session: AsyncSession, tournament: Tournament, settings: TournamentSettings
) -> None:
    """Write validated settings to the tournament's row, settings row and packages."""
    tournament.venue_tz = settings.venue_zone
    tournament.entry_price_cents = settings.seat_price_cents
    tournament.entry_validity = settings.validity
    tournament.semi_final_size = settings.semi_final_qualifiers
    tournament.direct_final_places = settings.direct_final_places
    tournament.final_quota = settings.finalists_from_semis
    tournament.minimum_age = settings.minimum_age
    await session.flush()  # a new tournament needs its id before its settings rows
    extra = await session.get(TournamentSetting, tournament.id)
    if extra is None:
        extra = TournamentSetting(tournament_id=tournament.id)
        session.add(extra)
    extra.prize_places = settings.prize_places
    extra.postpone_after_seconds = int(settings.postpone_after.total_seconds())
    extra.reschedule_notice_seconds = int(settings.reschedule_notice.total_seconds())
    extra.top_player_excluded = settings.top_player_excluded
    heat_format = await session.get(TournamentFormat, tournament.id)
    if settings.heat_format.timed:  # F1: timed is no row
        if heat_format is not None:
            await session.delete(heat_format)
    elif heat_format is None:
        session.add(
            TournamentFormat(tournament_id=tournament.id, format=settings.heat_format.spec())
        )
    else:
        heat_format.format = settings.heat_format.spec()
    roll_call = await session.get(TournamentAttendance, tournament.id)
    if roll_call is None:
        roll_call = TournamentAttendance(tournament_id=tournament.id)
        session.add(roll_call)
    roll_call.unmarked_at_start = settings.unmarked_at_start
    # Replace the package list: delete first (one statement), so a code kept across the
    # change never meets its old row in UNIQUE(tournament, code).
    await session.execute(
        delete(TournamentPackage).where(TournamentPackage.tournament_id == tournament.id)
    )
    session.add_all(
        TournamentPackage(
            tournament_id=tournament.id,
            position=position,
            code=package.code,
            price_cents=package.price_cents,
            seats=package.seats,
            casino_credit_cents=package.casino_credit_cents,
        )
        for position, package in enumerate(settings.packages, start=1)
    )
    await session.flush()


async def seat_numbers(session: AsyncSession, bank_name: str) -> dict[int, str]:
    """Seat number -> machine id for a bank: its machines in floor order (T11), skipping
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


async def heat_facts(
    session: AsyncSession, heat: Heat, numbers: dict[int, str] | None = None
) -> HeatFacts:
    """What the seating rules need of a heat; ``numbers`` its bank's :func:`seat_numbers`
    when the caller has read them already."""
    if numbers is None:
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
