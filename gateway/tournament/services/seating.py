"""Registration for qualifying heats (T9, T11, T16), the start of a heat (T16, T22)
and the end of a heat.  ``heat_seats`` and ``playing_at_start`` are what the heat runner
reads.

Clauses: docs/rules.md#t9, #t11, #t16, #t22.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import (
    IN_PROGRESS,
    EntryStatus,
    HeatStatus,
    SeatStatus,
    Stage,
    is_final_stage,
)
from gateway.tournament.rules.final_stages import seats_forfeited_at_start
from gateway.tournament.rules.purchases import check_entry_terms
from gateway.tournament.rules.seating import absent_seats, check_registration
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.attendance import keep_present, present_at_start
from gateway.tournament.services.common import (
    get,
    heat_facts,
    heat_label,
    live_seats,
    load_settings,
    record,
    require_actor,
    require_reason,
    seat_numbers,
)
from gateway.tournament.services.finals import stage_seats
from gateway.tournament.services.people import (
    check_player_may_play,
    disqualified_sets,
    find_player,
)
from gateway.tournament.services.stage_close import close_stage_if_over
from gateway.tournament.settings import TournamentSettings
from storage.enums import ScoreSource
from storage.tournament import (
    Entry,
    EntryPurchase,
    Heat,
    Player,
    Proxy,
    Score,
    Seat,
    SitAndGoHeat,
    Tournament,
)

_INACTIVE = (SeatStatus.MOVED, SeatStatus.CANCELLED)
# The two statements under the heat's lock, built once (building costs more CPU than
# the compiled-cache lookup, and the lock's queue waits for that CPU too).
_LOCK_HEAT = (
    select(Heat)
    .where(Heat.id == bindparam("heat"))
    .with_for_update()
    .execution_options(populate_existing=True)
)
_SEATS_TAKEN = select(
    Seat.heat_id, Seat.seat_number, Seat.holder_player_id, Seat.stage, Seat.status
).where(or_(Seat.heat_id == bindparam("heat"), Seat.holder_player_id == bindparam("player")))


async def register_for_heat(
    session: AsyncSession,
    heat_id: int,
    player_ref: int | str,
    *,
    actor: str,
    now: datetime,
    entry_id: int | None = None,
) -> Seat:
    """Register a player, in person, for a qualifying heat: first come, first served, next
    machine in sequence (T11), one seat per heat (T16), using a prior entry
    purchase still valid for the heat (T5–T9).  Without ``entry_id`` the player's
    oldest unused valid entry is used."""
    actor = require_actor(actor)
    heat = await session.get(Heat, heat_id)
    if heat is None:
        raise RuleViolation(None, f"heat {heat_id} does not exist")
    # What the heat's lock does not guard is read before it: the tournament, its
    # settings, the player, whether they may play, the bank's machines, the entry to
    # use (the unique indexes on seats guard an entry used twice).
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    settings = await load_settings(session, tournament)
    player = await find_player(session, player_ref)
    await check_player_may_play(session, player, tournament, now)
    bank, start = heat.bank_name, heat.scheduled_start
    machines = await seat_numbers(session, bank)
    entry = await _entry_or_error(session, tournament, player, heat, entry_id, settings)
    # Lock the heat row (read afresh): desks registering at the same moment queue here
    # instead of racing for the same seat number.  Everything from here to the commit is
    # what the queue waits for.  SQLite's transaction holds the one write lock already.
    if session.get_bind().dialect.name != "sqlite":
        # What the committed seats refuse already (a full heat, the player seated in it)
        # is refused without joining the queue: it writes nothing, and the seat numbers
        # taken are never freed, so the queue's read would refuse a full heat too.
        # Desks that chose a heat as it filled send these in a burst, and each held the
        # heat's row for three round trips, in the way of the registrations behind it.
        occupied, player_heats = await _seats_taken(session, heat.id, player.id)
        check_registration(await heat_facts(session, heat, machines), now, occupied, player_heats)
        heat = (await session.execute(_LOCK_HEAT, {"heat": heat_id})).scalar_one()
    if heat.bank_name != bank:  # moved to another bank meanwhile
        machines = await seat_numbers(session, heat.bank_name)
    if heat.scheduled_start != start:  # rescheduled meanwhile: the entry's terms again
        entry = await _entry_or_error(session, tournament, player, heat, entry_id, settings)
    occupied, player_heats = await _seats_taken(session, heat.id, player.id)
    number = check_registration(
        await heat_facts(session, heat, machines), now, occupied, player_heats
    )
    if isinstance(entry, RuleViolation):
        raise entry  # after the heat's own refusals, as the desk expects them
    seat = Seat(
        heat_id=heat.id,
        stage=heat.stage,
        seat_number=number,
        machine_id=machines[number],
        entry_id=entry.id,
        holder_player_id=player.id,
        status=SeatStatus.ASSIGNED,
        assigned_at=now,
    )
    entry.status = EntryStatus.SEATED
    entry.status_changed_at = now
    session.add(seat)
    await session.flush()
    await record(
        session,
        actor,
        "seat.register",
        f"heat:{heat.id}",
        None,
        seat_id=seat.id,
        seat_number=number,
        machine_id=seat.machine_id,
        entry_id=entry.id,
        player_id=player.id,
    )
    return seat


async def _seats_taken(
    session: AsyncSession, heat_id: int, player_id: int
) -> tuple[set[int], set[int]]:
    """The heat's seat numbers not free (every row, as ``occupied_numbers``) and the
    qualifying heats the player holds a live seat in: one query."""
    rows = await session.execute(_SEATS_TAKEN, {"heat": heat_id, "player": player_id})
    occupied: set[int] = set()
    player_heats: set[int] = set()
    for seat_heat, number, holder, stage, status in rows:
        if seat_heat == heat_id:
            occupied.add(number)
        if holder == player_id and stage is Stage.QUALIFYING and status not in _INACTIVE:
            player_heats.add(seat_heat)
    return occupied, player_heats


async def _entry_or_error(
    session: AsyncSession,
    tournament: Tournament,
    player: Player,
    heat: Heat,
    entry_id: int | None,
    settings: TournamentSettings,
) -> Entry | RuleViolation:
    try:
        return await _entry_for(session, tournament, player, heat, entry_id, settings)
    except RuleViolation as exc:
        return exc


async def _entry_for(
    session: AsyncSession,
    tournament: Tournament,
    player: Player,
    heat: Heat,
    entry_id: int | None,
    settings: TournamentSettings,
) -> Entry:
    query = (
        select(Entry, EntryPurchase)
        .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
        .where(Entry.tournament_id == tournament.id, Entry.player_id == player.id)
        .order_by(EntryPurchase.purchased_at, Entry.id)
    )
    if entry_id is not None:
        query = query.where(Entry.id == entry_id)
    rows = (await session.execute(query)).all()
    if entry_id is not None:
        if not rows:
            raise RuleViolation(12, f"entry {entry_id} is not player {player.id}'s")
        entry, purchase = rows[0]
        if entry.status is not EntryStatus.AVAILABLE:
            raise RuleViolation(9, f"entry {entry.id} is {entry.status.value}, not available")
        check_entry_terms(
            settings.zone, purchase.purchased_at, purchase.valid_until, heat.scheduled_start
        )
        return entry
    first_error: RuleViolation | None = None
    for entry, purchase in rows:
        if entry.status is not EntryStatus.AVAILABLE:
            continue
        try:
            check_entry_terms(
                settings.zone, purchase.purchased_at, purchase.valid_until, heat.scheduled_start
            )
        except RuleViolation as exc:
            first_error = first_error or exc
            continue
        return entry
    if first_error is not None:
        raise first_error
    raise RuleViolation(9, "no unused entry: buy one at the cash desk first (prior entry purchase)")


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """One seat as the heat runner and the displays see it."""

    seat_id: int
    seat_number: int
    machine_id: str
    entry_id: int
    holder_player_id: int
    holder_name: str
    played_by: str  # the holder's name, or the proxy nominee's (T16)
    status: SeatStatus
    credits: int | None
    # Who stored the score: the machine, or a director keyed it in or corrected it (T23).
    source: ScoreSource | None = None


async def heat_seats(
    session: AsyncSession, heat_id: int, *, include_inactive: bool = False
) -> list[SeatInfo]:
    """The seats of a heat in seat order, with who plays each and its score if any."""
    await get(session, Heat, heat_id, "heat")
    query = (
        select(Seat, Player, Score.final_credits, Proxy.nominee_name, Score.source)
        .join(Player, Player.id == Seat.holder_player_id)
        .outerjoin(Score, Score.seat_id == Seat.id)
        .outerjoin(Proxy, Proxy.seat_id == Seat.id)
        .where(Seat.heat_id == heat_id)
        .order_by(Seat.seat_number)
    )
    if not include_inactive:
        query = query.where(Seat.status.not_in(_INACTIVE))
    out = []
    for seat, player, credits, nominee, source in (await session.execute(query)).all():
        out.append(
            SeatInfo(
                seat.id,
                seat.seat_number,
                seat.machine_id,
                seat.entry_id,
                player.id,
                player.name,
                nominee or player.name,
                seat.status,
                credits,
                source,
            )
        )
    return out


async def _no_proxy_seat_ids(session: AsyncSession, heat: Heat) -> set[int]:
    """T16: in a final stage, a player's extra seats with no proxy form forfeit."""
    if not is_final_stage(heat.stage):
        return set()
    stage = await stage_seats(session, heat.tournament_id, heat.stage)
    proxied = {
        seat_id
        for seat_id in (
            await session.execute(
                select(Proxy.seat_id).where(
                    Proxy.tournament_id == heat.tournament_id, Proxy.stage == heat.stage
                )
            )
        ).scalars()
        if seat_id is not None
    }
    return set(seats_forfeited_at_start(stage, proxied))


