"""Final stages: seating qualifiers by random draw (T14), proxies (T16) and
heats added after a malfunction (T21).

Clauses: docs/rules.md#t14, #t16, #t21.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.eligibility import Person, normalise_id
from gateway.tournament.rules.enums import HeatStatus, SeatStatus, Stage, is_final_stage
from gateway.tournament.rules.final_stages import (
    ProxyForm,
    SeatSlot,
    StageSeat,
    check_proxy_form,
    draw_seats,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    find_tournament,
    get,
    heat_facts,
    occupied_numbers,
    record,
    require_actor,
    seat_numbers,
)
from gateway.tournament.services.hotseat import wildcard_entries
from gateway.tournament.services.people import active_disqualification, check_person
from gateway.tournament.services.standings import qualifiers, stage_over, stage_standings
from storage.audit import AuditEntry
from storage.tournament import Entry, Heat, Player, Proxy, Seat, Tournament

SEAT_DRAW_ALGORITHM = "hmac-sha256-fisher-yates/v1"  # see gateway.tournament.rules.cards
_INACTIVE = (SeatStatus.MOVED, SeatStatus.CANCELLED)


async def free_slots(session: AsyncSession, heats: Sequence[Heat]) -> list[SeatSlot]:
    """Free seats of scheduled heats, heat by start time then seat number."""
    slots: list[SeatSlot] = []
    for heat in sorted(heats, key=lambda h: (h.scheduled_start, h.id)):
        if heat.status is not HeatStatus.SCHEDULED:
            continue
        taken = await occupied_numbers(session, heat.id)
        facts = await heat_facts(session, heat)
        slots.extend(SeatSlot(heat.id, n) for n in facts.seat_numbers if n not in taken)
    return slots


@dataclass(frozen=True, slots=True)
class SeatDraw:
    seed: bytes
    seats: dict[int, SeatSlot]  # entry id -> heat and seat


async def seat_stage(
    session: AsyncSession,
    tournament_ref: int | str,
    stage: Stage,
    *,
    actor: str,
    at: datetime,
    seed: bytes | None = None,
) -> SeatDraw:
    """Seat the qualifiers of a final stage by random draw from a recorded seed (T14).

    Semi-finals: the next N qualifying single entries (T14).  Final: the top
    qualifying entry (T13) plus the semi-final quota (T17).  The previous stage
    must be over and its cut free of undrawn ties (T19).
    """
    actor = require_actor(actor)
    if not is_final_stage(stage):
        raise RuleViolation(11, "qualifying seats are taken by registration, not by draw")
    tournament = await find_tournament(session, tournament_ref)
    q = await qualifiers(session, tournament.id, as_of=at)
    if stage is Stage.SEMI_FINAL:
        if not q.qualifying_over:
            raise RuleViolation(13, "the qualifying heats are not all over")
        if not q.qualifying.complete:
            raise RuleViolation(19, "a tie at the qualifying cut needs a card draw first")
        entries = q.qualifying.semi_finalists
    else:
        if not q.semis_over:
            raise RuleViolation(17, "the semi-final heats are not all over")
        if not (q.qualifying.complete and q.finalists_from_semis.complete):
            raise RuleViolation(19, "a tie at the semi-final cut needs a card draw first")
        entries = q.finalists
    # HS6: a wild card drawn out of the stage before goes through with the qualifiers.
    before = Stage.QUALIFYING if stage is Stage.SEMI_FINAL else Stage.SEMI_FINAL
    entries = tuple(entries) + tuple(
        e for e in await wildcard_entries(session, tournament.id, before) if e not in entries
    )
    already = await session.scalar(
        select(func.count())
        .select_from(Seat)
        .join(Heat, Heat.id == Seat.heat_id)
        .where(Heat.tournament_id == tournament.id, Seat.stage == stage)
    )
    if already:
        raise RuleViolation(14, f"the {stage.value} seats have already been drawn")
    heats = (
        (
            await session.execute(
                select(Heat).where(Heat.tournament_id == tournament.id, Heat.stage == stage)
            )
        )
        .scalars()
        .all()
    )
    seed = seed if seed is not None else secrets.token_bytes(32)
    context = f"tournament={tournament.id}|stage={stage.value}|seats"
    slots = await free_slots(session, heats)
    drawn = draw_seats(seed, context, list(entries), slots)
    holders = await _holders(session, list(entries))
    by_heat = {h.id: h for h in heats}
    for entry_id, slot in sorted(drawn.items()):
        machines = await seat_numbers(session, by_heat[slot.heat_id].bank_name)
        session.add(
            Seat(
                heat_id=slot.heat_id,
                stage=stage,
                seat_number=slot.seat_number,
                machine_id=machines[slot.seat_number],
                entry_id=entry_id,
                holder_player_id=holders[entry_id],
                status=SeatStatus.ASSIGNED,
                assigned_at=at,
            )
        )
    await session.flush()
    await record(
        session,
        actor,
        "seat.draw",
        f"tournament:{tournament.id}",
        None,
        stage=stage,
        seed=seed.hex(),
        algorithm=SEAT_DRAW_ALGORITHM,
        context=context,
        entries=sorted(entries),
        slots=[[x.heat_id, x.seat_number] for x in slots],
        seats={str(e): [s.heat_id, s.seat_number] for e, s in sorted(drawn.items())},
    )
    return SeatDraw(seed, drawn)


async def _holders(session: AsyncSession, entry_ids: list[int]) -> dict[int, int]:
    rows = await session.execute(select(Entry.id, Entry.player_id).where(Entry.id.in_(entry_ids)))
    return {e: p for e, p in rows.all()}


async def stage_seats(session: AsyncSession, tournament_id: int, stage: Stage) -> list[StageSeat]:
    """The seats of a final stage with the place that earned each (T16 "own seat")."""
    previous = Stage.QUALIFYING if stage is Stage.SEMI_FINAL else Stage.SEMI_FINAL
    earned = {
        line.entry_id: line.position
        for line in (await stage_standings(session, tournament_id, previous)).lines
    }
    if stage is Stage.FINAL:
        q = await qualifiers(session, tournament_id)
        for entry_id in q.qualifying.direct_finalists:
            earned[entry_id] = 0  # T13: the top qualifier's seat comes first
    rows = (
        await session.execute(
            select(Seat, Player.id_number)
            .join(Heat, Heat.id == Seat.heat_id)
            .join(Player, Player.id == Seat.holder_player_id)
            .where(
                Heat.tournament_id == tournament_id,
                Seat.stage == stage,
                Seat.status.not_in(_INACTIVE),
            )
        )
    ).all()
    return [
        StageSeat(seat.id, seat.holder_player_id, id_number, earned.get(seat.entry_id, 10**9))
        for seat, id_number in rows
    ]


async def add_proxy(
    session: AsyncSession,
    seat_id: int,
    *,
    nominee_name: str,
    nominee_id_number: str,
    nominee_date_of_birth: date,
    received_at: datetime,
    actor: str,
) -> Proxy:
    """Record a signed proxy form (T16) for one of a player's extra final-stage seats."""
    actor = require_actor(actor)
    seat = await get(session, Seat, seat_id, "seat")
    if not is_final_stage(seat.stage):
        raise RuleViolation(12, "no substitutes in qualifying heats; proxies are for final stages")
    heat = await get(session, Heat, seat.heat_id, "heat")
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    seats = await stage_seats(session, tournament.id, seat.stage)
    started = await session.scalar(
        select(func.min(Heat.started_at)).where(
            Heat.tournament_id == tournament.id, Heat.stage == seat.stage
        )
    )
    forms = [
        ProxyForm(p.seat_id or 0, p.nominee_id_number, p.nominee_name, p.form_received_at)
        for p in (
            await session.execute(
                select(Proxy).where(Proxy.tournament_id == tournament.id, Proxy.stage == seat.stage)
            )
        ).scalars()
    ]
    nominee_id = normalise_id(nominee_id_number)
    form = ProxyForm(seat.id, nominee_id, nominee_name.strip(), received_at)
    if not form.proxy_name or not nominee_id:
        raise RuleViolation(16, "the proxy form needs the nominee's name and ID number")
    check_proxy_form(form, seats, forms, started)
    # T1–T3 apply to whoever plays, nominees included.
    await check_person(
        session,
        Person(nominee_id, form.proxy_name, nominee_date_of_birth),
        received_at,
        tournament.venue_tz,
        tournament.minimum_age,
    )
    nominee = (
        await session.execute(select(Player).where(Player.id_number == nominee_id))
    ).scalar_one_or_none()
    if nominee is not None and await active_disqualification(session, tournament.id, nominee.id):
        raise RuleViolation(2, f"the nominee (player {nominee.id}) is disqualified")
    proxy = Proxy(
        tournament_id=tournament.id,
        stage=seat.stage,
        holder_player_id=seat.holder_player_id,
        nominee_name=form.proxy_name,
        nominee_id_number=nominee_id,
        nominee_player_id=nominee.id if nominee else None,
        seat_id=seat.id,
        form_received_at=received_at,
        received_by=actor,
    )
    session.add(proxy)
    if nominee is not None:
        seat.played_by_player_id = nominee.id
    await session.flush()
    await record(
        session,
        actor,
        "proxy.add",
        f"seat:{seat.id}",
        None,
        stage=seat.stage,
        holder_player_id=seat.holder_player_id,
        nominee_name=form.proxy_name,
        nominee_id_number=nominee_id,
    )
    return proxy


