"""The "Tonight" board: the venue's night at a glance, each part only for a role that
may read it, through the same permission and read service as the API and the screen
that part summarises (heats: ``list_heats``' summary; banks and machines: the floor
map; approvals: dual control's own approval check; prizes: ``prize_lines`` against the
stage's standings; the audit trail: ``GET /audit``'s newest rows less the chain's own
seals, and the outcome of the last ``audit verify`` asked from a desk
(:mod:`gateway.records.verify_runs`; the Decisions & audit screen runs one)).  Read-only.

The night is the venue's: from 06:00 in the venue's zone to 06:00 the next morning, so
a heat after midnight still belongs to the evening it is part of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from gateway.accounts import dual, service
from gateway.accounts.roles import Permission as P
from gateway.records.verify_runs import Verification, last_verification
from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.services.prizes import PrizeLine, prize_lines
from gateway.tournament.services.setup import HeatSummary, summarise_heat
from gateway.tournament.services.standings import stage_over, stage_standings
from gateway.web.console.auth import Viewer
from gateway.web.console.control import FloorControl
from gateway.web.console.floor_state import BankView, MachineView, floor_map
from storage.accounts import PendingAction
from storage.audit import CHECKPOINT_ACTION, GENESIS_ACTION, AuditEntry
from storage.prizes import PrizePlace
from storage.seals import SCOPE_ACTION, SEAL_ACTION
from storage.tournament import Heat, Tournament

NIGHT_STARTS = time(6, 0)  # the venue's night runs 06:00 to 06:00
TROUBLE = ("malfunction", "blocked")  # machine states a technician must look at
AUDIT_ROWS = 8
# The chain's own rows (seals of stored rows, checkpoints): not changes a person made.
BOOKKEEPING = (SEAL_ACTION, SCOPE_ACTION, CHECKPOINT_ACTION, GENESIS_ACTION)
TOURNAMENTS = 20  # the newest, for prizes still to pay


def night_of(now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The venue's night holding ``now``, as [start, end) in the venue's zone."""
    local = now.astimezone(zone)
    day = (local - timedelta(hours=NIGHT_STARTS.hour, minutes=NIGHT_STARTS.minute)).date()
    start = datetime.combine(day, NIGHT_STARTS, tzinfo=zone)
    return start, datetime.combine(day + timedelta(days=1), NIGHT_STARTS, tzinfo=zone)


@dataclass(frozen=True, slots=True)
class Trouble:
    bank: str
    machine: MachineView


@dataclass(frozen=True, slots=True)
class Waiting:
    """A pending dual-control action: this account may decide it, or asked for it."""

    action: PendingAction
    asked_by: str
    mine: bool


@dataclass(frozen=True, slots=True)
class Unpaid:
    tournament: str
    stage: Stage
    line: PrizeLine


@dataclass
class Board:
    starts: datetime
    ends: datetime
    now: datetime
    heats: list[HeatSummary] | None = None  # None: not this role's part
    next_heat: HeatSummary | None = None  # the first still to start, tonight or later
    banks: list[BankView] | None = None
    trouble: list[Trouble] = field(default_factory=list)
    approvals: list[Waiting] = field(default_factory=list)
    prizes: list[Unpaid] | None = None
    audit: list[AuditEntry] | None = None
    verified: Verification | None = None  # the last ``audit verify`` asked from a desk

    @property
    def next_tonight(self) -> bool:
        return self.next_heat is not None and self.next_heat.starts_at < self.ends

    @property
    def countdown(self) -> str:
        """The time to the next heat as the page's script counts it (console.js)."""
        return "" if self.next_heat is None else countdown(self.next_heat.starts_at, self.now)


def countdown(to: datetime, now: datetime) -> str:
    left = int((to - now).total_seconds())
    if left <= 0:
        return "due now"
    hours, rest = divmod(left, 3600)
    return f"in {hours}:{rest // 60:02d}:{rest % 60:02d}"