async def playing_at_start(session: AsyncSession, heat_id: int) -> list[SeatInfo]:
    """The seats that would play if the heat started now: present by the roll call and its
    setting (T22), not an extra final seat without a proxy form (T16), not a
    disqualified player's (T2).  The heat runner arms and unlocks only their machines,
    so a seat that forfeits at the start never has its machine played."""
    heat = await get(session, Heat, heat_id, "heat")
    present = await present_at_start(session, heat)
    no_proxy = await _no_proxy_seat_ids(session, heat)
    bad_players, bad_entries = await disqualified_sets(session, heat.tournament_id)
    return [
        s
        for s in await heat_seats(session, heat_id)
        if s.status in (SeatStatus.ASSIGNED, SeatStatus.PRESENT)
        and s.seat_number in present
        and s.seat_id not in no_proxy
        and s.holder_player_id not in bad_players
        and s.entry_id not in bad_entries
    ]


async def begin_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    present_seats: Collection[int] | None = None,
    at: datetime,
    actor: str,
) -> list[int]:
    """The announced start of a heat (T22): seats whose player (or proxy) is not
    present are forfeited without refund; in a final stage, a player's extra seats with
    no proxy form are forfeited (T16); seats of disqualified players drop out (T2).
    The heat goes to ``running``.  Returns the forfeited seat numbers.

    ``present_seats`` is the head count at the start; without it the floor attendant's
    roll call decides (``services.attendance``, with the tournament's
    ``unmarked_at_start`` setting)."""
    actor = require_actor(actor)
    heat = await get(session, Heat, heat_id, "heat")
    if heat.status not in (HeatStatus.SCHEDULED, HeatStatus.ARMED, HeatStatus.RESTARTED):
        raise RuleViolation(22, f"{heat_label(heat)} is {heat.status.value}; it cannot start")
    early = at < heat.scheduled_start and heat.status is not HeatStatus.RESTARTED
    sit_and_go = await session.get(SitAndGoHeat, heat.id) if early else None
    if early and sit_and_go is None:
        raise RuleViolation(22, f"{heat_label(heat)} is advertised for {heat.scheduled_start}")
    seats = [s for s in await live_seats(session, heat.id) if s.status is not SeatStatus.PLAYED]
    numbers = {s.seat_number for s in seats}
    source = "given"
    if present_seats is None:
        present_seats, source = await present_at_start(session, heat), "roll call"
    unknown = set(present_seats) - numbers
    if unknown:
        raise RuleViolation(22, f"seats {sorted(unknown)} hold nobody in {heat_label(heat)}")
    if sit_and_go is not None and len(set(present_seats)) < sit_and_go.seats:
        # F7: a sit-and-go heat starts before its latest start only once its seats fill
        raise RuleViolation(
            None,
            f"rule F7: {heat_label(heat)} has {len(set(present_seats))} of its "
            f"{sit_and_go.seats} seats filled; it starts by {heat.scheduled_start} at the latest",
        )
    bad_players, bad_entries = await disqualified_sets(session, heat.tournament_id)
    forfeited: list[int] = []
    disqualified: list[int] = []
    no_proxy = await _no_proxy_seat_ids(session, heat)
    absent = set(absent_seats({s.seat_number: s.seat_number for s in seats}, present_seats))
    for seat in seats:
        if seat.holder_player_id in bad_players or seat.entry_id in bad_entries:
            seat.status = SeatStatus.DISQUALIFIED
            disqualified.append(seat.seat_number)
        elif seat.id in no_proxy or seat.seat_number in absent:
            seat.status = SeatStatus.FORFEITED
            forfeited.append(seat.seat_number)
            if heat.stage is Stage.QUALIFYING:
                entry = await get(session, Entry, seat.entry_id, "entry")
                entry.status = EntryStatus.FORFEITED
                entry.status_changed_at = at
        else:
            seat.status = SeatStatus.PRESENT
    heat.status = HeatStatus.RUNNING
    heat.started_at = at
    await session.flush()
    await record(
        session,
        actor,
        "heat.begin",
        f"heat:{heat.id}",
        None,
        present=sorted(present_seats),
        present_from=source,
        forfeited_absent=sorted(absent & set(forfeited)),
        forfeited_no_proxy=sorted(s.seat_number for s in seats if s.id in no_proxy),
        disqualified=disqualified,
    )
    return sorted(forfeited)


