"""Final stages (semi-finals and finals): seat draws (T14, T21) and proxies (T16).

Clauses: docs/rules.md#t14, #t21, #t16.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.tournament.rules.cards import shuffle
from gateway.tournament.rules.eligibility import normalise_id
from gateway.tournament.rules.violations import RuleViolation


@dataclass(frozen=True, slots=True)
class SeatSlot:
    heat_id: int
    seat_number: int


def draw_seats(
    seed: bytes, context: str, entry_ids: Sequence[int], slots: Sequence[SeatSlot]
) -> dict[int, SeatSlot]:
    """T14/T21: final-stage seats by random draw from a recorded seed.

    The slots (in the order given: heat by start, then seat number) are shuffled with
    :func:`rules.cards.shuffle` under ``context``; entries sorted by id take them in turn.
    """
    if len(set(entry_ids)) != len(entry_ids):
        raise RuleViolation(14, "an entry appears twice in the seat draw")
    if len(slots) < len(entry_ids):
        raise RuleViolation(
            21, f"{len(entry_ids)} entries but only {len(slots)} free seats; add a heat"
        )
    drawn = shuffle(seed, context, list(slots))
    return {entry: drawn[i] for i, entry in enumerate(sorted(entry_ids))}


@dataclass(frozen=True, slots=True)
class StageSeat:
    """A seat a player holds in a final stage (one per qualifying entry)."""

    seat_id: int
    holder_player_id: int
    holder_id_number: str
    qualifying_place: int  # the player plays their best-placed seat themselves


@dataclass(frozen=True, slots=True)
class ProxyForm:
    seat_id: int
    proxy_id_number: str
    proxy_name: str
    received_at: datetime


def check_proxy_form(
    form: ProxyForm,
    seats: Sequence[StageSeat],
    forms: Iterable[ProxyForm],
    stage_started_at: datetime | None,
) -> None:
    """T16: one form per nominee, only for a player's *extra* seats, received before the
    stage starts, and the proxy may not be a co-participant in that stage."""
    by_id = {s.seat_id: s for s in seats}
    seat = by_id.get(form.seat_id)
    if seat is None:
        raise RuleViolation(16, f"seat {form.seat_id} is not a seat of this stage")
    if stage_started_at is not None and form.received_at >= stage_started_at:
        raise RuleViolation(
            16, "the proxy form arrived after the stage started; the seat is forfeited"
        )
    existing = list(forms)
    if any(f.seat_id == form.seat_id for f in existing):
        raise RuleViolation(16, f"seat {form.seat_id} already has a proxy form")
    holder_seats = [s for s in seats if s.holder_player_id == seat.holder_player_id]
    own = own_seat(holder_seats)
    if seat.seat_id == own.seat_id:
        raise RuleViolation(
            16, "a player plays their own best-placed seat; proxies are for extra seats"
        )
    proxy = normalise_id(form.proxy_id_number)
    participants = {normalise_id(s.holder_id_number) for s in seats}
    if proxy in participants:
        raise RuleViolation(16, "the proxy holds a seat in this stage (no co-participants)")
    if any(normalise_id(f.proxy_id_number) == proxy for f in existing):
        raise RuleViolation(16, "the proxy already plays another seat in this stage")


def own_seat(holder_seats: Sequence[StageSeat]) -> StageSeat:
    return min(holder_seats, key=lambda s: (s.qualifying_place, s.seat_id))


def seats_forfeited_at_start(
    seats: Sequence[StageSeat], proxied_seat_ids: Collection[int]
) -> list[int]:
    """T16: extra seats without a proxy form at the start of the stage are forfeited."""
    by_holder: Mapping[int, list[StageSeat]] = _group(seats)
    forfeited: list[int] = []
    for holder_seats in by_holder.values():
        own = own_seat(holder_seats)
        forfeited.extend(
            s.seat_id
            for s in holder_seats
            if s.seat_id != own.seat_id and s.seat_id not in proxied_seat_ids
        )
    return sorted(forfeited)


def _group(seats: Sequence[StageSeat]) -> dict[int, list[StageSeat]]:
    out: dict[int, list[StageSeat]] = defaultdict(list)
    for seat in seats:
        out[seat.holder_player_id].append(seat)
    return out