async def board(
    me: Viewer,
    now: datetime,
    zone: ZoneInfo,
    control: FloorControl | None,
    retained: Mapping[str, Any],
) -> Board:
    starts, ends = night_of(now, zone)
    out = Board(starts, ends, now)
    if me.can(P.HEAT_READ):  # as GET /tournaments/{ref}/heats
        out.heats = await _heats(me, starts, ends)
        out.next_heat = next((h for h in out.heats if h.status is HeatStatus.SCHEDULED), None)
        out.next_heat = out.next_heat or await _next_after(me, ends)
    if me.can(P.BANK_READ):  # as the floor map
        out.banks = await floor_map(me.session, control, retained)
        out.trouble = [
            Trouble(b.name, m) for b in out.banks for m in b.machines if m.state in TROUBLE
        ]
    out.approvals = await _approvals(me)  # any account, as the Approvals screen
    if me.can(P.TOURNAMENT_READ):  # as GET /tournaments/{ref}/prizes/{stage}
        out.prizes = await _unpaid(me)
    if me.can(P.AUDIT_READ):  # as GET /audit: the newest rows, not the chain's own
        query = (
            select(AuditEntry)
            .where(AuditEntry.action.not_in(BOOKKEEPING))
            .order_by(AuditEntry.id.desc())
            .limit(AUDIT_ROWS)
        )
        out.audit = list((await me.session.scalars(query)).all())
        out.verified = await last_verification(me.session)
    return out


async def _heats(me: Viewer, starts: datetime, ends: datetime) -> list[HeatSummary]:
    heats = await me.session.scalars(
        select(Heat)
        .where(Heat.scheduled_start >= starts.astimezone(UTC))
        .where(Heat.scheduled_start < ends.astimezone(UTC))
        .order_by(Heat.scheduled_start, Heat.id)
    )
    return [await summarise_heat(me.session, h) for h in heats.all()]


async def _next_after(me: Viewer, ends: datetime) -> HeatSummary | None:
    """No heat left tonight: the next one scheduled on a later night, still counted down."""
    heat = await me.session.scalar(
        select(Heat)
        .where(Heat.status == HeatStatus.SCHEDULED, Heat.scheduled_start >= ends.astimezone(UTC))
        .order_by(Heat.scheduled_start, Heat.id)
        .limit(1)
    )
    return None if heat is None else await summarise_heat(me.session, heat)


async def _approvals(me: Viewer) -> list[Waiting]:
    names = {u.id: u.name for u in await service.list_users(me.session)}
    me_as = dual.Decider(me.user_id, me.role)
    out: list[Waiting] = []
    for p in await service.list_pending(me.session):
        mine = p.requested_by == me.user_id
        if mine or _could_approve(p, me_as):
            out.append(Waiting(p, names.get(p.requested_by, "?"), mine))
    return out


def _could_approve(p: PendingAction, me: dual.Decider) -> bool:
    """Dual control's own check (the one approving runs): never a second copy of it."""
    try:
        permission = P(p.kind)
        dual.check_approval(permission, requester_id=p.requested_by, approver=me, status=p.status)
    except (ValueError, dual.DualControlRefused):
        return False
    return True


async def _unpaid(me: Viewer) -> list[Unpaid]:
    """Places of a stage that is over and not yet paid (T15): who holds each, or that a
    tie is still to draw (T19)."""
    s = me.session
    staged = (
        await s.execute(
            select(Tournament.id, Tournament.name, PrizePlace.stage)
            .join(PrizePlace, PrizePlace.tournament_id == Tournament.id)
            .distinct()
            .order_by(Tournament.id.desc(), PrizePlace.stage)
        )
    ).all()
    out: list[Unpaid] = []
    for tid, name, stage in staged[: TOURNAMENTS * len(Stage)]:
        if not await stage_over(s, tid, Stage(stage)):
            continue
        table = await stage_standings(s, tid, Stage(stage))
        lines = await prize_lines(s, tid, table.stage, table.lines)
        out.extend(Unpaid(name, table.stage, line) for line in lines if not line.paid)
    return out
