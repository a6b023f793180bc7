"""Walk-up play at the machine (docs/rules.md#w1 ... #w9): windows, offers, sessions.

A walk-up session IS a heat: a one-seat qualifying heat created at the confirm and due at
once on the one machine, so the scheduler (:mod:`gateway.heats.scheduler`) runs it with
the same runner, journal, effects, recovery and standings as any heat (W6).  This module

* keeps each tournament's walk-up window per bank (:func:`set_window`, W1: a director's
  decision with a reason, audited);
* decides an accepted card-in at a machine of a walk-up bank (:func:`walkup_at_card_in`,
  called by the card desk in the card's own transaction): an offer, its confirm by the
  card put in again, or a refusal naming its clause (W2-W5), every one audited as
  ``system:board/<MACHINE>`` (W9);
* confirms an offer from the console (:func:`confirm_offer`, an attendant, audited under
  their account, W5) and lists the sessions (:func:`list_sessions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.purchases import check_entry_terms
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.rules.walkup import (
    CONFIRM,
    OFFER,
    REFUSE,
    CardFacts,
    Offer,
    Verdict,
    Window,
    check_window,
    decide_card_in,
    parse_hhmm,
    window_bounds,
)
from gateway.tournament.services.common import get, record, require_actor
from gateway.tournament.services.people import check_player_may_play
from storage.floor import FloorBank, FloorMachine
from storage.tournament import (
    Entry,
    EntryPurchase,
    EntryStatus,
    Heat,
    HeatStatus,
    Player,
    Score,
    Seat,
    SeatStatus,
    Stage,
    Tournament,
)
from storage.walkup import LAPSED, OFFERED, STARTED, WalkupSession, WalkupWindow

# A heat in these states holds its bank's machines (W3); scheduled ones are judged by time.
UNDER_WAY = (HeatStatus.ARMED, HeatStatus.RUNNING, HeatStatus.ENDING, HeatStatus.COLLECTING)
OVER = (
    HeatStatus.CLOSED,
    HeatStatus.RESTARTED,
    HeatStatus.POSTPONED,
    HeatStatus.ABORTED,
    HeatStatus.CANCELLED,
)


def window_of(row: WalkupWindow, zone: str) -> Window:
    return Window(
        opens=parse_hhmm(row.opens, "opens"),
        closes=parse_hhmm(row.closes, "closes"),
        zone=zone,
        duration_seconds=row.duration_seconds,
        starting_credits=int(row.starting_credits),
        confirm_seconds=row.confirm_seconds,
        enabled=row.enabled,
    )


async def set_window(
    session: AsyncSession,
    tournament_id: int,
    bank: str,
    *,
    opens: str,
    closes: str,
    seconds: int,
    credits: int,
    confirm_seconds: int,
    enabled: bool,
    actor: str,
    reason: str,
    at: datetime,
) -> WalkupWindow:
    """W1: a tournament's walk-up window on one bank (a director's decision, audited)."""
    actor = require_actor(actor)
    if not reason.strip():
        raise RuleViolation(None, "reason: a walk-up window is a director's decision: say why")
    tournament = await get(session, Tournament, tournament_id, "tournament")
    if await session.get(FloorBank, bank) is None:
        raise RuleViolation(None, f"bank: {bank!r} is not on the floor")
    window = Window(
        parse_hhmm(opens, "opens"), parse_hhmm(closes, "closes"), tournament.venue_tz,
        seconds, credits, confirm_seconds, enabled,
    )  # fmt: skip
    check_window(window)
    row = await session.get(WalkupWindow, (tournament_id, bank))
    if row is None:
        row = WalkupWindow(tournament_id=tournament_id, bank_name=bank)
        session.add(row)
    row.opens, row.closes = f"{window.opens:%H:%M}", f"{window.closes:%H:%M}"
    row.duration_seconds, row.starting_credits = window.duration_seconds, credits
    row.confirm_seconds, row.enabled = confirm_seconds, enabled
    row.set_by, row.set_at = actor, at
    await session.flush()
    await record(
        session, actor, "walkup.window", f"tournament:{tournament_id}", reason.strip(),
        bank=bank, opens=row.opens, closes=row.closes, seconds=row.duration_seconds,
        credits=credits, confirm_seconds=confirm_seconds, enabled=enabled,
    )  # fmt: skip
    return row


@dataclass(frozen=True, slots=True)
class WindowRow:
    tournament_id: int
    tournament: str
    bank: str
    opens: str
    closes: str
    zone: str
    duration_seconds: int
    starting_credits: int
    confirm_seconds: int
    enabled: bool
    open_now: bool


async def list_windows(session: AsyncSession, *, at: datetime) -> list[WindowRow]:
    rows = await session.execute(
        select(WalkupWindow, Tournament)
        .join(Tournament, Tournament.id == WalkupWindow.tournament_id)
        .order_by(WalkupWindow.tournament_id, WalkupWindow.bank_name)
    )
    out = []
    for w, t in rows:
        window = window_of(w, t.venue_tz)
        out.append(
            WindowRow(
                t.id, t.name, w.bank_name, w.opens, w.closes, t.venue_tz, w.duration_seconds,
                int(w.starting_credits), w.confirm_seconds, w.enabled,
                w.enabled and window_bounds(window, at) is not None,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class WalkupDecision:
    """What walk-up made of one accepted card-in (W2-W5)."""

    machine: str
    card: str
    player_id: int
    tournament_id: int
    verdict: Verdict
    heat_id: int | None = None

    @property
    def line(self) -> str:
        v = self.verdict
        if v.kind == REFUSE:
            return f"{self.machine}: walk-up refused, {v.clause}: {v.reason}"
        if v.kind == OFFER:
            return f"{self.machine}: walk-up offered to player {self.player_id} ({v.reason})"
        return f"{self.machine}: walk-up session started, heat {self.heat_id}"


async def _busy(
    session: AsyncSession, bank: str, machine: str, at: datetime, seconds: int
) -> str:
    """W3: why the machine is not idle, or ""."""
    query = (
        select(Heat.id, Heat.status, Heat.scheduled_start, WalkupSession.machine_id)
        .outerjoin(WalkupSession, WalkupSession.heat_id == Heat.id)
        .where(Heat.bank_name == bank, Heat.status.not_in(OVER))
        .order_by(Heat.scheduled_start)
    )
    for heat_id, status, start, walkup_machine in await session.execute(query):
        if walkup_machine is not None:
            if walkup_machine == machine:
                return f"walk-up session (heat {heat_id}) under way on this machine"
            continue
        if status in UNDER_WAY:
            return f"heat {heat_id} is under way on bank {bank}"
        if start < at + timedelta(seconds=seconds):
            return f"heat {heat_id} is scheduled on bank {bank} at {start:%H:%M} UTC"
    return ""


async def _unused_entry(
    session: AsyncSession, tournament: Tournament, player_id: int, at: datetime
) -> int | None:
    """W4: the player's oldest available entry whose terms hold at ``at`` (T5-T8)."""
    rows = await session.execute(
        select(Entry.id, EntryPurchase.purchased_at, EntryPurchase.valid_until)
        .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
        .where(
            Entry.tournament_id == tournament.id,
            Entry.player_id == player_id,
            Entry.status == EntryStatus.AVAILABLE,
        )
        .order_by(EntryPurchase.purchased_at, Entry.id)
    )
    zone = ZoneInfo(tournament.venue_tz)
    for entry_id, purchased_at, valid_until in rows:
        try:
            check_entry_terms(zone, purchased_at, valid_until, at)
        except RuleViolation:
            continue
        return int(entry_id)
    return None


