"""Players, exclusion registers and disqualification (T1–T4, T20, T23).

Clauses: docs/rules.md#t1 to #t4, #t20, #t23.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.eligibility import (
    ExclusionRecord,
    Person,
    check_age,
    check_eligible,
    exclusions_for,
    normalise_id,
)
from gateway.tournament.rules.enums import EntryStatus, exclusion_rule
from gateway.tournament.rules.exclusion_csv import parse_exclusion_csv
from gateway.tournament.rules.player_ref import PlayerRef
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    find_tournament,
    get,
    record,
    require_actor,
    require_reason,
)
from gateway.tournament.services.lookup import player_by_ref
from storage.tournament import Disqualification, Entry, Exclusion, Player, Tournament


async def find_player(session: AsyncSession, ref: int | str | PlayerRef) -> Player:
    """The player a desk names: ``id:N``, ``card:N``, ``idnum:N`` or a bare card / ID
    number, never guessed across kinds (:func:`.lookup.player_by_ref`)."""
    return await player_by_ref(session, ref)


# Every sale and registration runs these three: built once, with bound parameters
# (building a SELECT costs more CPU than its compiled-cache lookup).
_EXCLUSIONS_OF = select(Exclusion).where(Exclusion.id_number == bindparam("id_number"))
_ACTIVE_DISQUALIFICATION = (
    select(Disqualification)
    .where(
        Disqualification.tournament_id == bindparam("tournament"),
        Disqualification.player_id == bindparam("player"),
        Disqualification.entry_id.is_(None),
        Disqualification.revoked_at.is_(None),
    )
    .limit(1)
)


async def exclusion_register(
    session: AsyncSession, id_number: str | None = None
) -> list[ExclusionRecord]:
    """The register, or only its lines for one (normalised) ID number."""
    if id_number is None:
        rows = (await session.execute(select(Exclusion))).scalars()
    else:
        wanted = {"id_number": normalise_id(id_number)}
        rows = (await session.execute(_EXCLUSIONS_OF, wanted)).scalars()
    return [
        ExclusionRecord(
            r.kind, r.id_number, r.name or "", r.valid_from, r.valid_until, r.note or ""
        )
        for r in rows
    ]


async def check_person(
    session: AsyncSession, person: Person, at: datetime, tz: str, minimum_age: int = 18
) -> None:
    """T1–T3 for a player, proxy nominee or stand-in at ``at``."""
    on = at.astimezone(ZoneInfo(tz)).date()
    register = await exclusion_register(session, person.id_number)
    check_eligible(person, register, at, on, minimum_age)


def person_of(player: Player) -> Person:
    return Person(player.id_number, player.name, player.date_of_birth)


async def add_player(
    session: AsyncSession,
    *,
    id_number: str,
    name: str,
    date_of_birth: date,
    actor: str,
    now: datetime,
    card_number: str | None = None,
    venue_zone: str = "Africa/Johannesburg",
) -> Player:
    """Register a person in person at the desk (T11); T1–T3 checked now (T4:
    nothing else is required, Rewards card optional)."""
    actor = require_actor(actor)
    id_number = normalise_id(id_number)
    if not id_number or len(id_number) > 32:
        raise RuleViolation(None, "id_number: give the ID or passport number (max 32)")
    if not name.strip():
        raise RuleViolation(None, "name: the player's name is required")
    existing = await session.execute(select(Player.id).where(Player.id_number == id_number))
    if existing.first() is not None:
        raise RuleViolation(None, f"id_number: a player with {id_number} already exists")
    if card_number:
        clash = await session.execute(select(Player.id).where(Player.card_number == card_number))
        if clash.first() is not None:
            raise RuleViolation(None, f"card_number: card {card_number} belongs to another player")
    person = Person(id_number, name.strip(), date_of_birth)
    await check_person(session, person, now, venue_zone)
    player = Player(
        id_number=id_number,
        name=person.name,
        date_of_birth=date_of_birth,
        card_number=card_number or None,
    )
    session.add(player)
    await session.flush()
    await record(
        session,
        actor,
        "player.add",
        f"player:{player.id}",
        None,
        id_number=id_number,
        name=person.name,
        card_number=card_number,
    )
    return player


async def check_player_may_play(
    session: AsyncSession, player: Player, tournament: Tournament, at: datetime
) -> None:
    """T1–T3 now, and not disqualified from this tournament (T2, T20, T23)."""
    await check_person(session, person_of(player), at, tournament.venue_tz, tournament.minimum_age)
    dq = await active_disqualification(session, tournament.id, player.id)
    if dq is not None:
        raise RuleViolation(
            int(dq.rule) if dq.rule.isdigit() else None,
            f"player {player.id} is disqualified: {dq.reason}",
        )


async def active_disqualification(
    session: AsyncSession, tournament_id: int, player_id: int
) -> Disqualification | None:
    wanted = {"tournament": tournament_id, "player": player_id}
    return (await session.execute(_ACTIVE_DISQUALIFICATION, wanted)).scalar_one_or_none()


async def disqualified_sets(session: AsyncSession, tournament_id: int) -> tuple[set[int], set[int]]:
    """(players, entries) currently out of every ranking of this tournament (T2)."""
    rows = (
        await session.execute(
            select(Disqualification.player_id, Disqualification.entry_id).where(
                Disqualification.tournament_id == tournament_id,
                Disqualification.revoked_at.is_(None),
            )
        )
    ).all()
    players = {p for p, e in rows if e is None}
    entries = {e for _, e in rows if e is not None}
    return players, entries


async def disqualify(
    session: AsyncSession,
    tournament_ref: int | str,
    player_ref: int | str,
    *,
    rule: int,
    reason: str,
    actor: str,
    now: datetime,
    entry_id: int | None = None,
    forfeit_entries: bool = True,
) -> Disqualification:
    """Disqualify a player (or one entry): out of every ranking (T2); unused entries are
    forfeited, never refunded (T20 negligence).  A director decision (T23)."""
    actor = require_actor(actor)
    reason = require_reason(reason, rule)
    tournament = await find_tournament(session, tournament_ref)
    player = await find_player(session, player_ref)
    if entry_id is None and await active_disqualification(session, tournament.id, player.id):
        raise RuleViolation(rule, f"player {player.id} is already disqualified")
    entries_q = select(Entry).where(
        Entry.tournament_id == tournament.id, Entry.player_id == player.id
    )
    if entry_id is not None:
        entries_q = entries_q.where(Entry.id == entry_id)
    entries = list((await session.execute(entries_q)).scalars())
    if entry_id is not None and not entries:
        raise RuleViolation(
            None, f"entry {entry_id} is not player {player.id}'s in this tournament"
        )
    dq = Disqualification(
        tournament_id=tournament.id,
        player_id=player.id,
        entry_id=entry_id,
        rule=str(rule),
        reason=reason,
        decided_by=actor,
        decided_at=now,
    )
    session.add(dq)
    changed = []
    if forfeit_entries:
        for entry in entries:
            if entry.status in (EntryStatus.AVAILABLE, EntryStatus.SEATED):
                entry.status = EntryStatus.DISQUALIFIED
                entry.status_changed_at = now
                changed.append(entry.id)
    await session.flush()
    await record(
        session,
        actor,
        "player.disqualify",
        f"player:{player.id}",
        reason,
        tournament_id=tournament.id,
        rule=rule,
        entry_id=entry_id,
        entries_forfeited=changed,
    )
    return dq


async def reinstate(
    session: AsyncSession, disqualification_id: int, *, reason: str, actor: str, now: datetime
) -> Disqualification:
    """T23: the Tournament Director may revoke a disqualification, with a reason."""
    actor = require_actor(actor)
    reason = require_reason(reason)
    dq = await get(session, Disqualification, disqualification_id, "disqualification")
    if dq.revoked_at is not None:
        raise RuleViolation(23, f"disqualification {dq.id} was already revoked")
    player = await get(session, Player, dq.player_id, "player")
    tournament = await get(session, Tournament, dq.tournament_id, "tournament")
    register = await exclusion_register(session, player.id_number)
    if dq.rule in ("2", "3") and exclusions_for(player.id_number, register, now):
        raise RuleViolation(int(dq.rule), "the player is still on an exclusion register")
    check_age(
        player.date_of_birth, now.astimezone(_zone(tournament)).date(), tournament.minimum_age
    )
    dq.revoked_at = now
    dq.revoked_by = actor
    await session.flush()
    await record(
        session,
        actor,
        "player.reinstate",
        f"player:{player.id}",
        reason,
        disqualification_id=dq.id,
        tournament_id=dq.tournament_id,
    )
    return dq


def _zone(tournament: Tournament) -> ZoneInfo:
    return ZoneInfo(tournament.venue_tz)


@dataclass(frozen=True, slots=True)
class ExclusionImport:
    added: int
    players_disqualified: list[tuple[int, int]]  # (tournament id, player id)


async def import_exclusions(
    session: AsyncSession,
    csv_text: str,
    *,
    source: str,
    actor: str,
    now: datetime,
    venue_zone: str = "Africa/Johannesburg",
) -> ExclusionImport:
    """Load an exclusion register (T2–T3).  The file is validated whole first; players
    it bars now are disqualified in every tournament they hold entries in (T2:
    "prior to or during the tournament")."""
    actor = require_actor(actor)
    records = parse_exclusion_csv(csv_text, ZoneInfo(venue_zone))
    for r in records:
        session.add(
            Exclusion(
                kind=r.kind,
                id_number=normalise_id(r.id_number),
                name=r.name or None,
                valid_from=r.valid_from,
                valid_until=r.valid_until,
                source=source,
                note=r.note or None,
                created_by=actor,
            )
        )
    await session.flush()
    await record(
        session,
        actor,
        "exclusion.import",
        f"exclusions:{source}",
        None,
        lines=len(records),
        source=source,
    )
    barred = {normalise_id(r.id_number): r for r in records if r.active_at(now)}
    disqualified: list[tuple[int, int]] = []
    if barred:
        players = (
            (await session.execute(select(Player).where(Player.id_number.in_(list(barred)))))
            .scalars()
            .all()
        )
        for player in players:
            rec = barred[player.id_number]
            tournaments = (
                (
                    await session.execute(
                        select(Entry.tournament_id).where(Entry.player_id == player.id).distinct()
                    )
                )
                .scalars()
                .all()
            )
            for tid in sorted(tournaments):
                if await active_disqualification(session, tid, player.id) is None:
                    await disqualify(
                        session,
                        tid,
                        player.id,
                        rule=exclusion_rule(rec.kind),
                        reason=f"on the {rec.kind.value} register ({source})",
                        actor=actor,
                        now=now,
                    )
                    disqualified.append((tid, player.id))
    return ExclusionImport(len(records), disqualified)


async def list_players(session: AsyncSession) -> list[Player]:
    return list((await session.execute(select(Player).order_by(Player.id))).scalars())