async def seats_waiting(session: AsyncSession, tournament_id: int, stage: Stage) -> list[Seat]:
    """Final-stage seats moved off a malfunctioned machine with nowhere to go yet (T21)."""
    rows = await session.execute(
        select(Seat)
        .join(Heat, Heat.id == Seat.heat_id)
        .where(
            Heat.tournament_id == tournament_id,
            Seat.stage == stage,
            Seat.status == SeatStatus.MOVED,
            Seat.moved_to_seat_id.is_(None),
        )
        .order_by(Seat.id)
    )
    return list(rows.scalars())


async def seat_waiting_in_added_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    actor: str,
    at: datetime,
    seed: bytes | None = None,
) -> SeatDraw:
    """T21: the affected players draw seat numbers in an added heat of their stage."""
    actor = require_actor(actor)
    heat = await get(session, Heat, heat_id, "heat")
    if not is_final_stage(heat.stage):
        raise RuleViolation(20, "qualifying malfunctions are re-seated or refunded (rule 20)")
    waiting = await seats_waiting(session, heat.tournament_id, heat.stage)
    if not waiting:
        raise RuleViolation(21, f"no {heat.stage.value} player is waiting for a seat")
    if (
        await stage_over(session, heat.tournament_id, heat.stage)
        and heat.status is not HeatStatus.SCHEDULED
    ):
        raise RuleViolation(21, "the added heat must still be scheduled")
    seed = seed if seed is not None else secrets.token_bytes(32)
    context = f"tournament={heat.tournament_id}|stage={heat.stage.value}|added-heat={heat.id}"
    by_entry = {s.entry_id: s for s in waiting}
    slots = await free_slots(session, [heat])
    drawn = draw_seats(seed, context, sorted(by_entry), slots)
    machines = await seat_numbers(session, heat.bank_name)
    for entry_id, slot in sorted(drawn.items()):
        old = by_entry[entry_id]
        new = Seat(
            heat_id=heat.id,
            stage=heat.stage,
            seat_number=slot.seat_number,
            machine_id=machines[slot.seat_number],
            entry_id=entry_id,
            holder_player_id=old.holder_player_id,
            played_by_player_id=old.played_by_player_id,
            status=SeatStatus.ASSIGNED,
            assigned_at=at,
        )
        session.add(new)
        await session.flush()
        old.moved_to_seat_id = new.id
        await move_proxy(session, old.id, new.id)
    await session.flush()
    await record(
        session,
        actor,
        "seat.draw-added-heat",
        f"heat:{heat.id}",
        None,
        seed=seed.hex(),
        algorithm=SEAT_DRAW_ALGORITHM,
        context=context,
        entries=sorted(by_entry),
        slots=[[x.heat_id, x.seat_number] for x in slots],
        seats={str(e): [s.heat_id, s.seat_number] for e, s in sorted(drawn.items())},
    )
    return SeatDraw(seed, drawn)