async def _pending_offer(session: AsyncSession, machine: str) -> WalkupSession | None:
    return (
        await session.scalars(
            select(WalkupSession)
            .where(WalkupSession.machine_id == machine, WalkupSession.status == OFFERED)
            .order_by(WalkupSession.id.desc())
        )
    ).first()


async def _lapse(session: AsyncSession, offer: WalkupSession, at: datetime) -> None:
    offer.status = LAPSED
    await record(
        session, f"system:board/{offer.machine_id}", "walkup.lapse",
        f"machine:{offer.machine_id}", "not confirmed in time (W5)",
        walkup=offer.id, player=offer.player_id, entry=offer.entry_id, at=at.isoformat(),
    )  # fmt: skip


async def walkup_at_card_in(
    session: AsyncSession, *, machine: str, card: str, player_id: int, at: datetime
) -> WalkupDecision | None:
    """Decide an accepted card-in at ``machine`` for walk-up (None: not a walk-up bank).

    The caller has applied T1-T3 and an active disqualification already (the card desk)
    and commits; every verdict is audited here (W9)."""
    spec = await session.get(FloorMachine, machine)
    if spec is None:
        return None
    bank = await session.get(FloorBank, spec.bank_name)
    windows = (
        await session.execute(
            select(WalkupWindow, Tournament)
            .join(Tournament, Tournament.id == WalkupWindow.tournament_id)
            .where(WalkupWindow.bank_name == spec.bank_name)
            .order_by(WalkupWindow.tournament_id)
        )
    ).all()
    if not windows:
        return None
    pending = await _pending_offer(session, machine)
    if pending is not None and pending.expires_at <= at:
        await _lapse(session, pending, at)
        pending = None
    decisions: list[WalkupDecision] = []
    for row, tournament in windows:
        if pending is not None and pending.tournament_id != tournament.id:
            continue
        window = window_of(row, tournament.venue_tz)
        offer = (
            Offer(pending.id, pending.card, pending.expires_at) if pending is not None else None
        )
        facts = CardFacts(
            at=at,
            card=card,
            window=window,
            bank_enabled=bank is not None and bank.enabled,
            busy=(
                f"the machine is excluded from its bank: {spec.excluded_reason}"
                if spec.excluded_reason
                else await _busy(session, spec.bank_name, machine, at, window.duration_seconds)
            ),
            entry_id=await _unused_entry(session, tournament, player_id, at),
            offer=offer,
        )
        verdict = decide_card_in(facts)
        decision = WalkupDecision(machine, card, player_id, tournament.id, verdict)
        if verdict.kind != REFUSE:
            decisions = [decision]
            break
        decisions.append(decision)
    decision = decisions[0]
    verdict = decision.verdict
    actor = f"system:board/{machine}"
    if verdict.kind == OFFER:
        assert verdict.entry_id is not None
        assert verdict.expires_at is not None
        offer_row = WalkupSession(
            tournament_id=decision.tournament_id, bank_name=spec.bank_name, machine_id=machine,
            player_id=player_id, entry_id=verdict.entry_id, card=card, status=OFFERED,
            offered_at=at, expires_at=verdict.expires_at,
        )  # fmt: skip
        session.add(offer_row)
        await session.flush()
        await record(
            session, actor, "walkup.offer", f"machine:{machine}", verdict.reason,
            walkup=offer_row.id, tournament=decision.tournament_id, player=player_id,
            entry=verdict.entry_id, card=card, expires_at=verdict.expires_at.isoformat(),
            clause=verdict.clause, at=at.isoformat(),
        )  # fmt: skip
        return decision
    if verdict.kind == CONFIRM:
        assert pending is not None
        try:  # _start checks everything before it writes anything
            heat = await _start(session, pending, at=at, actor=actor, how="card put in again")
        except RuleViolation as exc:  # the entry or the player changed since the offer
            pending.status = LAPSED
            refused = Verdict(REFUSE, "W4", str(exc), "Session refused: please see the desk")
            decision = WalkupDecision(machine, card, player_id, decision.tournament_id, refused)
            verdict = refused
        else:
            return WalkupDecision(
                machine, card, player_id, decision.tournament_id, verdict, heat.id
            )
    await record(
        session, actor, "walkup.refuse", f"machine:{machine}", verdict.reason,
        tournament=decision.tournament_id, player=player_id, card=card,
        clause=verdict.clause, at=at.isoformat(),
    )  # fmt: skip
    return decision


