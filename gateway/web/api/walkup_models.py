"""Bodies and answers of the walk-up endpoints (house format W1-W9, docs/rules.md#w1)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from gateway.heat_limits import LIMITS
from gateway.tournament.rules.walkup import MAX_CONFIRM_SECONDS
from gateway.tournament.services.walkup import SessionRow, WindowRow
from gateway.web.api.models import Body, Reason

HHMM = Annotated[str, Field(pattern=r"^\d\d:\d\d$", description="venue time, HH:MM")]


class WindowIn(Body):
    opens: HHMM
    closes: HHMM
    seconds: Annotated[int, Field(ge=LIMITS.min_seconds, le=LIMITS.max_seconds)]
    credits: Annotated[int, Field(ge=LIMITS.min_credits, le=LIMITS.max_credits)]
    confirm_seconds: Annotated[int, Field(ge=1, le=MAX_CONFIRM_SECONDS)] = 30
    enabled: bool = True
    reason: Reason


class WindowOut(BaseModel):
    tournament_id: int
    tournament: str
    bank: str
    opens: str
    closes: str
    zone: str
    seconds: int
    credits: int
    confirm_seconds: int
    enabled: bool
    open_now: bool

    @classmethod
    def of(cls, w: WindowRow) -> WindowOut:
        return cls(
            tournament_id=w.tournament_id, tournament=w.tournament, bank=w.bank,
            opens=w.opens, closes=w.closes, zone=w.zone, seconds=w.duration_seconds,
            credits=w.starting_credits, confirm_seconds=w.confirm_seconds,
            enabled=w.enabled, open_now=w.open_now,
        )  # fmt: skip


class WindowsOut(BaseModel):
    windows: list[WindowOut]


class WalkupSessionOut(BaseModel):
    id: int
    tournament_id: int
    bank: str
    machine: str
    player_id: int
    player_name: str
    entry_id: int
    status: str
    heat_id: int | None
    heat_status: str | None
    offered_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    seconds: int | None
    score: int | None
    confirmed_by: str | None

    @classmethod
    def of(cls, r: SessionRow) -> WalkupSessionOut:
        return cls(
            id=r.id, tournament_id=r.tournament_id, bank=r.bank, machine=r.machine,
            player_id=r.player_id, player_name=r.player_name, entry_id=r.entry_id,
            status=r.status, heat_id=r.heat_id, heat_status=r.heat_status,
            offered_at=r.offered_at, started_at=r.started_at, ended_at=r.ended_at,
            seconds=r.duration_seconds, score=r.score, confirmed_by=r.confirmed_by,
        )  # fmt: skip


class WalkupSessionsOut(BaseModel):
    active: list[WalkupSessionOut]
    finished: list[WalkupSessionOut]


class ConfirmIn(Body):
    """No fields: the session is in the path; the attendant is the caller."""


class StartedOut(BaseModel):
    session: int
    heat: int
    bank: str