async def finish_heat(session: AsyncSession, heat_id: int, *, at: datetime, actor: str) -> Heat:
    """Close a heat once every seat still in play has its score (T12)."""
    actor = require_actor(actor)
    heat = await get(session, Heat, heat_id, "heat")
    if heat.status not in IN_PROGRESS:
        raise RuleViolation(20, f"{heat_label(heat)} is {heat.status.value}, not under way")
    waiting = [
        s.seat_number for s in await live_seats(session, heat.id) if s.status is SeatStatus.PRESENT
    ]
    if waiting:
        raise RuleViolation(
            12, f"seats {waiting} have no score yet: record them or mark the machine malfunctioned"
        )
    heat.status = HeatStatus.CLOSED
    heat.ended_at = at
    await session.flush()
    await record(session, actor, "heat.finish", f"heat:{heat.id}", None, ended_at=at)
    await close_stage_if_over(session, heat, actor=actor, at=at)
    return heat


async def reinstate_seat(
    session: AsyncSession, seat_id: int, *, reason: str, actor: str, at: datetime
) -> Seat:
    """T23 override: the director puts a forfeited seat back in play while its heat is
    under way (e.g. the attendant marked a present player absent, T22)."""
    actor = require_actor(actor)
    reason = require_reason(reason)
    seat = await get(session, Seat, seat_id, "seat")
    heat = await get(session, Heat, seat.heat_id, "heat")
    if seat.status is not SeatStatus.FORFEITED:
        raise RuleViolation(23, f"seat {seat.seat_number} is {seat.status.value}, not forfeited")
    if heat.status not in IN_PROGRESS:
        raise RuleViolation(23, f"{heat_label(heat)} is {heat.status.value}, not under way")
    bad_players, bad_entries = await disqualified_sets(session, heat.tournament_id)
    if seat.holder_player_id in bad_players or seat.entry_id in bad_entries:
        raise RuleViolation(2, f"player {seat.holder_player_id} is disqualified")
    seat.status = SeatStatus.PRESENT
    if seat.stage is Stage.QUALIFYING:
        entry = await get(session, Entry, seat.entry_id, "entry")
        entry.status = EntryStatus.SEATED
        entry.status_changed_at = at
    await keep_present(session, seat, at=at, actor=actor)
    await session.flush()
    await record(
        session,
        actor,
        "seat.reinstate",
        f"seat:{seat.id}",
        reason,
        heat_id=heat.id,
        seat_number=seat.seat_number,
        entry_id=seat.entry_id,
    )
    return seat