async def confirm_offer(
    session: AsyncSession, session_id: int, *, at: datetime, actor: str
) -> Heat:
    """W5: an attendant confirms a player's offer from the console (audited as them)."""
    actor = require_actor(actor)
    offer = await session.get(WalkupSession, session_id)
    if offer is None:
        raise RuleViolation(None, f"session: walk-up session {session_id} does not exist")
    if offer.status != OFFERED:
        raise RuleViolation(None, f"session: walk-up session {session_id} is {offer.status}")
    if offer.expires_at <= at:
        await _lapse(session, offer, at)
        raise RuleViolation(None, f"session: walk-up offer {session_id} lapsed (W5)")
    tournament = await get(session, Tournament, offer.tournament_id, "tournament")
    row = await session.get(WalkupWindow, (offer.tournament_id, offer.bank_name))
    bank = await session.get(FloorBank, offer.bank_name)
    if row is None:  # pragma: no cover - an offer is only made under a window
        raise RuleViolation(None, "session: its walk-up window is gone")
    verdict = decide_card_in(
        CardFacts(
            at=at, card=offer.card, window=window_of(row, tournament.venue_tz),
            bank_enabled=bank is not None and bank.enabled,
            offer=Offer(offer.id, offer.card, offer.expires_at),
        )
    )
    if verdict.kind != CONFIRM:
        raise RuleViolation(None, f"session: {verdict.clause}: {verdict.reason}")
    return await _start(session, offer, at=at, actor=actor, how="confirmed on the console")


