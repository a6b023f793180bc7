"""Heats and seats: schedule changes (T10), registration (T9, T11, T16), absence at
the start (T22), and the first free seat after a malfunction (T20–T21).

A heat's seats are the machines of its bank in their floor order; seat ``n`` is the
``n``-th machine (T11: machines are allocated in sequential order).  Machines taken
out of service are simply not offered.

Clauses: docs/rules.md#t10, #t9, #t11, #t16, #t22, #t20, #t21.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.rules.violations import RuleViolation


@dataclass(frozen=True, slots=True)
class HeatFacts:
    heat_id: int
    label: str  # e.g. "qualifying heat 12"
    stage: Stage
    status: HeatStatus
    starts_at: datetime
    seat_numbers: tuple[int, ...]  # seats with a machine in service, in floor order


#: Heats that hold their bank for their advertised time (T10, T11).
BANK_HOLDING = frozenset(
    {
        HeatStatus.SCHEDULED,
        HeatStatus.ARMED,
        HeatStatus.RUNNING,
        HeatStatus.ENDING,
        HeatStatus.COLLECTING,
    }
)


@dataclass(frozen=True, slots=True)
class BankSlot:
    label: str  # e.g. "qualifying heat 3 of Ridge"
    starts_at: datetime
    ends_at: datetime


def check_bank_free(
    bank: str, starts_at: datetime, ends_at: datetime, others: Iterable[BankSlot]
) -> None:
    """T10/T11: heats are published at set times on a bank, and one bank plays one
    heat at a time, so a heat whose time overlaps another on its bank is refused."""
    for other in sorted(others, key=lambda o: o.starts_at):
        if starts_at < other.ends_at and other.starts_at < ends_at:
            raise RuleViolation(
                10,
                f"bank {bank} is taken from {other.starts_at:%Y-%m-%d %H:%M} to "
                f"{other.ends_at:%H:%M} by {other.label}; heats on one bank cannot overlap",
            )


def next_free_seat(seat_numbers: Sequence[int], taken: Collection[int]) -> int | None:
    """T11: first come, first served, machines in sequential order."""
    for number in seat_numbers:
        if number not in taken:
            return number
    return None


def check_registration(
    heat: HeatFacts, now: datetime, taken: Collection[int], player_heat_ids: Collection[int]
) -> int:
    """Validate a qualifying-heat registration and return the seat number to give.

    ``taken`` are the heat's occupied seat numbers; ``player_heat_ids`` the heats in which
    the player already holds a live seat.
    """
    if heat.stage is not Stage.QUALIFYING:
        raise RuleViolation(
            14, f"{heat.label} is a {heat.stage.value} heat: its seats come from qualification"
        )
    if heat.status is not HeatStatus.SCHEDULED:
        raise RuleViolation(11, f"{heat.label} is {heat.status.value}; registration is closed")
    if now >= heat.starts_at:
        raise RuleViolation(11, f"{heat.label} has started; late entries are not accepted")
    if heat.heat_id in player_heat_ids:
        raise RuleViolation(16, f"player already holds a seat in {heat.label} (one seat per heat)")
    seat = next_free_seat(heat.seat_numbers, taken)
    if seat is None:
        raise RuleViolation(9, f"{heat.label} is full ({len(heat.seat_numbers)} seats)")
    return seat


def check_reschedule(
    heat: HeatFacts,
    new_start: datetime,
    now: datetime,
    announced_at: datetime,
    minimum_notice: timedelta,
) -> None:
    """T10: the casino may move a heat not yet run, announcing it beforehand.

    The announcement must come ``minimum_notice`` before the earlier of the old start
    (players planned for it) and the new one.  A postponed heat only needs the new one.
    """
    if heat.status not in (HeatStatus.SCHEDULED, HeatStatus.POSTPONED, HeatStatus.RESTARTED):
        raise RuleViolation(
            10, f"{heat.label} is {heat.status.value}; only a heat not run can move"
        )
    if heat.status is HeatStatus.SCHEDULED and now >= heat.starts_at:
        raise RuleViolation(10, f"{heat.label} has already started")
    if new_start <= now:
        raise RuleViolation(10, "the new start time is not in the future")
    if announced_at > now:
        raise RuleViolation(10, "the announcement cannot be in the future")
    affected = min(new_start, heat.starts_at) if heat.status is HeatStatus.SCHEDULED else new_start
    if affected - announced_at < minimum_notice:
        minutes = int(minimum_notice.total_seconds() // 60)
        raise RuleViolation(10, f"the change must be announced at least {minutes} min ahead")


def absent_seats(booked: Mapping[int, int], present_players: Collection[int]) -> list[int]:
    """T22: seat numbers whose player is not present when the heat starts (forfeited)."""
    return sorted(seat for seat, player in booked.items() if player not in present_players)


@dataclass(frozen=True, slots=True)
class FreeSeat:
    heat_id: int
    seat_number: int


def first_free_seat_in_future_heat(
    stage: Stage,
    after: datetime,
    heats: Iterable[HeatFacts],
    taken: Mapping[int, Collection[int]],
    player_heat_ids: Collection[int],
    exclude_heat: int,
) -> FreeSeat | None:
    """T20/T21: the first available seat in a future similar heat (same stage).

    Heats are tried in start order; in qualifying a heat where the player already sits
    is skipped (T16).
    """
    candidates = sorted(
        (
            h
            for h in heats
            if h.stage is stage
            and h.status is HeatStatus.SCHEDULED
            and h.starts_at > after
            and h.heat_id != exclude_heat
        ),
        key=lambda h: (h.starts_at, h.heat_id),
    )
    for heat in candidates:
        if stage is Stage.QUALIFYING and heat.heat_id in player_heat_ids:
            continue
        seat = next_free_seat(heat.seat_numbers, taken.get(heat.heat_id, ()))
        if seat is not None:
            return FreeSeat(heat.heat_id, seat)
    return None