async def move_proxy(session: AsyncSession, old_seat_id: int, new_seat_id: int) -> None:
    """A proxy form follows its seat when the seat moves (T16)."""
    proxy = (
        await session.execute(select(Proxy).where(Proxy.seat_id == old_seat_id))
    ).scalar_one_or_none()
    if proxy is not None:
        proxy.seat_id = new_seat_id


SEAT_DRAW_ACTIONS = ("seat.draw", "seat.draw-added-heat")


async def verify_seat_draws(session: AsyncSession, tournament_id: int | None = None) -> list[str]:
    """Recompute every recorded seat draw (T14, T21) from its seed, entries and the
    free seats offered, and check the seats table still holds each drawn seat (a seat
    moved after a malfunction keeps its row); returns the mismatches.  Anyone can redo
    this from the audit log.  ``tournament_id`` limits it to one tournament's draws."""
    rows = (
        await session.execute(
            select(AuditEntry)
            .where(AuditEntry.action.in_(SEAT_DRAW_ACTIONS))
            .order_by(AuditEntry.id)
        )
    ).scalars()
    problems = []
    for row in rows:
        d = row.details_dict()
        if tournament_id is not None and not d["context"].startswith(
            f"tournament={tournament_id}|"
        ):
            continue  # another tournament's draw
        slots = [SeatSlot(h, n) for h, n in d["slots"]]
        again = draw_seats(bytes.fromhex(d["seed"]), d["context"], d["entries"], slots)
        recorded = {int(e): SeatSlot(h, n) for e, (h, n) in d["seats"].items()}
        if again != recorded:
            problems.append(f"audit row {row.id} ({d['context']}): the seed gives other seats")
        for entry_id, slot in sorted(recorded.items()):
            held = await session.scalar(
                select(Seat.id).where(
                    Seat.entry_id == entry_id,
                    Seat.heat_id == slot.heat_id,
                    Seat.seat_number == slot.seat_number,
                )
            )
            if held is None:
                problems.append(
                    f"audit row {row.id} ({d['context']}): entry {entry_id} has no seat "
                    f"{slot.seat_number} in heat {slot.heat_id}"
                )
    return problems