async def _start(
    session: AsyncSession, offer: WalkupSession, *, at: datetime, actor: str, how: str
) -> Heat:
    """W6: the offer becomes a one-seat qualifying heat, due now; the entry is used."""
    tournament = await get(session, Tournament, offer.tournament_id, "tournament")
    player = await get(session, Player, offer.player_id, "player")
    await check_player_may_play(session, player, tournament, at)  # T1-T3 again, at the confirm
    entry = await get(session, Entry, offer.entry_id, "entry")
    purchase = await get(session, EntryPurchase, entry.purchase_id, "purchase")
    if entry.status is not EntryStatus.AVAILABLE:
        raise RuleViolation(None, f"entry {entry.id} is {entry.status.value}, not unused (W4)")
    check_entry_terms(
        ZoneInfo(tournament.venue_tz), purchase.purchased_at, purchase.valid_until, at
    )
    row = await session.get(WalkupWindow, (offer.tournament_id, offer.bank_name))
    if row is None:  # pragma: no cover - an offer is only made under a window
        raise RuleViolation(None, "walk-up window is gone")
    # The tournament's row locked: two confirms at once (two venues) queue for the number.
    await session.execute(
        select(Tournament.id).where(Tournament.id == tournament.id).with_for_update()
    )
    last = await session.scalar(
        select(func.max(Heat.number)).where(
            Heat.tournament_id == tournament.id, Heat.stage == Stage.QUALIFYING
        )
    )
    heat = Heat(
        tournament_id=tournament.id, stage=Stage.QUALIFYING, number=(last or 0) + 1,
        scheduled_start=at, duration_seconds=row.duration_seconds,
        starting_credits=row.starting_credits, bank_name=offer.bank_name,
        status=HeatStatus.SCHEDULED,
    )  # fmt: skip
    session.add(heat)
    await session.flush()
    session.add(
        Seat(
            heat_id=heat.id, stage=Stage.QUALIFYING, seat_number=1,
            machine_id=offer.machine_id, entry_id=entry.id, holder_player_id=player.id,
            status=SeatStatus.PRESENT, assigned_at=at,
        )
    )
    entry.status, entry.status_changed_at = EntryStatus.SEATED, at
    offer.status, offer.heat_id = STARTED, heat.id
    offer.confirmed_at, offer.confirmed_by = at, actor
    await session.flush()
    await record(
        session, actor, "walkup.start", f"heat:{heat.id}", how,
        walkup=offer.id, machine=offer.machine_id, tournament=tournament.id,
        player=player.id, entry=entry.id, seconds=heat.duration_seconds,
        credits=int(heat.starting_credits), at=at.isoformat(),
    )  # fmt: skip
    return heat


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: int
    tournament_id: int
    bank: str
    machine: str
    player_id: int
    player_name: str
    entry_id: int
    status: str  # offered | lapsed | started (then the heat's status)
    heat_id: int | None
    heat_status: str | None
    offered_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    duration_seconds: int | None
    score: int | None
    confirmed_by: str | None

    @property
    def active(self) -> bool:
        if self.status == OFFERED:
            return True
        return self.status == STARTED and self.heat_status not in {s.value for s in OVER}


async def list_sessions(
    session: AsyncSession, *, tournament_id: int | None = None, limit: int = 200
) -> list[SessionRow]:
    """Walk-up sessions, newest first: offers, sessions under way and finished (with the
    score the entry earned, W8)."""
    query = (
        select(WalkupSession, Player.name, Heat, Score.final_credits)
        .join(Player, Player.id == WalkupSession.player_id)
        .outerjoin(Heat, Heat.id == WalkupSession.heat_id)
        .outerjoin(Score, Score.heat_id == WalkupSession.heat_id)
        .order_by(WalkupSession.id.desc())
        .limit(limit)
    )
    if tournament_id is not None:
        query = query.where(WalkupSession.tournament_id == tournament_id)
    out = []
    for w, name, heat, score in await session.execute(query):
        out.append(
            SessionRow(
                w.id, w.tournament_id, w.bank_name, w.machine_id, w.player_id, name,
                w.entry_id, w.status, w.heat_id,
                heat.status.value if heat is not None else None, w.offered_at,
                heat.started_at if heat is not None else None,
                heat.ended_at if heat is not None else None,
                heat.duration_seconds if heat is not None else None,
                int(score) if score is not None else None, w.confirmed_by,
            )
        )
    return out
